"""MCP tools rendered from the operations registry, and the sanitising call boundary."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from asgiref.sync import sync_to_async
from mcp import types
from mcp.shared.exceptions import MCPError

from accounts.caller import SCOPE_READ, Caller
from memories import errors
from memories.errors import AppError, Code
from memories.operations import registry

logger = logging.getLogger(__name__)

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP's "resource not found".
RESOURCE_NOT_FOUND = -32002


def tool_definitions(profile: str = "core") -> list[types.Tool]:
    """The tools of an MCP profile, in the registry's stable order."""
    return [
        types.Tool(
            name=op.tool_name,
            description=op.description,
            input_schema=op.input_schema,
            output_schema=op.describe()["mcp_output_schema"],
            annotations=types.ToolAnnotations(**op.annotations) if op.annotations else None,
        )
        for op in registry.operations(profile)
    ]


def profile_scopes(profile: str = "core") -> list[str]:
    """Every scope the tools and resources of a profile need, sorted."""
    needed = {op.scope for op in registry.operations(profile)}
    needed |= {resource.scope for resource in registry.resources(profile)}
    return sorted(needed)


def tool_scope(name: str, profile: str = "core") -> str | None:
    """The scope a tool needs, or None when the profile has no such tool."""
    operation = registry.operation_for_tool(name, profile)
    return operation.scope if operation is not None else None


def resource_definitions(profile: str = "core") -> list[types.Resource]:
    """The resources of an MCP profile, in the registry's stable order."""
    return [
        types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
        for r in registry.resources(profile)
    ]


def resource_scope(uri: str | None, profile: str = "core") -> str:
    """The scope reading `uri` (or listing, for None) needs: memory:read unless a resource says more."""
    for resource in registry.resources(profile):
        if resource.uri == uri:
            return resource.scope
    return SCOPE_READ


def _read_sync(caller: Caller, uri: str, profile: str) -> dict[str, object]:
    from django.db import close_old_connections

    close_old_connections()
    try:
        return registry.read_resource(uri, caller, profile)
    finally:
        close_old_connections()


async def read_resource(caller: Caller, uri: str, *, profile: str = "core") -> types.ReadResourceResult:
    """Read a resource for `caller`. Failures are JSON-RPC errors carrying the error object as data."""
    request_id = uuid.uuid4().hex
    try:
        payload = await sync_to_async(_read_sync, thread_sensitive=False)(caller, uri, profile)
    except AppError as exc:
        code = RESOURCE_NOT_FOUND if exc.code == Code.UNKNOWN_RESOURCE else INVALID_PARAMS
        raise MCPError(code, exc.message, data=exc.as_dict(request_id=request_id)) from None
    except Exception as exc:
        logger.exception("resource %s failed [request_id=%s]", uri[:200], request_id)
        error = errors.unexpected_error(exc)
        raise MCPError(INTERNAL_ERROR, error.message, data=error.as_dict(request_id=request_id)) from None
    text = json.dumps(payload, ensure_ascii=False, default=str)
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
    )


def _result(payload: dict[str, Any], *, is_error: bool) -> types.CallToolResult:
    text = json.dumps(payload, ensure_ascii=False, default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=payload, is_error=is_error
    )


def _run_sync(caller: Caller, name: str, arguments: object) -> dict[str, object]:
    from django.db import close_old_connections

    close_old_connections()
    try:
        return registry.run(name, caller, arguments if arguments is not None else {})
    finally:
        close_old_connections()


async def call_tool(
    caller: Caller, name: str, arguments: object, *, profile: str = "core"
) -> types.CallToolResult:
    """Run a tool for `caller`. Failures become `isError` results with the error object;
    nothing else (no exception text, no traceback, no SQL) crosses the wire."""
    operation = registry.operation_for_tool(name, profile)
    as_results = registry.PROFILES[profile].errors_as_results
    request_id = uuid.uuid4().hex
    if operation is None:
        # One rule on every URL (docs/decisions.md, issue 42): an error result naming the tools
        # that exist, so the agent can re-plan, as the evidence contract states.
        return _error(unknown_tool(name, profile), request_id, with_status=as_results)
    try:
        result = await sync_to_async(_run_sync, thread_sensitive=False)(caller, operation.name, arguments)
    except AppError as exc:
        return _error(exc, request_id, with_status=as_results)
    except Exception as exc:
        logger.exception("tool %s failed [request_id=%s]", name, request_id)
        return _error(errors.unexpected_error(exc), request_id, with_status=as_results)
    return _result(result, is_error=False)


def unknown_tool(name: str, profile: str) -> AppError:
    """The error for a tool `profile` does not offer, naming the ones it does."""
    offered = [op.tool_name for op in registry.operations(profile)]
    return AppError(
        Code.UNKNOWN_OPERATION,
        f"There is no tool named {name[:100]!r} here.",
        details={"tool": name[:100], "available": offered},
        agent_action="call tools/list and use one of the tools in details.available",
    )


def error_object(error: AppError, request_id: str, *, with_status: bool) -> dict[str, object]:
    """The error object of an isError result; `with_status` (the evidence contract) adds the HTTP
    status REST would answer, and the same public status, detail and code below an `error` key, as
    its remote read tools report them (the stdio proxy's `contract_error` gives the same shape)."""
    payload = error.as_dict(request_id=request_id)
    if with_status:
        payload["http_status"] = error.http_status
        payload["error"] = {
            "status_code": error.http_status,
            "detail": error.message,
            "code": error.code.value,
        }
    return payload


def _error(error: AppError, request_id: str, *, with_status: bool) -> types.CallToolResult:
    return _result(error_object(error, request_id, with_status=with_status), is_error=True)


def refusal_result(error: AppError, profile: str) -> dict[str, object]:
    """A tool call refused before the SDK saw it (a body over the endpoint's limit), as the JSON of
    the isError result the tool itself would give."""
    with_status = registry.PROFILES[profile].errors_as_results
    result = _error(error, uuid.uuid4().hex, with_status=with_status)
    dumped: dict[str, object] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped
