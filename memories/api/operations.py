"""The operations registry over HTTP: list the operations, run one."""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_READ
from memories.api.base import ApiView
from memories.api.query import StrictQuery, json_body
from memories.operations import registry


def _operation_scope(*, name: str) -> str:
    # Unknown names are answered here (404 unknown_operation), after authentication.
    return registry.get_operation(name).scope


class OperationListView(ApiView):
    scopes = {"get": SCOPE_READ}

    def get(self, request: Request) -> Response:
        params = StrictQuery(request, allowed={"profile"})
        profile = params.choice("profile", list(registry.PROFILES))
        if profile is None:
            return Response({"operations": [op.describe() for op in registry.operations()]})
        # One profile, in its tools/list order; the evidence contract's write and open-query tools
        # are listed by their own routes.
        return Response({"operations": [op.describe() for op in registry.assured_operations(profile)]})


class OperationRunView(ApiView):
    # The one scope known only per request: the operation's own.
    scopes = {"post": _operation_scope}

    def post(self, request: Request, name: str) -> Response:
        return Response(registry.run(name, self.caller, json_body(request)))
