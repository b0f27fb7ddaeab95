"""How the update suite scores a case, whichever way its history came in (one save at a time,
tests/memories/test_update_engine.py, or one import, tests/memories/test_update_engine_import.py):
what became of the first earlier statement once the later one was stored, the figures of a run, and
the thresholds both ways must meet. One rule in one place, so the two suites' figures compare."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from memories.models import Evidence, Memory, Source
from tests.memories.update_cases import CASES, Case
from tests.memories.update_cases_40 import (
    BATCH_40A,
    BATCH_40B,
    BATCH_40C,
    BATCH_40F,
    BATCH_40G,
    BATCH_40H,
    BATCH_40I,
    BATCH_40J,
    BATCH_52A,
    BATCH_52B,
)
from tests.memories.update_cases_58 import BATCH_58A
from tests.memories.update_cases_58b import BATCH_58B
from tests.memories.update_cases_59 import BATCH_59

ALL_CASES: tuple[Case, ...] = (
    *CASES,
    *BATCH_40A,
    *BATCH_40B,
    *BATCH_40C,
    *BATCH_40F,
    *BATCH_40G,
    *BATCH_40H,
    *BATCH_40I,
    *BATCH_40J,
    *BATCH_52A,
    *BATCH_52B,
    *BATCH_58A,
)


@dataclass
class Outcome:
    case: Case
    actual: str
    # Earlier statements other than the first that the later one superseded beyond what the case
    # expects (wrong supersessions), and those it should have superseded but did not (misses).
    collateral: int
    missed_others: int


# Measured, not gated: batch 58b, written blind after stop 58's rules and scored once on them (63/94,
# supersession precision 0.793 recall 0.535, deduplication recall 0.400; docs/decisions.md). The
# engine's rules do not reach it; one rule was added after reading it, for a true fact it hid ("... but
# still work at the port"), none fitted to its misses. It is what the next try is measured on, by
# `UPDATE_CASES_BATCH=58b` (which asserts the thresholds on it, and fails until they hold).
# Batch 59, written blind at stop 59 before the second reading was run on it: the rules alone 67/95
# (supersession 0.864 / 0.500); with the second reading, its first try, 75/95 (0.893 / 0.658), one
# brother's job hidden by its "same", which is not taken since; 74/95 (0.897 / 0.684) as shipped.
MEASURED_CASES: tuple[Case, ...] = (*BATCH_58B, *BATCH_59)


def selected_cases() -> tuple[Case, ...]:
    # UPDATE_CASES_BATCH=40a scores one batch alone (how a new batch is scored blind); the thresholds
    # are asserted on whatever ran, so a selection that misses them fails like the whole suite would.
    wanted = os.environ.get("UPDATE_CASES_BATCH", "")
    if not wanted:
        return ALL_CASES
    return tuple(c for c in (*ALL_CASES, *MEASURED_CASES) if c.batch in wanted.split(","))


def outcome_of(case: Case, earlier: Sequence[Source], later: Source) -> Outcome:
    """What the later statement (stored from `later`) did to the first earlier one (from
    `earlier[0]`): each statement is its own source, whether a save's or an import's item."""
    # The first statement's memory: a note of several statements is several memories, the first
    # of them is the one the case is about.
    first = Memory.objects.filter(source=earlier[0]).order_by("span_start", "recorded_at", "id").first()
    assert first is not None, case
    created = list(Memory.objects.filter(source=later))
    if not created:
        assert Evidence.objects.filter(memory=first, source=later).exists() or any(
            Evidence.objects.filter(memory__source=source, source=later).exists() for source in earlier[1:]
        ), case
        merged_into_first = Evidence.objects.filter(memory=first, source=later).exists()
        actual = "same" if merged_into_first else "add"
    elif first.superseded_by_id in {m.id for m in created}:
        actual = "update"
    else:
        actual = "add"
    others = Memory.objects.filter(source__in=earlier, superseded_by__in=created).exclude(id=first.id).count()
    expected = case.others_superseded
    return Outcome(case, actual, max(others - expected, 0), max(expected - others, 0))


def right(outcome: Outcome) -> bool:
    return outcome.actual == outcome.case.expect and not outcome.collateral and not outcome.missed_others


@dataclass(frozen=True)
class Figures:
    """A run's figures: the cases as expected, supersession's and deduplication's precision and
    recall (with what was made and expected), and the lines that report them."""

    right: int
    cases: int
    sup_precision: float
    sup_recall: float
    dup_precision: float
    dup_recall: float
    lines: tuple[str, ...]

    def meets_thresholds(self) -> bool:
        return (
            self.sup_precision >= 0.95
            and self.sup_recall >= 0.9
            and self.dup_precision >= 0.95
            and self.dup_recall >= 0.9
        )


def _rates(outcomes: list[Outcome], label: str) -> tuple[float, float, int, int]:
    made = [o for o in outcomes if o.actual == label]
    wanted = [o for o in outcomes if o.case.expect == label]
    correct = [o for o in made if o.case.expect == label]
    precision = len(correct) / len(made) if made else 1.0
    recall = len(correct) / len(wanted) if wanted else 1.0
    return precision, recall, len(made), len(wanted)


def _by(outcomes: list[Outcome], key: str) -> list[str]:
    """ "40a: 51/59" per batch (or per class): how many cases came out as expected."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[getattr(outcome.case, key)].append(outcome)
    return [
        f"  {key} {name or '-'}: {sum(right(o) for o in group)}/{len(group)}"
        for name, group in sorted(groups.items())
    ]


def figures(outcomes: list[Outcome], title: str) -> Figures:
    """The run's figures, its misses and collateral supersessions named."""
    wrong = [o for o in outcomes if not right(o)]
    collateral = sum(o.collateral for o in outcomes)
    missed_others = sum(o.missed_others for o in outcomes)
    sup = _rates(outcomes, "update")
    dup = _rates(outcomes, "same")
    # Wrongly superseding a second, unrelated statement counts against supersession precision.
    sup_precision = sup[0] * sup[2] / (sup[2] + collateral) if sup[2] + collateral else 1.0
    expected_total = sup[3] + sum(o.case.others_superseded for o in outcomes)
    sup_recall = (
        (sup[1] * sup[3] + expected_total - sup[3] - missed_others) / expected_total
        if expected_total
        else 1.0
    )
    lines = (
        f"{title}: {len(outcomes) - len(wrong)}/{len(outcomes)} cases as expected",
        f"supersession: precision {sup_precision:.3f} recall {sup_recall:.3f} "
        f"(made {sup[2]}, expected {sup[3]}; others: {collateral} wrong, {missed_others} missed)",
        f"deduplication: precision {dup[0]:.3f} recall {dup[1]:.3f} (made {dup[2]}, expected {dup[3]})",
        *_by(outcomes, "batch"),
        *_by(outcomes, "cls"),
        *(
            f"  MISS [{o.case.batch} {o.case.cls}] {o.case.name}: expected {o.case.expect}, got {o.actual}"
            for o in wrong
        ),
        *(
            f"  COLLATERAL {o.case.name}: {o.collateral} other statement(s) superseded"
            for o in outcomes
            if o.collateral
        ),
    )
    return Figures(
        right=len(outcomes) - len(wrong),
        cases=len(outcomes),
        sup_precision=sup_precision,
        sup_recall=sup_recall,
        dup_precision=dup[0],
        dup_recall=dup[1],
        lines=lines,
    )


def scored(outcomes: list[Outcome], title: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The run's figures printed, and the thresholds asserted on them: on the whole suite, or on the
    batches UPDATE_CASES_BATCH selected."""
    run = figures(outcomes, title)
    with capsys.disabled():
        print("\n" + "\n".join(run.lines))
    if not os.environ.get("UPDATE_CASES_BATCH"):
        assert len(outcomes) >= 300
    assert run.meets_thresholds(), run.lines
