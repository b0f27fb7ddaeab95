"""remember end to end: REST -> Source + Job -> the real worker -> Memory rows."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memories.models import Evidence, Job, Memory, Source
from tests.helpers import error_of, oauth_client, pat_client, wait_for_job

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


def _remember(client, content: str, **extra) -> Job:
    response = client.post("/api/v1/operations/remember", {"content": content, **extra}, format="json")
    assert response.status_code == 200, response.json()
    return wait_for_job(response.json()["job_id"])


def _save(client, **body) -> dict:
    response = client.post("/api/v1/memories", body, format="json")
    assert response.status_code in (201, 202), response.json()
    return response.json()


class TestRemember:
    def test_it_derives_memories_with_kind_dates_entities_and_embedding(self, alice):
        client = pat_client(alice)
        job = _remember(client, "On 8 May 2023: Yesterday I met my friend Maya at Google in Berlin.")
        assert job.status == "succeeded", (job.error_code, job.error_message)
        memory = Memory.objects.get(job=job)
        assert memory.kind == "episode"
        assert memory.occurred_at is not None and memory.occurred_at.date().isoformat() == "2023-05-07"
        names = {e.name for e in memory.entities.all()}
        assert {"Maya", "Berlin"} <= names
        assert memory.embedding is not None and len(memory.embedding) == 384
        assert memory.owner == alice and memory.space.is_default
        listed = client.get(f"/api/v1/jobs/{job.id}").json()
        assert listed["status"] == "succeeded"
        assert [m["id"] for m in listed["memories"]] == [str(memory.id)]

    def test_it_splits_a_conversation_into_turns(self, alice):
        job = _remember(
            pat_client(alice), "Caroline: I adopted a puppy!\nMelanie: That's wonderful, what's its name?"
        )
        contents = sorted(Memory.objects.filter(job=job).values_list("content", flat=True))
        assert len(contents) == 2
        assert contents[0].startswith("Caroline:") and contents[1].startswith("Melanie:")

    def test_it_keeps_a_foresight_with_its_due_date(self, alice):
        body = _save(
            pat_client(alice),
            content="I will fly to Tokyo next Friday.",
            occurred_at="2024-03-06T10:00:00+00:00",
            wait=20,
        )
        assert body["job"]["status"] == "succeeded"
        (memory,) = body["job"]["memories"]
        assert memory["kind"] == "foresight"
        assert memory["clocks"]["due_at"].startswith("2024-03-08")

    def test_it_takes_occurred_at_as_the_instant_it_names_in_any_rfc_3339_spelling(self, alice):
        client = pat_client(alice)
        # Lower-case t and z are RFC 3339 as much as T and Z are.
        for spelling in ("2024-03-06t23:30:00+09:00", "2024-03-06t14:30:00z"):
            body = _save(client, content=f"Tomorrow I fly home ({spelling}).", occurred_at=spelling, wait=20)
            assert body["job"]["status"] == "succeeded", body
            (memory,) = body["job"]["memories"]
            assert memory["clocks"]["due_at"].startswith("2024-03-07")
        stated = set(Source.objects.filter(owner=alice).values_list("refers_to", flat=True))
        assert stated == {datetime(2024, 3, 6, 14, 30, tzinfo=UTC)}

    def test_it_saves_and_verifies_in_one_call_with_tags_and_kind(self, alice):
        body = _save(
            pat_client(alice),
            content="Quarterly numbers look fine",
            tags=["work", "q3"],
            kind="fact",
            wait=20,
        )
        (memory,) = body["job"]["memories"]
        assert memory["kind"] == "fact" and set(memory["tags"]) == {"work", "q3"}

    def test_it_refuses_true_as_the_wait_integer_and_stores_nothing(self, alice):
        response = pat_client(alice).post("/api/v1/memories", {"content": "x", "wait": True}, format="json")
        assert response.status_code == 400
        assert error_of(response)["code"] == "wrong_type"
        assert not Job.objects.exists()


class TestDedupeAndEvidence:
    def test_the_same_fact_from_two_agents_is_one_memory_with_two_sources(self, alice):
        claude, _ = oauth_client(alice, "Claude")
        vscode, _ = oauth_client(alice, "VS Code")
        first = _remember(claude, "I am allergic to peanuts.")
        second = _remember(vscode, "i am allergic to peanuts")
        assert first.status == second.status == "succeeded"
        memories = Memory.objects.filter(owner=alice)
        assert memories.count() == 1
        memory = memories.get()
        assert Evidence.objects.filter(memory=memory).values("source").distinct().count() == 2
        assert memory.agent is not None and memory.agent.name == "Claude"

    def test_running_the_same_job_again_adds_nothing(self, alice):
        from memories.worker.run import job_process

        job = _remember(pat_client(alice), "My favourite colour is green.")
        before = (Memory.objects.count(), Evidence.objects.count())
        Job.objects.filter(id=job.id).update(status="queued")
        job_process(job_id=job.id)
        assert (Memory.objects.count(), Evidence.objects.count()) == before
        assert Job.objects.get(id=job.id).status == "succeeded"


class TestSupersede:
    def test_paris_then_berlin_keeps_paris_as_history(self, alice):
        client = pat_client(alice)
        _remember(client, "I live in Paris.")
        between = datetime.now(UTC)
        _remember(client, "I moved to Berlin.")
        paris = Memory.objects.get(content__contains="Paris")
        berlin = Memory.objects.get(content__contains="Berlin")
        assert berlin.superseded_at is None
        assert paris.superseded_at is not None and paris.superseded_by_id == berlin.id
        assert paris.valid_until is not None
        current = client.get("/api/v1/memories").json()["results"]
        assert [m["id"] for m in current] == [str(berlin.id)]
        then = client.get("/api/v1/memories", {"at": between.isoformat()}).json()["results"]
        assert [m["id"] for m in then] == [str(paris.id)]
        history = client.get(f"/api/v1/memories/{berlin.id}").json()["history"]
        assert str(paris.id) in {h["id"] for h in history}

    def test_someone_elses_move_does_not_supersede_mine(self, alice, bob):
        _remember(pat_client(alice), "I live in Paris.")
        _remember(pat_client(bob), "I moved to Berlin.")
        assert Memory.objects.get(owner=alice).superseded_at is None
