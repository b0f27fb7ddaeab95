"""The update engine end to end: everyday cases through the REST API and the real worker.

Every case of `update_cases.CASES` is said by its own new user, one save at a time, as a person
would: then the first earlier statement must be superseded ("update"), confirmed by new evidence
without a new row ("same"), or left current beside the new one ("add"). The suite reports the
precision and recall of supersession and of deduplication separately: hiding a true fact is as
bad as keeping a stale one, so both must be high. The scoring is tests/memories/update_scoring.py,
shared with the same suite brought in by one import (test_update_engine_import.py).
"""

from __future__ import annotations

import pytest

from accounts.models import User
from memories.models import Source
from memories.services.account import user_sign_up
from tests.helpers import pat_client, wait_for_job
from tests.memories.update_cases import Case
from tests.memories.update_scoring import Outcome, outcome_of, scored, selected_cases

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


def _remember(client, content: str) -> Source:
    """The save's source, once the worker has stored it."""
    response = client.post("/api/v1/operations/remember", {"content": content}, format="json")
    assert response.status_code == 200, response.json()
    job = wait_for_job(response.json()["job_id"])
    assert job.status == "succeeded", (content, job.error_code, job.error_message)
    assert job.source is not None, content
    return job.source


def saved_one_by_one(case: Case, email: str) -> Outcome:
    """The case said by a new user, one save at a time, each waited for."""
    user: User = user_sign_up(email=email, password="correct horse battery staple")
    client = pat_client(user)
    earlier = [_remember(client, text) for text in case.earlier]
    return outcome_of(case, earlier, _remember(client, case.later))


def test_the_update_engine_supersedes_and_deduplicates_with_high_precision_and_recall(capsys):
    outcomes = [
        saved_one_by_one(case, f"case{index}@example.com") for index, case in enumerate(selected_cases())
    ]
    scored(outcomes, "update engine", capsys)


def test_the_second_reading_replaces_through_the_worker_what_the_rules_leave_apart():
    # memories.pipeline.second_reading end to end: each pair the rules alone read as two facts
    # (tests/memories/pipeline/test_second_reading.py asserts that), saved through REST and the real
    # worker, leaves the earlier statement superseded; the decoys a turn away do not.
    from tests.memories.pipeline.test_second_reading import KEPT_APART, READ_AS_CHANGES

    changes = [Case(f"change {i}", (old,), new, "update") for i, (old, new) in enumerate(READ_AS_CHANGES)]
    decoys = [Case(f"decoy {i}", (old,), new, "add") for i, (old, new) in enumerate(KEPT_APART[-3:])]
    for index, case in enumerate([*changes, *decoys]):
        outcome = saved_one_by_one(case, f"reading{index}@example.com")
        assert outcome.actual == case.expect, (case.earlier, case.later, outcome.actual)
