"""The update engine end to end: everyday cases through the REST API and the real worker.

Every case of `update_cases.CASES` is said by its own new user, one save at a time, as a person
would: then the first earlier statement must be superseded ("update"), confirmed by new evidence
without a new row ("same"), or left current beside the new one ("add"). The suite reports the
precision and recall of supersession and of deduplication separately: hiding a true fact is as
bad as keeping a stale one, so both must be high.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass

import pytest

from accounts.models import User
from memories.models import Evidence, Job, Memory
from memories.services.account import user_sign_up
from tests.helpers import pat_client, wait_for_job
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
)

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
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


def _remember(client, content: str) -> Job:
    response = client.post("/api/v1/operations/remember", {"content": content}, format="json")
    assert response.status_code == 200, response.json()
    job = wait_for_job(response.json()["job_id"])
    assert job.status == "succeeded", (content, job.error_code, job.error_message)
    return job


@dataclass
class Outcome:
    case: Case
    actual: str
    # Earlier statements other than the first that the later one superseded beyond what the case
    # expects (wrong supersessions), and those it should have superseded but did not (misses).
    collateral: int
    missed_others: int


def _run(case: Case, index: int) -> Outcome:
    user: User = user_sign_up(email=f"case{index}@example.com", password="correct horse battery staple")
    client = pat_client(user)
    jobs = [_remember(client, text) for text in case.earlier]
    # The first statement's memory: a note of several statements is several memories, the first
    # of them is the one the case is about.
    first = Memory.objects.filter(job=jobs[0]).order_by("span_start", "recorded_at", "id").first()
    assert first is not None, case
    later_job = _remember(client, case.later)
    created = list(Memory.objects.filter(job=later_job))
    first.refresh_from_db()
    if not created:
        assert Evidence.objects.filter(memory=first, source=later_job.source).exists() or any(
            Evidence.objects.filter(memory__job=job, source=later_job.source).exists() for job in jobs[1:]
        ), case
        merged_into_first = Evidence.objects.filter(memory=first, source=later_job.source).exists()
        actual = "same" if merged_into_first else "add"
    elif first.superseded_by_id in {m.id for m in created}:
        actual = "update"
    else:
        actual = "add"
    others = Memory.objects.filter(job__in=jobs, superseded_by__in=created).exclude(id=first.id).count()
    expected = case.others_superseded
    return Outcome(case, actual, max(others - expected, 0), max(expected - others, 0))


def _rates(outcomes: list[Outcome], label: str) -> tuple[float, float, int, int]:
    made = [o for o in outcomes if o.actual == label]
    wanted = [o for o in outcomes if o.case.expect == label]
    right = [o for o in made if o.case.expect == label]
    precision = len(right) / len(made) if made else 1.0
    recall = len(right) / len(wanted) if wanted else 1.0
    return precision, recall, len(made), len(wanted)


def _by(outcomes: list[Outcome], key: str) -> list[str]:
    """ "40a: 51/59" per batch (or per class): how many cases came out as expected."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[getattr(outcome.case, key)].append(outcome)
    return [
        f"  {key} {name or '-'}: {sum(_right(o) for o in group)}/{len(group)}"
        for name, group in sorted(groups.items())
    ]


def _right(outcome: Outcome) -> bool:
    return outcome.actual == outcome.case.expect and not outcome.collateral and not outcome.missed_others


def _selected() -> tuple[Case, ...]:
    # UPDATE_CASES_BATCH=40a scores one batch alone (how a new batch is scored blind); the thresholds
    # are asserted on whatever ran, so a selection that misses them fails like the whole suite would.
    wanted = os.environ.get("UPDATE_CASES_BATCH", "")
    return tuple(c for c in ALL_CASES if not wanted or c.batch in wanted.split(","))


def test_the_update_engine_supersedes_and_deduplicates_with_high_precision_and_recall(capsys):
    outcomes = [_run(case, index) for index, case in enumerate(_selected())]
    wrong = [o for o in outcomes if not _right(o)]
    collateral = sum(o.collateral for o in outcomes)
    missed_others = sum(o.missed_others for o in outcomes)
    sup = _rates(outcomes, "update")
    dup = _rates(outcomes, "same")
    # Wrongly superseding a second, unrelated statement counts against supersession precision.
    sup_precision = sup[0] * sup[2] / (sup[2] + collateral) if sup[2] + collateral else 1.0
    expected_total = sup[3] + sum(o.case.others_superseded for o in outcomes)
    sup_recall = (sup[1] * sup[3] + expected_total - sup[3] - missed_others) / expected_total
    report = [
        f"update engine: {len(outcomes) - len(wrong)}/{len(outcomes)} cases as expected",
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
    ]
    with capsys.disabled():
        print("\n" + "\n".join(report))
    if not os.environ.get("UPDATE_CASES_BATCH"):
        assert len(outcomes) >= 300
    assert sup_precision >= 0.95 and sup_recall >= 0.9, report
    assert dup[0] >= 0.95 and dup[1] >= 0.9, report
