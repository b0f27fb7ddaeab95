"""The update suite with each case's history brought in by ONE import instead of one save at a time:
the same cases, scored by the same rules (tests/memories/update_scoring.py) against the same
thresholds, through REST and the real worker. Issue 44 asks an imported history for the per-save
path's quality: the import judges its items in their order, each its own source, as saves one by one
would (memories/worker/imports.py).

Each case is a mem0 get_all export of a new user: the earlier statements then the later one, each
its own id and a time in order, a second apart and ending now, so that a statement's own time (the
reference its dates are read against) is the moment a save of it would have had.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import User
from memories.models import Source
from memories.services.account import user_sign_up
from tests.helpers import pat_client, wait_for_job
from tests.memories import import_fixtures as fx
from tests.memories.update_cases import Case
from tests.memories.update_scoring import Outcome, outcome_of, scored, selected_cases

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("celery_worker"),
]


def imported_at_once(case: Case, email: str) -> Outcome:
    """The case's history imported by a new user in one file, the import waited for."""
    user: User = user_sign_up(email=email, password="correct horse battery staple")
    client = pat_client(user)
    texts = [*case.earlier, case.later]
    start = timezone.now() - timedelta(seconds=len(texts))
    data = fx.mem0_json([(text, start + timedelta(seconds=n)) for n, text in enumerate(texts)], tagged=False)
    response = fx.post_file(client, data, "mem0.json")
    assert response.status_code == 202, response.json()
    made = response.json()["import"]
    job = wait_for_job(made["job_id"])
    assert job.status == "succeeded", (case, job.error_code, job.error_message)
    done = client.get(f"/api/v1/imports/{made['id']}").json()["import"]
    # Every statement stored: a skipped one would score the case on fewer statements than a save.
    assert (done["items"]["stored"], done["items"]["skipped"], done["items"]["failed"]) == (
        len(texts),
        0,
        0,
    ), done
    refs = [item["id"] for item in json.loads(data)["results"]]
    sources = {s.source_ref: s for s in Source.objects.filter(owner=user, source_ref__in=refs)}
    ordered = [sources[ref] for ref in refs]
    return outcome_of(case, ordered[:-1], ordered[-1])


def test_an_imported_history_is_judged_with_the_per_save_paths_precision_and_recall(capsys):
    outcomes = [
        imported_at_once(case, f"case{index}@example.com") for index, case in enumerate(selected_cases())
    ]
    scored(outcomes, "update engine, imported", capsys)
