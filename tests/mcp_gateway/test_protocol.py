"""The MCP endpoint on the wire: both protocol revisions, HTTP semantics, tool results, no leaks.

Raw JSON-RPC over HTTP (tests/mcp_gateway/rpc.py) against the real server process, plus the
official Python SDK client over each revision. Every response body is checked for stack traces,
SQL and paths.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memories.models import Job, Source
from memories.operations import registry
from tests.helpers import wait_for_job
from tests.mcp_gateway import rpc
from tests.mcp_gateway.rpc import LEGACY, MODERN, PROTOCOLS, Rpc

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FOUR_TOOLS = {"recall", "answer", "remember", "forget"}
NO_SUCH_MEMORY = "00000000-0000-0000-0000-000000000000"
MIB = 1024 * 1024


@pytest.fixture
def token(alice) -> str:
    return rpc.pat_token(alice)


# --- the two revisions ------------------------------------------------------------------


def test_2025_11_25_initializes_then_lists_and_calls_tools_with_the_version_header(asgi_server, token):
    client = Rpc(asgi_server.url, token, protocol=LEGACY)
    hello = client.connect()
    assert hello["protocolVersion"] == LEGACY
    assert hello["serverInfo"]["name"] == "deeprecall"
    assert "tools" in hello["capabilities"]
    assert "recall" in hello["instructions"]

    names = [tool["name"] for tool in client.list_tools()]
    assert {"remember", "forget"} <= set(names)
    saved = client.ok("remember", {"content": "I play the cello on Thursdays."})
    assert saved["status"] == "queued"
    assert wait_for_job(saved["job_id"]).status == Job.Status.SUCCEEDED
    missing = client.error("forget", {"memory_id": NO_SUCH_MEMORY})
    assert missing["code"] == "memory_not_found"


def test_2026_07_28_needs_no_initialize_and_sends_the_version_on_every_post(asgi_server, token):
    client = Rpc(asgi_server.url, token, protocol=MODERN)
    # No handshake: the very first request is a tools/call.
    saved = client.ok("remember", {"content": "My dentist is Dr. Okafor."})
    assert saved["status"] == "queued"
    discovered = client.connect()  # server/discover
    assert MODERN in discovered["supportedVersions"]
    assert "tools" in discovered["capabilities"]
    names = [tool["name"] for tool in client.list_tools()]
    assert {"remember", "forget"} <= set(names)
    assert client.error("forget", {"memory_id": NO_SUCH_MEMORY})["code"] == "memory_not_found"
    assert wait_for_job(saved["job_id"]).status == Job.Status.SUCCEEDED


def test_2026_07_28_routing_headers_must_agree_with_the_body(asgi_server, token):
    url = asgi_server.url
    call = rpc.tools_call("forget", {"memory_id": NO_SUCH_MEMORY}, protocol=MODERN)
    cases = {
        "no Mcp-Method": {"Mcp-Method": ""},
        "another Mcp-Method": {"Mcp-Method": "tools/list"},
        "another Mcp-Name": {"Mcp-Name": "remember"},
    }
    for label, headers in cases.items():
        response = rpc.post(url, call, token=token, protocol=MODERN, headers=headers)
        rpc.assert_clean(response)
        assert response.status_code == 400, (label, response.text)
        assert response.json()["error"]["code"] == -32020, (label, response.text)
    # The header names 2026-07-28 but the body lacks the per-request envelope.
    bare = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = rpc.post(url, bare, token=token, protocol=MODERN)
    assert response.status_code == 400 and response.json()["error"]["code"] == -32602, response.text


@pytest.mark.parametrize("mode", ["legacy", MODERN])
def test_the_official_python_sdk_client_works_over_each_revision(asgi_server, token, mode):
    async def run() -> tuple[list[str], Any, Any]:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
            Client(streamable_http_client(f"{asgi_server.url}/mcp", http_client=http), mode=mode) as client,
        ):
            tools = await client.list_tools()
            saved = await client.call_tool("remember", {"content": "I am learning Portuguese."})
            missing = await client.call_tool("forget", {"memory_id": NO_SUCH_MEMORY})
            return [t.name for t in tools.tools], saved, missing

    names, saved, missing = asyncio.run(run())
    assert {"remember", "forget"} <= set(names)
    assert saved.is_error is False and saved.structured_content["status"] == "queued", saved
    assert wait_for_job(saved.structured_content["job_id"]).status == Job.Status.SUCCEEDED
    assert missing.is_error is True and missing.structured_content["code"] == "memory_not_found"


# --- HTTP semantics ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH"])
def test_only_post_is_allowed(asgi_server, token, method):
    for headers in (
        {},
        {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"},
        {"Authorization": f"Bearer {token}", "MCP-Protocol-Version": MODERN},
        {"Authorization": f"Bearer {token}", "MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": "abc"},
    ):
        response = httpx.request(method, f"{asgi_server.url}/mcp", headers=headers, timeout=10)
        rpc.assert_clean(response)
        assert response.status_code == 405, (method, headers, response.text)
        assert response.headers["allow"] == "POST"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_notification_gets_202_and_an_empty_body(asgi_server, token, protocol):
    for method in ("notifications/initialized", "notifications/cancelled", "notifications/anything"):
        response = rpc.post(asgi_server.url, rpc.notification(method, {}), token=token, protocol=protocol)
        assert response.status_code == 202, (method, response.status_code, response.text)
        assert response.content == b""


def _stream(data: bytes, chunk: int = 64 * 1024) -> Iterator[bytes]:
    for start in range(0, len(data), chunk):
        yield data[start : start + chunk]


def test_a_body_over_one_mebibyte_is_refused_and_nothing_is_stored(asgi_server, token):
    before = rpc.row_counts()
    body = rpc.tools_call("remember", {"content": "x" * (MIB + 10)})
    raw = json.dumps(body).encode()
    assert len(raw) > MIB
    # A tool call gets its isError result under its own id: a JSON-RPC answer an SDK reads.
    declared = rpc.post(asgi_server.url, raw, token=token)
    assert declared.status_code == 200, declared.text
    rpc.assert_clean(declared)
    answer = rpc.parse(declared)
    assert answer["id"] == body["id"] and answer["result"]["isError"] is True
    assert answer["result"]["structuredContent"]["code"] == "body_too_large"
    # Without a Content-Length (chunked upload): counted while reading.
    chunked = httpx.post(
        f"{asgi_server.url}/mcp",
        content=_stream(raw),
        headers={**rpc.routing_headers(body, LEGACY), "Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert chunked.status_code == 200, chunked.text
    assert rpc.parse(chunked)["result"]["structuredContent"]["code"] == "body_too_large"
    # Another request is a JSON-RPC error carrying the error object.
    listing = rpc.message("tools/list", {"cursor": "x" * (MIB + 10)})
    refused = rpc.post(asgi_server.url, listing, token=token)
    error = rpc.parse(refused)["error"]
    assert refused.status_code == 200 and error["code"] == -32600
    assert error["data"]["code"] == "body_too_large"
    # Without a token nothing more is read: 413, a JSON-RPC error without an id.
    anonymous = rpc.post(asgi_server.url, raw, token=None)
    assert anonymous.status_code == 413
    assert anonymous.json()["id"] is None and anonymous.json()["error"]["data"]["code"] == "body_too_large"
    # Far beyond the limit (twice it, declared), nothing more is read either.
    far = rpc.tools_call("remember", {"content": "x" * (2 * MIB + 10)})
    assert rpc.post(asgi_server.url, far, token=token).status_code == 413
    assert rpc.row_counts() == before
    # Just under the limit is read and parsed (and refused by the tool's own limit).
    near = rpc.tools_call("remember", {"content": "x" * (MIB - 400)})
    response = rpc.post(asgi_server.url, near, token=token)
    assert response.status_code == 200, response.text[:500]
    assert rpc.parse(response)["result"]["structuredContent"]["code"] == "value_too_long"
    assert rpc.row_counts() == before


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "http://127.0.0.1", "https://127.0.0.1", "http://localhost:1"]
)
def test_a_foreign_origin_gets_403(asgi_server, token, origin):
    before = rpc.row_counts()
    body = rpc.tools_call("remember", {"content": "Rebinding attack."})
    response = rpc.post(asgi_server.url, body, token=token, headers={"Origin": origin})
    rpc.assert_clean(response)
    assert response.status_code == 403, response.text
    assert rpc.row_counts() == before


def test_our_own_origin_and_no_origin_are_allowed(asgi_server, token):
    for headers in ({"Origin": asgi_server.url}, {"Origin": asgi_server.url + "/"}, {}):
        response = rpc.post(asgi_server.url, rpc.tools_list(), token=token, headers=headers)
        assert response.status_code == 200, (headers, response.text)


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.2", "127.0.0.1.evil.example"])
def test_a_host_not_in_allowed_hosts_gets_421(asgi_server, token, host):
    response = rpc.post(asgi_server.url, rpc.tools_list(), token=token, headers={"Host": host})
    rpc.assert_clean(response)
    assert response.status_code == 421, response.text


# --- tools ------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_unknown_tool_is_an_error_result_naming_the_tools(asgi_server, token, protocol):
    for name in ("nope", "Remember", "remember ", "", "x" * 5000):
        body = rpc.tools_call(name, {}, protocol=protocol)
        response = rpc.post(asgi_server.url, body, token=token, protocol=protocol)
        rpc.assert_clean(response)
        answer = rpc.parse(response)
        if protocol == MODERN and not rpc.routing_headers(body, MODERN).get("Mcp-Name"):
            # The empty or overlong name cannot ride in the Mcp-Name header: a header mismatch.
            assert answer["error"]["code"] == -32020, answer
            continue
        assert answer["id"] == body["id"] and response.status_code == 200
        result = answer["result"]
        assert result["isError"] is True, answer
        assert result["structuredContent"]["code"] == "unknown_operation"
        assert result["structuredContent"]["details"]["available"] == [
            "recall",
            "answer",
            "remember",
            "forget",
        ]


def _invalid_arguments() -> list[tuple[str, dict[str, Any], str]]:
    return [
        ("remember", {"content": "My cat is called Miso.", "colour": "blue"}, "unknown_field"),
        ("remember", {"content": "Someone else did this.", "agent_id": str(uuid.uuid4())}, "unknown_field"),
        ("remember", {"content": "x" * 100_001}, "value_too_long"),
        ("remember", {"content": "   "}, "value_too_short"),
        ("remember", {}, "missing_field"),
        ("remember", {"content": 42}, "wrong_type"),
        # Content only: a session, tags or a date belong to REST saves.
        ("remember", {"content": "ok", "session_id": str(uuid.uuid4())}, "unknown_field"),
        ("remember", {"content": "ok", "tags": ["work"]}, "unknown_field"),
        (
            "recall",
            {"query": "cats", "session_id": "urn:uuid:0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51"},
            "invalid_format",
        ),
        ("recall", {"query": "cats", "at": "20240508T140000+0200"}, "invalid_format"),
        ("recall", {"query": "cats", "at": "2024-05-08T14:00+02:00"}, "invalid_format"),
        ("forget", {"memory_id": NO_SUCH_MEMORY, "hard": 1}, "wrong_type"),
        ("forget", {"memory_id": NO_SUCH_MEMORY, "reason_code": "because"}, "invalid_value"),
        ("forget", {"memory_id": "42"}, "invalid_format"),
        ("recall", {"query": "cats", "top_k": True}, "wrong_type"),
        ("recall", {"query": "cats", "top_k": 51}, "value_out_of_range"),
        ("recall", {"query": "cats", "limit": 5}, "unknown_field"),
        ("answer", {"question": "What is my cat called?", "top_k": False}, "wrong_type"),
        ("answer", {"question": "x" * 4001}, "value_too_long"),
    ]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(("tool", "arguments", "code"), _invalid_arguments())
def test_invalid_arguments_are_tool_errors_with_the_error_object_and_store_nothing(
    asgi_server, token, protocol, tool, arguments, code
):
    before = rpc.row_counts()
    error = Rpc(asgi_server.url, token, protocol=protocol).error(tool, arguments)
    assert error["code"] == code, error
    assert error["retryable"] is False
    assert rpc.row_counts() == before


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_non_object_arguments_are_refused_and_store_nothing(asgi_server, token, protocol):
    before = rpc.row_counts()
    for arguments in ([1, 2], "content", 7):
        body = rpc.tools_call("remember", arguments, protocol=protocol)
        response = rpc.post(asgi_server.url, body, token=token, protocol=protocol)
        rpc.assert_clean(response)
        answer = rpc.parse(response)
        if "error" in answer:
            assert answer["error"]["code"] == -32602, answer
        else:
            rpc.check_tool_result(answer["result"])
            assert answer["result"]["isError"] is True
    assert rpc.row_counts() == before


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("content", ["Before\x00after", "nul at the end\x00"])
def test_a_nul_character_is_an_input_error_not_an_internal_error(asgi_server, token, protocol, content):
    """PostgreSQL text cannot hold NUL: the save must be refused as bad input (or cleaned), never
    fail inside as a retryable internal error that no retry can fix."""
    before = rpc.row_counts()
    result = Rpc(asgi_server.url, token, protocol=protocol).call("remember", {"content": content})
    payload = result["structuredContent"]
    if result.get("isError"):
        assert payload["code"] != "internal_error", payload
        assert payload["retryable"] is False
        assert rpc.row_counts() == before
    else:
        assert "\x00" not in Source.objects.get(jobs__id=payload["job_id"]).content


def test_a_lone_surrogate_is_an_input_error_not_an_internal_error(asgi_server, token):
    """JSON may escape a lone surrogate (\\ud800); it is not text and cannot be stored."""
    before = rpc.row_counts()
    for protocol in PROTOCOLS:
        body = json.dumps(rpc.tools_call("remember", {"content": "PLACEHOLDER"}, protocol=protocol))
        for raw in ('"a\\ud800b"', '"\\udfff"'):
            response = rpc.post(
                asgi_server.url, body.replace('"PLACEHOLDER"', raw), token=token, protocol=protocol
            )
            rpc.assert_clean(response)
            answer = rpc.parse(response)
            if "error" in answer:  # 2025-11-25: the SDK's parser refuses it outright
                assert answer["error"]["code"] == -32700, answer
                continue
            result = answer["result"]
            rpc.check_tool_result(result)
            assert result["isError"] is True, result
            assert result["structuredContent"]["code"] != "internal_error", (protocol, raw, result)
    assert rpc.row_counts() == before


def test_a_successful_result_carries_structured_content_and_the_same_json_in_one_text_block(
    asgi_server, token
):
    for protocol in PROTOCOLS:
        body = rpc.tools_call("remember", {"content": f"Saved over {protocol}."}, protocol=protocol)
        response = rpc.post(asgi_server.url, body, token=token, protocol=protocol)
        assert response.status_code == 200
        result = rpc.parse(response)["result"]
        assert result.get("isError") in (None, False), result
        assert [block["type"] for block in result["content"]] == ["text"]
        assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
        assert set(result["structuredContent"]) == {"job_id", "status"}
        wait_for_job(result["structuredContent"]["job_id"])


def test_tools_list_is_the_registry_exactly_in_a_stable_order(asgi_server, token):
    expected = [
        {"name": op.name, "inputSchema": op.input_schema, "outputSchema": op.describe()["mcp_output_schema"]}
        for op in registry.operations("core")
    ]
    expected = json.loads(json.dumps(expected))
    seen = []
    for protocol in (LEGACY, MODERN, LEGACY, MODERN):
        tools = Rpc(asgi_server.url, token, protocol=protocol).list_tools()
        seen.append(json.dumps(tools, sort_keys=True))
        assert [t["name"] for t in tools] == [e["name"] for e in expected]
        for tool, want in zip(tools, expected, strict=True):
            assert tool["inputSchema"] == want["inputSchema"], tool["name"]
            assert tool["inputSchema"]["additionalProperties"] is False
            assert tool["outputSchema"] == want["outputSchema"], tool["name"]
            assert tool["description"]
    assert seen[0] == seen[2] and seen[1] == seen[3]


def test_the_four_tools_are_listed(asgi_server, token):
    names = {tool["name"] for tool in Rpc(asgi_server.url, token).list_tools()}
    assert names >= FOUR_TOOLS, f"missing: {sorted(FOUR_TOOLS - names)}"


# --- nothing of the implementation crosses the wire -------------------------------------


def _nasty_bodies() -> list[tuple[str, Any]]:
    call = rpc.tools_call("forget", {"memory_id": "PLACEHOLDER"})
    text = json.dumps(call)
    return [
        ("not json", b"{not json"),
        ("empty", b""),
        ("not utf-8", b"\xff\xfe\x00{"),
        ("deep arrays", b"[" * 100_000 + b"]" * 100_000),
        ("deep objects", b'{"a":' * 50_000 + b"1" + b"}" * 50_000),
        ("deep arguments", text.replace('"PLACEHOLDER"', "[" * 5000 + "]" * 5000)),
        ("huge number", text.replace('"PLACEHOLDER"', "9" * 5000)),
        ("NaN", text.replace('"PLACEHOLDER"', "NaN")),
        ("batch", [rpc.tools_list(), rpc.tools_list()]),
        ("null", None),
        ("string", "tools/list"),
        ("id object", {**rpc.tools_list(), "id": {"a": 1}}),
        ("id bool", {**rpc.tools_list(), "id": True}),
        ("id float", {**rpc.tools_list(), "id": 1.5}),
        ("method number", {**rpc.tools_list(), "method": 5}),
        ("params list", {**rpc.tools_list(), "params": [1, 2]}),
        ("jsonrpc 1.0", {**rpc.tools_list(), "jsonrpc": "1.0"}),
        ("a response", {"jsonrpc": "2.0", "id": 1, "result": {}}),
        ("unknown method", rpc.message("no/such/method")),
        ("name is a number", rpc.message("tools/call", {"name": 5, "arguments": {}})),
        ("SQL in an argument", rpc.tools_call("forget", {"memory_id": "'; DROP TABLE x; --"})),
        ("path in an argument", rpc.tools_call("remember", {"content": "../../x", "x": "/etc/passwd"})),
    ]


@pytest.mark.parametrize("protocol", [None, LEGACY, MODERN])
def test_no_response_leaks_a_traceback_sql_or_a_path(asgi_server, token, protocol):
    before = rpc.row_counts()
    for label, body in _nasty_bodies():
        response = rpc.post(asgi_server.url, body, token=token, protocol=protocol)
        rpc.assert_clean(response)
        assert response.status_code in (200, 202, 400, 404), (label, response.status_code, response.text)
        if response.content:
            answer = response.json()
            assert "pydantic" not in response.text and "input_value" not in response.text, (label, answer)
            if response.status_code == 202:
                continue
            assert answer.get("jsonrpc") == "2.0", (label, answer)
            assert ("error" in answer) != ("result" in answer), (label, answer)
    assert rpc.row_counts() == before


@pytest.mark.parametrize("protocol", [LEGACY, MODERN])
def test_a_malformed_request_is_answered_not_dropped(asgi_server, token, protocol):
    """A request whose envelope is malformed is owed an error (not a 202 as if a notification)."""
    for body in (
        {**rpc.tools_list(protocol), "id": {"a": 1}},
        {**rpc.tools_list(protocol), "id": None},
        {**rpc.tools_list(protocol), "id": [1]},
        [rpc.tools_list(protocol)],
    ):
        response = rpc.post(asgi_server.url, body, token=token, protocol=protocol)
        assert response.status_code == 400, (body, response.status_code, response.text)
        assert response.json()["error"]["code"] == -32600, response.text
