"""`deeprecall mcp`, the stdio proxy.

Two layers: the protocol edges in process, against a stand-in HTTP server on
loopback that plays the REST API (fast, every failure mode on demand); and the
console script against a real `manage.py up` with the registry behind it
(slow), which is what the MCP gateway issue asks to see.
"""

from __future__ import annotations

import io
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from mcp_gateway import stdio_proxy
from mcp_gateway.stdio_proxy import DeepRecallClient, StdioProxy, config_from_env
from tests.conftest import ROOT

SCRIPT = Path(sys.executable).parent / "deeprecall"
TOKEN = "drp_good"

OPERATIONS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the arguments.",
        "input_schema": {"type": "object", "additionalProperties": False, "properties": {"x": {}}},
        "output_schema": {"type": "object"},
        "scope": "memory:read",
        "profiles": ["core"],
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "fail",
        "description": "Always a business failure.",
        "input_schema": {"type": "object"},
        "output_schema": {"type": "object"},
        "scope": "memory:write",
        "profiles": ["core"],
        "annotations": {},
    },
    {
        "name": "broken",
        "description": "A gateway in front answers with HTML.",
        "input_schema": {"type": "object"},
        "output_schema": {},
        "scope": "memory:read",
        "profiles": ["core"],
        "annotations": {},
    },
    {
        "name": "slow",
        "description": "Never answers in time.",
        "input_schema": {"type": "object"},
        "output_schema": {"type": "object"},
        "scope": "memory:read",
        "profiles": ["core"],
        "annotations": {},
    },
    {
        "name": "internal_only",
        "description": "Not offered on the default MCP endpoint.",
        "input_schema": {"type": "object"},
        "output_schema": {"type": "object"},
        "scope": "memory:read",
        "profiles": ["admin"],
        "annotations": {},
    },
]

FAIL_ERROR = {
    "code": "memory_not_found",
    "message": "No memory with this id exists in your account.",
    "retryable": False,
    "agent_action": "check the memory_id; recall to find the right one",
    "request_id": "req-123",
}


class StandIn:
    """What the stand-in server saw and what it offers; tests change it."""

    def __init__(self) -> None:
        self.operations = [dict(op) for op in OPERATIONS]
        self.list_calls = 0
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        if self.headers.get("Authorization") == f"Bearer {TOKEN}":
            return True
        self._send(401, {"error": {**FAIL_ERROR, "code": "not_authenticated", "message": "Bad token."}})
        return False

    def do_GET(self) -> None:
        state = self.server.state
        state.requests.append(("GET", self.path, dict(self.headers), b""))
        if self._authorised() and self.path == "/api/v1/operations":
            state.list_calls += 1
            self._send(200, {"operations": state.operations})

    def do_POST(self) -> None:
        state = self.server.state
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        state.requests.append(("POST", self.path, dict(self.headers), body))
        if not self._authorised():
            return
        name = self.path.removeprefix("/api/v1/operations/")
        if name not in {op["name"] for op in state.operations}:
            self._send(404, {"error": {**FAIL_ERROR, "code": "unknown_operation", "message": "No such."}})
        elif name == "fail":
            self._send(404, {"error": FAIL_ERROR})
        elif name == "broken":
            self._send(502, b"<html>Bad Gateway</html>", "text/html")
        elif name == "slow":
            time.sleep(1.5)
            self._send(200, {})
        else:
            self._send(200, {"echo": json.loads(body)})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: StandIn


@pytest.fixture
def stand_in() -> Iterator[tuple[str, StandIn]]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.state = StandIn()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", server.state
    server.shutdown()
    server.server_close()


@pytest.fixture
def proxy(stand_in) -> Iterator[StdioProxy]:
    url, _ = stand_in
    client = DeepRecallClient(url + "/", TOKEN, timeout=0.5)
    yield StdioProxy(client)
    client.close()


def rpc(proxy: StdioProxy, method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    reply = proxy.handle_line(json.dumps(message))
    assert reply is not None and "\n" not in reply
    return json.loads(reply)


def call(proxy: StdioProxy, name: str, arguments: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return rpc(proxy, "tools/call", params)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- in process, against the stand-in ----------------------------------------


class TestProtocol:
    def test_it_negotiates_the_protocol_version(self, proxy):
        for version in ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"):
            result = rpc(proxy, "initialize", {"protocolVersion": version, "capabilities": {}})["result"]
            assert result["protocolVersion"] == version
        # 2026-07-28 has no initialize handshake: asked for it there, the SDK counter-offers too.
        for other in ("2026-07-28", "2099-01-01", None, 7):
            result = rpc(proxy, "initialize", {"protocolVersion": other})["result"]
            assert result["protocolVersion"] == "2025-11-25"
        # As the HTTP endpoint: tools, and resources (graph:// on the graph profile, none elsewhere).
        assert result["capabilities"] == {
            "tools": {"listChanged": False},
            "resources": {"subscribe": False, "listChanged": False},
        }
        assert result["serverInfo"] == {"name": "deeprecall", "version": stdio_proxy.package_version()}

    def test_it_takes_its_versions_from_the_mcp_sdk(self):
        assert stdio_proxy.SUPPORTED_PROTOCOL_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
        assert stdio_proxy.LATEST_PROTOCOL_VERSION == LATEST_HANDSHAKE_VERSION
        # What a copy of the file without the SDK answers must not fall behind either.
        assert stdio_proxy._FALLBACK_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS

    def test_it_turns_a_2026_client_to_the_handshake(self, proxy):
        # SDK clients probe server/discover first and fall back to initialize on this error.
        assert rpc(proxy, "server/discover")["error"]["code"] == -32601

    def test_it_answers_ping(self, proxy):
        assert rpc(proxy, "ping", request_id="p-1") == {"jsonrpc": "2.0", "id": "p-1", "result": {}}

    def test_it_never_answers_notifications_or_responses(self, proxy):
        for message in (
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
            {"jsonrpc": "2.0", "method": "no/such/notification"},
            {"jsonrpc": "2.0", "id": 5, "result": {}},
            {"jsonrpc": "2.0", "id": 6, "error": {"code": -1, "message": "x"}},
        ):
            assert proxy.handle_line(json.dumps(message)) is None

    def test_it_answers_malformed_json_with_a_parse_error(self, proxy):
        for line in (
            b"{not json",
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
            b"\xff\xfe",
            b"NaN",
            b"[" * 100_000,
        ):
            reply = json.loads(proxy.handle_line(line) or "")
            assert reply == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": "Parse error: the line is not valid JSON."},
            }

    def test_it_answers_invalid_requests(self, proxy):
        cases = [
            ("42", None),
            ('"ping"', None),
            ('{"id": 1, "method": "ping"}', 1),
            ('{"jsonrpc": "1.0", "id": 1, "method": "ping"}', 1),
            ('{"jsonrpc": "2.0", "id": 1, "method": 3}', 1),
            ('{"jsonrpc": "2.0", "id": null, "method": "ping"}', None),
            ('{"jsonrpc": "2.0", "id": true, "method": "ping"}', None),
            ('{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', None),
            ("[]", None),
        ]
        for line, expected_id in cases:
            reply = json.loads(proxy.handle_line(line) or "")
            assert reply["id"] == expected_id, line
            assert reply["error"]["code"] == -32600, line

    def test_it_answers_unknown_methods_and_bad_params(self, proxy):
        assert rpc(proxy, "prompts/list")["error"]["code"] == -32601
        assert rpc(proxy, "resources/read", {"uri": 7})["error"]["code"] == -32602
        assert rpc(proxy, "tools/list", params=[1, 2])["error"]["code"] == -32602
        assert call(proxy, "echo", arguments=[1])["error"]["code"] == -32602
        assert rpc(proxy, "tools/call", {"arguments": {}})["error"]["code"] == -32602

    def test_it_answers_a_batch(self, proxy):
        batch = [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "nope"},
        ]
        replies = json.loads(proxy.handle_line(json.dumps(batch)) or "")
        assert [(r["id"], "result" in r) for r in replies] == [(1, True), (2, False)]
        only_notifications = [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
        assert proxy.handle_line(json.dumps(only_notifications)) is None

    def test_it_keeps_ids_of_any_kind(self, proxy):
        for request_id in ("abc", 0, -7, 2**62, 1.5):
            assert rpc(proxy, "ping", request_id=request_id)["id"] == request_id

    def test_it_writes_only_ascii_lines_even_for_odd_unicode(self, proxy):
        reply = proxy.handle_line('{"jsonrpc": "2.0", "id": "\\ud800\u2028x", "method": "ping"}')
        assert reply is not None and reply.isascii() and "\n" not in reply
        assert json.loads(reply)["id"] == "\ud800\u2028x"


class TestTools:
    def test_it_lists_the_operations_as_tools_in_order(self, proxy):
        tools = rpc(proxy, "tools/list")["result"]["tools"]
        core = [op for op in OPERATIONS if "core" in op["profiles"]]
        assert [tool["name"] for tool in tools] == [op["name"] for op in core]
        echo = tools[0]
        assert echo == {
            "name": "echo",
            "description": "Echo the arguments.",
            "inputSchema": OPERATIONS[0]["input_schema"],
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True},
        }
        broken = tools[2]
        assert "outputSchema" not in broken and "annotations" not in broken

    def test_it_caches_the_list_for_the_process_lifetime(self, proxy, stand_in):
        _, state = stand_in
        rpc(proxy, "tools/list")
        rpc(proxy, "tools/list")
        call(proxy, "echo", {"x": 1})
        assert state.list_calls == 1

    def test_it_sends_the_token_and_the_arguments(self, proxy, stand_in):
        _, state = stand_in
        reply = call(proxy, "echo", {"x": "caf\u00e9 \U0001f600"})
        method, path, headers, body = state.requests[-1]
        assert (method, path) == ("POST", "/api/v1/operations/echo")
        assert headers["Authorization"] == f"Bearer {TOKEN}"
        assert headers["Content-Type"] == "application/json"
        assert json.loads(body) == {"x": "caf\u00e9 \U0001f600"}
        result = reply["result"]
        assert result["isError"] is False
        assert result["structuredContent"] == {"echo": {"x": "caf\u00e9 \U0001f600"}}
        [text] = result["content"]
        assert text["type"] == "text" and json.loads(text["text"]) == result["structuredContent"]

    def test_it_sends_an_empty_object_when_arguments_are_missing(self, proxy, stand_in):
        _, state = stand_in
        assert call(proxy, "echo")["result"]["structuredContent"] == {"echo": {}}
        assert json.loads(state.requests[-1][3]) == {}

    def test_it_returns_a_remote_error_as_a_tool_error(self, proxy):
        result = call(proxy, "fail", {})["result"]
        assert result["isError"] is True
        expected = {**FAIL_ERROR, "remote_status": 404}
        assert result["structuredContent"] == expected
        assert json.loads(result["content"][0]["text"]) == expected

    def test_it_explains_a_status_without_our_error_body(self, proxy):
        error = call(proxy, "broken", {})["result"]["structuredContent"]
        assert error["code"] == "remote_error" and error["remote_status"] == 502
        assert error["retryable"] is True
        assert "HTTP 502" in error["message"] and "<html>" not in error["message"]

    def test_it_times_out_with_a_tool_error(self, proxy):
        result = call(proxy, "slow", {})["result"]
        assert result["isError"] is True
        error = result["structuredContent"]
        assert error["code"] == "remote_timeout" and error["remote_status"] is None
        assert "0.5 s" in error["message"]

    def test_it_refuses_an_unknown_tool_after_looking_once_more(self, proxy, stand_in):
        _, state = stand_in
        rpc(proxy, "tools/list")
        result = call(proxy, "nope", {})["result"]
        error = result["structuredContent"]
        assert result["isError"] is True and error["code"] == "unknown_operation"
        assert "nope" in error["message"] and error["remote_status"] is None
        assert state.list_calls == 2
        assert not [r for r in state.requests if r[0] == "POST"]

    def test_it_refuses_a_tool_outside_the_core_profile(self, proxy):
        result = call(proxy, "internal_only", {})["result"]
        assert result["isError"] is True and result["structuredContent"]["code"] == "unknown_operation"

    def test_it_offers_another_profile_when_asked(self, stand_in):
        url, _ = stand_in
        client = DeepRecallClient(url + "/", TOKEN, timeout=0.5)
        try:
            other = StdioProxy(client, "admin")
            names = [tool["name"] for tool in rpc(other, "tools/list")["result"]["tools"]]
            assert "internal_only" in names
            assert call(other, "internal_only", {}).get("error") is None
        finally:
            client.close()

    def test_it_finds_a_tool_added_since_it_listed(self, proxy, stand_in):
        _, state = stand_in
        rpc(proxy, "tools/list")
        state.operations.append({**OPERATIONS[0], "name": "echo2"})
        assert call(proxy, "echo2", {"x": 2})["result"]["structuredContent"] == {"echo": {"x": 2}}

    def test_it_reports_a_bad_token_on_list_and_call(self, stand_in):
        url, _ = stand_in
        proxy = StdioProxy(DeepRecallClient(url, "drp_wrong"))
        error = rpc(proxy, "tools/list")["error"]
        assert error["code"] == -32603
        assert error["data"]["code"] == "not_authenticated" and error["data"]["remote_status"] == 401
        result = call(proxy, "echo", {})["result"]
        assert result["isError"] is True
        assert result["structuredContent"]["remote_status"] == 401

    def test_it_does_not_follow_redirects(self):
        redirecting = httpx.MockTransport(
            lambda request: httpx.Response(301, headers={"Location": "https://elsewhere.example/"})
        )
        client = DeepRecallClient("http://memory.example", TOKEN, transport=redirecting)
        error = call(StdioProxy(client), "echo", {})["result"]["structuredContent"]
        assert error["remote_status"] == 301 and "https://elsewhere.example/" in error["message"]

    def test_it_never_leaks_a_traceback(self, proxy, monkeypatch, caplog):
        def explode(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            raise RuntimeError("secret internals /etc/passwd")

        monkeypatch.setattr(proxy.client, "run_operation", explode)
        reply = call(proxy, "echo", {})
        assert reply["error"] == {"code": -32603, "message": "Internal error in the deeprecall proxy."}
        assert "secret internals" in caplog.text  # on stderr for the operator, not on the wire


class TestServeLoop:
    def test_it_serves_lines_until_eof(self, proxy):
        stdin = io.BytesIO(
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
            b"\n   \n"
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
            b"garbage\n"
            b'{"jsonrpc":"2.0","id":2,"method":"ping"}'  # the last line may lack its newline
        )
        stdout = io.BytesIO()
        stdio_proxy.serve(proxy, stdin, stdout)
        replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
        assert [(r["id"], r.get("error", {}).get("code")) for r in replies] == [
            (1, None),
            (None, -32700),
            (2, None),
        ]

    def test_it_skips_a_line_that_is_too_long_and_carries_on(self, proxy, monkeypatch):
        monkeypatch.setattr(stdio_proxy, "MAX_LINE_BYTES", 64)
        stdin = io.BytesIO(b'{"x": "' + b"a" * 500 + b'"}\n{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
        stdout = io.BytesIO()
        stdio_proxy.serve(proxy, stdin, stdout)
        first, second = (json.loads(line) for line in stdout.getvalue().splitlines())
        assert first["error"]["code"] == -32600 and first["id"] is None
        assert second == {"jsonrpc": "2.0", "id": 3, "result": {}}


class TestConfiguration:
    def test_it_reads_the_environment(self):
        config = config_from_env(
            {
                "DEEPRECALL_API_URL": "https://m.example/",
                "DEEPRECALL_API_TOKEN": "drp_x",
                "DEEPRECALL_API_TIMEOUT": "5",
            }
        )
        assert (config.api_url, config.token, config.timeout) == ("https://m.example/", "drp_x", 5.0)
        assert config.profile == "core"
        graph = config_from_env(
            {
                "DEEPRECALL_API_URL": "https://m.example/",
                "DEEPRECALL_API_TOKEN": "t",
                "DEEPRECALL_PROFILE": "graph",
            }
        )
        assert graph.profile == "graph"

    @pytest.mark.parametrize(
        ("environ", "needle"),
        [
            ({}, "DEEPRECALL_API_URL"),
            ({"DEEPRECALL_API_URL": "http://x"}, "DEEPRECALL_API_TOKEN"),
            ({"DEEPRECALL_API_URL": "ftp://x", "DEEPRECALL_API_TOKEN": "t"}, "http://"),
            ({"DEEPRECALL_API_URL": "localhost:8000", "DEEPRECALL_API_TOKEN": "t"}, "http://"),
            ({"DEEPRECALL_API_URL": "http://x", "DEEPRECALL_API_TOKEN": "t\u00e9"}, "ASCII"),
            ({"DEEPRECALL_API_URL": "http://x", "DEEPRECALL_API_TOKEN": "a b"}, "ASCII"),
            (
                {
                    "DEEPRECALL_API_URL": "http://x",
                    "DEEPRECALL_API_TOKEN": "t",
                    "DEEPRECALL_API_TIMEOUT": "x",
                },
                "TIMEOUT",
            ),
            (
                {
                    "DEEPRECALL_API_URL": "http://x",
                    "DEEPRECALL_API_TOKEN": "t",
                    "DEEPRECALL_API_TIMEOUT": "0",
                },
                "TIMEOUT",
            ),
            (
                {"DEEPRECALL_API_URL": "http://x", "DEEPRECALL_API_TOKEN": "t", "DEEPRECALL_PROFILE": "../x"},
                "PROFILE",
            ),
        ],
    )
    def test_it_refuses_a_bad_environment(self, environ, needle):
        with pytest.raises(ValueError, match=needle):
            config_from_env(environ)


# -- the console script as a process ------------------------------------------


class ProxyProcess:
    """`deeprecall mcp` as a child process, spoken to line by line."""

    def __init__(self, url: str, token: str) -> None:
        env = {**os.environ, "DEEPRECALL_API_URL": url, "DEEPRECALL_API_TOKEN": token}
        self.proc = subprocess.Popen(
            [str(SCRIPT), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        # A reader thread, so that a silent proxy fails the test instead of hanging it.
        threading.Thread(target=self._pump, daemon=True).start()
        self.next_id = 0

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 60) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no reply within {timeout}s") from None
        assert line.endswith(b"\n")
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        reply = self.receive()
        assert reply["id"] == self.next_id
        return reply

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def initialize(self) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def close(self) -> tuple[int, str]:
        """Close stdin (EOF) and return the exit status and stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        stderr = self.proc.stderr.read().decode()
        self.proc.stderr.close()
        assert self.lines.empty(), "the proxy wrote something nobody asked for"
        return code, stderr

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def test_it_exits_2_with_one_line_when_the_environment_is_missing():
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPRECALL_API_")}
    for extra in ({}, {"DEEPRECALL_API_URL": "http://127.0.0.1:9"}):
        result = subprocess.run(
            [str(SCRIPT), "mcp"],
            env={**env, **extra},
            input=b"",
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert result.returncode == 2
        assert result.stdout == b""
        lines = result.stderr.decode().splitlines()
        assert len(lines) == 1 and lines[0].startswith("deeprecall mcp: error: set DEEPRECALL_API_"), lines


def test_it_starts_without_django_and_runs_as_a_single_file(tmp_path):
    code = (
        "import sys, config.cli, mcp_gateway.stdio_proxy;"
        "print(sorted({m.split('.')[0] for m in sys.modules}"
        " & {'django', 'celery', 'mcp', 'mcp_types', 'pydantic', 'memories'}))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"
    # A copy of the file outside the project needs nothing but httpx.
    copy = tmp_path / "deeprecall_mcp.py"
    copy.write_text((ROOT / "mcp_gateway" / "stdio_proxy.py").read_text())
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DEEPRECALL_API_URL": "http://127.0.0.1:9",
        "DEEPRECALL_API_TOKEN": "t",
    }
    result = subprocess.run(
        [sys.executable, "-I", str(copy)],
        input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_it_reports_an_unreachable_deployment_and_keeps_serving():
    proxy = ProxyProcess(f"http://127.0.0.1:{free_port()}", TOKEN)
    try:
        assert proxy.initialize()["result"]["serverInfo"]["name"] == "deeprecall"
        listing = proxy.request("tools/list")["error"]
        assert listing["code"] == -32603 and listing["data"]["remote_status"] is None
        result = proxy.call("recall", {"query": "anything"})["result"]
        assert result["isError"] is True
        error = result["structuredContent"]
        assert error["code"] == "remote_unreachable" and error["remote_status"] is None
        assert error["message"].startswith("Could not reach Deep Recall at http://127.0.0.1:")
        assert proxy.request("ping")["result"] == {}
        code, stderr = proxy.close()
    finally:
        proxy.kill()
    assert code == 0
    assert "Traceback" not in stderr


# -- against a real running service (the must-show) -------------------


@pytest.fixture(scope="module")
def service() -> Iterator[tuple[str, str, str]]:
    """(base URL, read+write token, read-only token) of a fresh `manage.py up` on a temp data folder."""
    var_dir = Path(tempfile.mkdtemp(prefix="deeprecall-stdio-"))
    port = free_port()
    env = {**os.environ, "DEEPRECALL_VAR_DIR": str(var_dir), "PYTHONUNBUFFERED": "1"}
    env.pop("DATABASE_URL", None)
    env.pop("DEEPRECALL_BROKER_DIR", None)
    log = open(var_dir / "service.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "up", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    keep = False
    try:
        deadline = time.monotonic() + 300
        while True:
            assert proc.poll() is None, (var_dir / "service.log").read_text()[-3000:]
            try:
                health = httpx.get(f"{url}/healthz", timeout=10)
                # The web process's readiness, and the worker `up` started (saves wait for it).
                if health.status_code == 200 and health.json()["checks"]["worker"]["ready"]:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the service did not become ready in 300 s"
            time.sleep(0.5)
        created = subprocess.run(
            [
                sys.executable,
                str(ROOT / "manage.py"),
                "shell",
                "-c",
                "from memories.services.account import user_sign_up;"
                "from accounts.services import pat_create;"
                "u = user_sign_up(email='stdio@example.com', password='stdio-password-123');"
                "print(pat_create(user=u, name='rw', scopes=['memory:read','memory:write'])[1],"
                " pat_create(user=u, name='ro', scopes=['memory:read'])[1])",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        read_write, read_only = created.stdout.strip().splitlines()[-1].split()
        yield url, read_write, read_only
    except BaseException:
        keep = True
        print(f"service log kept in {var_dir / 'service.log'}", file=sys.stderr)
        raise
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        if not keep:
            import shutil

            shutil.rmtree(var_dir, ignore_errors=True)


@pytest.fixture
def mcp(service) -> Iterator[ProxyProcess]:
    url, read_write, _ = service
    proxy = ProxyProcess(url, read_write)
    yield proxy
    proxy.kill()


def _wait_for_job(url: str, token: str, job_id: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        response = httpx.get(f"{url}/api/v1/jobs/{job_id}", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200, response.text
        job = response.json()
        if job["status"] in ("succeeded", "failed") or time.monotonic() > deadline:
            return job
        time.sleep(0.1)


@pytest.mark.slow
class TestAgainstARunningService:
    def test_it_lists_the_same_tools_as_the_http_api(self, service, mcp):
        url, token, _ = service
        initialized = mcp.initialize()["result"]
        assert initialized["protocolVersion"] == "2025-11-25"
        # notifications/initialized was sent: the next line must be the ping's answer, not a reply to it.
        assert mcp.request("ping")["result"] == {}
        operations = httpx.get(f"{url}/api/v1/operations", headers={"Authorization": f"Bearer {token}"})
        assert operations.status_code == 200
        core = [op for op in operations.json()["operations"] if "core" in op["profiles"]]
        tools = mcp.request("tools/list")["result"]["tools"]
        assert [tool["name"] for tool in tools] == [op["name"] for op in core]
        assert {"remember", "forget"} <= {tool["name"] for tool in tools}
        for tool, op in zip(tools, core, strict=True):
            assert tool["description"] == op["description"]
            assert tool["inputSchema"] == op["input_schema"]
            assert tool["outputSchema"] == op["mcp_output_schema"]
            assert tool["annotations"] == op["annotations"]
            assert tool["inputSchema"]["additionalProperties"] is False

    def test_it_negotiates_the_versions_the_streamable_http_endpoint_negotiates(self, service, mcp):
        url, token, _ = service
        client = {"name": "t", "version": "1"}
        for asked in (*KNOWN_PROTOCOL_VERSIONS, "2099-01-01"):
            params = {"protocolVersion": asked, "capabilities": {}, "clientInfo": client}
            response = httpx.post(
                f"{url}/mcp",
                headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
                json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
                timeout=30,
            )
            assert response.status_code == 200, response.text
            remote = response.json()["result"]["protocolVersion"]
            assert mcp.request("initialize", params)["result"]["protocolVersion"] == remote, asked

    def test_it_lists_the_same_tools_as_the_streamable_http_endpoint(self, service, mcp):
        url, token, _ = service
        mcp.initialize()
        tools = mcp.request("tools/list")["result"]["tools"]
        response = httpx.post(
            f"{url}/mcp",
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
            },
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            timeout=30,
        )
        assert response.status_code == 200, response.text
        remote = response.json()["result"]["tools"]
        keys = ("name", "description", "inputSchema", "outputSchema", "annotations")
        assert [{k: t.get(k) for k in keys} for t in tools] == [{k: t.get(k) for k in keys} for t in remote]

    def test_it_round_trips_a_remember_call(self, service, mcp):
        url, token, _ = service
        mcp.initialize()
        content = "My sister Ingrid moved to Tromso in March and keeps bees there."
        result = mcp.call("remember", {"content": content})["result"]
        assert result["isError"] is False, result
        job = result["structuredContent"]
        assert job["status"] == "queued"
        assert json.loads(result["content"][0]["text"]) == job
        finished = _wait_for_job(url, token, job["job_id"])
        assert finished["status"] == "succeeded", finished
        assert finished["memory_ids"]
        tools = {tool["name"] for tool in mcp.request("tools/list")["result"]["tools"]}
        if "recall" in tools:  # recall lands with its own change; check the loop when it is there
            recalled = mcp.call("recall", {"query": "Where does Ingrid live?"})["result"]
            assert recalled["isError"] is False, recalled
            found = {memory["id"] for memory in recalled["structuredContent"]["memories"]}
            assert found & set(finished["memory_ids"])
        forgotten = mcp.call("forget", {"memory_id": finished["memory_ids"][0]})["result"]
        assert forgotten["isError"] is False, forgotten
        assert forgotten["structuredContent"]["action"] == "suppressed"

    def test_it_reports_bad_arguments_with_the_remote_status_and_code(self, mcp):
        mcp.initialize()
        for arguments, code in (
            ({"content": "x" * 100_001}, "value_too_long"),
            ({"content": "hello", "colour": "blue"}, "unknown_field"),
            ({}, "missing_field"),
        ):
            result = mcp.call("remember", arguments)["result"]
            assert result["isError"] is True
            error = result["structuredContent"]
            assert (error["remote_status"], error["code"]) == (400, code)
            assert {"message", "retryable", "agent_action", "request_id"} <= set(error)
            assert json.loads(result["content"][0]["text"]) == result["structuredContent"]

    def test_it_reports_a_memory_the_caller_does_not_own(self, mcp):
        mcp.initialize()
        result = mcp.call("forget", {"memory_id": "00000000-0000-4000-8000-000000000000"})["result"]
        error = result["structuredContent"]
        assert result["isError"] is True and (error["remote_status"], error["code"]) == (
            404,
            "memory_not_found",
        )

    def test_it_refuses_an_unknown_tool_and_survives_garbage_then_exits_0(self, mcp):
        mcp.initialize()
        unknown = mcp.call("no_such_tool", {})["result"]
        assert unknown["isError"] is True and unknown["structuredContent"]["code"] == "unknown_operation"
        mcp.send(b"{this is not json")
        assert mcp.receive() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error: the line is not valid JSON."},
        }
        mcp.send(b'{"jsonrpc": "2.0", "id": 99}')
        assert mcp.receive()["error"]["code"] == -32600
        assert mcp.request("ping")["result"] == {}
        code, stderr = mcp.close()
        assert code == 0
        assert "Traceback" not in stderr

    def test_it_reports_insufficient_scope_for_a_read_only_token(self, service):
        url, _, read_only = service
        proxy = ProxyProcess(url, read_only)
        try:
            proxy.initialize()
            assert proxy.request("tools/list")["result"]["tools"]
            result = proxy.call("remember", {"content": "I like tea."})["result"]
            assert result["isError"] is True
            error = result["structuredContent"]
            assert (error["remote_status"], error["code"]) == (403, "insufficient_scope")
            assert error["details"] == {"required_scope": "memory:write"}
            assert proxy.close()[0] == 0
        finally:
            proxy.kill()
