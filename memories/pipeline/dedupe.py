"""Deduplication: the same fact again (after normalisation) is more evidence, not a new row."""

from __future__ import annotations

import hashlib
import re
import unicodedata


def fingerprint_of(text: str) -> str:
    return hashlib.sha256(normalize_for_fingerprint(text).encode()).hexdigest()


_APOSTROPHES_RE = re.compile(r"['\u2019\u02bc`\u00b4]")


def normalize_for_fingerprint(text: str) -> str:
    """Text reduced to what it says: NFKC, case-folded, punctuation removed, whitespace collapsed.

    Apostrophes are dropped without a space so "don't" and "dont" agree; other punctuation becomes a space
    so "Paris,France" and "Paris, France" agree. Symbols such as "$" or "+" are kept: they change meaning.
    """
    folded = _APOSTROPHES_RE.sub("", unicodedata.normalize("NFKC", text).casefold())
    spaced = "".join(" " if unicodedata.category(char).startswith("P") else char for char in folded)
    return " ".join(spaced.split())
