"""The operations registry over HTTP: list the operations, run one; list and read the resources (what
the stdio proxy serves as MCP resources)."""

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
            # Every operation (each says its `profiles`), and each profile (MCP URL) with its tools in
            # its tools/list order: the two views of one registry.
            return Response(
                {
                    "operations": [op.describe() for op in registry.operations()],
                    "profiles": [p.describe() for p in registry.PROFILES.values()],
                }
            )
        # One profile, in its tools/list order; the evidence contract's write and open-query tools
        # are listed by their own routes (the profile's `tools` names them all).
        return Response(
            {
                "operations": [op.describe() for op in registry.assured_operations(profile)],
                "profile": registry.PROFILES[profile].describe(),
            }
        )


class OperationRunView(ApiView):
    # The one scope known only per request: the operation's own.
    scopes = {"post": _operation_scope}

    def post(self, request: Request, name: str) -> Response:
        return Response(registry.run(name, self.caller, json_body(request)))


def _resource_profile(params: StrictQuery) -> str | None:
    return params.choice("profile", list(registry.PROFILES))


class ResourceListView(ApiView):
    scopes = {"get": SCOPE_READ}

    def get(self, request: Request) -> Response:
        """The MCP resources (of one profile, with `profile`), as MCP's resources/list shows them."""
        profile = _resource_profile(StrictQuery(request, allowed={"profile"}))
        return Response(
            {
                "resources": [
                    {
                        "uri": resource.uri,
                        "name": resource.name,
                        "description": resource.description,
                        "mimeType": resource.mime_type,
                        "scope": resource.scope,
                        "profiles": list(resource.profiles),
                    }
                    for resource in registry.resources(profile)
                ]
            }
        )


class ResourceReadView(ApiView):
    # Reading needs memory:read at least; a resource that needs more says so (registry.read_resource).
    scopes = {"get": SCOPE_READ}

    def get(self, request: Request) -> Response:
        """One resource's JSON, as MCP's resources/read carries it (404 unknown_resource)."""
        params = StrictQuery(request, allowed={"uri", "profile"})
        uri = params.text("uri") or ""
        return Response(registry.read_resource(uri, self.caller, _resource_profile(params)))
