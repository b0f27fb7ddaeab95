"""The evidence contract's own routes: the write tools and the open-query tools over HTTP.

The stdio proxy renders the evidence profile from these (contracts/evidence-mcp.txt, Transport):
`GET /api/v1/ingest` lists the write tools and `GET /api/v1/query/space` the open-query tools, each
definition from the registry with the `route` that runs it; `POST` to that route with the tool's
arguments as the body runs the registry operation, so REST, MCP and the proxy validate and answer
alike, and the proxy holds no copy of any schema.
"""

from __future__ import annotations

from typing import Any

from django.urls import path, reverse
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_READ
from memories.api.base import ApiView, body_read
from memories.api.query import json_body
from memories.limits import document_request_max_bytes
from memories.operations import registry

# tool -> (URL under /api/, URL name). POST runs the tool with its arguments as the body.
WRITE_ROUTES = {
    "ingest": ("v1/ingest", "api-ingest"),
    "pipeline_readiness": ("v1/readiness", "api-readiness"),
}
OPEN_QUERY_ROUTES = {
    "query_space": ("v1/query/space", "api-query-space"),
    "describe_view": ("v1/query/views", "api-query-view"),
    "validate_query": ("v1/query/validate", "api-query-validate"),
    "query": ("v1/query", "api-query"),
    "list_saved_queries": ("v1/query/saved", "api-saved-queries"),
    "describe_saved_query": ("v1/query/saved/describe", "api-saved-query"),
    "run_saved_query": ("v1/query/saved/run", "api-saved-query-run"),
}


def _tools(routes: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    return [
        {**registry.get_operation(name).describe(), "route": reverse(url_name)}
        for name, (_, url_name) in routes.items()
    ]


class ToolRunView(ApiView):
    """POST runs the operation `tool` with the body as its arguments; the scope is the operation's."""

    tool: str = ""

    def post(self, request: Request) -> Response:
        return Response(registry.run(self.tool, self.caller, json_body(request)))


class WriteToolsView(ToolRunView):
    """GET lists the write tools; POST runs `ingest`, whose body may carry a whole document: larger than
    any other REST body (DATA_UPLOAD_MAX_MEMORY_SIZE), up to what MCP's ingest takes."""

    def get(self, request: Request) -> Response:
        return Response({"tools": _tools(WRITE_ROUTES)})

    def initial(self, request: Request, *args: object, **kwargs: object) -> None:
        # Before authentication, which reads the body too (an OAuth token may travel in it).
        if request.method == "POST":
            body_read(request._request, max_bytes=document_request_max_bytes())
        super().initial(request, *args, **kwargs)


class QuerySpaceView(ToolRunView):
    """GET is `query_space` plus the seven tools' definitions (what the proxy renders)."""

    def get(self, request: Request) -> Response:
        return Response({**registry.run("query_space", self.caller, {}), "tools": _tools(OPEN_QUERY_ROUTES)})


class SavedQueryListView(ToolRunView):
    def get(self, request: Request) -> Response:
        return Response(registry.run("list_saved_queries", self.caller, {}))


def _route(tool: str, route: str, url_name: str, base: type[ToolRunView]) -> Any:
    # One class per route, so the start-up check (memories.checks) sees each method's scope.
    scopes = {
        "post": registry.get_operation(tool).scope,
        **({"get": SCOPE_READ} if hasattr(base, "get") else {}),
    }
    view: type[ToolRunView] = type(f"{base.__name__}_{tool}", (base,), {"tool": tool, "scopes": scopes})
    return path(route, view.as_view(), name=url_name)


_VIEWS: dict[str, type[ToolRunView]] = {
    "ingest": WriteToolsView,
    "query_space": QuerySpaceView,
    "list_saved_queries": SavedQueryListView,
}

urlpatterns = [
    _route(tool, route, url_name, _VIEWS.get(tool, ToolRunView))
    for routes in (WRITE_ROUTES, OPEN_QUERY_ROUTES)
    for tool, (route, url_name) in routes.items()
]
