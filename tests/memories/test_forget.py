"""Forgetting: suppress/restore round trip, hard delete that leaves no trace, outsiders."""

from __future__ import annotations

import json

import pytest

from memories.models import AuditEvent, Entity, Job, Memory, Source
from tests.helpers import error_of, pat_client, tables_containing, wait_for_job

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]

SECRET = "Zanzibar-Quokka-7731"


def _remember(client, content: str) -> Job:
    response = client.post("/api/v1/operations/remember", {"content": content}, format="json")
    return wait_for_job(response.json()["job_id"])


# What a REST save states beside the content: each is stored with the save's job, not only on its
# memories, so a hard delete must find it there too.
TAG = "quokka-expedition"
ENTITY = "Vexilloid Partners"
STATED_ENTITIES = [{"name": ENTITY, "type": "Organization"}]


def _save(client, content: str, **stated) -> Job:
    response = client.post("/api/v1/memories", {"content": content, "wait": 20, **stated}, format="json")
    assert response.status_code == 201, response.json()
    job = Job.objects.get(id=response.json()["job"]["id"])
    assert job.status == "succeeded", job.error_message
    return job


def _export(client) -> str:
    response = client.get("/api/v1/export")
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


class TestSuppressRestore:
    def test_it_round_trips_and_audits_both(self, alice):
        client = pat_client(alice)
        job = _remember(client, "I drink oolong every morning.")
        memory = Memory.objects.get(job=job)
        response = client.post(
            f"/api/v1/memories/{memory.id}/suppress", {"reason_code": "private"}, format="json"
        )
        assert response.status_code == 200 and response.json()["status"] == "suppressed"
        assert client.get("/api/v1/memories").json()["results"] == []
        response = client.post(f"/api/v1/memories/{memory.id}/restore", format="json")
        assert response.json()["status"] == "active"
        actions = list(
            AuditEvent.objects.filter(target_id=memory.id)
            .order_by("created_at")
            .values_list("action", flat=True)
        )
        assert actions == ["suppressed", "restored"]

    def test_it_rejects_an_unknown_reason(self, alice):
        client = pat_client(alice)
        memory = Memory.objects.get(job=_remember(client, "I drink oolong."))
        response = client.post(
            f"/api/v1/memories/{memory.id}/suppress", {"reason_code": "bored"}, format="json"
        )
        assert error_of(response)["code"] == "invalid_value"
        assert Memory.objects.get(id=memory.id).status == "active"


class TestHardDelete:
    def test_it_leaves_no_trace_of_the_content_in_any_table(self, alice):
        client = pat_client(alice)
        job = _remember(client, f"My locker code at Fabrikam Labs is {SECRET}.")
        memory = Memory.objects.get(job=job)
        assert tables_containing(SECRET)  # the search finds it before the delete
        response = client.delete(f"/api/v1/memories/{memory.id}")
        assert response.status_code == 200, response.json()
        receipt = response.json()["receipt"]
        assert receipt["memory_id"] == str(memory.id) and receipt["purged"]["memories"] == 1
        assert tables_containing(SECRET) == []
        assert tables_containing("Fabrikam") == []
        assert not Memory.objects.filter(id=memory.id).exists()
        assert not Source.objects.filter(id=job.source_id).exists()
        assert not Entity.objects.filter(owner=alice, name__icontains="Fabrikam").exists()
        event = AuditEvent.objects.get(target_id=memory.id, action="hard_deleted")
        assert SECRET not in str(event.detail)

    def test_it_leaves_no_trace_of_the_tags_and_entities_it_was_saved_with(self, alice):
        client = pat_client(alice)
        job = _save(client, f"My locker code is {SECRET}.", tags=[TAG], entities=STATED_ENTITIES)
        memory = Memory.objects.get(job=job)
        for text in (SECRET, TAG, ENTITY):
            assert tables_containing(text), text  # the search finds each before the delete
            assert text in _export(client), text
        assert client.delete(f"/api/v1/memories/{memory.id}").status_code == 200
        for text in (SECRET, TAG, ENTITY):
            assert tables_containing(text) == [], text
            assert text not in _export(client), text
        # The job stays (its id is the save's receipt), holding nothing of what was said.
        assert Job.objects.get(id=job.id).options == {"confidence": 0.9}

    def test_a_repetition_forgets_what_it_stated_about_the_deleted_memory(self, alice):
        client = pat_client(alice)
        first = _save(client, f"My locker code is {SECRET}.", tags=[TAG])
        # The same fact again, naming an entity: evidence and a link for the first job's memory.
        again = _save(client, f"My locker code is {SECRET}.", entities=STATED_ENTITIES)
        memory = Memory.objects.get(job=first)
        assert not Memory.objects.filter(job=again).exists()
        assert memory.entities.filter(name=ENTITY).exists()
        client.delete(f"/api/v1/memories/{memory.id}")
        for text in (SECRET, TAG, ENTITY):
            assert tables_containing(text) == [], text
        assert not Job.objects.get(id=again.id).options.get("entities")

    def test_a_job_keeps_what_its_other_memories_still_hold(self, alice):
        client = pat_client(alice)
        job = _save(client, f"I like green tea.\nMy PIN is {SECRET}.", tags=[TAG], entities=STATED_ENTITIES)
        rows = {m.content: m for m in Memory.objects.filter(job=job)}
        client.delete(f"/api/v1/memories/{rows[f'My PIN is {SECRET}.'].id}")
        assert tables_containing(SECRET) == []
        survivor = Memory.objects.get(job=job)
        assert survivor.tags == [TAG] and survivor.entities.filter(name=ENTITY).exists()
        # What the saver stated still holds for the memory left, so the job still says it.
        options = Job.objects.get(id=job.id).options
        assert options["tags"] == [TAG]
        assert options["entities"] == STATED_ENTITIES
        client.delete(f"/api/v1/memories/{survivor.id}")
        assert tables_containing(TAG) == [] and tables_containing(ENTITY) == []
        assert json.dumps(Job.objects.get(id=job.id).options) == '{"confidence": 0.9}'

    def test_it_redacts_a_shared_source_and_keeps_the_other_memories(self, alice):
        client = pat_client(alice)
        job = _remember(client, f"Alice: my PIN is {SECRET}\nBob: noted, and lunch is at noon")
        secret_memory = Memory.objects.get(job=job, content__contains=SECRET)
        client.delete(f"/api/v1/memories/{secret_memory.id}")
        assert tables_containing(SECRET) == []
        survivor = Memory.objects.get(job=job)
        assert "lunch" in survivor.content and "lunch" in survivor.source.content

    def test_a_deleted_statement_is_cut_by_its_span_and_the_others_keep_theirs(self, alice):
        client = pat_client(alice)
        job = _remember(client, f"I like green tea.\nMy PIN is {SECRET}.\nI live in Porto.\nI keep bees.")
        rows = {m.content: m for m in Memory.objects.filter(job=job)}
        client.delete(f"/api/v1/memories/{rows[f'My PIN is {SECRET}.'].id}")
        assert tables_containing(SECRET) == []
        source = Source.objects.get(id=job.source_id)
        assert source.content == "I like green tea.\n[deleted]\nI live in Porto.\nI keep bees."
        for memory in Memory.objects.filter(job=job):
            # Every survivor's span still points at its own words after the cut moved them.
            assert source.content[memory.span_start : memory.span_end] == memory.content

    def test_forget_hard_through_the_operation(self, alice):
        client = pat_client(alice)
        memory = Memory.objects.get(job=_remember(client, f"Temporary note {SECRET}"))
        response = client.post(
            "/api/v1/operations/forget",
            {"memory_id": str(memory.id), "hard": True, "reason_code": "private"},
            format="json",
        )
        assert response.json()["action"] == "hard_deleted"
        assert tables_containing(SECRET) == []

    def test_forget_echoes_the_canonical_id_of_an_upper_case_one(self, alice):
        client = pat_client(alice)
        memory = Memory.objects.get(job=_remember(client, "I drink oolong every evening."))
        response = client.post(
            "/api/v1/operations/forget", {"memory_id": str(memory.id).upper()}, format="json"
        )
        assert response.status_code == 200, response.json()
        assert response.json()["action"] == "suppressed"
        assert response.json()["memory_id"] == str(memory.id)
        assert Memory.objects.get(id=memory.id).status == "suppressed"

    @pytest.mark.parametrize("spelling", ["urn:uuid:{}", "{{{}}}"])
    def test_forget_refuses_a_non_canonical_id_and_changes_nothing(self, alice, spelling):
        client = pat_client(alice)
        memory = Memory.objects.get(job=_remember(client, "I drink oolong at noon."))
        for hard in (False, True):
            response = client.post(
                "/api/v1/operations/forget",
                {"memory_id": spelling.format(memory.id), "hard": hard},
                format="json",
            )
            assert response.status_code == 400
            error = error_of(response)
            assert error["code"] == "invalid_format" and error["retryable"] is False
            assert error["details"] == {"field": "memory_id", "format": "uuid"}
        assert Memory.objects.filter(id=memory.id, status="active").exists()
        assert not AuditEvent.objects.filter(target_id=memory.id).exists()

    def test_forget_refuses_an_integer_for_hard(self, alice):
        client = pat_client(alice)
        memory = Memory.objects.get(job=_remember(client, "Keep me"))
        response = client.post(
            "/api/v1/operations/forget", {"memory_id": str(memory.id), "hard": 1}, format="json"
        )
        assert error_of(response)["code"] == "wrong_type"
        assert Memory.objects.filter(id=memory.id, status="active").exists()


class TestOutsider:
    def test_charlie_can_read_change_or_delete_nothing_of_alices(self, alice, charlie):
        owner = pat_client(alice)
        memory = Memory.objects.get(job=_remember(owner, "Alice's private note about her garden"))
        job = memory.job
        outsider = pat_client(charlie)
        for method, url, body in [
            ("get", f"/api/v1/memories/{memory.id}", None),
            ("post", f"/api/v1/memories/{memory.id}/pin", {}),
            ("post", f"/api/v1/memories/{memory.id}/unpin", {}),
            ("post", f"/api/v1/memories/{memory.id}/suppress", {}),
            ("post", f"/api/v1/memories/{memory.id}/restore", {}),
            ("delete", f"/api/v1/memories/{memory.id}", None),
            ("post", "/api/v1/operations/forget", {"memory_id": str(memory.id)}),
            ("post", "/api/v1/operations/forget", {"memory_id": str(memory.id), "hard": True}),
        ]:
            response = (
                getattr(outsider, method)(url, body, format="json")
                if body is not None
                else getattr(outsider, method)(url)
            )
            assert response.status_code == 404, (url, response.status_code)
            assert error_of(response)["code"] == "memory_not_found"
        assert outsider.get(f"/api/v1/jobs/{job.id}").status_code == 404
        assert outsider.get("/api/v1/memories").json()["results"] == []
        fresh = Memory.objects.get(id=memory.id)
        assert (fresh.status, fresh.pinned) == ("active", False)
        assert not AuditEvent.objects.filter(target_id=memory.id).exists()
