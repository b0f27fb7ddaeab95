"""The question-kinds set (benchmarks/data/question_kinds.json) is well formed: a malformed entry
would be scored as something else than it was written to be, or silently dropped from a language."""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from typing import Any

from benchmarks.question_kinds import DATA, LANGUAGES, load_questions

RAW: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
FIELDS = {"q": str, "language": str, "earlier": bool, "note": str}


def _normal(text: str) -> str:
    # Two questions that differ only in case, spacing or accents' encoding are one question twice.
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def test_it_says_how_it_was_written_and_holds_enough_questions() -> None:
    assert set(RAW) == {"about", "questions"}
    assert "blind" in RAW["about"]
    assert len(RAW["questions"]) >= 120


def test_it_gives_every_question_exactly_its_fields_with_their_types() -> None:
    for entry in RAW["questions"]:
        assert set(entry) == set(FIELDS), entry
        for name, kind in FIELDS.items():
            assert type(entry[name]) is kind, (name, entry)
        assert entry["q"].strip() == entry["q"] and entry["q"], entry
        assert entry["q"].rstrip().endswith("?"), entry
        assert entry["note"].strip(), entry


def test_it_uses_only_the_four_languages_and_both_classes_in_each() -> None:
    classes = Counter((q.language, q.earlier) for q in load_questions())
    assert {language for language, _ in classes} == set(LANGUAGES)
    for language in LANGUAGES:
        # Ten or more a language, each class present: a score by language means something.
        assert classes[(language, True)] > 0 and classes[(language, False)] > 0, language
        assert classes[(language, True)] + classes[(language, False)] >= 10, language


def test_it_is_mostly_english_and_about_evenly_split_between_the_classes() -> None:
    questions = load_questions()
    english = sum(1 for q in questions if q.language == "en")
    earlier = sum(1 for q in questions if q.earlier)
    assert 0.6 <= english / len(questions) <= 0.8
    assert 0.4 <= earlier / len(questions) <= 0.6


def test_it_has_no_question_twice() -> None:
    seen = Counter(_normal(entry["q"]) for entry in RAW["questions"])
    assert [q for q, n in seen.items() if n > 1] == []


def test_the_loader_reads_every_entry_as_written() -> None:
    loaded = load_questions()
    assert [(q.q, q.language, q.earlier, q.note) for q in loaded] == [
        (e["q"], e["language"], e["earlier"], e["note"]) for e in RAW["questions"]
    ]
