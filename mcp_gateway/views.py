"""OAuth discovery and registration around django-oauth-toolkit, for MCP clients."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_plus

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider import views as oauth_views
from oauth2_provider.views import DynamicClientRegistrationManagementView, DynamicClientRegistrationView

from accounts.caller import ALL_SCOPES
from accounts.oauth import registration_problem
from accounts.throttles import client_address, throttle_check, throttle_record
from mcp_gateway.auth import resource_url
from memories.errors import AppError, Code
from memories.operations.registry import PROFILES
from memories.parsing import JsonTooDeep, json_decode
from memories.selectors.spaces import space_default

CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, MCP-Protocol-Version",
    "Access-Control-Max-Age": "86400",
}


def with_cors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Answer preflights and add CORS headers: browser-based MCP clients read these endpoints."""

    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = HttpResponse(status=204) if request.method == "OPTIONS" else view(request, *args, **kwargs)
        for name, value in CORS_HEADERS.items():
            response[name] = value
        return response

    wrapped.csrf_exempt = True  # type: ignore[attr-defined]
    return wrapped


def protected_resource_metadata(request: HttpRequest, resource_path: str = "mcp") -> JsonResponse:
    """RFC 9728 metadata of an MCP endpoint (path form and root form)."""
    path = "/" + resource_path.strip("/") if resource_path else "/mcp"
    profile = next((p for p in PROFILES.values() if p.path == path), None)
    if profile is None:
        return JsonResponse({"error": Code.NOT_FOUND.value}, status=404)
    return JsonResponse(
        {
            "resource": resource_url(path),
            "authorization_servers": [settings.PUBLIC_URL],
            "scopes_supported": sorted(ALL_SCOPES),
            "bearer_methods_supported": ["header"],
            "resource_name": "Deep Recall memory" + ("" if profile.name == "core" else f" ({profile.title})"),
            "resource_documentation": f"{settings.PUBLIC_URL}/api/docs/",
        }
    )


def _oauth_refusal(error: AppError) -> JsonResponse:
    """A 429 in OAuth's error shape (RFC 6749 5.2, RFC 7591 3.2.2), which these endpoints' clients
    parse, with our catalogue code as its `error` and the wait in Retry-After."""
    wait = error.details["retry_after"]
    response = JsonResponse(
        {"error": error.code.value, "error_description": error.message, "retry_after": wait}, status=429
    )
    response["Retry-After"] = str(wait)
    return response


def _token_client_id(request: HttpRequest) -> str:
    """The client_id a token request names: in the body, or as the user of HTTP Basic auth."""
    scheme, _, credentials = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "basic":
        try:
            user = base64.b64decode(credentials, validate=True).decode().partition(":")[0]
        except (ValueError, UnicodeDecodeError):
            user = ""
        if user:
            return unquote_plus(user)
    return str(request.POST.get("client_id", ""))


@csrf_exempt
def token(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """DOT's token endpoint, limited in failed requests per client_id and address.

    Guessing an authorization code, a client secret or a refresh token is a run of failures for
    one client; a client that gets its tokens never meets the limit.
    """
    view = oauth_views.TokenView.as_view()
    if request.method != "POST":
        return view(request, *args, **kwargs)
    ident = f"{_token_client_id(request)}|{client_address(request)}"
    try:
        throttle_check(limit="token", ident=ident)
    except AppError as exc:
        return _oauth_refusal(exc)
    response = view(request, *args, **kwargs)
    if response.status_code >= 400:
        throttle_record(limit="token", ident=ident)
    return response


@csrf_exempt
def register_client(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """RFC 7591 dynamic client registration, limited in successful registrations per address.

    Anonymous registration is open (MCP clients register themselves); what costs us is a stored
    client, so a malformed or refused request is answered without spending the budget.
    """
    refused = _refused_registration(request)
    if refused is not None:
        return refused
    view = DynamicClientRegistrationView.as_view()
    if request.method != "POST":
        return view(request, *args, **kwargs)
    ident = client_address(request)
    try:
        throttle_check(limit="register", ident=ident)
    except AppError as exc:
        return _oauth_refusal(exc)
    response = view(request, *args, **kwargs)
    if response.status_code == 201:
        throttle_record(limit="register", ident=ident)
    return response


def _refused_registration(request: HttpRequest) -> HttpResponse | None:
    """RFC 7591 `invalid_client_metadata` (or `invalid_redirect_uri`) for metadata this server does
    not allow (accounts/oauth.py); None when the library may go on and register it."""
    if request.method not in ("POST", "PUT"):
        return None
    try:
        metadata = json_decode(request.body or b"{}")
    except JsonTooDeep as exc:
        # The library's own json.loads would overflow the stack on this (a 500), so it never sees it.
        return JsonResponse(
            {"error": "invalid_client_metadata", "error_description": f"Refused: {exc}."}, status=400
        )
    except ValueError:
        return None  # the library answers a body that is not JSON in its own words
    problem = registration_problem(metadata)
    if not problem:
        return None
    error = "invalid_redirect_uri" if "redirect URI" in problem else "invalid_client_metadata"
    return JsonResponse({"error": error, "error_description": f"Refused: {problem}."}, status=400)


@csrf_exempt
def manage_registration(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """RFC 7592 registration management; an update is held to the same rules as a registration."""
    refused = _refused_registration(request)
    if refused is not None:
        return refused
    view = DynamicClientRegistrationManagementView.as_view()
    return view(request, *args, **kwargs)


class ConsentView(oauth_views.AuthorizationView):
    """The OAuth consent page: which app, which scopes, which space."""

    template_name = "accounts/consent.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        if self.request.user.is_authenticated:
            context["space"] = self._space(context.get("application"))
        context["profile"] = self._profile()
        return context

    def _space(self, application: Any) -> Any:
        """The space the app will use: the one this app's grant switched to, else the default."""
        from memories.models import Space
        from memories.selectors.spaces import grant_space_id

        user = self.request.user
        if application is not None:
            chosen = grant_space_id(user=user, application_id=application.pk)
            if chosen is not None:
                return Space.objects.filter(owner=user, id=chosen).first()
        return space_default(owner=user)

    def _profile(self) -> Any:
        """The MCP tool profile the token is for (its `resource`), so the person sees what they allow."""
        from mcp_gateway.auth import resource_url
        from memories.operations.registry import PROFILES

        resource = (self.request.GET.get("resource") or self.request.POST.get("resource") or "").rstrip("/")
        return next((p for p in PROFILES.values() if resource_url(p.path) == resource), None)
