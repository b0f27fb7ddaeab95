"""The stdio proxy serving the evidence profile, composed from REST as the contract's Transport says.

Against the live server (real HTTP, the real worker): the proxy's tools/list equals the remote
/mcp/evidence endpoint's, name for name and schema for schema, and each kind of tool runs through
its own route. Against a stand-in deployment: GET /operations answering 404 leaves the write and
open-query tools; a missing or untrustworthy GET /query/space only leaves out the open-query tools;
an auth failure on GET /operations fails tools/list.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from mcp import ClientSession

from mcp_gateway.stdio_proxy import DeepRecallClient, StdioProxy
from memories.models import Memory
from tests.helpers import wait_for_job
from tests.mcp_gateway import rpc
from tests.mcp_gateway.sdk import session_run, structured
from tests.mcp_gateway.test_evidence_profile import (
    CONTRACT_OPERATIONS,
    CONTRACT_TOOLS,
    CONTRACT_WRITE_TOOLS,
    OPEN_QUERY_TOOLS,
)

KEYS = ("name", "description", "inputSchema", "outputSchema", "annotations")


def message(proxy: StdioProxy, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    reply = proxy.handle_line(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})
    )
    assert reply is not None
    return dict(json.loads(reply))


def call(proxy: StdioProxy, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = message(proxy, "tools/call", {"name": name, "arguments": arguments})["result"]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    return dict(result)


@pytest.fixture
def evidence_proxy(asgi_server, alice) -> Iterator[StdioProxy]:
    client = DeepRecallClient(asgi_server.url, rpc.pat_token(alice), timeout=60)
    yield StdioProxy(client, "evidence")
    client.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_it_lists_what_the_remote_evidence_endpoint_lists(asgi_server, alice, evidence_proxy):
    tools = message(evidence_proxy, "tools/list")["result"]["tools"]
    assert [tool["name"] for tool in tools] == CONTRACT_TOOLS
    remote = rpc.Rpc(f"{asgi_server.url}/mcp/evidence", rpc.pat_token(alice))
    remote.connect()
    listed = remote.list_tools()
    assert [{k: t.get(k) for k in KEYS} for t in tools] == [{k: t.get(k) for k in KEYS} for t in listed]


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_it_runs_each_kind_of_tool_through_its_route(asgi_server, alice, charlie, evidence_proxy):
    ingested = call(evidence_proxy, "ingest", {"content": "The boiler was serviced in May."})
    assert ingested["isError"] is False, ingested
    job_id = ingested["structuredContent"]["job_id"]
    wait_for_job(job_id)
    ready = call(evidence_proxy, "pipeline_readiness", {"job_ids": [job_id]})["structuredContent"]
    assert ready["jobs"][0]["searchable"] is True
    facts = call(evidence_proxy, "facts_context", {"query": "When was the boiler serviced?"})[
        "structuredContent"
    ]
    memory = Memory.objects.get(owner=alice, job_id=job_id)
    assert str(memory.id) in [fact["id"] for fact in facts["facts"]]
    rows = call(evidence_proxy, "query", {"sql": "SELECT content FROM memories"})["structuredContent"]
    assert rows["grade"] == "exploratory_tabular" and rows["rows"] == [[memory.content]]
    saved = call(evidence_proxy, "run_saved_query", {"name": "examples.memories_by_month"})[
        "structuredContent"
    ]
    assert saved["saved_query"] == "examples.memories_by_month"

    # Failures: the contract's error object, with the public status, detail and code under `error`.
    refused = call(evidence_proxy, "query", {"sql": "SELECT pg_sleep(5)"})
    assert refused["isError"] is True
    error = refused["structuredContent"]
    assert (error["code"], error["http_status"], error["retryable"]) == ("query_rejected", 400, False)
    assert error["error"] == {"status_code": 400, "detail": error["message"], "code": "query_rejected"}
    strict = call(evidence_proxy, "ingest", {"content": "x", "colour": "red"})["structuredContent"]
    assert strict["code"] == "unknown_field" and strict["http_status"] == 400
    unknown = call(evidence_proxy, "recall", {"query": "boiler"})
    assert unknown["isError"] is True and unknown["structuredContent"]["code"] == "unknown_operation"
    assert unknown["structuredContent"]["details"]["available"] == CONTRACT_TOOLS

    # Charlie, through his own proxy, sees none of it.
    client = DeepRecallClient(asgi_server.url, rpc.pat_token(charlie), timeout=60)
    outsider = StdioProxy(client, "evidence")
    assert call(outsider, "query", {"sql": "SELECT content FROM memories"})["structuredContent"]["rows"] == []
    theirs = call(outsider, "pipeline_readiness", {"job_ids": [job_id]})["structuredContent"]
    assert theirs["jobs"][0]["status"] == "not_found"
    client.close()


# -- against a stand-in deployment: the contract's degraded compositions -----------------------


class _Deployment(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        answers = self.server.answers
        key = self.path.split("?")[0]
        status, body = answers.get(key, (404, {"error": {"code": "not_found", "message": "Not found."}}))
        self._send(status, body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    answers: dict[str, tuple[int, Any]]


def _tool(name: str, route: str | None = None) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "description": name, "input_schema": {"type": "object"}}
    if route:
        tool["route"] = route
    return tool


WRITES = (200, {"tools": [_tool(n, f"/api/v1/{n}") for n in CONTRACT_WRITE_TOOLS]})
OPERATIONS = (200, {"operations": [_tool(n) for n in CONTRACT_OPERATIONS]})
SPACE = (200, {"tools": [_tool(n, f"/api/v1/query/{n}") for n in OPEN_QUERY_TOOLS]})


@pytest.fixture
def deployment() -> Iterator[tuple[str, dict[str, tuple[int, Any]]]]:
    server = _Server(("127.0.0.1", 0), _Deployment)
    server.answers = {}
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", server.answers
    server.shutdown()
    server.server_close()


def _names(url: str) -> Any:
    client = DeepRecallClient(url, "drp_test", timeout=5)
    try:
        reply = message(StdioProxy(client, "evidence"), "tools/list")
    finally:
        client.close()
    return [tool["name"] for tool in reply["result"]["tools"]] if "result" in reply else reply["error"]


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ({"/api/v1/operations": OPERATIONS, "/api/v1/query/space": SPACE}, CONTRACT_TOOLS),
        # The registry not mounted: the write tools and the open query still.
        ({"/api/v1/query/space": SPACE}, [*CONTRACT_WRITE_TOOLS, *OPEN_QUERY_TOOLS]),
        # No open query served, or one that is not trustworthy: only those tools are left out.
        ({"/api/v1/operations": OPERATIONS}, [*CONTRACT_WRITE_TOOLS, *CONTRACT_OPERATIONS]),
        (
            {"/api/v1/operations": OPERATIONS, "/api/v1/query/space": (200, {"tools": [{"name": "query"}]})},
            [*CONTRACT_WRITE_TOOLS, *CONTRACT_OPERATIONS],
        ),
        (
            {"/api/v1/operations": OPERATIONS, "/api/v1/query/space": (500, b"<html>oops</html>")},
            [*CONTRACT_WRITE_TOOLS, *CONTRACT_OPERATIONS],
        ),
    ],
)
def test_it_composes_what_the_deployment_serves(deployment, answers, expected):
    url, served = deployment
    served.update({"/api/v1/ingest": WRITES, **answers})
    assert _names(url) == expected


def test_an_auth_failure_on_operations_fails_tools_list(deployment):
    url, served = deployment
    served.update(
        {
            "/api/v1/ingest": WRITES,
            "/api/v1/operations": (401, {"error": {"code": "not_authenticated", "message": "Bad token."}}),
            "/api/v1/query/space": SPACE,
        }
    )
    error = _names(url)
    assert error["code"] == -32603 and error["data"]["code"] == "not_authenticated"


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_a_read_tools_failure_has_one_shape_over_http_and_over_stdio(asgi_server, alice, evidence_proxy):
    """contracts/evidence-mcp.txt, tools/call: "Remote read-tool API failures encode their public
    status_code, detail, and optional code below an error key in that JSON text. This preserves a
    typed 503 or query-rejection code for hosts that need to stop or re-plan while still using the
    ordinary MCP error-result envelope." """
    token = rpc.pat_token(alice)
    calls = [
        ("query", {"sql": "SELECT pg_sleep(5)"}),
        ("facts_context", {"query": "tea", "k": 0}),
        ("describe_view", {"view": "pg_authid"}),
        ("run_saved_query", {"name": "examples.nothing_like_it"}),
    ]

    async def steps(session: ClientSession) -> list[Any]:
        return [await session.call_tool(name, arguments) for name, arguments in calls]

    over_http = [structured(r) for r in session_run(f"{asgi_server.url}/mcp/evidence", token, steps)]
    over_stdio = [call(evidence_proxy, name, arguments)["structuredContent"] for name, arguments in calls]
    for (name, _), remote, local in zip(calls, over_http, over_stdio, strict=True):
        for error in (remote, local):
            assert error["error"] == {
                "status_code": error["http_status"],
                "detail": error["message"],
                "code": error["code"],
            }, (name, error)
        # The same object; the proxy adds the status it was answered with, the ids differ.
        assert {k: v for k, v in local.items() if k not in ("remote_status", "request_id")} == {
            k: v for k, v in remote.items() if k != "request_id"
        }, name
