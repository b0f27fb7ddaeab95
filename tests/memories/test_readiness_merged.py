"""Readiness of a save whose content was merged into an existing memory (the same fact again is
evidence, not a new row): it is searchable, through the memory it confirmed."""

from __future__ import annotations

import pytest

from memories.selectors.jobs import job_readiness_list
from tests.helpers import pat_client, wait_for_job

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


def _saved(client, content: str):
    response = client.post("/api/v1/memories", {"content": content}, format="json")
    assert response.status_code == 202, response.json()
    job = wait_for_job(response.json()["job"]["id"])
    assert job.status == "succeeded", (job.error_code, job.error_message)
    return job


def test_it_reports_a_save_merged_into_an_existing_memory_as_searchable(alice):
    client = pat_client(alice)
    first = _saved(client, "The recycling goes out on Tuesday evenings.")
    again = _saved(client, "The recycling goes out on Tuesday evenings.")

    merged, original = job_readiness_list(owner=alice, job_ids=[again.id, first.id])
    assert not again.memories.exists()  # no row of its own: evidence for the first one
    assert (merged.counts.total, merged.counts.searchable, merged.searchable) == (1, 1, True)
    assert (original.counts.total, original.searchable) == (1, True)
    assert merged.stop_polling and [s.status for s in merged.stages][-1] == "done"
