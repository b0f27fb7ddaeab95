"""The MCP endpoint: Streamable HTTP (stateless, JSON responses) in front of the registry.

Per request, before the SDK sees it:
1. only POST (GET and DELETE answer 405: the SDK's stateless GET would open an
   SSE stream that never closes); a body over the limit is refused with a JSON-RPC answer an SDK
   reads (`_oversized`): a tool call gets its isError result (`body_too_large`), another request
   a JSON-RPC error, both under the request's id, so the client's session carries on;
2. `Host` and `Origin` must be ours (DNS-rebinding protection);
3. a bearer token is required: an OAuth token minted for this resource, or a
   personal access token; else 401 with `WWW-Authenticate` naming the
   resource metadata and the scopes;
4. a `tools/call` needs its tool's scope, else 403 `insufficient_scope`, so a
   client can step up from memory:read to memory:write;
5. on the handshake-era path, a body that is not one JSON-RPC request or
   notification gets -32600 here (the SDK would echo pydantic's error text, or
   drop a request with a malformed id as if it were a notification).
The caller is then handed to the tool through a context variable; nothing is
kept between requests, so any number of processes can serve the endpoint.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from accounts.caller import Caller
from accounts.oauth import metadata_url, resource_url
from mcp_gateway.auth import caller_for_bearer
from mcp_gateway.tools import (
    call_tool,
    profile_scopes,
    read_resource,
    refusal_result,
    resource_definitions,
    resource_scope,
    tool_definitions,
    tool_scope,
)
from memories.errors import AppError, Code
from memories.limits import document_request_max_bytes
from memories.operations import registry

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

MAX_BODY_BYTES = 1024 * 1024


def body_limit(profile: str) -> int:
    """The largest request body a profile accepts. A profile with `ingest` carries whole documents
    (base64 in JSON: 4/3 of the bytes), so it takes the document limit plus room for the rest."""
    if registry.operation_for_tool("ingest", profile) is not None:
        return max(MAX_BODY_BYTES, document_request_max_bytes())
    return MAX_BODY_BYTES


_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("deeprecall_mcp_caller", default=None)
_profile: contextvars.ContextVar[str] = contextvars.ContextVar("deeprecall_mcp_profile", default="core")


async def _list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=tool_definitions(_profile.get()))


async def _call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
    caller = _caller.get()
    if caller is None:  # the endpoint authenticates before the SDK runs; this is a bug guard
        raise RuntimeError("MCP tool called without an authenticated caller")
    return await call_tool(caller, params.name, params.arguments, profile=_profile.get())


async def _list_resources(
    ctx: object, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=resource_definitions(_profile.get()))


async def _read_resource(ctx: object, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    caller = _caller.get()
    if caller is None:  # the endpoint authenticates before the SDK runs; this is a bug guard
        raise RuntimeError("MCP resource read without an authenticated caller")
    return await read_resource(caller, str(params.uri), profile=_profile.get())


class ProfileServer(Server[Any]):
    """One server behind every profile URL: what it says at `initialize` (and `server/discover`) is the
    instructions of the profile whose URL the request came in on, read when the SDK builds the
    answer, inside the request."""

    @property
    def instructions(self) -> str | None:
        return registry.PROFILES[_profile.get()].instructions or None

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        # The constructor's assignment: the profile's own text is the one used.
        pass


def build_server() -> Server[Any]:
    from importlib.metadata import version

    return ProfileServer(
        "deeprecall",
        version=version("deeprecall"),
        title="Deep Recall",
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
        on_list_resources=_list_resources,
        on_read_resource=_read_resource,
    )


async def _respond(send: Send, status: int, body: dict[str, Any] | None, headers: dict[str, str]) -> None:
    raw = json.dumps(body).encode() if body is not None else b""
    header_list = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    if body is not None:
        header_list.append((b"content-type", b"application/json"))
    header_list.append((b"content-length", str(len(raw)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": header_list})
    await send({"type": "http.response.body", "body": raw})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _host_allowed(host: str | None) -> bool:
    if not host:
        return False
    hostname = urlsplit(f"//{host}").hostname or ""
    allowed = settings.ALLOWED_HOSTS
    return (
        "*" in allowed
        or hostname in allowed
        or any(a.startswith(".") and (hostname == a[1:] or hostname.endswith(a)) for a in allowed)
    )


def _origin_allowed(origin: str | None) -> bool:
    if origin is None:
        return True  # not a browser: nothing to rebind
    return origin.rstrip("/") in settings.MCP_ALLOWED_ORIGINS


_NOT_JSON = object()


def _parse(body: bytes) -> Any:
    """The decoded body, or `_NOT_JSON` when it is not JSON (the SDK answers with a parse error)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # deep nesting raises RecursionError, not a ValueError
        return _NOT_JSON


def _needed_scopes(message: object, profile: str) -> list[tuple[str, str]]:
    """(what, scope) for each tool call and resource read in a decoded JSON-RPC body."""
    messages = message if isinstance(message, list) else [message]
    needed = []
    for item in messages:
        if not isinstance(item, dict):
            continue
        params = item.get("params")
        if item.get("method") == "tools/call":
            name = params.get("name") if isinstance(params, dict) else None
            scope = tool_scope(name, profile) if isinstance(name, str) else None
            if scope is not None:
                needed.append((f"The tool {name}", scope))
        elif item.get("method") in ("resources/list", "resources/read"):
            uri = params.get("uri") if isinstance(params, dict) else None
            scope = resource_scope(uri if isinstance(uri, str) else None, profile)
            needed.append(("Reading resources", scope))
    return needed


# An over-limit body is read on (and dropped) up to this many times the limit, keeping its first and
# last bytes, to find the request's id and method; beyond it, it is not read at all.
OVERSIZED_READ_FACTOR = 2
_KEPT_BYTES = 64 * 1024
_JSON_SCALAR = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
# The request's last member, when it is the id (both official SDKs write it after params).
_TRAILING_ID = re.compile(rb'"id"\s*:\s*' + _JSON_SCALAR + rb"\s*\}\s*$")


@dataclass
class _Overflow:
    """What was read of a body over the limit: its first and last bytes, its size so far, and
    whether it has ended."""

    head: bytes = b""
    tail: bytes = b""
    size: int = 0
    ended: bool = False

    def add(self, chunk: bytes, *, ended: bool) -> None:
        if len(self.head) < _KEPT_BYTES:
            self.head += chunk[: _KEPT_BYTES - len(self.head)]
        self.tail = (self.tail + chunk)[-_KEPT_BYTES:]
        self.size += len(chunk)
        self.ended = ended


_WHITESPACE = re.compile(r"\s*")


def _leading_members(head: bytes) -> dict[str, object]:
    """The members of a JSON object's text before its `params` (the large part), as far as `head`
    holds them whole: where a client writes `id` and `method` first."""
    text = head.decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    found: dict[str, object] = {}

    def skip(position: int) -> int:
        match = _WHITESPACE.match(text, position)
        return match.end() if match is not None else position

    position = skip(0)
    if text[position : position + 1] != "{":
        return found
    try:
        position = skip(position + 1)
        while text[position : position + 1] == '"':
            key, position = decoder.raw_decode(text, position)
            position = skip(position)
            if key == "params" or text[position : position + 1] != ":":
                break
            found[key], position = decoder.raw_decode(text, skip(position + 1))
            position = skip(position)
            if text[position : position + 1] != ",":
                break
            position = skip(position + 1)
    except (ValueError, RecursionError):
        pass  # cut off inside a value: what came before is still known
    return found


def _oversized_request(head: bytes, tail: bytes) -> tuple[Any, str | None]:
    """(id, method) of a request too large to parse, from its first and last bytes; (None, None)
    when they do not say (a notification, or not a JSON-RPC object)."""
    members = _leading_members(head)
    request_id = members.get("id")
    if request_id is None and (match := _TRAILING_ID.search(tail)) is not None:
        try:
            request_id = json.loads(match.group(1))
        except ValueError:
            request_id = None
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        request_id = None
    method = members.get("method")
    return request_id, method if isinstance(method, str) else None


INVALID_REQUEST_BODY = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "Body must be a single JSON-RPC request or notification object"},
}


def _malformed_envelope(scope: Scope, message: object) -> bool:
    """True for a decoded body that is not one well-formed JSON-RPC request or notification, on the
    handshake-era (2025-xx) path. The SDK's legacy transport would answer it with pydantic's
    validation text (the input echoed back), or drop a request whose id is malformed as if it were
    a notification; the 2026-07-28 path already answers these with -32600 itself."""
    version = _header(scope, b"mcp-protocol-version")
    if message is _NOT_JSON or (version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS):
        return False
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return True
    if not isinstance(message.get("method"), str):
        return True  # a batch, a posted response (we never send requests), or no method at all
    if "id" in message and (isinstance(message["id"], bool) or not isinstance(message["id"], (str, int))):
        return True
    return message.get("params") is not None and not isinstance(message["params"], dict)


class McpEndpoint:
    """ASGI app for one MCP profile (`/mcp` is the core profile)."""

    def __init__(self, manager: StreamableHTTPSessionManager, *, path: str = "/mcp", profile: str = "core"):
        self.manager = manager
        self.path = path
        self.profile = profile
        self.max_body_bytes = body_limit(profile)

    def _challenge(self, *, error: str = "", scope_needed: str = "") -> dict[str, str]:
        parts = [f'resource_metadata="{metadata_url(self.path)}"']
        if error:
            parts.insert(0, f'error="{error}"')
        # Connecting asks for every scope this URL's tools need: the TypeScript SDK (1.x) cannot
        # step up after a 403 (it refreshes without a scope and gets the same token back), so an
        # agent built on it could never write otherwise. Least privilege is the person's choice:
        # the consent page lets them untick a scope, and a 403 insufficient_scope then asks
        # again, which the Python SDK follows.
        parts.append(f'scope="{scope_needed or " ".join(profile_scopes(self.profile))}"')
        return {"WWW-Authenticate": "Bearer " + ", ".join(parts)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method", "")
        if method != "POST":
            await _respond(
                send, 405, {"error": Code.METHOD_NOT_ALLOWED.value, "message": "Use POST."}, {"Allow": "POST"}
            )
            return
        if not _host_allowed(_header(scope, b"host")):
            await _respond(send, 421, {"error": "misdirected_request", "message": "Unknown host."}, {})
            return
        if not _origin_allowed(_header(scope, b"origin")):
            await _respond(send, 403, {"error": "forbidden_origin", "message": "Origin not allowed."}, {})
            return
        body, overflow = await self._read_body(scope, receive)
        authorization = _header(scope, b"authorization") or ""
        token = authorization[7:].strip() if authorization.lower().startswith("bearer ") else ""
        try:
            caller = (
                await sync_to_async(caller_for_bearer, thread_sensitive=False)(
                    token, resource=resource_url(self.path)
                )
                if token
                else None
            )
        except AppError as exc:  # app_paused: a valid token its owner refuses for now
            await _respond(send, exc.http_status, {"error": exc.code.value, "message": exc.message}, {})
            return
        if body is None:
            await self._oversized(scope, receive, send, overflow, authenticated=caller is not None)
            return
        if caller is None:
            message = "A valid bearer token for this resource is required."
            await _respond(
                send,
                401,
                {"error": "invalid_token" if token else "unauthorized", "message": message},
                self._challenge(error="invalid_token" if token else ""),
            )
            return
        decoded = _parse(body)
        if _malformed_envelope(scope, decoded):
            await _respond(send, 400, INVALID_REQUEST_BODY, {})
            return
        for what, needed in _needed_scopes(decoded, self.profile):
            if not caller.has_scope(needed):
                message = f"{what} needs the {needed} scope."
                granted = " ".join(sorted(caller.scopes | {needed}))
                await _respond(
                    send,
                    403,
                    {"error": Code.INSUFFICIENT_SCOPE.value, "message": message},
                    self._challenge(error="insufficient_scope", scope_needed=granted),
                )
                return
        caller_token = _caller.set(caller)
        profile_token = _profile.set(self.profile)
        try:
            await self.manager.handle_request(scope, self._replay(body), send)
        finally:
            _caller.reset(caller_token)
            _profile.reset(profile_token)

    async def _read_body(self, scope: Scope, receive: Receive) -> tuple[bytes | None, _Overflow]:
        """(the body, nothing) within the limit; over it (None, what was read of it): the rest is
        left unread, for `_oversized` to decide on."""
        declared = _header(scope, b"content-length")
        if declared and declared.isdigit() and int(declared) > self.max_body_bytes:
            return None, _Overflow()
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            chunks.append(chunk)
            if size > self.max_body_bytes:
                overflow = _Overflow()
                overflow.add(b"".join(chunks), ended=not message.get("more_body"))
                return None, overflow
            if not message.get("more_body"):
                break
        return b"".join(chunks), _Overflow(ended=True)

    async def _oversized(
        self, scope: Scope, receive: Receive, send: Send, overflow: _Overflow, *, authenticated: bool
    ) -> None:
        """Refuse a body over the limit with a JSON-RPC answer. For a caller we know, and a body at
        most OVERSIZED_READ_FACTOR times the limit, the rest is read (and dropped) to find the
        request's id: a tool call is then answered with its isError result (`body_too_large`, the
        contract's error object), anything else with a JSON-RPC error carrying that object, at 200,
        which both official SDKs hand to the caller as the answer to its request. Otherwise (no
        valid token, or far too large) nothing more is read: 413 with a JSON-RPC error, id null."""
        error = AppError(
            Code.BODY_TOO_LARGE,
            f"The request body is larger than this endpoint's {self.max_body_bytes:,}-byte limit.",
            details={"max_bytes": self.max_body_bytes},
        )
        ceiling = self.max_body_bytes * OVERSIZED_READ_FACTOR
        declared = _header(scope, b"content-length")
        request_id: Any = None
        method: str | None = None
        if authenticated and not (declared and declared.isdigit() and int(declared) > ceiling):
            while not overflow.ended and overflow.size <= ceiling:
                message = await receive()
                if message["type"] == "http.disconnect":
                    break
                overflow.add(message.get("body", b""), ended=not message.get("more_body"))
            if overflow.ended and overflow.size <= ceiling:
                request_id, method = _oversized_request(overflow.head, overflow.tail)
        method = method or _header(scope, b"mcp-method")
        if request_id is None:
            body = {"jsonrpc": "2.0", "id": None, "error": _rpc_error(error)}
            await _respond(send, 413, body, {})
        elif method == "tools/call":
            result = refusal_result(error, self.profile)
            await _respond(send, 200, {"jsonrpc": "2.0", "id": request_id, "result": result}, {})
        else:
            await _respond(send, 200, {"jsonrpc": "2.0", "id": request_id, "error": _rpc_error(error)}, {})

    @staticmethod
    def _replay(body: bytes) -> Receive:
        sent = False

        async def receive() -> dict[str, object]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return {"type": "http.disconnect"}

        return receive


def _rpc_error(error: AppError) -> dict[str, object]:
    """A JSON-RPC error (-32600, invalid request) carrying the error object as its data."""
    return {"code": -32600, "message": error.message, "data": error.as_dict()}


def build_manager() -> StreamableHTTPSessionManager:
    # Stateless + JSON: no session lives in a process, so any process can answer
    # any request (see ../shared/design/MCP.md).
    return StreamableHTTPSessionManager(
        build_server(),
        json_response=True,
        stateless=True,
        # Each endpoint enforces its own (smaller or equal) limit before the SDK sees the body.
        max_request_body_size=max(body_limit(name) for name in registry.PROFILES),
    )
