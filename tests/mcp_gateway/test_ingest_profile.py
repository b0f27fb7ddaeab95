"""The ingest profile at /mcp/ingest through the official Python MCP SDK, against the live server.

`ingest` (text or a document body, versions, same-bytes dedupe) and `pipeline_readiness` (stages,
searchability, failures, polling guidance), end to end with the real worker and embedding model:
an agent ingests, polls as the guidance says until `stop_polling`, then recalls on the same endpoint.
Charlie is the outsider who must never see or reach Alice's jobs.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import socket
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from django.utils import timezone
from mcp import ClientSession

from accounts.caller import Caller
from memories.models import Job, Memory, Source
from memories.services.memories import remember
from tests.conftest import start_live_server, stop_live_server
from tests.helpers import READ, WRITE, wait_for_job
from tests.mcp_gateway import rpc
from tests.mcp_gateway.sdk import error_code, session_run, structured
from tests.memories.test_documents import build_pdf

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CORE = ["recall", "answer", "remember", "forget"]
STAGES = ["queued", "extract", "embed", "store", "searchable"]
POLL_DEADLINE_SECONDS = 60


def ingest_url(server: Any) -> str:
    return f"{server.url}/mcp/ingest"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


async def poll(session: ClientSession, arguments: dict[str, Any]) -> dict[str, Any]:
    """Poll pipeline_readiness the way its answer says to, until it says stop_polling."""
    deadline = time.monotonic() + POLL_DEADLINE_SECONDS
    while True:
        answer = structured(await session.call_tool("pipeline_readiness", arguments))
        if answer["stop_polling"]:
            return answer
        assert time.monotonic() < deadline, answer
        assert answer["poll_after_ms"] > 0, answer
        await asyncio.sleep(answer["poll_after_ms"] / 1000)


def ingest_ready(url: str, token: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Ingest, then poll until the job stops; returns (ingest result, final readiness of the job)."""

    async def steps(session: ClientSession) -> tuple[dict[str, Any], dict[str, Any]]:
        result = await session.call_tool("ingest", arguments)
        assert result.is_error is False, result
        ingested = structured(result)
        # As ingest's guidance says: the exhaustive request it hands back.
        answer = await poll(session, ingested["pipeline"]["poll_with"])
        (job,) = answer["jobs"]
        return ingested, job

    out: tuple[dict[str, Any], dict[str, Any]] = session_run(url, token, steps)
    return out


def readiness(url: str, token: str, job_ids: list[str]) -> dict[str, Any]:
    async def steps(session: ClientSession) -> dict[str, Any]:
        return structured(await session.call_tool("pipeline_readiness", {"job_ids": job_ids}))

    out: dict[str, Any] = session_run(url, token, steps)
    return out


def call(url: str, token: str, tool: str, arguments: dict[str, Any]) -> Any:
    async def steps(session: ClientSession) -> Any:
        return await session.call_tool(tool, arguments)

    return session_run(url, token, steps)


def ok(url: str, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = call(url, token, tool, arguments)
    assert result.is_error is False, result
    return structured(result)


def stage_statuses(job: dict[str, Any]) -> dict[str, str]:
    assert [s["name"] for s in job["stages"]] == STAGES, job["stages"]
    return {s["name"]: s["status"] for s in job["stages"]}


# === tools/list ========================================================================


def test_it_offers_ingest_and_readiness_after_the_core_tools_and_first_on_evidence(asgi_server, alice):
    token = rpc.pat_token(alice)

    async def steps(session: ClientSession) -> list[Any]:
        return list((await session.list_tools()).tools)

    tools = session_run(ingest_url(asgi_server), token, steps)
    names = [t.name for t in tools]
    assert names[:4] == CORE
    assert names.index("ingest") > 3 and names.index("pipeline_readiness") == names.index("ingest") + 1
    by_name = {t.name: t for t in tools}
    for name in ("ingest", "pipeline_readiness"):
        tool = by_name[name]
        assert tool.input_schema["additionalProperties"] is False
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
    assert by_name["pipeline_readiness"].annotations.read_only_hint is True
    assert by_name["ingest"].annotations.read_only_hint is False
    # The same tools list twice in the same order.
    assert [t.name for t in session_run(ingest_url(asgi_server), token, steps)] == names
    for path in ("/mcp", "/mcp/graph"):
        others = [t.name for t in session_run(f"{asgi_server.url}{path}", token, steps)]
        # The graph contract's closed set has its own remember and recall, not the core four.
        if path != "/mcp/graph":
            assert others[:4] == CORE, path
        assert "ingest" not in others and "pipeline_readiness" not in others, path
    # The evidence contract offers the same two write tools, with the same schemas, first.
    evidence = session_run(f"{asgi_server.url}/mcp/evidence", token, steps)
    assert [t.name for t in evidence[:2]] == ["ingest", "pipeline_readiness"]
    for tool in evidence[:2]:
        assert tool.input_schema == by_name[tool.name].input_schema
        assert tool.output_schema == by_name[tool.name].output_schema


# === ingest end to end =================================================================


def test_it_ingests_text_polls_until_searchable_and_recall_finds_it(asgi_server, alice):
    token = rpc.pat_token(alice)
    text = (
        "# Kitchen notes\n\nThe espresso machine in the office kitchen is descaled every Thursday.\n\n"
        "Oat milk is kept on the second shelf of the fridge."
    )

    async def steps(session: ClientSession) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        ingested = structured(
            await session.call_tool(
                "ingest", {"content": text, "mime": "text/markdown", "title": "Kitchen notes"}
            )
        )
        answer = await poll(session, {"job_ids": [ingested["job_id"]]})
        found = structured(
            await session.call_tool("recall", {"query": "When is the espresso machine descaled?"})
        )
        return ingested, answer, found

    ingested, answer, found = session_run(ingest_url(asgi_server), token, steps)

    assert ingested["created"] is True and ingested["status"] == "queued"
    assert ingested["version"]["number"] == 1
    assert ingested["content_hash"] == hashlib.sha256(text.encode()).hexdigest()
    assert ingested["document"]["mime"] == "text/markdown"
    assert ingested["document"]["title"] == "Kitchen notes"
    pipeline = ingested["pipeline"]
    assert pipeline["next_tool"] == "pipeline_readiness" and pipeline["poll_after_ms"] > 0
    assert (
        pipeline["poll_with"]["version_ids"] == [ingested["version_id"]] == [ingested["version"]["source_id"]]
    )

    assert answer["stop_polling"] is True and answer["done"] is True and answer["poll_after_ms"] is None
    assert answer["summary"]["succeeded"] == 1 and answer["summary"]["searchable"] == 1
    (job,) = answer["jobs"]
    assert job["job_id"] == ingested["job_id"] and job["kind"] == "ingest" and job["attempts"] == 1
    assert job["status"] == "succeeded" and job["searchable"] is True and job["error"] is None
    assert set(stage_statuses(job).values()) == {"done"}
    stored = Memory.objects.filter(owner=alice, job_id=ingested["job_id"])
    assert job["memory_count"] == job["searchable_count"] == stored.count() >= 2
    assert job["version"] == ingested["version"] and job["in_current_space"] is True
    assert job["finished_at"] is not None and "recall" in job["next"]

    source = Source.objects.get(id=ingested["version"]["source_id"])
    assert source.owner == alice and source.origin == "document" and source.media_type == "text/markdown"
    assert source.content_hash == ingested["content_hash"] and source.title == "Kitchen notes"
    assert str(source.space_id) == ingested["space_id"] == job["space_id"]

    top = found["memories"][0]
    assert "espresso" in top["content"]
    assert top["provenance"]["source_id"] == ingested["version"]["source_id"]
    assert top["provenance"]["job_id"] == ingested["job_id"]


@pytest.mark.parametrize("mime", [None, "application/pdf"])
def test_it_ingests_a_real_pdf_until_searchable_and_recall_finds_it(asgi_server, alice, mime):
    token = rpc.pat_token(alice)
    pdf = build_pdf(
        [
            "Our warehouse in Rotterdam opens at 7 am on weekdays.",
            "The night shift supervisor at the warehouse is Ingrid Berg.",
        ],
        title="Warehouse facts",
    )
    arguments = {"document_base64": b64(pdf), **({"mime": mime} if mime else {})}
    ingested, job = ingest_ready(ingest_url(asgi_server), token, arguments)
    assert ingested["created"] is True
    # Left out, the type is sniffed from the bytes.
    assert ingested["document"]["mime"] == "application/pdf"
    assert ingested["document"]["size_bytes"] == len(pdf)
    assert ingested["content_hash"] == hashlib.sha256(pdf).hexdigest()
    assert job["status"] == "succeeded" and job["searchable"] is True and job["memory_count"] >= 1

    found = ok(
        ingest_url(asgi_server), token, "recall", {"query": "What time does the Rotterdam warehouse open?"}
    )
    assert "Rotterdam" in found["memories"][0]["content"]
    assert found["memories"][0]["provenance"]["job_id"] == ingested["job_id"]
    source = Source.objects.get(id=ingested["version"]["source_id"])
    assert source.media_type == "application/pdf" and "Ingrid Berg" in source.content


def test_the_same_bytes_again_store_nothing_new_whatever_the_input_form(asgi_server, alice):
    token = rpc.pat_token(alice)
    url = ingest_url(asgi_server)
    text = "The spare key to the bike shed hangs behind the boiler."
    first, job = ingest_ready(url, token, {"content": text})
    assert first["created"] is True and job["searchable"] is True
    counts = (Source.objects.filter(owner=alice).count(), Job.objects.filter(owner=alice).count())

    again = ok(url, token, "ingest", {"document_base64": b64(text.encode()), "mime": "text/plain"})
    assert again["created"] is False
    assert "nothing new" in again["message"]
    assert again["job_id"] == first["job_id"] and again["version"] == first["version"]
    assert again["content_hash"] == first["content_hash"]
    # The earlier job has finished: no polling needed.
    assert again["status"] == "succeeded" and again["pipeline"]["poll_after_ms"] == 0
    assert again["pipeline"]["status"] == "processed"
    assert (Source.objects.filter(owner=alice).count(), Job.objects.filter(owner=alice).count()) == counts

    # The same bytes as a named document are another document, not the same one again.
    named = ok(url, token, "ingest", {"content": text, "source_kind": "notes", "source_ref": "shed"})
    assert named["created"] is True and named["version"]["source_id"] != first["version"]["source_id"]


def test_a_new_version_of_a_living_document_supersedes_what_it_no_longer_says(asgi_server, alice):
    token = rpc.pat_token(alice)
    url = ingest_url(asgi_server)
    common = {"source_kind": "gdrive", "source_ref": "doc-falcon", "versioning_mode": "living"}
    v1, job1 = ingest_ready(
        url,
        token,
        {
            "content": "Project Falcon launches in May.\n\nThe project lead is Maya.",
            "source_modified_at": "2024-05-01T09:00:00+00:00",
            **common,
        },
    )
    v2, job2 = ingest_ready(
        url,
        token,
        {
            "content": "Project Falcon launches in May.\n\nThe project lead is Tomas.",
            "source_modified_at": "2024-06-01T09:00:00+00:00",
            **common,
        },
    )
    assert job1["searchable"] is True and job1["memory_count"] == 2
    assert (v1["version"]["number"], v2["version"]["number"]) == (1, 2)
    assert v2["created"] is True and v2["version"]["source_id"] != v1["version"]["source_id"]
    # Two versions of one document: one doc_id, two version_ids.
    assert v1["doc_id"] == v2["doc_id"] not in (v1["version_id"], v2["version_id"])
    assert v1["version_id"] != v2["version_id"]
    assert v2["document"]["versioning_mode"] == "living"
    assert v2["document"]["source_modified_at"].startswith("2024-06-01T09:00:00")
    assert job2["searchable"] is True and job2["version"] == v2["version"]
    # Version 2 confirmed the launch and added the new lead.
    assert job2["memory_count"] == job2["searchable_count"] == 2

    maya = Memory.objects.get(owner=alice, content__contains="Maya")
    assert maya.superseded_at is not None
    assert maya.valid_until is not None and maya.valid_until.isoformat().startswith("2024-06-01T09:00:00")
    # Version 1's job now has one memory recall finds (the launch) and one it no longer does.
    (after,) = readiness(url, token, [v1["job_id"]])["jobs"]
    assert after["memory_count"] == 2 and after["searchable_count"] == 1 and after["searchable"] is True

    found = ok(url, token, "recall", {"query": "Who is the project lead of Project Falcon?"})
    contents = " ".join(m["content"] for m in found["memories"])
    assert "Tomas" in contents and "Maya" not in contents


def test_a_document_the_worker_cannot_read_fails_its_job_at_the_extract_stage(asgi_server, alice):
    # The type is right, so the request takes it; reading it (in the worker) finds it damaged.
    token = rpc.pat_token(alice)
    ingested, job = ingest_ready(
        ingest_url(asgi_server), token, {"document_base64": b64(b"%PDF-1.4 garbage")}
    )
    assert ingested["created"] is True and ingested["document"]["mime"] == "application/pdf"
    assert job["status"] == "failed" and job["stop_polling"] is True
    assert job["error"]["code"] == "document_unreadable" and job["error"]["failed_stage"] == "extract"
    assert "could not be read" in job["error"]["message"]
    assert not Memory.objects.filter(owner=alice).exists()


def test_a_job_that_yields_no_memory_shows_the_failed_stage_and_stops_polling(asgi_server, alice):
    token = rpc.pat_token(alice)
    ingested, job = ingest_ready(ingest_url(asgi_server), token, {"content": "!!! ??? ***"})
    assert ingested["created"] is True
    assert job["status"] == "failed" and job["done"] is True and job["stop_polling"] is True
    assert job["searchable"] is False and job["memory_count"] == 0
    assert job["error"]["code"] == "nothing_to_remember" and job["error"]["failed_stage"] == "extract"
    assert job["error"]["message"]
    assert stage_statuses(job) == {
        "queued": "done",
        "extract": "failed",
        "embed": "not_reached",
        "store": "not_reached",
        "searchable": "not_reached",
    }
    assert "polling will not change it" in job["next"]
    assert Job.objects.get(id=job["job_id"]).error_code == "nothing_to_remember"
    assert not Memory.objects.filter(owner=alice).exists()


def test_it_reports_queued_and_running_jobs_honestly_and_says_to_keep_polling(
    asgi_server, alice, no_worker_broker
):
    # A save whose message goes to a broker no worker reads: it stays queued while we look.
    caller = Caller(user=alice, scopes=frozenset({READ, WRITE}), via="pat")
    job = remember(caller=caller, content="The boiler was serviced in March.")
    token = rpc.pat_token(alice, scopes=(READ,))
    url = ingest_url(asgi_server)

    answer = readiness(url, token, [str(job.id)])
    (queued,) = answer["jobs"]
    assert queued["status"] == "queued" and queued["kind"] == "remember"
    assert stage_statuses(queued) == {
        "queued": "in_progress",
        "extract": "pending",
        "embed": "pending",
        "store": "pending",
        "searchable": "pending",
    }
    assert queued["done"] is False and queued["stop_polling"] is False and queued["searchable"] is False
    assert answer["stop_polling"] is False and answer["poll_after_ms"] == 500

    # A worker (this process, holding a live lease, so no recovery sweep takes it over) on its
    # second attempt.
    started = timezone.now()
    Job.objects.filter(id=job.id).update(
        status=Job.Status.RUNNING,
        attempts=2,
        started_at=started,
        claimed_by=f"{socket.gethostname()}:{os.getpid()}",
        lease_expires_at=started + timedelta(minutes=10),
    )
    answer = readiness(url, token, [str(job.id)])
    (running,) = answer["jobs"]
    statuses = stage_statuses(running)
    # Extract, embed and store run as one unit: which one is under way is not recorded.
    assert statuses == {
        "queued": "done",
        "extract": "in_progress",
        "embed": "in_progress",
        "store": "in_progress",
        "searchable": "pending",
    }
    assert running["stop_polling"] is False and "attempt 2" in running["next"]
    # Retries back off, so the advice is to ask less often.
    assert answer["poll_after_ms"] > 500


def test_searchable_follows_what_happens_to_the_memories_afterwards(asgi_server, alice):
    token = rpc.pat_token(alice)
    url = ingest_url(asgi_server)
    ingested, job = ingest_ready(
        url,
        token,
        {"content": "The gate code is changed every quarter.\n\nThe parcel room is next to the lift."},
    )
    assert job["memory_count"] == 2 and job["searchable"] is True
    first, second = Memory.objects.filter(owner=alice, job_id=ingested["job_id"]).order_by("content")

    ok(url, token, "forget", {"memory_id": str(first.id)})
    (after_suppress,) = readiness(url, token, [ingested["job_id"]])["jobs"]
    assert after_suppress["memory_count"] == 2 and after_suppress["searchable_count"] == 1
    assert after_suppress["searchable"] is True

    ok(url, token, "forget", {"memory_id": str(second.id), "hard": True})
    (after_delete,) = readiness(url, token, [ingested["job_id"]])["jobs"]
    assert after_delete["status"] == "succeeded" and after_delete["stop_polling"] is True
    assert after_delete["searchable"] is False
    assert after_delete["memory_count"] == 1 and after_delete["searchable_count"] == 0
    assert stage_statuses(after_delete)["searchable"] == "not_searchable"


def test_a_save_merged_into_a_forgotten_memory_says_so_and_names_that_memory(asgi_server, alice, charlie):
    # The same fact again is evidence for the memory that holds it. When that memory is forgotten
    # afterwards, the save has nothing searchable left, and readiness must say why.
    token = rpc.pat_token(alice)
    url = ingest_url(asgi_server)
    text = "The recycling goes out on Tuesday evenings."
    first, job = ingest_ready(url, token, {"content": text})
    assert job["searchable"] is True and job["merged_into"] == []
    (memory,) = Memory.objects.filter(owner=alice, job_id=first["job_id"])

    # The same words as a named document: a new version and job, whose one statement is that memory.
    again, merged = ingest_ready(url, token, {"content": text, "source_kind": "notes", "source_ref": "bins"})
    assert again["created"] is True and again["job_id"] != first["job_id"]
    assert merged["merged_into"] == [{"memory_id": str(memory.id), "searchable": True, "state": "current"}]
    ok(url, token, "forget", {"memory_id": str(memory.id)})

    (merged,) = readiness(url, token, [again["job_id"]])["jobs"]
    assert merged["status"] == "succeeded" and merged["stop_polling"] is True and merged["error"] is None
    assert merged["searchable"] is False
    assert (merged["memory_count"], merged["searchable_count"]) == (1, 0)
    assert merged["merged_into"] == [
        {"memory_id": str(memory.id), "searchable": False, "state": "suppressed"}
    ]
    assert stage_statuses(merged)["searchable"] == "not_searchable"
    assert f"memory {memory.id}, which is forgotten" in merged["next"], merged["next"]
    assert f"/api/v1/memories/{memory.id}/restore" in merged["next"]
    assert not Memory.objects.filter(owner=alice, job_id=again["job_id"]).exists()

    # Said again now that it is forgotten, the same words are a new memory (issue 40): the forgotten
    # one takes no part, and the new save is searchable on its own.
    _, fresh = ingest_ready(url, token, {"content": text, "source_kind": "notes", "source_ref": "bins-2"})
    assert fresh["searchable"] is True and fresh["merged_into"] == [], fresh
    assert Memory.objects.get(id=memory.id).evidence.count() == 2

    # Restored, the same job is searchable through it; Charlie, saying the same words, merges
    # into nothing of Alice's.
    restored = httpx.post(
        f"{asgi_server.url}/api/v1/memories/{memory.id}/restore",
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert restored.status_code == 200, restored.text[:500]
    (after,) = readiness(url, token, [again["job_id"]])["jobs"]
    assert after["searchable"] is True and after["searchable_count"] == 1
    assert after["merged_into"] == [{"memory_id": str(memory.id), "searchable": True, "state": "current"}]
    _, his = ingest_ready(
        url, rpc.pat_token(charlie), {"content": text, "source_kind": "notes", "source_ref": "bins"}
    )
    assert his["searchable"] is True and his["merged_into"] == []


def test_it_reports_remember_jobs_and_unknown_ids_in_the_order_asked(asgi_server, alice):
    token = rpc.pat_token(alice)
    url = ingest_url(asgi_server)
    saved = ok(url, token, "remember", {"content": "My dentist appointment is on the 14th."})
    wait_for_job(saved["job_id"])
    missing = str(uuid.uuid4())
    answer = readiness(url, token, [missing, saved["job_id"]])
    assert [j["job_id"] for j in answer["jobs"]] == [missing, saved["job_id"]]
    gone, remembered = answer["jobs"]
    assert gone["status"] == "not_found" and gone["stop_polling"] is True and gone["done"] is False
    assert gone["error"]["code"] == "job_not_found" and gone["stages"] == []
    assert remembered["kind"] == "remember" and remembered["searchable"] is True
    assert answer["summary"]["not_found"] == 1 and answer["summary"]["succeeded"] == 1
    assert answer["stop_polling"] is True and answer["done"] is False


def test_it_reads_source_modified_at_and_job_ids_in_every_spelling_the_contracts_allow(asgi_server, alice):
    token = rpc.pat_token(alice)
    url = ingest_url(asgi_server)
    ingested = ok(
        url,
        token,
        "ingest",
        {
            "content": "The roof was repaired last week.",
            "source_kind": "notes",
            "source_ref": "roof",
            "source_modified_at": "2024-05-01t11:00:00+02:00",
        },
    )
    source = Source.objects.get(id=ingested["version"]["source_id"])
    assert source.source_modified_at == datetime(2024, 5, 1, 9, tzinfo=UTC)
    wait_for_job(ingested["job_id"])
    # The same job in capitals is the same job, answered under its canonical id.
    answer = readiness(url, token, [ingested["job_id"].upper()])
    (job,) = answer["jobs"]
    assert job["job_id"] == ingested["job_id"] and job["status"] == "succeeded"


# === tenancy ===========================================================================


def test_charlie_never_sees_alices_jobs_and_his_ingest_lands_in_his_own_space(asgi_server, alice, charlie):
    url = ingest_url(asgi_server)
    alice_token, charlie_token = rpc.pat_token(alice), rpc.pat_token(charlie)
    text = "The wine cellar key is in the red tin on the bookshelf."
    ingested, job = ingest_ready(url, alice_token, {"content": text})
    assert job["searchable"] is True
    alice_rows = (Source.objects.filter(owner=alice).count(), Memory.objects.filter(owner=alice).count())

    nobody = str(uuid.uuid4())
    answer = readiness(url, charlie_token, [ingested["job_id"], nobody])
    theirs, missing = answer["jobs"]
    # Someone else's job and no job at all read exactly the same.
    assert theirs["status"] == "not_found"
    assert {**theirs, "job_id": nobody} == missing
    assert answer["summary"]["not_found"] == 2 and answer["stop_polling"] is True

    # The same bytes from Charlie are his own document, not a duplicate of Alice's.
    his, his_job = ingest_ready(url, charlie_token, {"content": text})
    assert his["created"] is True and his["job_id"] != ingested["job_id"]
    assert his["version"]["source_id"] != ingested["version"]["source_id"]
    source = Source.objects.get(id=his["version"]["source_id"])
    assert source.owner == charlie and source.space.owner == charlie
    assert his["space_id"] != ingested["space_id"]
    assert his_job["searchable"] is True
    assert {m.owner_id for m in Memory.objects.filter(job_id=his["job_id"])} == {charlie.id}
    assert (
        Source.objects.filter(owner=alice).count(),
        Memory.objects.filter(owner=alice).count(),
    ) == alice_rows

    found = ok(url, charlie_token, "recall", {"query": "Where is the wine cellar key?"})
    assert found["memories"] and {m["space"]["id"] for m in found["memories"]} == {his["space_id"]}
    (back,) = readiness(url, alice_token, [his["job_id"]])["jobs"]
    assert back["status"] == "not_found"
    # The same document name in two accounts is two documents: doc_ids never meet across owners.
    named = {
        "content": "The cellar light switch is behind the door.",
        "source_kind": "notes",
        "source_ref": "cellar",
    }
    hers_named = ok(url, alice_token, "ingest", named)
    his_named = ok(url, charlie_token, "ingest", named)
    assert hers_named["doc_id"] != his_named["doc_id"]
    (not_his,) = ok(url, charlie_token, "pipeline_readiness", {"version_ids": [hers_named["version_id"]]})[
        "jobs"
    ]
    assert not_his["status"] == "not_found" and not_his["doc_id"] is None and not_his["job_id"] is None


# === strict schemas ====================================================================


PDF = build_pdf(["A page of text."])


@pytest.mark.parametrize(
    "arguments,code",
    [
        ({"content": "Fine text.", "colour": "blue"}, "unknown_field"),
        ({"content": 5}, "wrong_type"),
        ({"document_base64": ["QQ=="]}, "wrong_type"),
        ({"content": "Fine text.", "mime": "image/png"}, "invalid_value"),
        ({"content": "Fine text.", "versioning_mode": "sometimes"}, "invalid_value"),
        ({"content": "Fine text.", "title": "t" * 301}, "value_too_long"),
        ({"content": "Fine text.", "title": "  "}, "value_too_short"),
        ({"content": "Fine text.", "source_kind": "k" * 51, "source_ref": "doc"}, "value_too_long"),
        ({"content": "Fine text.", "source_kind": "drive", "source_ref": "r" * 501}, "value_too_long"),
        ({"content": "Fine text.", "source_modified_at": "yesterday"}, "invalid_format"),
        ({"content": "Fine text.", "source_modified_at": "2024-05-01T10:00:00"}, "invalid_format"),
        ({"content": "Fine text.", "source_modified_at": "2024-05-01T10:00+02:00"}, "invalid_format"),
        ({"content": "Fine text.", "source_modified_at": "20240501T100000+0200"}, "invalid_format"),
        ({}, "missing_field"),
        ({"title": "Only a title"}, "missing_field"),
        ({"content": "Fine text.", "document_base64": "QQ=="}, "conflicting_fields"),
        ({"content": "   "}, "empty_body"),
        ({"content": "Nul \x00 inside"}, "invalid_characters"),
        ({"content": "Fine text.", "mime": "application/pdf"}, "invalid_value"),
        ({"content": "Fine text.", "source_kind": "gdrive"}, "source_ref_incomplete"),
        ({"content": "Fine text.", "source_ref": "doc-1"}, "source_ref_incomplete"),
        ({"content": "Fine text.", "versioning_mode": "living"}, "source_ref_required"),
        ({"document_base64": "not base64!"}, "invalid_base64"),
        ({"document_base64": "QQ"}, "invalid_base64"),  # padding missing
        ({"document_base64": "QR=="}, "invalid_base64"),  # not canonical
        ({"document_base64": "QUJD\nREVG"}, "invalid_base64"),  # a line break
        ({"document_base64": "-_-_"}, "invalid_base64"),  # the URL-safe alphabet
        ({"document_base64": b64(b"   \n\t  ")}, "empty_body"),
        ({"document_base64": b64(PDF), "mime": "text/plain"}, "unsupported_media_type"),
        ({"document_base64": b64(b"Plain words."), "mime": "application/pdf"}, "unsupported_media_type"),
        ({"document_base64": b64(b"MZ\x00\x00\x90\x00binary")}, "unsupported_media_type"),
    ],
)
def test_ingest_refuses_bad_arguments_and_stores_nothing(asgi_server, alice, arguments, code):
    before = rpc.row_counts()
    result = call(ingest_url(asgi_server), rpc.pat_token(alice), "ingest", arguments)
    assert error_code(result) == code, structured(result)
    assert rpc.row_counts() == before


@pytest.mark.parametrize(
    "job_ids,code",
    [
        (None, "missing_field"),
        ([], "value_out_of_range"),
        ([str(uuid.uuid4()) for _ in range(51)], "value_out_of_range"),
        ("0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51", "wrong_type"),
        (["not-a-uuid"], "invalid_format"),
        (["urn:uuid:0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51"], "invalid_format"),
        (["0b0c6c395d5c4a578d0a6e1f1bde0c51"], "invalid_format"),
        (["0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51"] * 2, "duplicate_items"),
        (["0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51", "0B0C6C39-5D5C-4A57-8D0A-6E1F1BDE0C51"], "duplicate_items"),
        ([5], "wrong_type"),
    ],
)
def test_pipeline_readiness_refuses_bad_arguments(asgi_server, alice, job_ids, code):
    arguments = {} if job_ids is None else {"job_ids": job_ids}
    result = call(ingest_url(asgi_server), rpc.pat_token(alice), "pipeline_readiness", arguments)
    assert error_code(result) == code, structured(result)


def test_pipeline_readiness_refuses_unknown_fields(asgi_server, alice):
    result = call(
        ingest_url(asgi_server),
        rpc.pat_token(alice),
        "pipeline_readiness",
        {"job_ids": [str(uuid.uuid4())], "verbose": True},
    )
    assert error_code(result) == "unknown_field"


def test_remember_on_this_endpoint_stays_content_only(asgi_server, alice):
    before = rpc.row_counts()
    result = call(
        ingest_url(asgi_server),
        rpc.pat_token(alice),
        "remember",
        {"content": "I prefer window seats.", "category": "preference"},
    )
    assert error_code(result) == "unknown_field"
    assert rpc.row_counts() == before


@pytest.fixture
def small_limit_server(child_env, celery_worker, tmp_path):
    """A second server process whose document size limit is 2 KB."""
    server = start_live_server({**child_env, "DOCUMENT_MAX_BYTES": "2048"}, tmp_path, name="small")
    yield server
    stop_live_server(server)


def test_ingest_respects_the_document_size_limit_of_the_deployment(small_limit_server, alice):
    url = ingest_url(small_limit_server)
    token = rpc.pat_token(alice)

    async def steps(session: ClientSession) -> list[Any]:
        return list((await session.list_tools()).tools)

    (tool,) = [t for t in session_run(url, token, steps) if t.name == "ingest"]
    assert tool.input_schema["properties"]["content"]["maxLength"] == 2048
    before = rpc.row_counts()
    for arguments, code in (
        # The evidence contract's name, however the size was found (characters, bytes, base64).
        ({"content": "a" * 2049}, "body_too_large"),
        ({"content": "é" * 1500}, "body_too_large"),  # 1,500 characters, 3,000 bytes
        ({"document_base64": b64(b"b" * 2049)}, "body_too_large"),
        ({"document_base64": b64(b"b" * 3000)}, "body_too_large"),
    ):
        result = call(url, token, "ingest", arguments)
        assert error_code(result) == code, (arguments.keys(), structured(result))
    assert rpc.row_counts() == before
    ingested, job = ingest_ready(url, token, {"content": "The recycling goes out on Tuesday evenings."})
    # The whole readiness on failure: which of failed, not_found or not_searchable it was (a save
    # merged into a memory recall does not find names it in `merged_into`).
    assert ingested["created"] is True, ingested
    assert job["searchable"] is True and job["merged_into"] == [], job
    assert ingested["document"]["size_bytes"] <= 2048


def _raw_ingest(server: Any, token: str, arguments: dict[str, Any]) -> httpx.Response:
    body = rpc.tools_call("ingest", arguments)
    response = httpx.post(
        ingest_url(server),
        json=body,
        headers={**rpc.routing_headers(body, rpc.LEGACY), "Authorization": f"Bearer {token}"},
        timeout=120,
    )
    rpc.assert_clean(response)
    return response


def test_the_ingest_endpoint_carries_documents_larger_than_other_mcp_requests(asgi_server, alice):
    # 1.5 MB of document is more than any other endpoint takes in one request (1 MiB), and
    # well within the document limit: the ingest endpoint's body limit is sized for it.
    token = rpc.pat_token(alice)
    # A large body that reaches the tool: stored whole (its size says so), which proves the body
    # was not cut off at 1 MiB; the worker then finds it is not a readable PDF.
    document = b"%PDF-1.7\n" + b"0" * 1_500_000
    response = _raw_ingest(asgi_server, token, {"document_base64": b64(document), "mime": "application/pdf"})
    assert response.status_code == 200, response.text[:500]
    result = rpc.parse(response)["result"]
    assert result["isError"] is False, result
    assert result["structuredContent"]["document"]["size_bytes"] == len(document)
    job = wait_for_job(result["structuredContent"]["job_id"])
    assert job.status == "failed" and job.error_code == "document_unreadable"
    # The same body at the core endpoint is refused before it is read, and stores nothing.
    before = rpc.row_counts()
    body = rpc.tools_call("remember", {"content": "x" * 1_200_000})
    core = httpx.post(
        f"{asgi_server.url}/mcp",
        json=body,
        headers={**rpc.routing_headers(body, rpc.LEGACY), "Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert core.status_code == 200
    assert rpc.parse(core)["result"]["structuredContent"]["code"] == "body_too_large"
    assert rpc.row_counts() == before


def test_rest_ingest_carries_a_document_larger_than_other_rest_bodies(asgi_server, alice):
    # POST /api/v1/ingest is the stdio proxy's route for `ingest`: it must take what /mcp/ingest takes,
    # although every other REST body stops at 2 MB; the next route, with the same body, still does.
    token = rpc.pat_token(alice)
    document = b"%PDF-1.7\n" + b"0" * 2_400_000  # 3.2 MB once in base64
    headers = {"Authorization": f"Bearer {token}"}
    response = httpx.post(
        f"{asgi_server.url}/api/v1/ingest",
        json={"document_base64": b64(document), "mime": "application/pdf"},
        headers=headers,
        timeout=120,
    )
    assert response.status_code == 200, response.text[:500]
    assert response.json()["document"]["size_bytes"] == len(document)
    assert wait_for_job(response.json()["job_id"]).error_code == "document_unreadable"
    before = rpc.row_counts()
    other = httpx.post(
        f"{asgi_server.url}/api/v1/readiness",
        json={"job_ids": [str(uuid.uuid4())], "padding": "x" * 2_400_000},
        headers=headers,
        timeout=120,
    )
    assert other.status_code == 413 and other.json()["error"]["code"] == "payload_too_large"
    assert rpc.row_counts() == before


def test_rest_ingest_refuses_a_body_beyond_the_document_limit(small_limit_server, alice):
    before = rpc.row_counts()
    response = httpx.post(
        f"{small_limit_server.url}/api/v1/ingest",
        json={"document_base64": b64(b"c" * 900_000)},
        headers={"Authorization": f"Bearer {rpc.pat_token(alice)}"},
        timeout=120,
    )
    assert response.status_code == 413, response.text[:500]
    error = response.json()["error"]
    assert error["code"] == "body_too_large" and error["retryable"] is False
    assert error["details"]["max_bytes"] < 900_000
    assert rpc.row_counts() == before
    # The limit comes before authentication (which reads the body too); within it, no token is a 401.
    anonymous = httpx.post(
        f"{small_limit_server.url}/api/v1/ingest", json={"document_base64": b64(b"c" * 900_000)}, timeout=120
    )
    assert anonymous.status_code == 413
    small = httpx.post(f"{small_limit_server.url}/api/v1/ingest", json={"content": "hello"}, timeout=120)
    assert small.status_code == 401
    assert rpc.row_counts() == before


def test_a_body_beyond_the_document_limit_is_refused_cleanly(small_limit_server, alice):
    # With a 2 KB document limit the ingest endpoint still takes 1 MiB requests (the floor);
    # a bigger body is refused before it is parsed, as the call's error result, and nothing is stored.
    before = rpc.row_counts()
    response = _raw_ingest(small_limit_server, rpc.pat_token(alice), {"document_base64": b64(b"c" * 900_000)})
    assert response.status_code == 200, response.text[:500]
    error = rpc.parse(response)["result"]["structuredContent"]
    assert error["code"] == "body_too_large" and error["details"]["max_bytes"] == 1024 * 1024
    assert rpc.row_counts() == before


# === scopes and attribution ============================================================


def _raw_call(server: Any, token: str, tool: str, arguments: dict[str, Any]) -> httpx.Response:
    body = rpc.tools_call(tool, arguments)
    response = httpx.post(
        ingest_url(server),
        json=body,
        headers={**rpc.routing_headers(body, rpc.LEGACY), "Authorization": f"Bearer {token}"},
        timeout=60,
    )
    rpc.assert_clean(response)
    return response


def test_a_read_only_token_gets_403_insufficient_scope_on_ingest_but_may_ask_readiness(asgi_server, alice):
    token = rpc.pat_token(alice, scopes=(READ,))
    before = rpc.row_counts()
    response = _raw_call(asgi_server, token, "ingest", {"content": "Read-only tokens cannot ingest this."})
    assert response.status_code == 403, response.text
    header = response.headers["www-authenticate"]
    assert header.startswith('Bearer error="insufficient_scope"'), header
    assert 'scope="memory:read memory:write"' in header
    assert "/.well-known/oauth-protected-resource/mcp/ingest" in header
    assert rpc.row_counts() == before

    answer = readiness(ingest_url(asgi_server), token, [str(uuid.uuid4())])
    assert answer["jobs"][0]["status"] == "not_found"


def test_a_write_only_token_cannot_ask_readiness(asgi_server, alice):
    response = _raw_call(
        asgi_server,
        rpc.pat_token(alice, scopes=(WRITE,)),
        "pipeline_readiness",
        {"job_ids": [str(uuid.uuid4())]},
    )
    assert response.status_code == 403, response.text
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]


def test_an_oauth_agent_for_this_endpoint_ingests_and_is_the_agent_on_its_memories(asgi_server, alice):
    token, application = rpc.oauth_token(alice, ingest_url(asgi_server), app_name="Sync Agent")
    ingested, job = ingest_ready(
        ingest_url(asgi_server), token, {"content": "The team offsite is planned for Porto."}
    )
    assert job["searchable"] is True
    assert Source.objects.get(id=ingested["version"]["source_id"]).agent_id == application.pk
    assert {m.agent_id for m in Memory.objects.filter(job_id=ingested["job_id"])} == {application.pk}
