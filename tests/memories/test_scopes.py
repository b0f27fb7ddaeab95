"""Scopes are declared, not remembered: every REST endpoint names the scope of each method in
`scopes` on its class, ApiView checks it before the handler runs, and a method without a
declaration is a configuration error (start-up check, 500 at run time), never an open door.

The endpoint table below is derived from the URL conf and the declarations, so a new endpoint
is covered without editing this file. The operations registry likewise refuses an operation or
a resource whose scope is not one of accounts.caller.ALL_SCOPES.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.urls import URLPattern, path, reverse
from django.urls.converters import UUIDConverter
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIClient

from accounts.caller import ALL_SCOPES, SCOPE_READ, SCOPE_WRITE
from memories.api.base import SCOPED_METHODS, ApiView
from memories.api.export import ExportView
from memories.api.open_query import ToolRunView
from memories.api.operations import OperationRunView
from memories.api.tokens import TokenItemView
from memories.checks import api_route_list, api_scope_errors, api_scopes_check, api_view_list
from memories.operations import registry
from tests.helpers import error_of, pat_client

# --- the table: every routed endpoint and method, with the scope it declares -----------------


# Fixed, so that test ids are the same on every run.
UNKNOWN_ID = uuid.UUID("00000000-0000-4000-8000-000000000000")


def _samples(pattern: URLPattern) -> list[dict[str, Any]]:
    """URL keyword arguments to call `pattern` with (unknown ids: the scope is checked first)."""
    samples: list[dict[str, Any]] = [{}]
    for name, converter in pattern.pattern.converters.items():
        if isinstance(converter, UUIDConverter):
            values: list[Any] = [UNKNOWN_ID]
        elif name == "name":
            values = [op.name for op in registry.operations()]
        else:
            raise AssertionError(f"{pattern.name}: no sample values for <{name}>; add them in _samples")
        samples = [{**sample, name: value} for sample in samples for value in values]
    return samples


def _endpoint_table() -> list[tuple[str, str, str]]:
    """(METHOD, path, scope) for each method of each routed ApiView, from its declaration."""
    table = []
    for pattern, view in api_route_list():
        assert pattern.name, f"{view.__qualname__} is routed without a name"
        for method in SCOPED_METHODS:
            if not hasattr(view, method):
                continue
            # An undeclared method stays in the table with no scope, and its rows fail.
            declared = view.scopes.get(method, "")
            for kwargs in _samples(pattern):
                scope = declared if isinstance(declared, str) else declared(**kwargs)
                table.append((method.upper(), reverse(pattern.name, kwargs=kwargs), scope))
    return table


ENDPOINTS = _endpoint_table()


def _send(client: APIClient, method: str, url: str) -> Any:
    if method in ("POST", "PUT", "PATCH"):
        return client.generic(method, url, "{}", content_type="application/json")
    return client.generic(method, url)


def test_it_derives_a_table_that_covers_reads_writes_and_every_operation():
    scopes = {scope for _, _, scope in ENDPOINTS}
    assert scopes == ALL_SCOPES
    assert ("GET", "/api/v1/memories", SCOPE_READ) in ENDPOINTS
    assert ("POST", "/api/v1/memories", SCOPE_WRITE) in ENDPOINTS
    runs = {url.rsplit("/", 1)[1]: scope for _, url, scope in ENDPOINTS if "/operations/" in url}
    assert runs == {op.name: op.scope for op in registry.operations()}


def test_it_declares_read_for_reads_and_write_for_changes():
    # The rule docs/api.md states; operations declare their own scope in the registry (also where
    # a route runs one registry operation with its arguments as a POST body: the evidence
    # contract's routes), and the session-only token endpoints need write for reading too (a
    # session holds every scope).
    for _, view in api_route_list():
        if view is OperationRunView or view.session_only:
            continue
        if issubclass(view, ToolRunView):
            assert view.scopes["post"] == registry.get_operation(view.tool).scope, view
            continue
        for method, scope in view.scopes.items():
            assert scope == (SCOPE_READ if method == "get" else SCOPE_WRITE), (view, method)


@pytest.mark.django_db
class TestEveryEndpoint:
    @pytest.mark.parametrize("method,url,scope", ENDPOINTS)
    def test_it_refuses_an_anonymous_caller(self, method, url, scope):
        response = _send(APIClient(), method, url)
        assert response.status_code == 401, response.content
        assert error_of(response)["code"] == "not_authenticated"

    @pytest.mark.parametrize("method,url,scope", ENDPOINTS)
    def test_it_refuses_a_token_without_the_declared_scope(self, alice, method, url, scope):
        assert scope in ALL_SCOPES, f"{method} {url} declares no scope (or an unknown one)"
        others = tuple(sorted(ALL_SCOPES - {scope}))
        response = _send(pat_client(alice, others), method, url)
        assert response.status_code == 403, response.content
        error = error_of(response)
        assert error["code"] == "insufficient_scope"
        assert error["details"]["required_scope"] == scope

    @pytest.mark.parametrize("method,url,scope", ENDPOINTS)
    def test_it_lets_a_token_with_the_declared_scope_past_the_check(self, alice, method, url, scope):
        assert scope in ALL_SCOPES, f"{method} {url} declares no scope (or an unknown one)"
        response = _send(pat_client(alice, (scope,)), method, url)
        # Past the scope check the request may still be invalid (an unknown id, an empty body):
        # that is the endpoint's answer, not the scope's, and never a crash.
        assert response.status_code < 500, response.content
        if response.status_code == 403:
            assert error_of(response)["code"] != "insufficient_scope"

    def test_it_answers_head_with_the_scope_of_get(self, alice):
        response = pat_client(alice, (SCOPE_WRITE,)).head("/api/v1/memories")
        assert response.status_code == 403
        assert pat_client(alice, (SCOPE_READ,)).head("/api/v1/memories").status_code == 200

    def test_it_refuses_every_token_on_the_session_only_token_endpoints(self, alice):
        for method, url in (("GET", "/api/v1/tokens"), ("DELETE", f"/api/v1/tokens/{uuid.uuid4()}")):
            response = _send(pat_client(alice, tuple(sorted(ALL_SCOPES))), method, url)
            assert response.status_code == 403
            assert error_of(response)["code"] == "session_required"
        session = APIClient()
        session.force_login(alice)
        assert session.get("/api/v1/tokens").status_code == 200

    def test_it_authenticates_before_it_looks_up_the_operation(self):
        response = _send(APIClient(), "POST", "/api/v1/operations/teleport")
        assert response.status_code == 401


# --- the start-up check -----------------------------------------------------------------------


def test_it_finds_every_routed_endpoint_declared_with_known_scopes():
    views = api_view_list()
    assert {ExportView, OperationRunView, TokenItemView} <= set(views)
    assert api_scope_errors(views=views) == []
    assert api_scopes_check() == []


def test_it_reports_a_method_served_without_a_declared_scope():
    class Forgetful(ApiView):
        scopes = {"get": SCOPE_READ}

        def get(self, request: Request) -> Response:
            return Response({})

        def post(self, request: Request) -> Response:
            return Response({})

    errors = api_scope_errors(views=[Forgetful])
    assert [e.id for e in errors] == ["memories.E001"]
    assert "POST" in errors[0].msg and errors[0].obj is Forgetful


def test_it_reports_an_inherited_handler_the_subclass_does_not_declare():
    class Reader(ApiView):
        scopes = {"get": SCOPE_READ}

        def get(self, request: Request) -> Response:
            return Response({})

    class ReaderAndDeleter(Reader):
        scopes = {"delete": SCOPE_WRITE}  # forgot to keep get's

        def delete(self, request: Request) -> Response:
            return Response({})

    assert [e.id for e in api_scope_errors(views=[Reader, ReaderAndDeleter])] == ["memories.E001"]


def test_it_reports_a_scope_name_that_is_not_one_of_ours():
    class Typo(ApiView):
        scopes = {"get": "memory:reed"}

        def get(self, request: Request) -> Response:
            return Response({})

    errors = api_scope_errors(views=[Typo])
    assert [e.id for e in errors] == ["memories.E002"]
    assert "memory:reed" in errors[0].msg


# --- at run time an undeclared method is a 500, and its handler never runs --------------------

HANDLED: list[str] = []


class Undeclared(ApiView):
    def get(self, request: Request) -> Response:
        HANDLED.append("get")
        return Response({"open": "door"})


class UnknownScope(ApiView):
    scopes = {"get": lambda: "memory:admin"}

    def get(self, request: Request) -> Response:
        HANDLED.append("get")
        return Response({"open": "door"})


urlpatterns = [path("undeclared", Undeclared.as_view()), path("unknown", UnknownScope.as_view())]


@pytest.mark.django_db
@pytest.mark.urls("tests.memories.test_scopes")
class TestFailClosed:
    @pytest.mark.parametrize("url", ["/undeclared", "/unknown"])
    def test_it_answers_internal_error_and_never_runs_the_handler(self, alice, url):
        HANDLED.clear()
        response = pat_client(alice).get(url)
        assert response.status_code == 500
        assert error_of(response)["code"] == "internal_error"
        assert HANDLED == []

    def test_it_still_answers_405_for_a_method_the_view_does_not_serve(self, alice):
        response = pat_client(alice).post("/undeclared", {}, format="json")
        assert response.status_code == 405


# --- the operations registry ------------------------------------------------------------------


def _handler(caller: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    return {}


@pytest.mark.parametrize("scope", ["memory:admin", "memory:Read", "", "memory:read memory:write"])
def test_it_refuses_to_register_an_operation_with_an_unknown_scope(scope):
    operation = registry.Operation(
        name="test_scopes_unknown",
        description="never registered",
        input_schema={"type": "object", "additionalProperties": False, "properties": {}},
        output_schema={"type": "object"},
        scope=scope,
        handler=_handler,
    )
    with pytest.raises(ValueError, match="unknown scope"):
        registry.register(operation)
    assert "test_scopes_unknown" not in {op.name for op in registry.operations()}


def test_it_refuses_to_register_a_resource_with_an_unknown_scope():
    resource = registry.ResourceDef(
        uri="graph://test-scopes",
        name="never registered",
        description="never registered",
        reader=lambda caller: {},
        scope="graph:read",
    )
    with pytest.raises(ValueError, match="unknown scope"):
        registry.register_resource(resource)
    assert "graph://test-scopes" not in {r.uri for r in registry.resources()}
