"""The evidence profile at `/mcp/evidence`, through the official Python MCP SDK.

Facts (what the service holds true, then or now) and claims (what sources asserted, by whom,
when) are read apart, counted by distinct claimant, and every answer accounts for itself:
grain, validity, freshness, and a typed negative when it is empty.

Data is made through `remember` (on the core endpoint: the evidence contract's namespace is
closed and has no core tools) and the real worker; only the relation-reading test builds
Entity / Relation / Source / Evidence rows directly (relations are written by the graph
profile's `relate`, tested there).
"""

from __future__ import annotations

import base64
import hashlib
import time
import uuid
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.utils import timezone
from mcp import ClientSession

from accounts.caller import ALL_SCOPES, Caller
from accounts.models import User
from memories.models import Entity, Evidence, Job, Memory, Relation, Source
from memories.services import memories as memory_services
from memories.services.spaces import space_create_default
from tests.helpers import READ, WRITE, wait_for_job
from tests.mcp_gateway import rpc
from tests.mcp_gateway.sdk import call, error_code, mcp_error, session_run, structured

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

EVIDENCE_TOOLS = ["resolve_entity", "facts_context", "claims_and_sources_context", "combined_context"]
CONTEXT_TOOLS = EVIDENCE_TOOLS[1:]
CORE_TOOLS = ["recall", "answer", "remember", "forget"]
# contracts/evidence-mcp.txt, "tools/list": the write tools, then exactly the four assured
# operations in the order the contract names them, then the open-query tools.
CONTRACT_WRITE_TOOLS = ["ingest", "pipeline_readiness"]
CONTRACT_OPERATIONS = ["resolve_entity", "claims_and_sources_context", "facts_context", "combined_context"]
# The contract leaves the seven open-query tools' names to us (docs/mcp.md).
OPEN_QUERY_TOOLS = [
    "query_space",
    "describe_view",
    "validate_query",
    "query",
    "list_saved_queries",
    "describe_saved_query",
    "run_saved_query",
]
CONTRACT_TOOLS = [*CONTRACT_WRITE_TOOLS, *CONTRACT_OPERATIONS, *OPEN_QUERY_TOOLS]
ERROR_OBJECT = {"code", "message", "http_status", "retryable", "agent_action"}
ENVELOPE = {"grain", "validity", "freshness", "negative"}
GRAIN = {
    "resolve_entity": "fact",
    "facts_context": "fact",
    "claims_and_sources_context": "evidence",
    "combined_context": "composite",
}
ITEMS = {
    "resolve_entity": ("entities",),
    "facts_context": ("facts",),
    "claims_and_sources_context": ("claims",),
    "combined_context": ("facts", "claims_and_sources"),
}


def evidence_url(server: Any) -> str:
    return f"{server.url}/mcp/evidence"


def core_url(server: Any) -> str:
    return f"{server.url}/mcp"


def agent_token(user: User, server: Any, name: str, scopes: tuple[str, ...] = (READ, WRITE)) -> str:
    """An OAuth token of a new application (= agent) for the evidence endpoint and the core one
    (where it saves: the evidence namespace has no `remember`)."""
    raw, _ = rpc.oauth_token(user, [evidence_url(server), core_url(server)], scopes=scopes, app_name=name)
    return raw


def ok(server: Any, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = call(evidence_url(server), token, tool, arguments)
    assert result.is_error is not True, result
    return structured(result)


def remember(server: Any, token: str, content: str) -> Job:
    saved = call(core_url(server), token, "remember", {"content": content})
    assert saved.is_error is not True, saved
    job_id = structured(saved)["job_id"]
    job = wait_for_job(job_id)
    assert job.status == Job.Status.SUCCEEDED, (job.error_code, job.error_message)
    return job


def items(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """Every entity, fact and claim of an answer; a bundle's from both of its envelopes."""
    found: list[dict[str, Any]] = []
    for key in ("entities", "facts", "claims", "claims_and_sources"):
        part = answer.get(key, [])
        found.extend(items(part) if isinstance(part, dict) else part)
    return found


def by_content(facts: list[dict[str, Any]], content: str) -> dict[str, Any]:
    found = [fact for fact in facts if fact["content"] == content]
    assert len(found) == 1, [fact["content"] for fact in facts]
    return found[0]


def parsed(value: str) -> datetime:
    return datetime.fromisoformat(value)


# === the profile ==========================================================================


def test_tools_list_is_the_contracts_closed_namespace_in_its_order(asgi_server, alice):
    token = rpc.pat_token(alice)

    async def steps(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = session_run(evidence_url(asgi_server), token, steps)
    assert [tool.name for tool in tools] == CONTRACT_TOOLS
    # Closed: no core tool, no generic recall or search alias.
    assert not {tool.name for tool in tools} & {*CORE_TOOLS, "search"}
    by_name = {tool.name: tool for tool in tools}
    for name in CONTRACT_OPERATIONS:
        tool = by_name[name]
        assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False
        assert tool.input_schema["required"] == ["query"]
        assert tool.input_schema["properties"]["query"]["type"] == "string"
        assert tool.output_schema is not None
        result_schema = tool.output_schema["anyOf"][0]  # [the result, the error object]
        assert set(result_schema["required"]) >= ENVELOPE | set(ITEMS[name])
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
    # The contract's example: facts_context(query, k) with k an integer between bounds.
    k = by_name["facts_context"].input_schema["properties"]["k"]
    assert k["type"] == "integer" and k["minimum"] == 1 and isinstance(k["maximum"], int)
    # The write tools are the ingest profile's, schema for schema.
    ingest = {tool.name: tool for tool in session_run(f"{asgi_server.url}/mcp/ingest", token, steps)}
    for name in CONTRACT_WRITE_TOOLS:
        assert by_name[name].input_schema == ingest[name].input_schema
        assert by_name[name].output_schema == ingest[name].output_schema
        assert by_name[name].input_schema["additionalProperties"] is False
    assert by_name["ingest"].annotations.read_only_hint is False
    for name in OPEN_QUERY_TOOLS:
        tool = by_name[name]
        assert tool.input_schema["additionalProperties"] is False, name
        assert tool.annotations is not None and tool.annotations.read_only_hint is True, name
    for name in ("query", "run_saved_query"):
        result_schema = by_name[name].output_schema["anyOf"][0]
        assert result_schema["properties"]["grade"]["enum"] == ["exploratory_tabular"]
        assert {"columns", "rows", "caps", "drops", "snapshot"} <= set(result_schema["required"])
    # Saved queries are never tools.
    assert not any(tool.name.startswith("examples.") for tool in tools)
    # Every error result may carry http_status, as the contract's error object does.
    assert "http_status" in by_name["ingest"].output_schema["anyOf"][1]["properties"]
    # Stable: the same list again.
    assert [tool.name for tool in session_run(evidence_url(asgi_server), token, steps)] == CONTRACT_TOOLS
    # The default endpoint keeps its four tools.
    core = session_run(core_url(asgi_server), token, steps)
    assert [tool.name for tool in core] == CORE_TOOLS


def test_an_unknown_tool_or_a_core_tool_is_an_error_result_with_the_reason(asgi_server, alice):
    token = rpc.pat_token(alice)
    before = rpc.row_counts()

    async def steps(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool(name, arguments)
            for name, arguments in (
                ("recall", {"query": "tea"}),
                ("remember", {"content": "I love green tea."}),
                ("search", {"query": "tea"}),
                ("relation_current", {"subject_entity_id": str(uuid.uuid4())}),
                ("examples.counts_by_month", {}),
            )
        ]

    for result in session_run(evidence_url(asgi_server), token, steps):
        error = structured(result)
        assert result.is_error is True
        assert set(error) >= ERROR_OBJECT, error
        assert error["code"] == "unknown_operation" and error["http_status"] == 404
        assert error["retryable"] is False
        assert error["details"]["available"] == [*CONTRACT_TOOLS]
    assert rpc.row_counts() == before


def test_write_tool_failures_carry_the_contracts_error_object(asgi_server, alice):
    token = agent_token(alice, asgi_server, "Importer")
    before = rpc.row_counts()

    async def steps(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("ingest", {"content": "a", "document_base64": "YQ=="}),
            await session.call_tool("ingest", {"document_base64": "not base64!"}),
            await session.call_tool("ingest", {}),
            await session.call_tool("ingest", {"content": "x", "colour": "red"}),
            await session.call_tool("pipeline_readiness", {"job_ids": []}),
            await session.call_tool("pipeline_readiness", {"job_ids": "nope"}),
        ]

    results = session_run(evidence_url(asgi_server), token, steps)
    got = [(structured(r)["code"], structured(r)["http_status"]) for r in results]
    assert got == [
        ("conflicting_fields", 400),
        ("invalid_base64", 400),
        ("missing_field", 400),
        ("unknown_field", 400),
        ("value_out_of_range", 400),
        ("wrong_type", 400),
    ]
    for result in results:
        assert result.is_error is True and set(structured(result)) >= ERROR_OBJECT
    assert rpc.row_counts() == before


def test_ingest_then_pipeline_readiness_then_facts_on_the_one_url(asgi_server, alice, charlie):
    """The contract's agent poll algorithm, step by step: ingest, read version_id and created, poll
    pipeline_readiness with the exhaustive request it hands back until ready, then an assured operation."""
    token = agent_token(alice, asgi_server, "Importer")

    ingested = ok(asgi_server, token, "ingest", {"content": "The boiler was serviced in May."})
    assert ingested["created"] is True
    # Named after the server's public URL (no DEEPRECALL_DEPLOYMENT_ID is set), the same on every call.
    assert ingested["deployment_id"] == str(uuid.uuid5(uuid.NAMESPACE_URL, asgi_server.url.rstrip("/")))
    assert ingested["version_id"] == str(Source.objects.get(owner=alice, id=ingested["version_id"]).id)
    # An unnamed ingest is a document of one version.
    assert ingested["doc_id"] == ingested["version_id"]
    pipeline = ingested["pipeline"]
    assert pipeline["next_tool"] == "pipeline_readiness" and pipeline["status"] == "accepted_not_ready"
    assert pipeline["poll_with"] == {
        "version_ids": [ingested["version_id"]],
        "require": {"pipeline": True, "p1": True, "live_graph": True, "p3": False},
    }
    deadline = time.monotonic() + 60
    while True:
        report = ok(asgi_server, token, "pipeline_readiness", pipeline["poll_with"])
        if report["ready"] or report["stop_polling"]:
            break
        assert not any(stage["status"] == "failed" for stage in report["stages"]), report
        assert time.monotonic() < deadline, report
        time.sleep(report["poll_after_ms"] / 1000)
    assert report["ready"] is True and report["not_offered"] == []
    assert [stage["name"] for stage in report["stages"]] == [
        "queued",
        "extract",
        "embed",
        "store",
        "searchable",
    ]
    assert {stage["status"] for stage in report["stages"]} == {"done"}
    (version,) = report["jobs"]
    assert version["version_id"] == ingested["version_id"] and version["job_id"] == ingested["job_id"]
    assert version["requirements"] == {
        "pipeline": "done",
        "p1": "done",
        "live_graph": "done",
        "p3": "not_offered",
    }
    # Asking for the corpus tree this service does not build is said, not waited on.
    with_p3 = ok(asgi_server, token, "pipeline_readiness", {**pipeline["poll_with"], "require": {"p3": True}})
    assert with_p3["ready"] is True and with_p3["not_offered"] == ["p3"]
    assert with_p3["require"] == {"pipeline": True, "p1": True, "live_graph": True, "p3": True}
    # Ingesting the same bytes again is the content-hash no-op: one readiness call says it is ready.
    again = ok(asgi_server, token, "ingest", {"content": "The boiler was serviced in May."})
    assert again["created"] is False and again["version_id"] == ingested["version_id"]
    assert again["deployment_id"] == ingested["deployment_id"] and again["doc_id"] == ingested["doc_id"]
    assert again["pipeline"]["status"] == "processed" and again["pipeline"]["poll_after_ms"] == 0
    assert ok(asgi_server, token, "pipeline_readiness", again["pipeline"]["poll_with"])["ready"] is True

    facts = ok(asgi_server, token, "facts_context", {"query": "When was the boiler serviced?"})
    memory = Memory.objects.get(owner=alice, job_id=ingested["job_id"])
    assert str(memory.id) in [fact["id"] for fact in facts["facts"]]
    # The outsider cannot poll Alice's version or job from the same URL.
    for arguments in ({"job_ids": [ingested["job_id"]]}, {"version_ids": [ingested["version_id"]]}):
        outsider = structured(
            call(evidence_url(asgi_server), rpc.pat_token(charlie), "pipeline_readiness", arguments)
        )
        assert outsider["ready"] is False and outsider["stop_polling"] is True
        (unknown,) = outsider["jobs"]
        assert unknown["status"] == "not_found" and unknown["doc_id"] is None
        assert unknown["error"]["code"] in ("job_not_found", "version_not_found")
        assert "boiler" not in str(outsider)


def test_pipeline_readiness_takes_version_ids_or_job_ids_but_not_both(asgi_server, alice):
    token = agent_token(alice, asgi_server, "Importer")
    ingested = ok(asgi_server, token, "ingest", {"content": "The gutter was cleared in October."})
    wait_for_job(ingested["job_id"])
    by_version = ok(asgi_server, token, "pipeline_readiness", {"version_ids": [ingested["version_id"]]})
    by_job = ok(asgi_server, token, "pipeline_readiness", {"job_ids": [ingested["job_id"]]})
    assert by_version["ready"] is by_job["ready"] is True
    assert by_version["jobs"][0]["job_id"] == by_job["jobs"][0]["job_id"] == ingested["job_id"]
    both = structured(
        call(
            evidence_url(asgi_server),
            token,
            "pipeline_readiness",
            {"version_ids": [ingested["version_id"]], "job_ids": [ingested["job_id"]]},
        )
    )
    assert both["code"] == "conflicting_fields" and both["retryable"] is False
    neither = structured(call(evidence_url(asgi_server), token, "pipeline_readiness", {}))
    assert neither["code"] == "missing_field" and set(neither) >= ERROR_OBJECT
    unknown_key = structured(
        call(evidence_url(asgi_server), token, "pipeline_readiness", {**by_version["require"], "job_ids": []})
    )
    assert unknown_key["retryable"] is False and set(unknown_key) >= ERROR_OBJECT


# === evidence counts ======================================================================


def test_the_same_claim_from_two_agents_is_two_pieces_of_evidence_and_from_one_agent_twice_one(
    asgi_server, alice
):
    scribe = agent_token(alice, asgi_server, "Scribe Agent")
    planner = agent_token(alice, asgi_server, "Planner Agent")
    remember(asgi_server, scribe, "I love green tea.")
    remember(asgi_server, planner, "I love green tea.")
    remember(asgi_server, scribe, "I drink oat milk every morning.")
    remember(asgi_server, scribe, "I drink oat milk every morning.")
    # Two sources per fact, one memory per fact: repetition is evidence, not a new row.
    assert Memory.objects.filter(owner=alice).count() == 2

    tea = ok(asgi_server, planner, "facts_context", {"query": "green tea"})
    assert tea["grain"] == "fact" and tea["negative"] is None
    fact = by_content(tea["facts"], "I love green tea.")
    assert fact["fact_type"] == "memory" and fact["kind"] == "fact"
    assert fact["evidence_count"] == 2
    assert fact["contradiction_count"] == 0
    assert fact["status"] == "current" and fact["current"] is True
    assert fact["clocks"]["superseded_at"] is None and fact["clocks"]["recorded_at"]

    milk = ok(asgi_server, planner, "facts_context", {"query": "oat milk"})
    assert by_content(milk["facts"], "I drink oat milk every morning.")["evidence_count"] == 1

    # The claims layer keeps every assertion: two for tea (one per agent), two for milk (same agent).
    claims = ok(asgi_server, scribe, "claims_and_sources_context", {"query": "green tea"})["claims"]
    tea_claims = [c for c in claims if any(f["id"] == fact["id"] for f in c["supports"])]
    assert sorted(c["claimant"]["label"] for c in tea_claims) == ["Planner Agent", "Scribe Agent"]
    assert {c["claimant"]["kind"] for c in tea_claims} == {"agent"}
    assert {c["excerpt"] for c in tea_claims} == {"I love green tea."}
    # is_caller is about the agent asking (the Scribe here), never about the request's text.
    assert {c["claimant"]["label"]: c["claimant"]["is_caller"] for c in tea_claims} == {
        "Scribe Agent": True,
        "Planner Agent": False,
    }
    milk_claims = ok(asgi_server, scribe, "claims_and_sources_context", {"query": "oat milk"})["claims"]
    milk_claims = [c for c in milk_claims if c["excerpt"] == "I drink oat milk every morning."]
    assert len(milk_claims) == 2
    assert {c["claimant"]["label"] for c in milk_claims} == {"Scribe Agent"}
    assert len({c["source_id"] for c in milk_claims}) == 2


# === contradictions and the clocks ========================================================


def test_a_later_source_that_contradicts_a_fact_is_recorded_as_contradicting_evidence(asgi_server, alice):
    token = agent_token(alice, asgi_server, "Travel Agent")
    remember(asgi_server, token, "I live in Paris.")
    before_the_move = timezone.now()
    remember(asgi_server, token, "I live in Berlin.")
    paris = Memory.objects.get(owner=alice, content="I live in Paris.")
    berlin = Memory.objects.get(owner=alice, content="I live in Berlin.")

    now = ok(asgi_server, token, "facts_context", {"query": "where do I live"})
    contents = [fact["content"] for fact in now["facts"]]
    assert contents == ["I live in Berlin."]
    assert now["validity"]["view"] == "current" and now["validity"]["at"] is None
    assert now["facts"][0]["current"] is True and now["facts"][0]["contradiction_count"] == 0
    assert now["freshness"]["latest_recorded_at"] == now["facts"][0]["clocks"]["recorded_at"]
    assert now["freshness"]["pending_jobs"] == 0

    then = ok(
        asgi_server, token, "facts_context", {"query": "where do I live", "at": before_the_move.isoformat()}
    )
    assert [fact["content"] for fact in then["facts"]] == ["I live in Paris."]
    old = then["facts"][0]
    assert old["id"] == str(paris.id)
    assert old["status"] == "superseded" and old["current"] is False
    assert old["clocks"]["superseded_by"] == str(berlin.id)
    assert old["evidence_count"] == 1 and old["contradiction_count"] == 1
    assert then["validity"]["view"] == "as_of"
    assert parsed(then["validity"]["at"]) == before_the_move
    assert parsed(then["validity"]["world_time"]) == before_the_move
    # `at` is world time only: the system time is still now (everything the service knows).
    assert then["validity"]["known_at"] is None
    assert parsed(then["validity"]["system_time"]) > before_the_move
    assert parsed(then["validity"]["counts_as_of"]) > before_the_move

    claims = ok(asgi_server, token, "claims_and_sources_context", {"query": "where do I live"})
    assert claims["grain"] == "evidence" and claims["negative"] is None
    assert [c["excerpt"] for c in claims["claims"]] == ["I live in Berlin.", "I live in Paris."]
    moved, first = claims["claims"]
    assert [f["id"] for f in moved["supports"]] == [str(berlin.id)]
    assert [(f["id"], f["current"]) for f in moved["contradicts"]] == [(str(paris.id), False)]
    assert [f["id"] for f in first["supports"]] == [str(paris.id)] and first["contradicts"] == []
    assert parsed(moved["recorded_at"]) > parsed(first["recorded_at"])
    assert moved["origin"] == "remember" and moved["claimant"]["label"] == "Travel Agent"
    assert claims["freshness"]["latest_recorded_at"] == moved["recorded_at"]

    # What had been asserted by then (system time): only Paris, not yet contradicted.
    earlier = ok(
        asgi_server,
        token,
        "claims_and_sources_context",
        {"query": "where do I live", "known_at": before_the_move.isoformat()},
    )
    assert [c["excerpt"] for c in earlier["claims"]] == ["I live in Paris."]
    assert earlier["claims"][0]["contradicts"] == []


def test_at_in_utc_and_at_an_equivalent_offset_answer_alike(asgi_server, alice):
    token = agent_token(alice, asgi_server, "Clock Agent")
    remember(asgi_server, token, "I live in Paris.")
    before_the_move = timezone.now()
    remember(asgi_server, token, "I live in Berlin.")
    in_utc = before_the_move.strftime("%Y-%m-%dT%H:%M:%S.%fz")
    east = (before_the_move + timedelta(hours=5, minutes=45)).strftime("%Y-%m-%dT%H:%M:%S.%f") + "+05:45"
    for tool in CONTEXT_TOOLS:
        utc = ok(asgi_server, token, tool, {"query": "where do I live", "known_at": in_utc})
        kathmandu = ok(asgi_server, token, tool, {"query": "where do I live", "known_at": east})
        # Only what held and was said before the move: Paris as the fact, Paris's save as the claim.
        assert {item.get("content") or item["excerpt"] for item in items(utc)} == {"I live in Paris."}, tool
        assert items(kathmandu) == items(utc), tool
        for clock in ("at", "world_time", "system_time"):
            assert parsed(kathmandu["validity"][clock]) == parsed(utc["validity"][clock]) == before_the_move


def test_combined_context_keeps_facts_and_claims_in_separate_fields(asgi_server, alice):
    token = agent_token(alice, asgi_server, "Notes Agent")
    remember(asgi_server, token, "I live in Paris.")
    remember(asgi_server, token, "I live in Berlin.")

    both = ok(asgi_server, token, "combined_context", {"query": "where do I live", "k": 5})
    assert both["grain"] == "composite" and both["negative"] is None
    assert both["schema"] == "ContextBundle/v2"
    assert set(both) == ENVELOPE | {"schema", "facts", "claims_and_sources"}
    # Each authority is a complete envelope of its own grain, never one flattened list.
    facts_side, claims_side = both["facts"], both["claims_and_sources"]
    assert set(facts_side) == ENVELOPE | {"facts", "total"} and facts_side["grain"] == "fact"
    assert set(claims_side) == ENVELOPE | {"claims", "total"} and claims_side["grain"] == "evidence"
    assert [f["content"] for f in facts_side["facts"]] == ["I live in Berlin."]
    assert facts_side["total"] == 1 and claims_side["total"] == len(claims_side["claims"])
    assert all({"claimant", "excerpt", "supports", "contradicts"} <= set(c) for c in claims_side["claims"])
    assert not any("claimant" in f for f in facts_side["facts"])
    assert not any("fact_type" in c for c in claims_side["claims"])
    # The same two envelopes as the single-layer tools give.
    facts = ok(asgi_server, token, "facts_context", {"query": "where do I live", "k": 5})
    claims = ok(asgi_server, token, "claims_and_sources_context", {"query": "where do I live", "k": 5})
    assert [f["id"] for f in facts_side["facts"]] == [f["id"] for f in facts["facts"]]
    assert [c["source_id"] for c in claims_side["claims"]] == [c["source_id"] for c in claims["claims"]]
    assert facts_side["validity"]["view"] == facts["validity"]["view"] == "current"
    # k bounds each list.
    one = ok(asgi_server, token, "combined_context", {"query": "where do I live", "k": 1})
    assert len(one["claims_and_sources"]["claims"]) == 1 and len(one["facts"]["facts"]) == 1


# === entities =============================================================================


def test_resolve_entity_returns_candidates_with_ids_and_match_reasons(asgi_server, alice):
    token = agent_token(alice, asgi_server, "Family Agent")
    remember(asgi_server, token, "My sister Alice lives in Berlin.")
    remember(asgi_server, token, "I work at Acme Corp.")

    exact = ok(asgi_server, token, "resolve_entity", {"query": "alice"})
    assert exact["grain"] == "fact" and exact["negative"] is None
    first = exact["entities"][0]
    entity = Entity.objects.get(owner=alice, normalized_name="alice")
    assert (first["id"], first["name"], first["type"]) == (str(entity.id), "Alice", "Person")
    assert first["match_reasons"][0] == "exact_name" and first["score"] == 1.0
    assert first["memory_count"] == 1 and first["aliases"] == []

    prefix = ok(asgi_server, token, "resolve_entity", {"query": "Acm"})["entities"]
    assert [(e["name"], e["type"], e["match_reasons"][0]) for e in prefix] == [
        ("Acme Corp", "Organization", "prefix")
    ]
    # A legal form is not part of the name: "Acme" is the name of "Acme Corp".
    plain = ok(asgi_server, token, "resolve_entity", {"query": "Acme"})["entities"]
    assert [(e["name"], e["match_reasons"][0]) for e in plain] == [("Acme Corp", "exact_name")]

    question = ok(asgi_server, token, "resolve_entity", {"query": "Where does Alice live these days?"})
    assert question["entities"][0]["name"] == "Alice"
    assert "name_in_query" in question["entities"][0]["match_reasons"]

    places = ok(asgi_server, token, "resolve_entity", {"query": "Berlin", "type": "Location"})["entities"]
    assert [(e["name"], e["type"]) for e in places] == [("Berlin", "Location")]
    assert ok(asgi_server, token, "resolve_entity", {"query": "Berlin", "type": "Person"})["entities"] == []

    limited = ok(asgi_server, token, "resolve_entity", {"query": "Alice Acme Berlin", "limit": 2})
    assert len(limited["entities"]) == 2
    scores = [e["score"] for e in limited["entities"]]
    assert scores == sorted(scores, reverse=True)


def _relation_rows(owner: User, app: Any) -> dict[str, Any]:
    """What the graph profile's `relate` writes for "Alice Martin lives_in Paris", then "... Berlin"."""
    space = space_create_default(owner=owner)
    moved = timezone.now() - timedelta(days=1)
    start = moved - timedelta(days=30)

    def entity(name: str, type_: str, aliases: list[str] | None = None) -> Entity:
        return Entity.objects.create(
            owner=owner,
            space=space,
            name=name,
            normalized_name=name.casefold(),
            type=type_,
            aliases=aliases or [],
        )

    def source(content: str, at: datetime, **extra: Any) -> Source:
        return Source.objects.create(
            owner=owner,
            space=space,
            agent=app,
            origin=Source.Origin.RELATE,
            content=content,
            content_hash=hashlib.sha256(content.encode()).hexdigest(),
            claimant=f"agent:{app.pk}",
            recorded_at=at,
            **extra,
        )

    person = entity("Alice Martin", "Person", ["Ali"])
    paris, berlin = entity("Paris", "Location"), entity("Berlin", "Location")
    said_paris = source("Alice Martin lives_in Paris", start, purged_at=moved)
    said_berlin = source("Alice Martin lives_in Berlin", moved)
    new = Relation.objects.create(
        owner=owner,
        space=space,
        subject=person,
        object=berlin,
        type="lives_in",
        valid_from=moved,
        recorded_at=moved,
    )
    old = Relation.objects.create(
        owner=owner,
        space=space,
        subject=person,
        object=paris,
        type="lives_in",
        valid_from=start,
        valid_until=moved,
        recorded_at=start,
        superseded_at=moved,
        superseded_by=new,
    )
    Evidence.objects.create(owner=owner, source=said_paris, relation=old, recorded_at=start)
    Evidence.objects.create(owner=owner, source=said_berlin, relation=new, recorded_at=moved)
    Evidence.objects.create(
        owner=owner, source=said_berlin, relation=old, stance=Evidence.Stance.CONTRADICTS, recorded_at=moved
    )
    return {"person": person, "old": old, "new": new, "start": start, "moved": moved, "purged": said_paris}


def test_relations_are_facts_with_clocks_and_their_sources_are_claims(asgi_server, alice):
    token, app = rpc.oauth_token(alice, evidence_url(asgi_server), app_name="Graph Agent")
    rows = _relation_rows(alice, app)

    now = ok(asgi_server, token, "facts_context", {"query": "Alice Martin"})
    assert [(f["fact_type"], f["content"]) for f in now["facts"]] == [
        ("relation", "Alice Martin lives_in Berlin")
    ]
    fact = now["facts"][0]
    assert fact["id"] == str(rows["new"].id) and fact["current"] is True
    assert fact["relation"]["type"] == "lives_in"
    assert fact["relation"]["subject"]["id"] == str(rows["person"].id)
    assert fact["relation"]["object"]["name"] == "Berlin"
    assert (fact["evidence_count"], fact["contradiction_count"], fact["kind"]) == (1, 0, None)

    # By its alias, and at a time before the move: Paris, since contradicted.
    then = ok(
        asgi_server,
        token,
        "facts_context",
        {"query": "Ali", "at": (rows["moved"] - timedelta(days=2)).isoformat()},
    )
    assert [f["content"] for f in then["facts"]] == ["Alice Martin lives_in Paris"]
    assert then["facts"][0]["status"] == "superseded"
    assert then["facts"][0]["clocks"]["superseded_by"] == str(rows["new"].id)
    assert (then["facts"][0]["evidence_count"], then["facts"][0]["contradiction_count"]) == (1, 1)
    # Before anything held, nothing matches; before anything was recorded, the space held nothing.
    before = (rows["start"] - timedelta(days=1)).isoformat()
    held = ok(asgi_server, token, "facts_context", {"query": "Ali", "at": before})
    assert held["facts"] == [] and held["negative"]["code"] == "no_match"
    empty = ok(asgi_server, token, "facts_context", {"query": "Ali", "known_at": before})
    assert empty["facts"] == [] and empty["negative"]["code"] == "no_memories_in_space"

    resolved = ok(asgi_server, token, "resolve_entity", {"query": "ali"})["entities"][0]
    assert resolved["id"] == str(rows["person"].id) and resolved["aliases"] == ["Ali"]
    assert resolved["match_reasons"][0] == "alias" and resolved["relation_count"] == 1

    claims = ok(asgi_server, token, "claims_and_sources_context", {"query": "Alice Martin"})["claims"]
    assert [c["origin"] for c in claims] == ["relate", "relate"]
    moved, first = claims
    assert moved["excerpt"] == "Alice Martin lives_in Berlin" and moved["excerpt_status"] == "full"
    assert [f["id"] for f in moved["supports"]] == [str(rows["new"].id)]
    assert [f["id"] for f in moved["contradicts"]] == [str(rows["old"].id)]
    # A purged source never shows its content, though its testimony still counts.
    assert first["source_id"] == str(rows["purged"].id)
    assert first["excerpt"] == "" and first["excerpt_status"] == "purged"
    assert [f["content"] for f in first["supports"]] == ["Alice Martin lives_in Paris"]
    assert first["claimant"] | {"is_caller": None} == {
        "kind": "agent",
        "id": str(app.pk),
        "name": "Graph Agent",
        "label": "Graph Agent",
        "is_caller": None,
    }


# === typed negatives ======================================================================


@pytest.mark.parametrize("tool", EVIDENCE_TOOLS)
def test_an_empty_space_answers_no_memories_in_space(asgi_server, bob, tool):
    answer = ok(asgi_server, agent_token(bob, asgi_server, "New Agent"), tool, {"query": "green tea"})
    assert items(answer) == []
    assert answer["grain"] == GRAIN[tool]
    assert answer["negative"]["code"] == "no_memories_in_space"
    assert answer["negative"]["message"] and answer["negative"]["agent_action"]
    assert answer["freshness"]["pending_jobs"] == 0 and answer["freshness"]["latest_recorded_at"] is None


def test_saves_still_processing_answer_not_yet_processed(asgi_server, bob, no_worker_broker):
    token = agent_token(bob, asgi_server, "Eager Agent")
    caller = Caller(user=bob, scopes=ALL_SCOPES)
    # Saved, but no worker listens on this broker: the job stays queued.
    memory_services.remember(caller=caller, content="I collect vintage typewriters.")
    for tool in EVIDENCE_TOOLS:
        answer = ok(asgi_server, token, tool, {"query": "typewriters"})
        assert items(answer) == [], tool
        assert answer["negative"]["code"] == "not_yet_processed", tool
        assert answer["freshness"]["pending_jobs"] == 1, tool
    # What the service knew yesterday cannot be changed by a save still processing...
    past = (timezone.now() - timedelta(days=1)).isoformat()
    answer = ok(asgi_server, token, "facts_context", {"query": "typewriters", "known_at": past})
    assert answer["negative"]["code"] == "no_memories_in_space"
    assert answer["freshness"]["pending_jobs"] == 1
    # ... but what held yesterday in the world can: the save may be about yesterday.
    answer = ok(asgi_server, token, "facts_context", {"query": "typewriters", "at": past})
    assert answer["negative"]["code"] == "not_yet_processed"


def test_a_pending_save_while_nothing_matched_is_not_yet_processed(asgi_server, bob, no_worker_broker):
    token = agent_token(bob, asgi_server, "Eager Agent")
    # Through the server, processed by its worker: a real memory in the space.
    remember(asgi_server, token, "I love green tea.")
    # Saved here, where no worker listens: it stays queued.
    memory_services.remember(
        caller=Caller(user=bob, scopes=ALL_SCOPES), content="I collect vintage typewriters."
    )
    for tool in EVIDENCE_TOOLS:
        answer = ok(asgi_server, token, tool, {"query": "typewriters"})
        assert items(answer) == [] and answer["negative"]["code"] == "not_yet_processed", tool


def test_forgotten_memories_answer_all_suppressed(asgi_server, alice):
    token = agent_token(alice, asgi_server, "Tidy Agent")
    remember(asgi_server, token, "I love green tea.")
    tea = ok(asgi_server, token, "facts_context", {"query": "green tea"})["facts"][0]
    forgotten = structured(call(core_url(asgi_server), token, "forget", {"memory_id": tea["id"]}))
    assert forgotten["action"] == "suppressed"
    # Every memory of the space is forgotten.
    for tool in CONTEXT_TOOLS:
        answer = ok(asgi_server, token, tool, {"query": "green tea"})
        assert items(answer) == [] and answer["negative"]["code"] == "all_suppressed", tool

    # Other memories exist, but the one that would match is forgotten.
    remember(asgi_server, token, "My sister Alice lives in Berlin.")
    for tool in CONTEXT_TOOLS:
        answer = ok(asgi_server, token, tool, {"query": "green tea"})
        assert items(answer) == [] and answer["negative"]["code"] == "all_suppressed", tool
        assert "green tea" not in str(answer).lower()
    # ...while an unrelated query is simply no match.
    answer = ok(asgi_server, token, "facts_context", {"query": "xylophone submarine"})
    assert answer["negative"]["code"] == "no_match"


def test_forgotten_text_is_cut_out_of_a_claims_excerpt(asgi_server, alice):
    token = agent_token(alice, asgi_server, "Diary Agent")
    remember(
        asgi_server,
        token,
        "user: I live in Lisbon.\nassistant: Nice city!\nuser: My bank PIN hint is the cat's birthday.",
    )
    pin = Memory.objects.get(owner=alice, content__contains="PIN")
    forgotten = structured(call(core_url(asgi_server), token, "forget", {"memory_id": str(pin.id)}))
    assert forgotten["action"] == "suppressed"
    claims = ok(asgi_server, token, "claims_and_sources_context", {"query": "Lisbon"})["claims"]
    assert len(claims) == 1
    assert claims[0]["excerpt_status"] == "redacted"
    assert "PIN" not in claims[0]["excerpt"] and "birthday" not in claims[0]["excerpt"]
    assert claims[0]["excerpt"].startswith("user: I live in Lisbon.")
    # The claim still lists the facts it supports, never the forgotten one.
    supported = {f["content"] for f in claims[0]["supports"]}
    assert "user: I live in Lisbon." in supported and not any("PIN" in text for text in supported)


@pytest.mark.parametrize("tool", EVIDENCE_TOOLS)
def test_nothing_matching_answers_no_match(asgi_server, alice, tool):
    token = agent_token(alice, asgi_server, "Curious Agent")
    remember(asgi_server, token, "My sister Alice lives in Berlin.")
    answer = ok(asgi_server, token, tool, {"query": "xylophone submarine"})
    assert items(answer) == []
    assert answer["negative"]["code"] == "no_match"
    assert answer["freshness"]["latest_recorded_at"] is None


# === tenancy and scopes ===================================================================


def test_an_outsider_sees_none_of_alices_facts_claims_or_entities(asgi_server, alice, charlie):
    alices = agent_token(alice, asgi_server, "Alice's Agent")
    remember(asgi_server, alices, "My sister Alice lives in Berlin.")
    remember(asgi_server, alices, "I love green tea.")
    assert ok(asgi_server, alices, "resolve_entity", {"query": "Alice"})["entities"]

    for token in (agent_token(charlie, asgi_server, "Charlie's Agent"), rpc.pat_token(charlie)):
        for tool in EVIDENCE_TOOLS:
            for query in ("Alice", "Berlin", "green tea", "where does my sister live"):
                answer = ok(asgi_server, token, tool, {"query": query})
                assert items(answer) == [], (tool, query)
                assert answer["negative"]["code"] == "no_memories_in_space"
                assert "Berlin" not in str(answer) and "tea" not in str(answer)
    # Charlie's own memory is his alone, and still no trace of Alice's.
    charlies = agent_token(charlie, asgi_server, "Charlie's Agent")
    remember(asgi_server, charlies, "I live in Berlin.")
    facts = ok(asgi_server, charlies, "combined_context", {"query": "Berlin"})
    assert [f["content"] for f in facts["facts"]["facts"]] == ["I live in Berlin."]
    assert [c["excerpt"] for c in facts["claims_and_sources"]["claims"]] == ["I live in Berlin."]
    entities = ok(asgi_server, charlies, "resolve_entity", {"query": "Alice"})
    assert entities["entities"] == [] and entities["negative"]["code"] == "no_match"


@pytest.mark.parametrize("kind", ["oauth", "pat"])
@pytest.mark.parametrize("tool", EVIDENCE_TOOLS)
def test_a_write_only_token_gets_403_insufficient_scope(asgi_server, alice, kind, tool):
    if kind == "oauth":
        raw, _ = rpc.oauth_token(alice, evidence_url(asgi_server), scopes=(WRITE,))
    else:
        raw = rpc.pat_token(alice, scopes=(WRITE,))
    body = rpc.tools_call(tool, {"query": "anything"})
    headers = {**rpc.routing_headers(body, rpc.LEGACY), "Authorization": f"Bearer {raw}"}
    response = httpx.post(evidence_url(asgi_server), json=body, headers=headers, timeout=60)
    rpc.assert_clean(response)
    assert response.status_code == 403, response.text
    header = response.headers["www-authenticate"]
    assert header.startswith('Bearer error="insufficient_scope"'), header
    assert 'scope="memory:read memory:write"' in header
    assert "/.well-known/oauth-protected-resource/mcp/evidence" in header


def test_an_oauth_token_for_another_endpoint_is_refused(asgi_server, alice):
    raw, _ = rpc.oauth_token(alice, f"{asgi_server.url}/mcp/graph")
    body = rpc.tools_call("facts_context", {"query": "anything"})
    headers = {**rpc.routing_headers(body, rpc.LEGACY), "Authorization": f"Bearer {raw}"}
    response = httpx.post(evidence_url(asgi_server), json=body, headers=headers, timeout=60)
    assert response.status_code == 401, response.text


REJECTED: list[tuple[str, dict[str, Any], str]] = [
    (tool, arguments, code)
    for tool in CONTEXT_TOOLS
    for arguments, code in (
        ({"query": "tea", "k": 0}, "value_out_of_range"),
        ({"query": "tea", "k": 31}, "value_out_of_range"),
        ({"query": "tea", "k": "5"}, "wrong_type"),
        ({"query": "tea", "k": 2.5}, "wrong_type"),
        ({"query": "tea", "k": True}, "wrong_type"),
        ({"query": "tea", "top_k": 5}, "unknown_field"),
        ({"query": "tea", "at": "yesterday"}, "invalid_format"),
        ({"query": "tea", "at": "2024-05-08T14:00:00"}, "invalid_format"),
        ({"query": "tea", "at": "20240508T140000+0200"}, "invalid_format"),
        ({"query": "tea", "at": "2024-05-08T14:00+02:00"}, "invalid_format"),
        ({"query": "tea", "at": 1715176800}, "wrong_type"),
        ({"query": "   "}, "value_too_short"),
        ({"query": ""}, "value_too_short"),
        ({"query": "x" * 2001}, "value_too_long"),
        ({"query": ["tea"]}, "wrong_type"),
        ({"query": "tea\x00"}, "invalid_characters"),
        ({}, "missing_field"),
    )
] + [
    ("resolve_entity", {"query": "Alice", "limit": 0}, "value_out_of_range"),
    ("resolve_entity", {"query": "Alice", "limit": 51}, "value_out_of_range"),
    ("resolve_entity", {"query": "Alice", "limit": "3"}, "wrong_type"),
    ("resolve_entity", {"query": "Alice", "type": "Planet"}, "invalid_value"),
    ("resolve_entity", {"query": "Alice", "type": "person"}, "invalid_value"),
    ("resolve_entity", {"query": "Alice", "k": 3}, "unknown_field"),
    ("resolve_entity", {"query": "Alice", "at": "2024-05-08T14:00:00+00:00"}, "unknown_field"),
    ("resolve_entity", {"query": " "}, "value_too_short"),
    ("resolve_entity", {"query": "x" * 2001}, "value_too_long"),
    ("resolve_entity", {"query": 42}, "wrong_type"),
    ("resolve_entity", {}, "missing_field"),
]


def test_strict_schemas_reject_bad_arguments_and_store_nothing(asgi_server, alice):
    token = agent_token(alice, asgi_server, "Sloppy Agent")
    remember(asgi_server, token, "I love green tea.")
    before = rpc.row_counts()

    async def steps(session: ClientSession) -> list[tuple[str, dict[str, Any], str]]:
        return [
            (tool, arguments, error_code(await session.call_tool(tool, arguments)))
            for tool, arguments, _ in REJECTED
        ]

    got = session_run(evidence_url(asgi_server), token, steps)
    assert [code for _, _, code in got] == [code for _, _, code in REJECTED], [
        (tool, arguments, code)
        for (tool, arguments, code), expected in zip(got, REJECTED, strict=True)
        if code != expected[2]
    ]
    assert rpc.row_counts() == before
    assert Source.objects.filter(owner=alice).count() == 1


def test_the_same_names_in_two_accounts_never_cross(asgi_server, alice, charlie):
    # A name search in Charlie's space never returns Alice's rows, even for the same names.
    alices = agent_token(alice, asgi_server, "Alice's Agent")
    charlies = agent_token(charlie, asgi_server, "Charlie's Agent")
    remember(asgi_server, alices, "My sister Alice lives in Berlin.")
    remember(asgi_server, charlies, "My sister Alice lives in Rome.")
    alice_ids = {str(e.id) for e in Entity.objects.filter(owner=alice)}
    seen = ok(asgi_server, charlies, "resolve_entity", {"query": "Alice"})["entities"]
    assert seen and not {e["id"] for e in seen} & alice_ids
    facts = ok(asgi_server, charlies, "facts_context", {"query": "Alice"})["facts"]
    assert [f["content"] for f in facts] == ["My sister Alice lives in Rome."]
    alice_memories = set(Memory.objects.filter(owner=alice).values_list("id", flat=True))
    assert not {uuid.UUID(f["id"]) for f in facts} & alice_memories
    claims = ok(asgi_server, charlies, "claims_and_sources_context", {"query": "Alice"})["claims"]
    assert [c["excerpt"] for c in claims] == ["My sister Alice lives in Rome."]
    alice_sources = {str(s) for s in Source.objects.filter(owner=alice).values_list("id", flat=True)}
    assert not {c["source_id"] for c in claims} & alice_sources


# === what an agent following the contract literally trips on (issue 42) ====================


def test_ingest_takes_source_version_ref_beside_the_pair_and_keeps_it(asgi_server, alice):
    """contracts/evidence-mcp.txt, ingest: "Optional: mime, title, source_kind + source_ref (must be
    paired), versioning_mode (snapshot | living), source_modified_at (timezone-aware UTC ISO-8601),
    source_version_ref." """
    token = agent_token(alice, asgi_server, "Importer")
    lineage = {
        "source_kind": "git",
        "source_ref": "handbook/boiler.md",
        "versioning_mode": "living",
        "source_modified_at": "2024-05-01T09:00:00Z",
        "source_version_ref": "3f2a9c1",
    }
    first = ok(asgi_server, token, "ingest", {"content": "The boiler was serviced in May.", **lineage})
    assert first["created"] is True
    assert first["document"]["source_version_ref"] == "3f2a9c1"
    assert Source.objects.get(owner=alice, id=first["version_id"]).source_version_ref == "3f2a9c1"
    second = ok(
        asgi_server,
        token,
        "ingest",
        {"content": "The boiler was serviced in June.", **lineage, "source_version_ref": "b71e004"},
    )
    assert second["doc_id"] == first["doc_id"] and second["version"]["number"] == 2
    assert second["document"]["source_version_ref"] == "b71e004"
    # Without one, it is null: the field is optional.
    plain = ok(asgi_server, token, "ingest", {"content": "The gutter was cleared in October."})
    assert plain["document"]["source_version_ref"] is None


def test_lineage_fields_without_source_kind_and_source_ref_are_refused(asgi_server, alice):
    """contracts/evidence-mcp.txt, ingest: "Lineage fields require the source_kind/source_ref pair
    (same contract as the SDK and HTTP API)." """
    token = agent_token(alice, asgi_server, "Importer")
    before = rpc.row_counts()
    for lineage in (
        {"source_modified_at": "2024-05-01T09:00:00Z"},
        {"source_version_ref": "3f2a9c1"},
        {"versioning_mode": "living"},
        {"source_kind": "git", "source_version_ref": "3f2a9c1"},
    ):
        result = call(evidence_url(asgi_server), token, "ingest", {"content": "The boiler.", **lineage})
        error = structured(result)
        assert result.is_error is True and error["http_status"] == 400, (lineage, error)
        assert error["code"] in ("source_ref_required", "source_ref_incomplete"), (lineage, error)
        assert set(error["details"]["fields"]) == {"source_kind", "source_ref"}
    assert rpc.row_counts() == before
    # The REST upload follows the same rule (one home: the document service).
    refused = httpx.post(
        f"{asgi_server.url}/api/v1/documents",
        files={"file": ("notes.txt", b"The boiler.", "text/plain")},
        data={"source_modified_at": "2024-05-01T09:00:00Z"},
        headers={"Authorization": f"Bearer {rpc.pat_token(alice)}"},
        timeout=60,
    )
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "source_ref_required"
    assert rpc.row_counts() == before


def test_ingest_refusals_carry_the_contracts_codes(asgi_server, alice):
    """contracts/evidence-mcp.txt, ingest: "Body size limits are enforced by the deployment. Client
    preflight applies only when a served capability document supplies a max body size; otherwise the
    server rejects and the tool maps body_too_large / empty_body." and tools/call: "Structured
    write-tool error example: {"code":"body_too_large", ..., "http_status":413, "retryable":false,
    "agent_action":"…"}" """
    token = agent_token(alice, asgi_server, "Importer")
    limit = settings.DOCUMENT_MAX_BYTES
    before = rpc.row_counts()

    async def steps(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("ingest", {"content": "   \n\t "}),
            await session.call_tool("ingest", {"document_base64": base64.b64encode(b"  \n\t  ").decode()}),
            # Within the endpoint's body limit, beyond the document limit: characters, then bytes.
            await session.call_tool("ingest", {"content": "a" * (limit + 1)}),
            await session.call_tool("ingest", {"content": "é" * (limit // 2 + 1)}),
        ]

    results = session_run(evidence_url(asgi_server), token, steps)
    got = [(structured(r)["code"], structured(r)["http_status"], structured(r)["retryable"]) for r in results]
    assert got == [
        ("empty_body", 400, False),
        ("empty_body", 400, False),
        ("body_too_large", 413, False),
        ("body_too_large", 413, False),
    ]
    for result in results:
        assert result.is_error is True and set(structured(result)) >= ERROR_OBJECT
    assert rpc.row_counts() == before


def test_a_body_over_an_endpoints_limit_is_an_error_result_the_sdk_reads(asgi_server, alice):
    """contracts/evidence-mcp.txt, tools/call: "A tool the registry has no active row for, a call
    missing a required argument, or an open-query call with invalid argument types is a protocol error
    result (isError: true) with the reason in the text block — never an exception across the wire."
    and ingest: "the server rejects and the tool maps body_too_large / empty_body". Every refusal on
    an MCP URL is a JSON-RPC answer, not a bare HTTP 413 an SDK raises as a transport error."""
    token = agent_token(alice, asgi_server, "Importer")
    before = rpc.row_counts()
    # Over what /mcp/evidence takes in one request (a whole document in base64, and room): the SDK
    # gets the contract's error object as an isError result, over the one session it keeps using.
    document = base64.b64encode(b"d" * (settings.DOCUMENT_MAX_BYTES + 200_000)).decode()

    async def evidence(session: ClientSession) -> tuple[Any, Any]:
        refused = await session.call_tool("ingest", {"document_base64": document})
        after = await session.call_tool("pipeline_readiness", {"job_ids": [str(uuid.uuid4())]})
        return refused, after

    refused, after = session_run(evidence_url(asgi_server), token, evidence)
    error = structured(refused)
    assert refused.is_error is True and error["code"] == "body_too_large", error
    assert error["http_status"] == 413 and error["retryable"] is False
    assert error["error"] == {"status_code": 413, "detail": error["message"], "code": "body_too_large"}
    assert after.is_error is False
    # The core endpoint (1 MiB): the same, in the core contract's error shape.

    async def core(session: ClientSession) -> Any:
        return await session.call_tool("remember", {"content": "x" * (1024 * 1024 + 10)})

    result = session_run(core_url(asgi_server), token, core)
    assert result.is_error is True and structured(result)["code"] == "body_too_large"
    # A request that is not a tool call gets a JSON-RPC error the SDK raises as MCPError, with the
    # error object as its data.
    huge = "graph://" + "x" * (1024 * 1024 + 10)
    error = mcp_error(core_url(asgi_server), token, lambda session: session.read_resource(huge))
    assert error.error.code == -32600 and error.error.data["code"] == "body_too_large"
    assert rpc.row_counts() == before


def test_k_follows_the_contracts_maximum_of_thirty(asgi_server, alice):
    """contracts/evidence-mcp.txt, Operation tools: "facts_context" ... "inputSchema": {..., "k":
    { "type": "integer", "minimum": 1, "maximum": 30 }}"""
    token = agent_token(alice, asgi_server, "Reader")
    remember(asgi_server, token, "I love green tea.")

    async def steps(session: ClientSession) -> tuple[list[Any], list[Any], list[Any]]:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        at_most = [await session.call_tool(name, {"query": "tea", "k": 30}) for name in CONTEXT_TOOLS]
        over = [await session.call_tool(name, {"query": "tea", "k": 31}) for name in CONTEXT_TOOLS]
        return [tools[name].input_schema["properties"]["k"] for name in CONTEXT_TOOLS], at_most, over

    schemas, at_most, over = session_run(evidence_url(asgi_server), token, steps)
    for schema in schemas:
        assert (schema["type"], schema["minimum"], schema["maximum"]) == ("integer", 1, 30), schema
    assert all(result.is_error is not True for result in at_most), at_most
    assert [error_code(result) for result in over] == ["value_out_of_range"] * len(CONTEXT_TOOLS)
