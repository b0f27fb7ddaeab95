"""The update-order benchmark's cases (benchmarks/data/update_order.json, the second, third, fourth,
fifth, sixth, seventh, eighth, ninth and tenth sets, update_order_2.json, update_order_3.json,
update_order_4.json, update_order_5.json, update_order_6.json, update_order_7.json, update_order_8.json,
update_order_9.json and update_order_10.json, and the attack
sets update_order_attack53.json, update_order_attack54.json, update_order_attack55.json,
update_order_attack56.json and update_order_attack60.json) are well formed,
and its order rule ranks what it says: a case that breaks the rules would score something else than it
claims."""

from __future__ import annotations

import itertools
import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from benchmarks.update_order import DATA, Case, Hit, data_key, load_cases, score

SECOND = DATA.with_name("update_order_2.json")
THIRD = DATA.with_name("update_order_3.json")
FOURTH = DATA.with_name("update_order_4.json")
FIFTH = DATA.with_name("update_order_5.json")
SIXTH = DATA.with_name("update_order_6.json")
SEVENTH = DATA.with_name("update_order_7.json")
EIGHTH = DATA.with_name("update_order_8.json")
NINTH = DATA.with_name("update_order_9.json")
TENTH = DATA.with_name("update_order_10.json")
ATTACK = DATA.with_name("update_order_attack53.json")
ATTACK54 = DATA.with_name("update_order_attack54.json")
ATTACK55 = DATA.with_name("update_order_attack55.json")
ATTACK56 = DATA.with_name("update_order_attack56.json")
ATTACK60 = DATA.with_name("update_order_attack60.json")
# Each set with the fewest cases it was written to hold.
SETS = {
    DATA: 48,
    SECOND: 36,
    THIRD: 36,
    FOURTH: 34,
    FIFTH: 36,
    SIXTH: 36,
    SEVENTH: 36,
    EIGHTH: 36,
    NINTH: 36,
    TENTH: 36,
    ATTACK: 30,
    ATTACK54: 30,
    ATTACK55: 30,
    ATTACK56: 30,
    ATTACK60: 30,
}
# The sets that also say whose fact it is and how the newest value is worded.
DESCRIBED = [SECOND, THIRD, FOURTH, FIFTH, SIXTH, SEVENTH, EIGHTH, NINTH, TENTH]
RAW = {path: json.loads(path.read_text())["cases"] for path in SETS}
CASES = {path: load_cases(path) for path in SETS}

RAW_CASES = [(path, raw) for path in SETS for raw in RAW[path]]
LOADED = [(path, case) for path in SETS for case in CASES[path]]


def _ids(items: list[tuple[Path, Any]]) -> list[str]:
    return [f"{path.stem}/{item['id'] if isinstance(item, dict) else item.id}" for path, item in items]


@pytest.mark.parametrize("path", list(SETS), ids=[p.stem for p in SETS])
def test_it_holds_enough_varied_cases(path: Path) -> None:
    cases = CASES[path]
    assert len(cases) >= SETS[path]
    assert len({c.id for c in cases}) == len(cases)
    assert {c.language for c in cases} <= {"en", "de", "es", "fr"}
    assert {c.asks for c in cases} == {"now", "earlier"}
    assert {c.said for c in cases} == {"passing", "plain"}
    assert {c.overlap for c in cases} == {"high", "low"}
    assert len({c.language for c in cases}) > 1
    assert any(c.values >= 3 for c in cases)


PAIRS = list(itertools.combinations(SETS, 2))


@pytest.mark.parametrize(("one", "other"), PAIRS, ids=[f"{a.stem}-{b.stem}" for a, b in PAIRS])
def test_it_keeps_each_set_on_other_cases_than_the_others(one: Path, other: Path) -> None:
    assert not {c.id for c in CASES[one]} & {c.id for c in CASES[other]}
    assert not {c.question for c in CASES[one]} & {c.question for c in CASES[other]}


@pytest.mark.parametrize("path", DESCRIBED, ids=[p.stem for p in DESCRIBED])
def test_it_describes_whose_fact_and_how_the_newest_value_is_worded(path: Path) -> None:
    # The fields the loader ignores, read from the file: a typo would silently split a group.
    raw = RAW[path]
    assert {r["whose"] for r in raw} == {"own", "other"}
    assert {r["how"] for r in raw} == {"direct", "correction", "other verb", "number only", "pronoun"}


@pytest.mark.parametrize(("path", "raw"), RAW_CASES, ids=_ids(RAW_CASES))
def test_it_has_sessions_weeks_apart_and_the_question_after_them(path: Path, raw: dict[str, Any]) -> None:
    assert 3 <= len(raw["sessions"]) <= 6
    dates = [datetime.fromisoformat(session["date"]) for session in raw["sessions"]]
    assert all(later - earlier >= timedelta(days=7) for earlier, later in itertools.pairwise(dates))
    assert datetime.fromisoformat(raw["question_date"]) > dates[-1]
    for session in raw["sessions"]:
        assert 6 <= len(session["turns"]) <= 16
        assert {t["role"] for t in session["turns"]} == {"user", "assistant"}
    # Every turn is saved with its session's date: the loader keeps the file's order.
    case = next(c for c in CASES[path] if c.id == raw["id"])
    assert [t.occurred_at for t in case.conversation.turns] == sorted(
        t.occurred_at for t in case.conversation.turns
    )


@pytest.mark.parametrize(("path", "case"), LOADED, ids=_ids(LOADED))
def test_it_marks_old_and_new_user_turns_in_separate_sessions(path: Path, case: Case) -> None:
    raw = next(r for r in RAW[path] if r["id"] == case.id)
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


ATTACK_RAW = [(ATTACK, raw) for raw in RAW[ATTACK]]


def test_it_attacks_the_change_rule_both_ways() -> None:
    # The field the loader ignores, read from the file: a typo would drop a case from its group.
    kinds = [raw["attack"] for raw in RAW[ATTACK]]
    assert set(kinds) == {"must-not-move", "should-move"}
    assert kinds.count("must-not-move") >= 20
    assert kinds.count("should-move") >= 10
    assert all(raw["trap"].strip() for raw in RAW[ATTACK])
    moving = [raw for raw in RAW[ATTACK] if raw["attack"] == "should-move"]
    assert sum(raw["language"] != "en" for raw in moving) >= 4
    # A value said in other words than the question's is what the rule is for.
    assert {raw["overlap"] for raw in moving} == {"low"}
    assert {raw["asks"] for raw in moving} == {"now"}


def _sessions_of(raw: dict[str, Any], mark: str) -> list[int]:
    return [
        s
        for s, session in enumerate(raw["sessions"])
        for turn in session["turns"]
        if turn.get("evidence") == mark or (mark == "decoy" and turn.get("decoy"))
    ]


@pytest.mark.parametrize(("path", "raw"), ATTACK_RAW, ids=_ids(ATTACK_RAW))
def test_it_says_each_decoy_after_the_value_that_holds(path: Path, raw: dict[str, Any]) -> None:
    decoys = [turn for session in raw["sessions"] for turn in session["turns"] if turn.get("decoy")]
    # A decoy is the person's and no statement of the value: never evidence.
    assert all(turn["role"] == "user" and "evidence" not in turn for turn in decoys)
    if raw["attack"] == "must-not-move":
        # It comes in a later conversation than the value that still holds, where the rule looks.
        assert decoys
        assert min(_sessions_of(raw, "decoy")) > _sessions_of(raw, "new")[0]
    else:
        # A decoy in a should-move case comes after the true change: it competes for the move.
        assert all(s > _sessions_of(raw, "new")[0] for s in _sessions_of(raw, "decoy"))


def test_it_attacks_the_asking_rule_both_ways() -> None:
    # The field the loader ignores, read from the file: a typo would drop a case from its group.
    raw = RAW[ATTACK54]
    kinds = [r["attack"] for r in raw]
    assert set(kinds) == {"must-not-move", "should-move"}
    assert kinds.count("must-not-move") >= 18
    assert kinds.count("should-move") >= 10
    assert all(r["trap"].strip() for r in raw)
    assert sum(r["language"] != "en" for r in raw) >= 6
    # A later question about the topic is what the rule is for: it holds no value, it comes after
    # the value that holds, and it is asked about now.
    _assert_decoyed_after_the_new_value([r for r in raw if r["attack"] == "should-move"])


def _assert_decoyed_after_the_new_value(moving: list[dict[str, Any]]) -> None:
    # Each should-move case asks about now and has a decoy in a session after the new value's.
    assert {r["asks"] for r in moving} == {"now"}
    for r in moving:
        decoys = _sessions_of(r, "decoy")
        assert decoys
        assert min(decoys) > _sessions_of(r, "new")[0]


ATTACK54_RAW = [(ATTACK54, raw) for raw in RAW[ATTACK54]]


@pytest.mark.parametrize(("path", "raw"), ATTACK54_RAW, ids=_ids(ATTACK54_RAW))
def test_it_marks_a_decoy_of_the_asking_rule_as_no_evidence(path: Path, raw: dict[str, Any]) -> None:
    decoys = [turn for session in raw["sessions"] for turn in session["turns"] if turn.get("decoy")]
    assert all(turn["role"] == "user" and "evidence" not in turn for turn in decoys)
    if raw["attack"] == "must-not-move":
        # The value the question asks for is said inside a turn that only asks: a question mark ends it.
        target = "old" if raw["asks"] == "earlier" else "new"
        said = [t for s in raw["sessions"] for t in s["turns"] if t.get("evidence") == target]
        assert re.sub(r"[^\w?!.]+$", "", said[0]["text"]).endswith("?"), said[0]["text"]


REFERENT, OWN_VALUES = "change_by_referent", "asking_own_values"


def _attack55(rule: str, kind: str) -> list[dict[str, Any]]:
    return [r for r in RAW[ATTACK55] if r["rule"] == rule and r["attack"] == kind]


def test_it_attacks_the_referent_and_own_value_rules_both_ways() -> None:
    # The fields the loader ignores, read from the file: a typo would drop a case from its group.
    raw = RAW[ATTACK55]
    assert {r["rule"] for r in raw} == {REFERENT, OWN_VALUES}
    assert {r["attack"] for r in raw} == {"must-not-move", "should-move"}
    assert all(r["trap"].strip() for r in raw)
    assert len(_attack55(REFERENT, "must-not-move")) >= 14
    assert len(_attack55(REFERENT, "should-move")) >= 6
    assert len(_attack55(OWN_VALUES, "must-not-move")) >= 6
    assert len(_attack55(OWN_VALUES, "should-move")) >= 4
    assert sum(r["language"] != "en" for r in _attack55(REFERENT, "must-not-move")) >= 5
    # A change named by its old and new value, in other words than the question's, is what the
    # referent rule is for; a later question about the topic is what the asking rule is for.
    assert {r["overlap"] for r in _attack55(REFERENT, "should-move")} == {"low"}
    assert {r["asks"] for r in _attack55(REFERENT, "should-move")} == {"now"}
    assert {r["asks"] for r in _attack55(OWN_VALUES, "should-move")} == {"now"}


ATTACK55_RAW = [(ATTACK55, raw) for raw in RAW[ATTACK55]]


@pytest.mark.parametrize(("path", "raw"), ATTACK55_RAW, ids=_ids(ATTACK55_RAW))
def test_it_marks_a_decoy_of_the_referent_and_own_value_rules(path: Path, raw: dict[str, Any]) -> None:
    decoys = [turn for session in raw["sessions"] for turn in session["turns"] if turn.get("decoy")]
    # A decoy is the person's and no statement of the value: never evidence.
    assert all(turn["role"] == "user" and "evidence" not in turn for turn in decoys)
    # Any decoy comes in a later conversation than the value that holds, where the rules look.
    assert all(s > _sessions_of(raw, "new")[0] for s in _sessions_of(raw, "decoy"))
    tempted = (raw["rule"], raw["attack"]) in {(REFERENT, "must-not-move"), (OWN_VALUES, "should-move")}
    assert bool(decoys) or not tempted
    if (raw["rule"], raw["attack"]) == (OWN_VALUES, "must-not-move"):
        # The value the question asks for is said inside a turn that only asks: a question mark ends it.
        target = "old" if raw["asks"] == "earlier" else "new"
        said = [t for s in raw["sessions"] for t in s["turns"] if t.get("evidence") == target]
        assert re.sub(r"[^\w?!.]+$", "", said[0]["text"]).endswith("?"), said[0]["text"]


TYPED = "typed_answers_first"


def test_it_attacks_the_typed_answers_rule_both_ways() -> None:
    # The fields the loader ignores, read from the file: a typo would drop a case from its group.
    raw = RAW[ATTACK56]
    assert {r["rule"] for r in raw} == {TYPED}
    kinds = [r["attack"] for r in raw]
    assert set(kinds) == {"must-not-move", "should-move"}
    assert kinds.count("must-not-move") >= 14
    assert kinds.count("should-move") >= 8
    assert all(r["trap"].strip() for r in raw)
    staying = [r for r in raw if r["attack"] == "must-not-move"]
    assert sum(r["language"] != "en" for r in staying) >= 5
    assert {"de", "es", "fr"} <= {r["language"] for r in staying}
    # A later answer by words holding no value of the kind asked is what the rule is for: each
    # should-move case has one, after the value that holds, and asks about now.
    _assert_decoyed_after_the_new_value([r for r in raw if r["attack"] == "should-move"])


ATTACK56_RAW = [(ATTACK56, raw) for raw in RAW[ATTACK56]]


@pytest.mark.parametrize(("path", "raw"), ATTACK56_RAW, ids=_ids(ATTACK56_RAW))
def test_it_marks_a_decoy_of_the_typed_answers_rule_after_the_value_that_holds(
    path: Path, raw: dict[str, Any]
) -> None:
    # A decoy is the person's and no statement of the value: never evidence. It is said after the
    # value that holds, in its conversation (the same said-at time, where only the rank orders
    # them) or a later one.
    turns = [turn for session in raw["sessions"] for turn in session["turns"]]
    newest = next(i for i, turn in enumerate(turns) if turn.get("evidence") == "new")
    decoys = [i for i, turn in enumerate(turns) if turn.get("decoy")]
    assert all(turns[i]["role"] == "user" and "evidence" not in turns[i] for i in decoys)
    assert all(i > newest for i in decoys)
    assert all(s >= _sessions_of(raw, "new")[0] for s in _sessions_of(raw, "decoy"))


# The fourth to tenth sets mark their decoys only after the newest value.
DECOYED_RAW = [
    (path, raw) for path in (FOURTH, FIFTH, SIXTH, SEVENTH, EIGHTH, NINTH, TENTH) for raw in RAW[path]
]


def test_it_attacks_the_change_by_meaning_rule_both_ways() -> None:
    # The field the loader ignores, read from the file: a typo would drop a case from its group.
    raw = RAW[ATTACK60]
    kinds = [r["attack"] for r in raw]
    assert set(kinds) == {"must-not-move", "should-move"}
    assert kinds.count("must-not-move") >= 18
    assert kinds.count("should-move") >= 10
    assert all(r["trap"].strip() for r in raw)
    staying = [r for r in raw if r["attack"] == "must-not-move"]
    assert sum(r["language"] != "en" for r in staying) >= 6
    assert {"de", "es", "fr"} <= {r["language"] for r in staying}
    # A change said in other words than the question's is what the rule is for: each should-move
    # case says its value that holds so, in another language for some, and asks about now.
    moving = [r for r in raw if r["attack"] == "should-move"]
    assert {r["overlap"] for r in moving} == {"low"}
    assert {r["asks"] for r in moving} == {"now"}
    assert sum(r["language"] != "en" for r in moving) >= 4


ATTACK60_RAW = [(ATTACK60, raw) for raw in RAW[ATTACK60]]


@pytest.mark.parametrize(("path", "raw"), ATTACK60_RAW, ids=_ids(ATTACK60_RAW))
def test_it_marks_a_decoy_of_the_change_by_meaning_rule_after_the_value_that_holds(
    path: Path, raw: dict[str, Any]
) -> None:
    decoys = [turn for session in raw["sessions"] for turn in session["turns"] if turn.get("decoy")]
    # A decoy is the person's and no statement of the value: never evidence.
    assert all(turn["role"] == "user" and "evidence" not in turn for turn in decoys)
    # Any decoy comes in a later conversation than the value that holds, where the rule looks; a
    # must-not-move case has one.
    assert all(s > _sessions_of(raw, "new")[0] for s in _sessions_of(raw, "decoy"))
    assert bool(decoys) or raw["attack"] == "should-move"


# The fourth to ninth sets mark their decoys only after the newest value.
DECOYED_RAW = [(path, raw) for path in (FOURTH, FIFTH, SIXTH, SEVENTH, EIGHTH, NINTH) for raw in RAW[path]]


@pytest.mark.parametrize(("path", "raw"), DECOYED_RAW, ids=_ids(DECOYED_RAW))
def test_it_says_a_decoy_only_after_the_newest_value(path: Path, raw: dict[str, Any]) -> None:
    # A decoy (the topic, no value) scores whether it outranks the value that holds: one said before
    # that value, or one that states a value, would score something else.
    turns = [turn for session in raw["sessions"] for turn in session["turns"]]
    newest = next(i for i, turn in enumerate(turns) if turn.get("evidence") == "new")
    decoys = [i for i, turn in enumerate(turns) if turn.get("decoy")]
    assert all(turns[i]["role"] == "user" and "evidence" not in turns[i] for i in decoys)
    assert all(i > newest for i in decoys)


def test_it_mixes_the_fourth_set_as_its_brief_asks() -> None:
    # The fields the loader ignores and the counts its README row states, read from the file.
    raw, cases = RAW[FOURTH], CASES[FOURTH]
    with_decoy = [r for r in raw if any(t.get("decoy") for s in r["sessions"] for t in s["turns"])]
    assert len(with_decoy) * 3 >= 2 * len(raw)
    assert 5 <= sum(c.values >= 3 for c in cases) <= 7
    assert 6 <= sum(c.asks == "earlier" for c in cases) <= 8
    assert all(sum(c.language == lang for c in cases) == 2 for lang in ("de", "es", "fr"))
    now = [c for c in cases if c.asks == "now"]
    assert abs(sum(c.overlap == "low" for c in now) * 2 - len(now)) <= len(now) // 4


PASSING = [(path, case) for path, case in LOADED if case.said == "passing"]


@pytest.mark.parametrize(("path", "case"), PASSING, ids=_ids(PASSING))
def test_it_says_a_value_in_passing_inside_a_longer_message(path: Path, case: Case) -> None:
    newest = next(t for t in case.conversation.turns if t.dia_id == case.evidence[-1])
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", newest.content) if s.strip()]
    assert 3 <= len(sentences) <= 6, newest.content


def _case(asks: str) -> Case:
    return next(c for c in CASES[DATA] if c.asks == asks and c.values == 2)


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


def test_it_keys_the_ingest_cache_on_the_data_file() -> None:
    # Two sets in one cache folder would score each other's memories.
    assert len({data_key(path) for path in SETS}) == len(SETS)
