"""The open query over HTTP (the stdio proxy's routes for the evidence profile's open-query tools).

Each route runs the registry operation of the same name (memories/operations/open_query.py), so
REST, MCP and the proxy validate and answer alike. `GET /query/space` also lists the seven tools'
definitions, which is how the stdio proxy renders them without a second copy of their schemas.
"""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_READ
from memories.api.base import ApiView
from memories.api.query import json_body
from memories.operations import registry

OPEN_QUERY_TOOLS = registry.EVIDENCE_OPEN_QUERY


def _tools() -> list[dict[str, Any]]:
    return [registry.get_operation(name).describe() for name in OPEN_QUERY_TOOLS]


class QuerySpaceView(ApiView):
    scopes = {"get": SCOPE_READ}

    def get(self, request: Request) -> Response:
        return Response({**registry.run("query_space", self.caller, {}), "tools": _tools()})


class QueryViewView(ApiView):
    scopes = {"get": SCOPE_READ}

    def get(self, request: Request, view: str) -> Response:
        return Response(registry.run("describe_view", self.caller, {"view": view}))


class QueryRunView(ApiView):
    scopes = {"post": SCOPE_READ}

    def post(self, request: Request) -> Response:
        return Response(registry.run("query", self.caller, json_body(request)))


class QueryValidateView(ApiView):
    scopes = {"post": SCOPE_READ}

    def post(self, request: Request) -> Response:
        return Response(registry.run("validate_query", self.caller, json_body(request)))


class SavedQueryListView(ApiView):
    scopes = {"get": SCOPE_READ}

    def get(self, request: Request) -> Response:
        return Response(registry.run("list_saved_queries", self.caller, {}))


class SavedQueryItemView(ApiView):
    scopes = {"get": SCOPE_READ}

    def get(self, request: Request, name: str) -> Response:
        return Response(registry.run("describe_saved_query", self.caller, {"name": name}))


class SavedQueryRunView(ApiView):
    scopes = {"post": SCOPE_READ}

    def post(self, request: Request, name: str) -> Response:
        body = json_body(request)
        arguments = {**body, "name": name} if isinstance(body, dict) else body
        return Response(registry.run("run_saved_query", self.caller, arguments))
