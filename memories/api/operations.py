"""The operations registry over HTTP: list the operations, run one."""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_READ
from memories.api.base import ApiView
from memories.api.query import json_body
from memories.operations import registry


class OperationListView(ApiView):
    def get(self, request: Request) -> Response:
        caller = self.caller(request, SCOPE_READ)
        del caller  # any authenticated caller may see what exists
        return Response({"operations": [op.describe() for op in registry.operations()]})


class OperationRunView(ApiView):
    def post(self, request: Request, name: str) -> Response:
        operation = registry.get_operation(name)
        caller = self.caller(request, operation.scope)
        return Response(registry.run(name, caller, json_body(request)))
