"""`deeprecall mcp`: a stdio MCP server that proxies to a Deep Recall deployment.

For MCP clients that only speak stdio. It reads newline-delimited JSON-RPC 2.0
on stdin and answers on stdout (the MCP stdio transport), lists its tools from
`GET /api/v1/operations` and runs them with `POST /api/v1/operations/{name}` at
`DEEPRECALL_API_URL`, authenticated with `DEEPRECALL_API_TOKEN`.

Deliberately dependency-light (standard library + httpx) and free of Django
imports: it starts in a fraction of a second on a machine with no database,
and the registry on the server stays the one description of every tool. The
protocol versions it negotiates are the installed MCP SDK's, read from the
SDK's version module alone (see `_handshake_versions`).
Stdout carries protocol messages only; logs go to stderr.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any, BinaryIO
from urllib.parse import quote, urlsplit

import httpx

logger = logging.getLogger("deeprecall.mcp")

# What a copy of this file answers on a machine without the MCP SDK: the SDK's handshake
# versions when this file last changed (a test keeps the two equal).
_FALLBACK_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


def _handshake_versions() -> tuple[tuple[str, ...], str]:
    """The versions the installed MCP SDK negotiates with `initialize`, and the one it offers otherwise.

    The HTTP endpoint answers `initialize` with these (mcp_types.version), so both transports
    agree. Importing mcp_types would run its package `__init__`, which builds the protocol's
    pydantic models (most of a second); its `version` module imports only `typing`, so it is
    run from its file alone. 2026-07-28 is not among them: it has no `initialize`, and this
    proxy does not speak its per-request envelope (`server/discover` answers -32601, on which
    SDK clients fall back to `initialize`).
    """
    spec = importlib.util.find_spec("mcp_types")  # finds the package without importing it
    if spec is not None and spec.submodule_search_locations:
        path = os.path.join(next(iter(spec.submodule_search_locations)), "version.py")
        version_spec = importlib.util.spec_from_file_location("_deeprecall_mcp_versions", path)
        if version_spec is not None and version_spec.loader is not None:
            module = importlib.util.module_from_spec(version_spec)
            try:
                version_spec.loader.exec_module(module)
                return tuple(module.HANDSHAKE_PROTOCOL_VERSIONS), str(module.LATEST_HANDSHAKE_VERSION)
            except (ImportError, OSError, AttributeError):
                pass  # an SDK laid out otherwise; the tests compare the fallback with the SDK's list
    return _FALLBACK_VERSIONS, _FALLBACK_VERSIONS[-1]


SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION = _handshake_versions()
SERVER_NAME = "deeprecall"
# The tools are those of one MCP profile (DEEPRECALL_PROFILE, default "core": what the
# remote /mcp endpoint offers), so that both transports list the same tools.
PROFILE = "core"
# Profiles whose contract fixes the proxy's composition (contracts/evidence-mcp.txt, Transport):
# the write tools (GET /api/v1/ingest), then GET /api/v1/operations?profile= (left out when that
# route answers 404), then the open-query tools when GET /api/v1/query/space serves them. Every
# definition, and the route that runs it, comes from the deployment.
COMPOSED_PROFILES = frozenset({"evidence"})
WRITE_TOOLS_PATH = "/api/v1/ingest"
QUERY_SPACE_PATH = "/api/v1/query/space"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP's "resource not found".
RESOURCE_NOT_FOUND = -32002

# A stdio peer is trusted, but one runaway line must not exhaust memory.
MAX_LINE_BYTES = 16 * 1024 * 1024
DEFAULT_TIMEOUT_SECONDS = 120.0
CONNECT_TIMEOUT_SECONDS = 10.0
EXIT_CONFIG = 2

JsonObject = dict[str, Any]


def package_version() -> str:
    try:
        return metadata.version("deeprecall")
    except metadata.PackageNotFoundError:
        return "0.0.0+unknown"


class RemoteFailure(Exception):
    """The deployment could not run the request; `error` is the error object to show."""

    def __init__(self, error: JsonObject) -> None:
        super().__init__(error.get("message", "remote failure"))
        self.error = error


class JsonRpcError(Exception):
    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def _reject_constant(value: str) -> Any:
    # Python's json accepts NaN and Infinity; JSON (and the server) does not.
    raise ValueError(f"{value} is not valid JSON")


def _dumps(value: object) -> str:
    # ensure_ascii keeps a lone surrogate sent by a client (legal in JSON text,
    # not encodable as UTF-8) from crashing the write.
    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


class DeepRecallClient:
    """The REST calls the proxy needs, turning every failure into a RemoteFailure."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._http = httpx.Client(
            base_url=self.base_url,
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json",
                "User-Agent": f"deeprecall-mcp/{package_version()}",
            },
            timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_SECONDS)),
            # A redirect usually means a wrong URL (http -> https, a login page);
            # say so rather than follow it with the token attached.
            follow_redirects=False,
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

    def list_operations(self) -> list[JsonObject]:
        body = self._request("GET", "/api/v1/operations")
        operations = body.get("operations")
        if not isinstance(operations, list) or not all(
            isinstance(op, dict) and isinstance(op.get("name"), str) for op in operations
        ):
            raise RemoteFailure(self._local_error("invalid_remote_response", "has no operations list", 200))
        return operations

    def run_operation(self, name: str, arguments: JsonObject) -> JsonObject:
        return self._request("POST", f"/api/v1/operations/{quote(name, safe='')}", body=arguments)

    def profile_instructions(self, profile: str) -> str | None:
        """What the deployment tells an agent of `profile` at initialize (GET /api/v1/operations?profile=),
        or None when it does not say."""
        body = self._request("GET", f"/api/v1/operations?profile={quote(profile, safe='')}")
        described = body.get("profile")
        instructions = described.get("instructions") if isinstance(described, dict) else None
        return instructions if isinstance(instructions, str) and instructions else None

    def list_profile_operations(self, profile: str) -> list[JsonObject] | None:
        """`GET /api/v1/operations?profile=`: the profile's operations, or None when the route is 404."""
        try:
            body = self._request("GET", f"/api/v1/operations?profile={quote(profile, safe='')}")
        except RemoteFailure as exc:
            if exc.error.get("remote_status") == 404:
                return None  # the registry is not mounted: the contract lists the rest anyway
            raise
        return self._tool_list(body, "operations")

    def list_tools_at(self, path: str) -> list[JsonObject]:
        """The `tools` a deployment lists at `path`, each with the `route` that runs it."""
        tools = self._tool_list(self._request("GET", path), "tools")
        if not all(
            isinstance(tool.get("route"), str) and tool["route"].startswith("/api/") for tool in tools
        ):
            raise RemoteFailure(
                self._local_error("invalid_remote_response", "listed a tool without a route", 200)
            )
        return tools

    def run_route(self, route: str, arguments: JsonObject) -> JsonObject:
        return self._request("POST", route, body=arguments)

    def list_resources(self, profile: str) -> list[JsonObject]:
        """`GET /api/v1/resources?profile=`: the profile's MCP resources."""
        return self._tool_list(
            self._request("GET", f"/api/v1/resources?profile={quote(profile, safe='')}"),
            "resources",
            named="uri",
        )

    def read_resource(self, profile: str, uri: str) -> JsonObject:
        """`GET /api/v1/resources/read`: one resource's JSON."""
        query = f"profile={quote(profile, safe='')}&uri={quote(uri, safe='')}"
        return self._request("GET", f"/api/v1/resources/read?{query}")

    def _tool_list(self, body: JsonObject, key: str, *, named: str = "name") -> list[JsonObject]:
        items = body.get(key)
        if not isinstance(items, list) or not all(
            isinstance(item, dict) and isinstance(item.get(named), str) for item in items
        ):
            raise RemoteFailure(self._local_error("invalid_remote_response", f"has no {key} list", 200))
        return items

    def _request(self, method: str, path: str, body: JsonObject | None = None) -> JsonObject:
        content = None if body is None else _dumps(body).encode("ascii")
        headers = {} if body is None else {"Content-Type": "application/json"}
        try:
            response = self._http.request(method, path, content=content, headers=headers)
        except httpx.TimeoutException:
            raise RemoteFailure(
                {
                    "code": "remote_timeout",
                    "message": f"Deep Recall at {self.base_url} did not answer within {self.timeout:g} s.",
                    "retryable": True,
                    "agent_action": "retry later; if it persists, tell the user the memory service is slow",
                    "remote_status": None,
                }
            ) from None
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            raise RemoteFailure(
                {
                    "code": "remote_unreachable",
                    "message": f"Could not reach Deep Recall at {self.base_url}: {reason}.",
                    "retryable": True,
                    "agent_action": "tell the user the memory service is down or DEEPRECALL_API_URL is wrong",
                    "remote_status": None,
                }
            ) from None
        try:
            parsed = response.json()
        except ValueError:
            parsed = None
        if response.is_success:
            if not isinstance(parsed, dict):
                raise RemoteFailure(
                    self._local_error("invalid_remote_response", "answered without a JSON object", 200)
                )
            return parsed
        error = parsed.get("error") if isinstance(parsed, dict) else None
        if isinstance(error, dict) and isinstance(error.get("code"), str):
            raise RemoteFailure({**error, "remote_status": response.status_code})
        detail = f"answered HTTP {response.status_code} without an error body"
        if response.is_redirect:
            detail += f" (a redirect to {response.headers.get('location', '?')})"
        raise RemoteFailure(self._local_error("remote_error", detail, response.status_code))

    def _local_error(self, code: str, detail: str, status: int) -> JsonObject:
        return {
            "code": code,
            "message": f"Deep Recall at {self.base_url} {detail}.",
            "retryable": status >= 500 or status == 429,
            "agent_action": "tell the user; check that DEEPRECALL_API_URL points at a Deep Recall deployment",
            "remote_status": status,
        }


def _tool_name(operation: JsonObject) -> str:
    # The MCP name a contract gives the operation (`tool`), else its registry name.
    return str(operation.get("tool") or operation["name"])


def tool_of(operation: JsonObject) -> JsonObject:
    """An MCP tool from one registry operation as `GET /api/v1/operations` describes it."""
    tool: JsonObject = {
        "name": _tool_name(operation),
        "description": operation.get("description", ""),
        "inputSchema": operation.get("input_schema") or {"type": "object"},
    }
    # The server's MCP rendering (result or error object) when it gives one, as /mcp shows it.
    output_schema = operation.get("mcp_output_schema") or operation.get("output_schema")
    if output_schema:
        tool["outputSchema"] = output_schema
    if operation.get("annotations"):
        tool["annotations"] = operation["annotations"]
    return tool


def _offered(operation: JsonObject, profile: str = PROFILE) -> bool:
    profiles = operation.get("profiles")
    return not isinstance(profiles, list) or profile in profiles


def contract_error(error: JsonObject) -> JsonObject:
    """The evidence contract's error object: ours plus `http_status`, and the public status, detail
    and code below an `error` key (what its remote read tools report)."""
    status = error.get("remote_status")
    return {
        **error,
        "http_status": status,
        "error": {"status_code": status, "detail": error.get("message", ""), "code": error.get("code")},
    }


def error_result(error: JsonObject) -> JsonObject:
    """A tool execution error: the error object in structuredContent and in the text block.

    The same shape as the Streamable HTTP endpoint's, plus `remote_status`.
    """
    return {
        "content": [{"type": "text", "text": _dumps(error)}],
        "structuredContent": error,
        "isError": True,
    }


class StdioProxy:
    """Answers one JSON-RPC message at a time. Holds the tool list for the process lifetime."""

    def __init__(self, client: DeepRecallClient, profile: str = PROFILE) -> None:
        self.client = client
        self.profile = profile
        self._tools: dict[str, JsonObject] | None = None
        # tool name -> the route that runs it, for composed profiles.
        self._routes: dict[str, str] = {}
        # Tool name -> registry name, for the operations a contract offers under another name.
        self._operations: dict[str, str] = {}
        self._methods: dict[str, Callable[[JsonObject], JsonObject]] = {
            "initialize": self._initialize,
            "ping": lambda params: {},
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/read": self._resources_read,
        }

    # -- framing -----------------------------------------------------------

    def handle_line(self, line: bytes | str) -> str | None:
        """The reply to one line of input, serialised, or None when nothing is to be sent."""
        try:
            text = line.decode("utf-8") if isinstance(line, bytes) else line
            message = json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            # UnicodeDecodeError and JSONDecodeError are both ValueErrors.
            return _dumps(_error_response(None, PARSE_ERROR, "Parse error: the line is not valid JSON."))
        reply = self.handle_message(message)
        return None if reply is None else _dumps(reply)

    def handle_message(self, message: object) -> Any:
        """The reply to one parsed message (or batch), or None for notifications and responses."""
        if isinstance(message, list):
            # Batches existed in 2025-03-26; answering them costs little.
            if not message:
                return _error_response(None, INVALID_REQUEST, "Invalid Request: empty batch.")
            replies = [reply for item in message if (reply := self._handle_one(item)) is not None]
            return replies or None
        return self._handle_one(message)

    def _handle_one(self, message: object) -> JsonObject | None:
        if not isinstance(message, dict):
            return _error_response(None, INVALID_REQUEST, "Invalid Request: expected a JSON object.")
        has_id = "id" in message
        request_id = message.get("id")
        # MCP ids are strings or numbers, never null (and a bool is not a number here).
        id_ok = isinstance(request_id, (str, int, float)) and not isinstance(request_id, bool)
        if "method" not in message and ("result" in message or "error" in message):
            return None  # a response to a request we never send: nothing to do
        method = message.get("method")
        if message.get("jsonrpc") != "2.0" or not isinstance(method, str) or (has_id and not id_ok):
            return _error_response(
                request_id if id_ok else None,
                INVALID_REQUEST,
                "Invalid Request: need jsonrpc '2.0', a string method and a string or number id.",
            )
        if not has_id:
            return None  # notifications (initialized, cancelled, ...) never get a response
        handler = self._methods.get(method)
        if handler is None:
            return _error_response(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return _error_response(request_id, INVALID_PARAMS, "Invalid params: params must be an object.")
        try:
            return {"jsonrpc": "2.0", "id": request_id, "result": handler(params)}
        except JsonRpcError as exc:
            return _error_response(request_id, exc.code, exc.message, exc.data)
        except Exception:
            # The client gets a generic error; the detail stays on stderr.
            logger.exception("unexpected error handling %s", method)
            return _error_response(request_id, INTERNAL_ERROR, "Internal error in the deeprecall proxy.")

    # -- methods -----------------------------------------------------------

    def _initialize(self, params: JsonObject) -> JsonObject:
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
        answer: JsonObject = {
            "protocolVersion": version,
            # As the HTTP endpoint: resources on every profile (a list may be empty).
            "capabilities": {
                "tools": {"listChanged": False},
                "resources": {"subscribe": False, "listChanged": False},
            },
            "serverInfo": {"name": SERVER_NAME, "version": package_version()},
        }
        # The profile's instructions, as its URL gives them; a deployment that cannot be asked
        # now only costs the agent this text, not the connection.
        try:
            instructions = self.client.profile_instructions(self.profile)
        except RemoteFailure as exc:
            logger.warning("no instructions for the %s profile: %s", self.profile, exc.error.get("code"))
            instructions = None
        if instructions:
            answer["instructions"] = instructions
        return answer

    def _tools_list(self, params: JsonObject) -> JsonObject:
        try:
            tools = self._load_tools()
        except RemoteFailure as exc:
            raise JsonRpcError(
                INTERNAL_ERROR, f"Could not list the tools: {exc.error.get('message', '')}", exc.error
            ) from None
        return {"tools": list(tools.values())}

    def _tools_call(self, params: JsonObject) -> JsonObject:
        name = params.get("name")
        arguments = params.get("arguments")
        if not isinstance(name, str):
            raise JsonRpcError(INVALID_PARAMS, "Invalid params: name must be a string.")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise JsonRpcError(INVALID_PARAMS, "Invalid params: arguments must be an object.")
        composed = self.profile in COMPOSED_PROFILES
        if not self._known(name):
            # As on every HTTP URL: an error result with the reason and the tools there are.
            return self._unknown_tool(name, remote_status=None)
        try:
            route = self._routes.get(name)
            result = (
                self.client.run_route(route, arguments)
                if route
                else self.client.run_operation(self._operations.get(name, name), arguments)
            )
        except RemoteFailure as exc:
            if exc.error.get("code") == "unknown_operation":
                # The list could not be read beforehand; the server is the authority.
                return self._unknown_tool(name, remote_status=exc.error.get("remote_status"))
            return error_result(contract_error(exc.error) if composed else exc.error)
        return {
            "content": [{"type": "text", "text": _dumps(result)}],
            "structuredContent": result,
            "isError": False,
        }

    def _resources_list(self, params: JsonObject) -> JsonObject:
        try:
            listed = self.client.list_resources(self.profile)
        except RemoteFailure as exc:
            raise JsonRpcError(
                INTERNAL_ERROR, f"Could not list the resources: {exc.error.get('message', '')}", exc.error
            ) from None
        keys = ("uri", "name", "description", "mimeType")
        return {"resources": [{key: item[key] for key in keys if key in item} for item in listed]}

    def _resources_read(self, params: JsonObject) -> JsonObject:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise JsonRpcError(INVALID_PARAMS, "Invalid params: uri must be a string.")
        try:
            payload = self.client.read_resource(self.profile, uri)
        except RemoteFailure as exc:
            # As the HTTP endpoint answers: -32002 for a URI it does not serve, -32602 for another
            # refusal, each with the error object as data; -32603 when the deployment did not answer.
            status = exc.error.get("remote_status")
            code = {"unknown_resource": RESOURCE_NOT_FOUND}.get(str(exc.error.get("code")), INVALID_PARAMS)
            if status is None or status >= 500:
                code = INTERNAL_ERROR
            raise JsonRpcError(code, str(exc.error.get("message", "")), exc.error) from None
        text = json.dumps(payload, ensure_ascii=False)
        return {"contents": [{"uri": uri, "mimeType": "application/json", "text": text}]}

    def _load_tools(self, *, refresh: bool = False) -> dict[str, JsonObject]:
        if self._tools is None or refresh:
            if self.profile in COMPOSED_PROFILES:
                self._tools = self._composed_tools()
            else:
                operations = self.client.list_operations()
                offered = [op for op in operations if _offered(op, self.profile)]
                self._tools = {_tool_name(op): tool_of(op) for op in offered}
                self._operations = {_tool_name(op): str(op["name"]) for op in offered}
        return self._tools

    def _composed_tools(self) -> dict[str, JsonObject]:
        """Write tools, then the profile's operations (none when 404), then the open-query tools
        (none when /query/space is missing or not trustworthy). Auth and transport failures of
        the first two fail tools/list, as the contract says."""
        write = self.client.list_tools_at(WRITE_TOOLS_PATH)
        operations = self.client.list_profile_operations(self.profile) or []
        try:
            open_query = self.client.list_tools_at(QUERY_SPACE_PATH)
        except RemoteFailure as exc:
            logger.info("open-query tools left out: %s", exc.error.get("code"))
            open_query = []
        self._routes = {tool["name"]: tool["route"] for tool in (*write, *open_query)}
        return {item["name"]: tool_of(item) for item in (*write, *operations, *open_query)}

    def _unknown_tool(self, name: str, *, remote_status: int | None) -> JsonObject:
        """The error result the HTTP endpoint gives for a tool it does not offer
        (mcp_gateway.tools.unknown_tool), plus `remote_status` (null: the proxy knew it)."""
        unknown: JsonObject = {
            "code": "unknown_operation",
            "message": f"There is no tool named {name[:100]!r} here.",
            "retryable": False,
            "agent_action": "call tools/list and use one of the tools in details.available",
            "details": {"tool": name[:100], "available": list(self._tools or {})},
        }
        if self.profile in COMPOSED_PROFILES:
            unknown = contract_error({**unknown, "remote_status": 404})
        return error_result({**unknown, "remote_status": remote_status})

    def _known(self, name: str) -> bool:
        try:
            if name in self._load_tools():
                return True
            # A deployment may have gained a tool since we listed; look once more.
            return name in self._load_tools(refresh=True)
        except RemoteFailure:
            # Without a list, let the call go through: it either works or reports
            # the same remote failure as an isError result.
            return True


def _error_response(request_id: object, code: int, message: str, data: object = None) -> JsonObject:
    error: JsonObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class LineTooLong(Exception):
    pass


def _read_line(stream: BinaryIO) -> bytes | None:
    """One line, or None at EOF. A line over MAX_LINE_BYTES is skipped and raises LineTooLong."""
    line = stream.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
        while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
            pass
        raise LineTooLong
    return line


def serve(proxy: StdioProxy, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer lines from stdin until EOF. Requests are handled in order, one at a time."""
    while True:
        try:
            line = _read_line(stdin)
        except LineTooLong:
            too_long = _error_response(
                None, INVALID_REQUEST, f"Invalid Request: over {MAX_LINE_BYTES} bytes."
            )
            reply: str | None = _dumps(too_long)
        else:
            if line is None:
                return
            reply = proxy.handle_line(line) if line.strip() else None
        if reply is not None:
            stdout.write(reply.encode("ascii") + b"\n")
            stdout.flush()


@dataclass(frozen=True)
class Config:
    api_url: str
    token: str
    timeout: float
    profile: str = PROFILE


def config_from_env(environ: Mapping[str, str]) -> Config:
    """Read and check the environment; raise ValueError with a message for the operator."""
    api_url = environ.get("DEEPRECALL_API_URL", "").strip()
    token = environ.get("DEEPRECALL_API_TOKEN", "").strip()
    missing = []
    if not api_url:
        missing.append("DEEPRECALL_API_URL to the deployment's base URL (e.g. https://memory.example.com)")
    if not token:
        missing.append("DEEPRECALL_API_TOKEN to a personal access token from its dashboard")
    if missing:
        raise ValueError("set " + " and ".join(missing))
    if not (token.isascii() and token.isprintable()) or " " in token:
        # It goes into an HTTP header; httpx would fail later with a traceback.
        raise ValueError("DEEPRECALL_API_TOKEN must be one word of printable ASCII (a token like drp_...)")
    parts = urlsplit(api_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"DEEPRECALL_API_URL must be an http:// or https:// URL, not {api_url!r}")
    raw_timeout = environ.get("DEEPRECALL_API_TIMEOUT", "").strip()
    try:
        timeout = float(raw_timeout) if raw_timeout else DEFAULT_TIMEOUT_SECONDS
    except ValueError:
        timeout = -1.0
    if not 0 < timeout <= 3600:
        raise ValueError(f"DEEPRECALL_API_TIMEOUT must be a number of seconds (0-3600], not {raw_timeout!r}")
    profile = environ.get("DEEPRECALL_PROFILE", "").strip() or PROFILE
    if not (profile.isascii() and profile.isalpha() and profile.islower() and len(profile) <= 40):
        raise ValueError(f"DEEPRECALL_PROFILE must be a profile name such as core or graph, not {profile!r}")
    return Config(api_url=api_url, token=token, timeout=timeout, profile=profile)


def main() -> int:
    """Run the proxy on this process's stdin/stdout; the exit status."""
    level = logging.getLevelName(os.environ.get("DEEPRECALL_LOG_LEVEL", "WARNING").strip().upper())
    logging.basicConfig(
        stream=sys.stderr,
        level=level if isinstance(level, int) else logging.WARNING,
        format="deeprecall mcp: %(levelname)s %(message)s",
    )
    try:
        config = config_from_env(os.environ)
    except ValueError as exc:
        print(f"deeprecall mcp: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_CONFIG
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    # Anything that prints by accident must not corrupt the protocol stream.
    sys.stdout = sys.stderr
    client = DeepRecallClient(config.api_url, config.token, timeout=config.timeout)
    try:
        serve(StdioProxy(client, config.profile), stdin, stdout)
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:
        # The client went away; there is nobody left to answer.
        pass
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    # Also runs as a single file next to httpx, for machines without Deep Recall installed.
    raise SystemExit(main())
