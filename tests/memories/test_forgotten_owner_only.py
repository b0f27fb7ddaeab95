"""What the owner forgot is theirs alone to see (issue 40, section 1): the dashboard's session and
their own personal access token list it, show it and export it; an app acting for them (an OAuth
token, even with every scope) is refused the listing and the export, finds no such memory, and is
not told its id by `pipeline_readiness`; another account sees nothing of it."""

from __future__ import annotations

from typing import Any

from django.test import Client
from django.urls import reverse

from memories.models import Memory
from tests.helpers import error_of, oauth_client, pat_client, wait_for_job
from tests.memories.test_recall import e2e

pytestmark = e2e

SAID = "The recycling goes out on Tuesday evenings."
LISTING = "/api/v1/memories?status=suppressed&include_superseded=true"


def _remember(client: Any, content: str) -> str:
    response = client.post("/api/v1/operations/remember", {"content": content}, format="json")
    assert response.status_code == 200, response.json()
    job = wait_for_job(response.json()["job_id"])
    assert job.status == "succeeded", (job.error_code, job.error_message)
    return str(job.id)


def _forgotten(alice) -> tuple[Memory, str]:
    """Alice says a fact twice (the second save merges into the first memory), then forgets it."""
    owner = pat_client(alice)
    first = _remember(owner, SAID)
    merged_job = _remember(owner, SAID)
    memory = Memory.objects.get(owner=alice, job_id=first)
    response = owner.post(f"/api/v1/memories/{memory.id}/suppress", {"reason_code": "private"}, format="json")
    assert response.status_code == 200, response.json()
    return memory, merged_job


def _readiness(client: Any, job_id: str) -> dict[str, Any]:
    response = client.post(
        reverse("api-operation-run", args=["pipeline_readiness"]), {"job_ids": [job_id]}, format="json"
    )
    assert response.status_code == 200, response.json()
    return dict(response.json())


def test_an_app_never_sees_what_the_owner_forgot(alice):
    memory, merged_job = _forgotten(alice)
    agent, _ = oauth_client(alice, "Forget Agent")
    listing = agent.get(LISTING)
    assert listing.status_code == 403 and error_of(listing)["code"] == "forbidden"
    detail = agent.get(f"/api/v1/memories/{memory.id}")
    assert detail.status_code == 404 and error_of(detail)["code"] == "memory_not_found"
    export = agent.get("/api/v1/export")
    assert export.status_code == 403 and error_of(export)["code"] == "forbidden"
    readiness = _readiness(agent, merged_job)
    (job,) = readiness["jobs"]
    assert job["merged_into"] == [] and job["searchable"] is False
    assert str(memory.id) not in str(readiness) and SAID not in str(readiness)


def test_the_owner_in_person_still_sees_it(alice):
    memory, merged_job = _forgotten(alice)
    owner = pat_client(alice)
    assert str(memory.id) in {row["id"] for row in owner.get(LISTING).json()["results"]}
    assert owner.get(f"/api/v1/memories/{memory.id}").json()["content"] == SAID
    (job,) = _readiness(owner, merged_job)["jobs"]
    assert job["merged_into"] == [{"memory_id": str(memory.id), "searchable": False, "state": "suppressed"}]
    dashboard = Client()
    dashboard.force_login(alice)
    assert SAID in dashboard.get(LISTING).content.decode()
    assert SAID in b"".join(dashboard.get("/api/v1/export").streaming_content).decode()


def test_another_account_sees_nothing_of_it(alice, bob):
    memory, merged_job = _forgotten(alice)
    outsider = pat_client(bob)
    assert outsider.get(LISTING).json()["results"] == []
    assert outsider.get(f"/api/v1/memories/{memory.id}").status_code == 404
    (job,) = _readiness(outsider, merged_job)["jobs"]
    assert job["status"] == "not_found" and job["merged_into"] == []
    assert SAID not in b"".join(outsider.get("/api/v1/export").streaming_content).decode()
