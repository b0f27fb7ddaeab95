"""The update-order benchmark's cases (benchmarks/data/update_order.json) are well formed, and its
order rule ranks what it says: a case that breaks the rules would score something else than it claims."""

from __future__ import annotations

import itertools
import json
import re
from datetime import datetime, timedelta
from typing import Any

import pytest

from benchmarks.update_order import DATA, Case, Hit, load_cases, score

RAW = json.loads(DATA.read_text())["cases"]
CASES = load_cases()


def test_it_holds_enough_varied_cases() -> None:
    assert len(CASES) >= 48
    assert len({c.id for c in CASES}) == len(CASES)
    assert {c.language for c in CASES} <= {"en", "de", "es", "fr"}
    assert {c.asks for c in CASES} == {"now", "earlier"}
    assert {c.said for c in CASES} == {"passing", "plain"}
    assert {c.overlap for c in CASES} == {"high", "low"}
    assert len({c.language for c in CASES}) > 1
    assert any(c.values >= 3 for c in CASES)


@pytest.mark.parametrize("raw", RAW, ids=[r["id"] for r in RAW])
def test_it_has_sessions_weeks_apart_and_the_question_after_them(raw: dict[str, Any]) -> None:
    assert 3 <= len(raw["sessions"]) <= 6
    dates = [datetime.fromisoformat(session["date"]) for session in raw["sessions"]]
    assert all(later - earlier >= timedelta(days=7) for earlier, later in itertools.pairwise(dates))
    assert datetime.fromisoformat(raw["question_date"]) > dates[-1]
    for session in raw["sessions"]:
        assert 6 <= len(session["turns"]) <= 16
        assert {t["role"] for t in session["turns"]} == {"user", "assistant"}
    # Every turn is saved with its session's date: the loader keeps the file's order.
    case = next(c for c in CASES if c.id == raw["id"])
    assert [t.occurred_at for t in case.conversation.turns] == sorted(
        t.occurred_at for t in case.conversation.turns
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_it_marks_old_and_new_user_turns_in_separate_sessions(case: Case) -> None:
    raw = next(r for r in RAW if r["id"] == case.id)
    marked = [
        (s, turn)
        for s, session in enumerate(raw["sessions"])
        for turn in session["turns"]
        if turn.get("evidence")
    ]
    assert len(marked) >= 2
    assert all(turn["role"] == "user" for _, turn in marked)
    assert [turn["evidence"] for _, turn in marked] == ["old"] * (len(marked) - 1) + ["new"]
    # One value a session: the order of the values is the order of their sessions' dates.
    assert len({s for s, _ in marked}) == len(marked)
    assert len(case.evidence) == len(marked)


@pytest.mark.parametrize("case", [c for c in CASES if c.said == "passing"], ids=lambda c: c.id)
def test_it_says_a_value_in_passing_inside_a_longer_message(case: Case) -> None:
    newest = next(t for t in case.conversation.turns if t.dia_id == case.evidence[-1])
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", newest.content) if s.strip()]
    assert 3 <= len(sentences) <= 6, newest.content


def _case(asks: str) -> Case:
    return next(c for c in CASES if c.asks == asks and c.values == 2)


def _hits(*turns: str) -> list[Hit]:
    return [Hit(turn, 1.0 - i / 100, "") for i, turn in enumerate(turns)]


def test_it_counts_the_newest_first_only_when_it_leads() -> None:
    case = _case("now")
    old, new = case.evidence
    assert score(case, _hits("9:9", new, old)).in_order
    assert not score(case, _hits(old, new)).in_order
    # The newest missing from the hits is never in order; the older missing is.
    assert not score(case, _hits(old)).in_order
    assert score(case, _hits(new)).in_order
    result = score(case, _hits(*["9:0"] * 5, new, *["9:1"] * 3, old))
    assert result.recall[5] == 0.0
    assert result.recall[10] == 1.0
    assert result.ranks == {old: 10, new: 6}


def test_it_counts_the_oldest_first_for_a_question_about_the_earlier_state() -> None:
    case = _case("earlier")
    old, new = case.evidence
    assert score(case, _hits(old, new)).in_order
    assert not score(case, _hits(new, old)).in_order
