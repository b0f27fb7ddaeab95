"""The shared folding: one key for entity names, the queries and the aliases compared with them."""

from __future__ import annotations

import pytest

from memories.pipeline.entities import normalize_entity_name
from memories.pipeline.language import fold
from memories.retrieval.recall import query_names


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Zoë Müller", "zoe muller"),
        ("  ZOË\u00a0 \t MÜLLER\n", "zoe muller"),  # whitespace runs, non-breaking ones too
        ("Straße", "strasse"),  # casefold, not lower()
        ("ﬁancée", "fiancee"),  # NFKD splits the ligature
        ("São Paulo", "sao paulo"),
        ("", ""),
    ],
)
def test_it_folds_case_accents_and_whitespace(text, folded):
    assert fold(text) == folded


def test_it_cuts_an_entity_key_to_200_characters_after_folding():
    assert normalize_entity_name("  É" * 150) == ("e " * 100)[:200]


def test_it_matches_a_query_name_to_the_stored_key():
    key = normalize_entity_name("Zoë  Müller")
    assert key in query_names("What does ZOË MÜLLER do?", fold_accents=True)
    assert key not in query_names("What does ZOË MÜLLER do?")  # speakers are matched as written
