"""Forgetting: suppress/restore round trip, hard delete that leaves no trace, outsiders."""

from __future__ import annotations

import pytest
from django.db import connection

from memories.models import AuditEvent, Entity, Job, Memory, Source
from tests.helpers import error_of, pat_client, wait_for_job

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]

SECRET = "Zanzibar-Quokka-7731"


def _remember(client, content: str) -> Job:
    response = client.post("/api/v1/operations/remember", {"content": content}, format="json")
    return wait_for_job(response.json()["job_id"])


def _tables_containing(text: str) -> list[str]:
    """Every (table.column) of a text-like column in the database whose value contains `text`."""
    hits = []
    with connection.cursor() as cur:
        cur.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public' AND data_type IN ('text', 'character varying', 'jsonb', 'json', "
            "'ARRAY', 'tsvector')"
        )
        for table, column in cur.fetchall():
            # Identifiers come from information_schema, not from input.
            query = f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE %s'  # noqa: S608
            cur.execute(query, [f"%{text}%"])
            if cur.fetchone()[0]:
                hits.append(f"{table}.{column}")
    return hits


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
        assert _tables_containing(SECRET)  # the search finds it before the delete
        response = client.delete(f"/api/v1/memories/{memory.id}")
        assert response.status_code == 200, response.json()
        receipt = response.json()["receipt"]
        assert receipt["memory_id"] == str(memory.id) and receipt["purged"]["memories"] == 1
        assert _tables_containing(SECRET) == []
        assert _tables_containing("Fabrikam") == []
        assert not Memory.objects.filter(id=memory.id).exists()
        assert not Source.objects.filter(id=job.source_id).exists()
        assert not Entity.objects.filter(owner=alice, name__icontains="Fabrikam").exists()
        event = AuditEvent.objects.get(target_id=memory.id, action="hard_deleted")
        assert SECRET not in str(event.detail)

    def test_it_redacts_a_shared_source_and_keeps_the_other_memories(self, alice):
        client = pat_client(alice)
        job = _remember(client, f"Alice: my PIN is {SECRET}\nBob: noted, and lunch is at noon")
        secret_memory = Memory.objects.get(job=job, content__contains=SECRET)
        client.delete(f"/api/v1/memories/{secret_memory.id}")
        assert _tables_containing(SECRET) == []
        survivor = Memory.objects.get(job=job)
        assert "lunch" in survivor.content and "lunch" in survivor.source.content

    def test_a_deleted_statement_is_cut_by_its_span_and_the_others_keep_theirs(self, alice):
        client = pat_client(alice)
        job = _remember(client, f"I like green tea.\nMy PIN is {SECRET}.\nI live in Porto.\nI keep bees.")
        rows = {m.content: m for m in Memory.objects.filter(job=job)}
        client.delete(f"/api/v1/memories/{rows[f'My PIN is {SECRET}.'].id}")
        assert _tables_containing(SECRET) == []
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
        assert _tables_containing(SECRET) == []

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
