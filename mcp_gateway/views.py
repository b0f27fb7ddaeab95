"""OAuth discovery and registration around django-oauth-toolkit, for MCP clients."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider import views as oauth_views
from oauth2_provider.views import DynamicClientRegistrationManagementView, DynamicClientRegistrationView
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from accounts.caller import ALL_SCOPES
from accounts.oauth import registration_problem
from mcp_gateway.auth import resource_url
from memories.errors import Code
from memories.operations.registry import PROFILES
from memories.selectors.spaces import space_default

CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, MCP-Protocol-Version",
    "Access-Control-Max-Age": "86400",
}


# Anonymous client registration is open (MCP clients register themselves), so it
# is rate limited per client address.
REGISTRATIONS_PER_HOUR = 30


class RegistrationThrottle(SimpleRateThrottle):
    """Registrations per client address over the last hour.

    DRF's throttle keeps each address's recent timestamps, a sliding window: a fixed
    hourly bucket would let twice the budget through either side of the hour.
    """

    scope = "dcr"
    rate = f"{REGISTRATIONS_PER_HOUR}/hour"

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": _client_address(request)}


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


def _client_address(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR", "unknown"))


@csrf_exempt
def register_client(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """RFC 7591 dynamic client registration, rate limited per address."""
    if request.method == "POST":
        throttle = RegistrationThrottle()
        # The throttle reads only the address; DRF's types want its request and a view.
        if not throttle.allow_request(Request(request), APIView()):
            response = JsonResponse(
                {
                    "error": "too_many_requests",
                    "error_description": "Too many client registrations; retry later.",
                },
                status=429,
            )
            response["Retry-After"] = str(max(1, math.ceil(throttle.wait() or 1)))
            return response
    refused = _refused_registration(request)
    if refused is not None:
        return refused
    view = DynamicClientRegistrationView.as_view()
    return view(request, *args, **kwargs)


def _refused_registration(request: HttpRequest) -> HttpResponse | None:
    """RFC 7591 `invalid_client_metadata` (or `invalid_redirect_uri`) for metadata this server does
    not allow (accounts/oauth.py); None when the library may go on and register it."""
    if request.method not in ("POST", "PUT"):
        return None
    try:
        metadata = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
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
