"""The update engine end to end: everyday cases through the REST API and the real worker.

Every case of `update_cases.CASES` is said by its own new user, one save at a time, as a person
would: then the first earlier statement must be superseded ("update"), confirmed by new evidence
without a new row ("same"), or left current beside the new one ("add"). The suite reports the
precision and recall of supersession and of deduplication separately: hiding a true fact is as
bad as keeping a stale one, so both must be high.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from accounts.models import User
from memories.models import Evidence, Job, Memory
from memories.services.account import user_sign_up
from tests.helpers import pat_client, wait_for_job
from tests.memories.update_cases import CASES, Case

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
    first = Memory.objects.get(job=jobs[0])
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
    others = Memory.objects.filter(job__in=jobs[1:], superseded_by__in=created).count()
    expected = case.others_superseded
    return Outcome(case, actual, max(others - expected, 0), max(expected - others, 0))


def _rates(outcomes: list[Outcome], label: str) -> tuple[float, float, int, int]:
    made = [o for o in outcomes if o.actual == label]
    wanted = [o for o in outcomes if o.case.expect == label]
    right = [o for o in made if o.case.expect == label]
    precision = len(right) / len(made) if made else 1.0
    recall = len(right) / len(wanted) if wanted else 1.0
    return precision, recall, len(made), len(wanted)


def test_the_update_engine_supersedes_and_deduplicates_with_high_precision_and_recall(capsys):
    outcomes = [_run(case, index) for index, case in enumerate(CASES)]
    wrong = [o for o in outcomes if o.actual != o.case.expect or o.collateral or o.missed_others]
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
        *(f"  MISS {o.case.name}: expected {o.case.expect}, got {o.actual}" for o in wrong),
        *(
            f"  COLLATERAL {o.case.name}: {o.collateral} other statement(s) superseded"
            for o in outcomes
            if o.collateral
        ),
    ]
    with capsys.disabled():
        print("\n" + "\n".join(report))
    assert len(outcomes) >= 80
    assert sup_precision >= 0.95 and sup_recall >= 0.9, report
    assert dup[0] >= 0.95 and dup[1] >= 0.9, report
