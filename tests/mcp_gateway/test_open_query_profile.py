"""The evidence profile's open-query tools, driven through the official Python MCP SDK and REST.

Data is saved through the core endpoint's `remember` and the real worker; the open query then reads
it back through the views. Charlie is the outsider: every tool answers him about his own (empty)
space only, and nothing he sends reaches Alice's rows.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from mcp import ClientSession, types

from accounts.models import User
from memories.models import Job, Memory
from tests.helpers import wait_for_job
from tests.mcp_gateway import rpc
from tests.mcp_gateway.sdk import call, session_run, structured
from tests.mcp_gateway.test_evidence_profile import OPEN_QUERY_TOOLS

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# The open query's own answers may carry SQL (describe_saved_query returns its text by design), so
# the leak check here is rpc.FORBIDDEN without the "SELECT " needle.
LEAKS = tuple(needle for needle in rpc.FORBIDDEN if needle != "SELECT ")


def url(server: Any) -> str:
    return f"{server.url}/mcp/evidence"


def payload(result: types.CallToolResult) -> dict[str, Any]:
    return structured(result, forbidden=LEAKS)


def ok(server: Any, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = call(url(server), token, tool, arguments)
    assert result.is_error is not True, result
    return payload(result)


def failed(server: Any, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = call(url(server), token, tool, arguments)
    assert result.is_error is True, result
    error = payload(result)
    assert {"code", "message", "http_status", "retryable", "agent_action", "request_id"} <= set(error)
    return error


def save(server: Any, token: str, *contents: str) -> None:
    for content in contents:
        result = call(f"{server.url}/mcp", token, "remember", {"content": content})
        assert result.is_error is not True, result
        job = wait_for_job(payload(result)["job_id"])
        assert job.status == Job.Status.SUCCEEDED, job.error_code


@pytest.fixture
def alices(asgi_server, alice: User) -> str:
    token = rpc.pat_token(alice)
    save(asgi_server, token, "I live in Paris.", "I love green tea.", "I live in Berlin.")
    return token


def test_query_space_and_describe_view_are_discovery_without_content(asgi_server, alices, alice):
    space = ok(asgi_server, alices, "query_space", {})
    assert [view["name"] for view in space["views"]] == [
        "memories",
        "entities",
        "memory_entities",
        "relations",
        "sources",
        "evidence",
    ]
    assert space["caps"]["max_rows"] >= 1 and space["caps"]["statement_timeout_ms"] > 0
    assert "count" in space["allowed_functions"] and "pg_sleep" not in space["allowed_functions"]
    assert len(space["saved_queries"]) >= 12
    text = json.dumps(space)
    assert "Paris" not in text and "green tea" not in text
    view = ok(asgi_server, alices, "describe_view", {"view": "memories"})
    assert {"content", "recorded_at", "superseded_at", "holds_now"} <= {c["name"] for c in view["columns"]}
    assert "Paris" not in json.dumps(view)
    unknown = failed(asgi_server, alices, "describe_view", {"view": "pg_class"})
    assert unknown["code"] == "invalid_value" and unknown["http_status"] == 400


def test_query_returns_query_result_v1_with_caps_drops_and_the_snapshot(asgi_server, alices, alice):
    result = ok(
        asgi_server,
        alices,
        "query",
        {
            "sql": "SELECT content, holds_now FROM memories WHERE content LIKE $1 ORDER BY recorded_at",
            "params": ["I live%"],
        },
    )
    assert result["contract"] == "QueryResult/v1" and result["grade"] == "exploratory_tabular"
    assert result["columns"] == [
        {"name": "content", "type": "text"},
        {"name": "holds_now", "type": "boolean"},
    ]
    assert result["rows"] == [["I live in Paris.", False], ["I live in Berlin.", True]]
    assert result["row_count"] == 2 and result["drops"] == [] and result["truncated"] is False
    assert result["snapshot"]["read_only"] is True and result["snapshot"]["taken_at"]
    assert result["views"] == ["memories"] and result["saved_query"] is None
    capped = ok(
        asgi_server, alices, "query", {"sql": "SELECT n FROM generate_series(1, 5000) AS n", "limit": 3}
    )
    assert capped["rows"] == [[1], [2], [3]] and capped["truncated"] is True
    assert [(d["reason"], d["cap"]) for d in capped["drops"]] == [("row_cap", 3)]


def test_validate_query_plans_without_running(asgi_server, alices):
    valid = ok(asgi_server, alices, "validate_query", {"sql": "SELECT id, $1::uuid AS wanted FROM memories"})
    assert valid["accepted"] is True and valid["parameter_count"] == 1
    assert valid["columns"] == [{"name": "id", "type": "uuid"}, {"name": "wanted", "type": "uuid"}]
    assert "rows" not in valid
    # Planned, not run: a statement that would take minutes is answered at once.
    slow = ok(
        asgi_server, alices, "validate_query", {"sql": "SELECT count(*) FROM generate_series(1, 10000000000)"}
    )
    assert slow["columns"] == [{"name": "count", "type": "int8"}]
    assert (
        failed(asgi_server, alices, "validate_query", {"sql": "SELECT 'x'::uuid"})["code"] == "query_failed"
    )
    assert failed(asgi_server, alices, "validate_query", {"sql": "SELECT nope FROM memories"})["code"] == (
        "query_rejected"
    )


ESCAPES = [
    ("DELETE FROM memories", "not_select"),
    ("UPDATE memories SET content = 'x'", "not_select"),
    ("INSERT INTO memories (content) VALUES ('x')", "not_select"),
    ("DROP VIEW memories", "not_select"),
    ("WITH gone AS (DELETE FROM memories RETURNING *) SELECT * FROM gone", "writable_cte"),
    ("SELECT 1; SELECT 2", "multiple_statements"),
    ("SELECT * FROM memories FOR UPDATE", "locking_clause"),
    ("SELECT pg_sleep(30)", "forbidden_function"),
    (
        "SELECT set_config('deeprecall.query_owner', '00000000-0000-0000-0000-000000000000', true)",
        "forbidden_function",
    ),
    ("SELECT dblink('dbname=x', 'SELECT 1')", "forbidden_function"),
    ("SELECT pg_read_file('/etc/passwd')", "forbidden_function"),
    ("SELECT * FROM pg_catalog.pg_authid", "forbidden_relation"),
    ("SELECT * FROM information_schema.columns", "forbidden_relation"),
    ("SELECT * FROM public.memories_memory", "forbidden_relation"),
]


def test_escape_attempts_over_mcp_are_refused_and_change_nothing(asgi_server, alices, alice):
    before = rpc.row_counts()

    async def steps(session: ClientSession) -> list[types.CallToolResult]:
        return [await session.call_tool("query", {"sql": sql}) for sql, _ in ESCAPES]

    results = session_run(url(asgi_server), alices, steps)
    got = [(payload(r)["code"], payload(r)["details"]["reason"]) for r in results]
    assert got == [("query_rejected", reason) for _, reason in ESCAPES]
    assert all(r.is_error is True and payload(r)["http_status"] == 400 for r in results)
    assert rpc.row_counts() == before


def test_saved_queries_are_listed_described_and_run_only_through_run_saved_query(asgi_server, alices, alice):
    listed = ok(asgi_server, alices, "list_saved_queries", {})["saved_queries"]
    names = [saved["name"] for saved in listed]
    assert len(names) >= 12 and all(name.startswith("examples.") for name in names)
    assert all("sql" not in saved for saved in listed)
    described = ok(asgi_server, alices, "describe_saved_query", {"name": "examples.superseded_facts"})
    assert described["sql"].lstrip().upper().startswith("SELECT") and described["views"] == ["memories"]

    replaced = ok(asgi_server, alices, "run_saved_query", {"name": "examples.superseded_facts"})
    assert replaced["contract"] == "QueryResult/v1" and replaced["saved_query"] == "examples.superseded_facts"
    paris = Memory.objects.get(owner=alice, content="I live in Paris.")
    assert [row[:4] for row in replaced["rows"]] == [
        [str(paris.id), "I live in Paris.", str(paris.superseded_by_id), "I live in Berlin."]
    ]
    since = ok(
        asgi_server,
        alices,
        "run_saved_query",
        {"name": "examples.changed_since", "params": {"since": "2000-01-01T00:00:00Z"}, "limit": 2},
    )
    assert since["row_count"] == 2 and since["drops"][0]["reason"] == "row_cap"

    # Parameters are validated by their schema, strictly.
    for params, code in (
        ({}, "missing_field"),
        ({"since": "yesterday"}, "invalid_format"),
        ({"since": "2024-01-01T00:00:00Z", "extra": 1}, "unknown_field"),
        ({"since": 5}, "wrong_type"),
    ):
        error = failed(
            asgi_server, alices, "run_saved_query", {"name": "examples.changed_since", "params": params}
        )
        assert error["code"] == code, (params, error)
    missing = failed(asgi_server, alices, "run_saved_query", {"name": "examples.nope"})
    assert missing["code"] == "saved_query_not_found" and missing["http_status"] == 404
    # A saved query is not a tool.
    assert failed(asgi_server, alices, "examples.superseded_facts", {})["code"] == "unknown_operation"


def test_an_outsider_sees_only_his_own_empty_space(asgi_server, alices, alice, charlie):
    token = rpc.pat_token(charlie)
    for sql in (
        "SELECT content FROM memories",
        "SELECT * FROM sources",
        "SELECT * FROM evidence",
        "SELECT * FROM entities",
        "SELECT content FROM memories WHERE true OR 1 = 1",
    ):
        result = ok(asgi_server, token, "query", {"sql": sql})
        assert result["rows"] == [], sql
    for saved in ok(asgi_server, token, "list_saved_queries", {})["saved_queries"]:
        if saved["parameters"].get("required"):
            continue
        assert ok(asgi_server, token, "run_saved_query", {"name": saved["name"]})["rows"] in ([], [[0]]), (
            saved
        )
    # An id of Alice's, asked for by name: nothing.
    paris = Memory.objects.get(owner=alice, content="I live in Paris.")
    sources = ok(
        asgi_server,
        token,
        "run_saved_query",
        {"name": "examples.sources_of_fact", "params": {"fact_id": str(paris.id)}},
    )
    assert sources["rows"] == []
    space = ok(asgi_server, token, "query_space", {})
    assert space["space"]["id"] != ok(asgi_server, alices, "query_space", {})["space"]["id"]


def test_the_rest_routes_answer_the_same(asgi_server, alices, alice, charlie):
    headers = {"Authorization": f"Bearer {alices}"}
    api = f"{asgi_server.url}/api/v1"
    space = httpx.get(f"{api}/query/space", headers=headers, timeout=30).json()
    assert [tool["name"] for tool in space["tools"]] == OPEN_QUERY_TOOLS
    routes = {tool["name"]: tool["route"] for tool in space["tools"]}
    assert routes["query"] == "/api/v1/query" and routes["run_saved_query"] == "/api/v1/query/saved/run"

    def post(tool: str, body: dict[str, Any], auth: dict[str, str] = headers) -> httpx.Response:
        return httpx.post(asgi_server.url + routes[tool], json=body, headers=auth, timeout=30)

    ran = post("query", {"sql": "SELECT count(*) AS n FROM memories"})
    assert ran.status_code == 200 and ran.json()["rows"] == [[3]]
    refused = post("query", {"sql": "SELECT pg_sleep(1)"})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "query_rejected"
    strict = post("query", {"sql": "SELECT 1", "sql2": "x"})
    assert strict.status_code == 400 and strict.json()["error"]["code"] == "unknown_field"
    saved = post("run_saved_query", {"name": "examples.memories_by_month"})
    assert saved.status_code == 200 and saved.json()["saved_query"] == "examples.memories_by_month"
    assert post("describe_saved_query", {"name": "examples.nope"}).status_code == 404
    assert post("describe_view", {"view": "memories"}).json()["name"] == "memories"
    assert post("query_space", {}).json()["views"] == space["views"]
    listed = httpx.get(f"{api}/query/saved", headers=headers, timeout=30).json()["saved_queries"]
    assert listed == post("list_saved_queries", {}).json()["saved_queries"]
    outsider = {"Authorization": f"Bearer {rpc.pat_token(charlie)}"}
    theirs = post("query", {"sql": "SELECT count(*) FROM memories"}, outsider)
    assert theirs.json()["rows"] == [[0]]
    write_only = {"Authorization": f"Bearer {rpc.pat_token(alice, scopes=('memory:write',))}"}
    assert post("query", {"sql": "SELECT 1"}, write_only).status_code == 403
    # The write tools' routes: listed with their definitions, and run like the MCP tools.
    writes = httpx.get(f"{api}/ingest", headers=headers, timeout=30).json()["tools"]
    assert [(tool["name"], tool["route"]) for tool in writes] == [
        ("ingest", "/api/v1/ingest"),
        ("pipeline_readiness", "/api/v1/readiness"),
    ]
    ingested = httpx.post(
        f"{api}/ingest", json={"content": "The boiler was serviced in May."}, headers=headers
    )
    assert ingested.status_code == 200, ingested.text
    job_id = ingested.json()["job_id"]
    ready = httpx.post(f"{api}/readiness", json={"job_ids": [job_id]}, headers=outsider, timeout=30)
    assert ready.json()["jobs"][0]["status"] == "not_found"
    reader = {"Authorization": f"Bearer {rpc.pat_token(alice, scopes=('memory:read',))}"}
    assert httpx.post(f"{api}/ingest", json={"content": "x"}, headers=reader).status_code == 403
    # GET /operations?profile= is the profile's assured operations only, in its order.
    operations = httpx.get(f"{api}/operations", params={"profile": "evidence"}, headers=headers).json()
    assert [op["name"] for op in operations["operations"]] == [
        "resolve_entity",
        "claims_and_sources_context",
        "facts_context",
        "combined_context",
    ]


def test_the_eighteen_saved_queries_include_relation_current_and_facts_known_at(asgi_server, alice):
    """contracts/evidence-mcp.txt, tools/list: "The operation registry contains exactly: resolve_entity,
    claims_and_sources_context, facts_context, and combined_context. The eighteen demoted patterns are
    discoverable examples.* saved queries, not tools." The earlier contract names one of them:
    "relation_current ... Current relations matching a subject and optional predicate", with
    "subject_entity_id" required and "predicate" optional."""
    token = rpc.pat_token(alice)
    graph = f"{asgi_server.url}/mcp/graph"
    for target in ("Paris", "Berlin"):
        related = call(
            graph, token, "relate", {"source": "Mara", "target": target, "relation_type": "lives_in"}
        )
        assert related.is_error is not True, related
    call(graph, token, "relate", {"source": "Mara", "target": "Acme", "relation_type": "works_at"})
    listed = ok(asgi_server, token, "list_saved_queries", {})["saved_queries"]
    assert len(listed) == 18 and len({q["name"] for q in listed}) == 18
    by_name = {q["name"]: q for q in listed}
    current = by_name["examples.relation_current"]["parameters"]
    assert current["required"] == ["subject_entity_id"]
    assert set(current["properties"]) == {"subject_entity_id", "predicate"}
    mara = ok(asgi_server, token, "resolve_entity", {"query": "Mara"})["entities"][0]["id"]

    def rows(name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        result = ok(asgi_server, token, "run_saved_query", {"name": name, "params": params})
        assert result["saved_query"] == name and result["grade"] == "exploratory_tabular"
        columns = [column["name"] for column in result["columns"]]
        return [dict(zip(columns, row, strict=True)) for row in result["rows"]]

    everything = rows("examples.relation_current", {"subject_entity_id": mara})
    assert sorted((r["predicate"], r["object_name"]) for r in everything) == [
        ("lives_in", "Berlin"),
        ("works_at", "Acme"),
    ]
    only = rows("examples.relation_current", {"subject_entity_id": mara, "predicate": "lives_in"})
    assert [(r["predicate"], r["object_name"]) for r in only] == [("lives_in", "Berlin")]
    # The other clock (system time): what the service held when it had just learned of Paris.
    now = rows("examples.facts_known_at", {"known_at": "2999-01-01T00:00:00Z"})
    assert sorted(r["fact"] for r in now) == ["Mara lives_in Berlin", "Mara works_at Acme"]
    earliest = min(r["recorded_at"] for r in rows("examples.relation_history_of_entity", {"entity_id": mara}))
    then = rows("examples.facts_known_at", {"known_at": earliest})
    assert [(r["fact_type"], r["fact"]) for r in then] == [("relation", "Mara lives_in Paris")]
    # Strict parameters, as any tool's arguments.
    for params, code in (
        ({}, "missing_field"),
        ({"subject_entity_id": mara, "predicate": "loves"}, "invalid_value"),
        ({"subject_entity_id": "mara"}, "invalid_format"),
        ({"subject_entity_id": mara, "object": "Paris"}, "unknown_field"),
    ):
        error = failed(
            asgi_server, token, "run_saved_query", {"name": "examples.relation_current", "params": params}
        )
        assert error["code"] == code, (params, error)
