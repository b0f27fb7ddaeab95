"""The official Python MCP SDK as a test client of one endpoint, with a bearer token.

`session_run(url, token, steps)` opens a real Streamable HTTP session (initialize,
then whatever `steps` does with the ClientSession) and returns what `steps` returns.
`call(...)` is the one-tool shortcut; `structured(result)` is a tool result's JSON,
checked to agree with its text block (the error shape on `isError`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.mcp_gateway.rpc import ERROR_KEYS, FORBIDDEN


async def _run(url: str, token: str, steps: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        return await steps(session)


def session_run(url: str, token: str, steps: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    """Run `steps` in one initialized SDK session against the MCP endpoint at `url`."""
    return asyncio.run(_run(url, token, steps))


def call(url: str, token: str, tool: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
    """Call one tool through the SDK and return its result."""

    async def steps(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool(tool, arguments or {})

    result: types.CallToolResult = session_run(url, token, steps)
    return result


def structured(result: types.CallToolResult, *, forbidden: tuple[str, ...] = FORBIDDEN) -> dict[str, Any]:
    """The result's JSON; the text block must say the same, and leak nothing (`forbidden`)."""
    assert result.structured_content is not None, result
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert json.loads(text.text) == result.structured_content
    for needle in forbidden:
        assert needle not in text.text, needle
    if result.is_error:
        assert set(result.structured_content) >= ERROR_KEYS, result.structured_content
    return dict(result.structured_content)


def error_code(result: types.CallToolResult) -> str:
    """The stable code of an `isError` result (fails if the call succeeded)."""
    assert result.is_error is True, result
    return str(structured(result)["code"])


def _leaf_mcp_error(exc: BaseException) -> MCPError | None:
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _leaf_mcp_error(inner)
            if found is not None:
                return found
    return None


def mcp_error(url: str, token: str, steps: Callable[[ClientSession], Awaitable[Any]]) -> MCPError:
    """The JSON-RPC error `steps` ends with (the SDK raises it inside its task group)."""
    try:
        session_run(url, token, steps)
    except BaseException as exc:
        found = _leaf_mcp_error(exc)
        if found is None:
            raise
        return found
    raise AssertionError("the session ended without a JSON-RPC error")
