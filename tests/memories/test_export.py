"""GET /api/v1/export: everything of the caller's account as JSON Lines, nothing of anyone else's."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient
from rest_framework.test import APIClient

from accounts.caller import Actor
from accounts.models import User
from accounts.services import pat_create
from memories.models import AuditEvent, Entity, Evidence, Relation, Space
from memories.selectors.export import export_lines
from memories.services.audit import audit_record
from tests.helpers import link
from tests.memories.test_api_read import (
    assert_error,
    default_space,
    logged_in,
    make_job,
    make_memory,
    make_source,
)

pytestmark = pytest.mark.django_db

BOB_SECRET = "Bob's combination is 4-8-15-16"


def build_account(owner: User, label: str) -> dict[str, set[str]]:
    """One of everything, in two spaces; returns the ids by record type."""
    personal = default_space(owner)
    work = Space.objects.create(owner=owner, name=f"{label} work")
    source = make_source(owner, f"{label} said: I like tea and work at Acme")
    job = make_job(owner, source=source, status="succeeded")
    tea = make_memory(owner, f"{label} likes tea", source=source, job=job, tags=["drinks"])
    acme_fact = make_memory(
        owner,
        f"{label} works at Acme",
        space=work,
        valid_from=datetime(2024, 1, 1, tzinfo=UTC),
        evidence=True,
    )
    person = Entity.objects.create(
        owner=owner, space=work, name=label, normalized_name=label.lower(), type="Person"
    )
    acme = Entity.objects.create(
        owner=owner, space=work, name="Acme", normalized_name="acme", type="Organization"
    )
    link(acme_fact, person, acme)
    relation = Relation.objects.create(owner=owner, space=work, subject=person, object=acme, type="works_at")
    assert acme_fact.source is not None
    Evidence.objects.create(owner=owner, source=acme_fact.source, relation=relation)
    event = audit_record(
        actor=Actor.owner_acting(owner), action="pinned", target_id=tea.id, target_type="memory"
    )
    return {
        "account": {str(owner.id)},
        "space": {str(personal.id), str(work.id)},
        "source": {str(source.id), str(acme_fact.source_id)},
        "memory": {str(tea.id), str(acme_fact.id)},
        "entity": {str(person.id), str(acme.id)},
        "relation": {str(relation.id)},
        "job": {str(job.id)},
        # Signing up is on record too.
        "audit": {
            str(event.id),
            str(AuditEvent.objects.get(owner_id_snapshot=owner.id, action="account_created").id),
        },
    }


def records(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.content
    body = b"".join(response.streaming_content).decode()
    assert body.endswith("\n")
    return [json.loads(line) for line in body.splitlines()]


def by_type(lines: list[dict[str, Any]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for line in lines:
        found.setdefault(line["type"], set()).add(line["id"])
    return found


@pytest.fixture
def api(alice) -> APIClient:
    return logged_in(alice)


class TestExport:
    def test_it_streams_json_lines_as_a_dated_attachment(self, api, alice):
        response = api.get("/api/v1/export")
        assert response.status_code == 200
        assert response.streaming
        assert response["Content-Type"] == "application/x-ndjson"
        today = datetime.now(UTC).date().isoformat()
        assert response["Content-Disposition"] == f'attachment; filename="deeprecall-export-{today}.jsonl"'
        assert response["Cache-Control"] == "no-store"
        lines = records(response)
        assert lines[0]["type"] == "account" and lines[0]["email"] == "alice@example.com"

    def test_one_record_is_one_line_however_a_reader_splits_lines(self, api, alice):
        # U+2028, U+2029 and U+0085 end a line for str.splitlines and httpx's iter_lines, and json.dumps
        # leaves them as they are: a memory that holds one must still be one record, and read back
        # as the same text.
        text = "Line one\u2028line two\u2029three\x85four, and a tab\there"
        make_memory(alice, text)
        body = b"".join(api.get("/api/v1/export").streaming_content).decode()
        split = body.splitlines()
        assert split == body.split("\n")[:-1]
        assert text in [record.get("content") for record in map(json.loads, split)]

    def test_it_contains_every_record_of_the_account_and_nothing_else(self, api, alice, bob):
        alices = build_account(alice, "Alice")
        bobs = build_account(bob, "Bob")
        make_memory(bob, BOB_SECRET)

        response = api.get("/api/v1/export")
        lines = records(response)
        found = by_type(lines)

        export_event = AuditEvent.objects.get(owner_id_snapshot=alice.id, action="exported")
        expected = {**alices, "audit": alices["audit"] | {str(export_event.id)}}
        assert found == expected
        every_bob_id = set().union(*bobs.values())
        assert not every_bob_id & set().union(*found.values())
        text = json.dumps(lines)
        assert BOB_SECRET not in text and "Bob" not in text and str(bob.id) not in text

    def test_it_writes_memories_with_clocks_tags_entities_and_evidence(self, api, alice):
        build_account(alice, "Alice")
        lines = records(api.get("/api/v1/export"))
        memory = next(
            line for line in lines if line["type"] == "memory" and line["content"] == "Alice works at Acme"
        )
        entities = {line["id"]: line for line in lines if line["type"] == "entity"}
        assert set(memory["entity_ids"]) == set(entities)
        assert memory["clocks"]["valid_from"] == "2024-01-01T00:00:00+00:00"
        assert memory["evidence"] == [
            {
                "source_id": memory["provenance"]["source_id"],
                "stance": "supports",
                "recorded_at": memory["evidence"][0]["recorded_at"],
            }
        ]
        tea = next(line for line in lines if line["type"] == "memory" and line["tags"] == ["drinks"])
        assert tea["provenance"]["job_id"] is not None
        assert "embedding" not in json.dumps(lines)
        source = next(line for line in lines if line["type"] == "source" and "tea" in line["content"])
        assert source["content"] == "Alice said: I like tea and work at Acme"
        relation = next(line for line in lines if line["type"] == "relation")
        assert relation["relation_type"] == "works_at" and len(relation["evidence"]) == 1

    def test_it_keeps_content_out_of_audit_lines(self, api, alice):
        build_account(alice, "Alice")
        for line in records(api.get("/api/v1/export")):
            if line["type"] == "audit":
                assert "tea" not in json.dumps(line) and "Acme" not in json.dumps(line)

    def test_it_is_audited_as_exported(self, api, alice):
        records(api.get("/api/v1/export", HTTP_X_REQUEST_ID="export-1"))
        event = AuditEvent.objects.get(owner_id_snapshot=alice.id, action="exported")
        assert event.actor_user == alice and event.request_id == "export-1" and event.target_type == "account"

    def test_it_reads_in_a_fixed_number_of_queries_however_many_rows(self, alice):
        def count_queries() -> int:
            from django.db import connection
            from django.test.utils import CaptureQueriesContext

            with CaptureQueriesContext(connection) as captured:
                list(export_lines(owner=alice))
            return len(captured)

        build_account(alice, "Alice")
        few = count_queries()
        for n in range(40):
            link(
                make_memory(alice, f"memory {n}"),
                Entity.objects.create(
                    owner=alice,
                    space=default_space(alice),
                    name=f"E{n}",
                    normalized_name=f"e{n}",
                    type="Concept",
                ),
            )
        assert count_queries() == few

    def test_it_streams_chunk_by_chunk_under_asgi(self, alice):
        build_account(alice, "Alice")
        client = AsyncClient()
        client.force_login(alice)

        async def download() -> tuple[Any, list[bytes]]:
            response = await client.get("/api/v1/export")
            return response, [chunk async for chunk in response.streaming_content]

        response, chunks = async_to_sync(download)()

        assert response.status_code == 200 and response.is_async
        lines = [json.loads(line) for line in b"".join(chunks).decode().splitlines()]
        assert by_type(lines)["memory"] and lines[0]["type"] == "account"


class TestAccess:
    def test_it_refuses_an_anonymous_request(self, client, alice):
        assert_error(client.get("/api/v1/export"), 401, "not_authenticated")
        assert not AuditEvent.objects.filter(action="exported").exists()

    def test_it_serves_a_read_token(self, client, alice):
        _, raw = pat_create(user=alice, name="backup", scopes=["memory:read"])
        assert records(client.get("/api/v1/export", HTTP_AUTHORIZATION=f"Bearer {raw}"))[0]["id"] == str(
            alice.id
        )

    def test_it_refuses_parameters(self, api, alice):
        assert_error(api.get("/api/v1/export", {"space": "x"}), 400, "unknown_parameter")

    def test_it_gives_charlie_nothing_of_alices(self, alice, charlie):
        alices = build_account(alice, "Alice")
        lines = records(logged_in(charlie).get("/api/v1/export"))
        assert not set().union(*alices.values()) & set().union(*by_type(lines).values())
        assert "Alice" not in json.dumps(lines) and "alice@" not in json.dumps(lines)
        assert not AuditEvent.objects.filter(owner_id_snapshot=alice.id, action="exported").exists()
