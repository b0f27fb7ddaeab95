"""Raw JSON-RPC over HTTP to the live MCP endpoint, for the protocol, security and robustness tests.

No SDK here on purpose: these tests check the wire (headers, status codes, envelopes) exactly.
`post()` sends one body; `message()` builds a request for either protocol revision the SDK
speaks: 2025-11-25 (an `initialize` handshake, then the `MCP-Protocol-Version` header) and
2026-07-28 (no handshake; the version, client info and capabilities ride in `params._meta`
of every request and the version, method and tool name in headers).
"""

from __future__ import annotations

import itertools
import json
import secrets
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, set_token_value

from accounts.models import User
from accounts.services import pat_create
from memories.models import Job, Memory, Source
from tests.helpers import READ, WRITE, oauth_app

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
PROTOCOLS = (LEGACY, MODERN)
ACCEPT = "application/json, text/event-stream"
CLIENT_INFO = {"name": "deeprecall-tests", "version": "1.0"}
ERROR_KEYS = {"code", "message", "retryable", "agent_action", "request_id"}
# Nothing of the implementation may cross the wire: no stack trace, no SQL, no path.
FORBIDDEN = ("Traceback", 'File "', "psycopg", "SELECT ", "/work/", "site-packages")

_ids = itertools.count(1)


# --- messages ---------------------------------------------------------------------------


def message(
    method: str, params: dict[str, Any] | None = None, *, protocol: str = LEGACY, id: Any = None
) -> dict[str, Any]:
    """A JSON-RPC request; for 2026-07-28 with the per-request envelope in `params._meta`."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": next(_ids) if id is None else id, "method": method}
    params = dict(params or {})
    if protocol == MODERN:
        meta = params.get("_meta")
        params["_meta"] = {
            **(meta if isinstance(meta, dict) else {}),
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    if params:
        body["params"] = params
    return body


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        body["params"] = params
    return body


def initialize(protocol: str = LEGACY) -> dict[str, Any]:
    return message(
        "initialize",
        {"protocolVersion": protocol, "capabilities": {}, "clientInfo": CLIENT_INFO},
        protocol=LEGACY,
    )


def discover() -> dict[str, Any]:
    return message("server/discover", protocol=MODERN)


def tools_list(protocol: str = LEGACY) -> dict[str, Any]:
    return message("tools/list", protocol=protocol)


def tools_call(name: Any, arguments: Any = None, *, protocol: str = LEGACY) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return message("tools/call", params, protocol=protocol)


# --- transport --------------------------------------------------------------------------


def _header_safe(value: str) -> bool:
    return bool(value) and value.isascii() and value.isprintable() and value == value.strip()


def routing_headers(body: Any, protocol: str | None) -> dict[str, str]:
    """The headers a client sends with `body`: the version, and for 2026-07-28 the method and name."""
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    if protocol is None:
        return headers
    headers["MCP-Protocol-Version"] = protocol
    if protocol != MODERN:
        return headers
    if isinstance(body, (str, bytes)):
        try:
            body = json.loads(body)
        except (ValueError, RecursionError):
            return headers
    method = body.get("method") if isinstance(body, dict) else None
    if isinstance(method, str) and _header_safe(method):
        headers["Mcp-Method"] = method
        params = body.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        # Header values are short: a longer name goes without (the server says they differ).
        if method == "tools/call" and isinstance(name, str) and _header_safe(name) and len(name) <= 1000:
            headers["Mcp-Name"] = name
    return headers


def post(
    url: str,
    body: Any,
    *,
    token: str | None = None,
    headers: dict[str, str] | None = None,
    protocol: str | None = LEGACY,
    client: httpx.Client | None = None,
    timeout: float = 60,
) -> httpx.Response:
    """POST `body` to `url` (the server's base URL, its /mcp URL or a profile's /mcp/... URL).

    `body` may be a JSON value (serialised here) or raw `bytes`/`str` (sent as is).
    `headers` override the defaults; a value of "" drops that header.
    """
    # A server's base URL means its core endpoint; any /mcp... URL (a profile) is used as is.
    target = url if urlsplit(url).path.startswith("/mcp") else url.rstrip("/") + "/mcp"
    if isinstance(body, bytes):
        content = body
    elif isinstance(body, str):
        content = body.encode("utf-8", "surrogatepass")
    else:
        content = json.dumps(body).encode()
    merged = routing_headers(body, protocol)
    if token:
        merged["Authorization"] = f"Bearer {token}"
    merged.update(headers or {})
    merged = {k: v for k, v in merged.items() if v != ""}
    if client is not None:
        return client.post(target, content=content, headers=merged, timeout=timeout)
    return httpx.post(target, content=content, headers=merged, timeout=timeout)


def parse(response: httpx.Response) -> Any:
    """The JSON-RPC message of a response (JSON, or the last `data:` line of an SSE stream)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        assert data, response.text
        return json.loads(data[-1])
    return response.json()


def _sent(response: httpx.Response) -> str:
    try:
        return response.request.content.decode("utf-8", "replace")
    except httpx.RequestNotRead:  # a streamed upload
        return ""


def assert_clean(response: httpx.Response) -> None:
    """No implementation detail (stack trace, SQL, path) in the response, nor a server error.

    A needle the request itself carried (an unknown tool name, a field name echoed back in an
    error) is the client's own text, not a leak.
    """
    assert response.status_code < 500, (response.status_code, response.text[:2000])
    sent = _sent(response)
    needles = [n for n in FORBIDDEN if n not in sent and json.dumps(n)[1:-1] not in sent]
    text = response.text
    for needle in needles:
        assert needle not in text, f"{needle!r} leaked: {text[:2000]}"
    for name, value in response.headers.items():
        for needle in needles:
            assert needle not in value, f"{needle!r} leaked in header {name}: {value}"


class Rpc:
    """A raw MCP client over one protocol revision: call methods and tools, check each answer is clean."""

    def __init__(
        self, url: str, token: str, *, protocol: str = LEGACY, client: httpx.Client | None = None
    ) -> None:
        self.url = url
        self.token = token
        self.protocol = protocol
        self.client = client

    def send(self, body: Any, **kwargs: Any) -> httpx.Response:
        kwargs.setdefault("token", self.token)
        kwargs.setdefault("protocol", self.protocol)
        kwargs.setdefault("client", self.client)
        response = post(self.url, body, **kwargs)
        assert_clean(response)
        return response

    def connect(self) -> dict[str, Any]:
        """The start of a conversation: `initialize` (2025-11-25) or `server/discover` (2026-07-28)."""
        if self.protocol == MODERN:
            return self.result(discover())
        # The handshake itself carries no protocol header (the client does not know it yet).
        response = self.send(initialize(self.protocol), protocol=None)
        assert response.status_code == 200, response.text
        result = parse(response)["result"]
        ack = self.send(notification("notifications/initialized"))
        assert ack.status_code == 202 and ack.content == b"", (ack.status_code, ack.text)
        return dict(result)

    def result(self, body: dict[str, Any]) -> dict[str, Any]:
        response = self.send(body)
        assert response.status_code == 200, (response.status_code, response.text)
        answer = parse(response)
        assert answer.get("id") == body["id"] and "result" in answer, answer
        return dict(answer["result"])

    def list_tools(self) -> list[dict[str, Any]]:
        return list(self.result(tools_list(self.protocol))["tools"])

    def call(self, name: str, arguments: Any = None) -> dict[str, Any]:
        """A tools/call result (success or isError), checked for the result shape."""
        result = self.result(tools_call(name, arguments, protocol=self.protocol))
        check_tool_result(result)
        return result

    def ok(self, name: str, arguments: Any = None) -> dict[str, Any]:
        result = self.call(name, arguments)
        assert result.get("isError") is not True, result
        return dict(result["structuredContent"])

    def error(self, name: str, arguments: Any = None) -> dict[str, Any]:
        result = self.call(name, arguments)
        assert result.get("isError") is True, result
        return dict(result["structuredContent"])


def check_tool_result(result: dict[str, Any]) -> None:
    """A tool result carries structuredContent and exactly the same JSON in one text block;
    an error result's object has the full error shape."""
    assert isinstance(result.get("structuredContent"), dict), result
    content = result.get("content")
    assert isinstance(content, list) and len(content) == 1, result
    assert content[0]["type"] == "text", result
    assert json.loads(content[0]["text"]) == result["structuredContent"], result
    if result.get("isError"):
        assert set(result["structuredContent"]) >= ERROR_KEYS, result
        error = result["structuredContent"]
        assert isinstance(error["code"], str) and isinstance(error["message"], str), error
        assert isinstance(error["retryable"], bool) and isinstance(error["agent_action"], str), error
        assert isinstance(error["request_id"], str) and error["request_id"], error


# --- credentials and rows ---------------------------------------------------------------


def pat_token(user: User, scopes: tuple[str, ...] = (READ, WRITE)) -> str:
    """A real personal access token (drp_...) of `user`."""
    _, raw = pat_create(user=user, name=f"tests-{secrets.token_hex(3)}", scopes=list(scopes))
    return raw


def oauth_token(
    user: User,
    resource: list[str] | str | None,
    *,
    scopes: tuple[str, ...] = (READ, WRITE),
    app_name: str = "Test Agent",
    expires_in: timedelta = timedelta(hours=1),
    application: Any = None,
) -> tuple[str, Any]:
    """A django-oauth-toolkit access token (stored as DOT stores them) and its application.

    `resource` is the RFC 8707 audience: the live server's `<url>/mcp` for a token the
    endpoint must accept; another URL, or None/[] for none at all, for one it must refuse.
    """
    if application is None:
        application = oauth_app(app_name, user)
    audiences = [resource] if isinstance(resource, str) else list(resource or [])
    raw = secrets.token_urlsafe(30)
    access = get_access_token_model()(
        user=user,
        application=application,
        expires=timezone.now() + expires_in,
        scope=" ".join(scopes),
        resource=audiences,
    )
    set_token_value(access, raw)
    access.save()
    return raw, application


def row_counts() -> dict[str, int]:
    """How many sources, jobs and memories exist (for 'nothing was stored' checks)."""
    return {
        "sources": Source.objects.count(),
        "jobs": Job.objects.count(),
        "memories": Memory.objects.count(),
    }
