"""OAuth discovery and registration around django-oauth-toolkit, for MCP clients."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote_plus, urlsplit

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider import views as oauth_views
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.forms import AllowForm
from oauth2_provider.models import get_application_model
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import DynamicClientRegistrationManagementView, DynamicClientRegistrationView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from accounts.caller import ALL_SCOPES
from accounts.oauth import (
    MAX_REGISTRATION_BYTES,
    REST_PATH,
    is_loopback,
    registration_problem,
    resource_problem,
    resource_url,
    served_paths,
)
from accounts.selectors import oauth_consent_given
from accounts.throttles import client_address, throttle_check, throttle_record
from memories.api.base import session_actor
from memories.errors import AppError, Code
from memories.operations.registry import PROFILES, Profile
from memories.parsing import JsonTooDeep, json_decode
from memories.selectors.spaces import space_granted_or_default, space_list
from memories.services.spaces import grant_space_choose

if TYPE_CHECKING:
    from oauth2_provider.models import AbstractApplication

    from memories.models import Space

CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, MCP-Protocol-Version",
    "Access-Control-Max-Age": "86400",
}


def with_cors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Answer preflights and add CORS headers: browser-based MCP clients read these endpoints."""

    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        response = HttpResponse(status=204) if request.method == "OPTIONS" else view(request, *args, **kwargs)
        for name, value in CORS_HEADERS.items():
            response[name] = value
        return response

    wrapped.csrf_exempt = True  # type: ignore[attr-defined]
    return wrapped


def protected_resource_metadata(request: HttpRequest, resource_path: str = "mcp") -> JsonResponse:
    """RFC 9728 metadata of an MCP endpoint (path form and root form)."""
    path = "/" + resource_path.strip("/") if resource_path else "/mcp"
    if path not in served_paths():
        return JsonResponse({"error": Code.NOT_FOUND.value}, status=404)
    profile = next((p for p in PROFILES.values() if p.path == path), None)
    if profile is None:
        name = "Deep Recall REST API"
    else:
        name = "Deep Recall memory" + ("" if profile.name == "core" else f" ({profile.title})")
    return JsonResponse(
        {
            "resource": resource_url(path),
            "authorization_servers": [settings.PUBLIC_URL],
            "scopes_supported": sorted(ALL_SCOPES),
            "bearer_methods_supported": ["header"],
            "resource_name": name,
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
def token(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
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
def register_client(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
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
    if len(request.body) > MAX_REGISTRATION_BYTES:
        return JsonResponse(
            {
                "error": "invalid_client_metadata",
                "error_description": f"Refused: a registration is at most {MAX_REGISTRATION_BYTES} bytes.",
            },
            status=400,
        )
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
def manage_registration(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    """RFC 7592 registration management; an update is held to the same rules as a registration."""
    refused = _refused_registration(request)
    if refused is not None:
        return refused
    view = DynamicClientRegistrationManagementView.as_view()
    return view(request, *args, **kwargs)


class ConsentForm(AllowForm):
    """django-oauth-toolkit's consent form, plus which of the requested scopes the person grants
    (all ticked at first) and the space the app will use."""

    granted = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    space = forms.ChoiceField(required=False)


class ConsentView(oauth_views.AuthorizationView):
    """The OAuth consent page: which app (by its self-declared name), where it sends the person
    back, what it may do, at which URL, and in which space.

    The page is shown again whenever the request asks for a scope or a resource no live token of
    the app covers (accounts.selectors.oauth_consent_given); a resource this server does not serve,
    or none, is refused as `invalid_target` (accounts.oauth.resource_problem).
    """

    template_name = "accounts/consent.html"
    form_class = ConsentForm

    def validate_authorization_request(self, request: Any) -> Any:
        scopes, credentials = super().validate_authorization_request(request)
        problem = resource_problem(request.GET.getlist("resource"))
        if problem:
            # The redirect URI is validated by now, so the client hears it (RFC 8707 section 2).
            error = CustomOAuth2Error(
                error="invalid_target", description=f"Refused: {problem}.", state=credentials.get("state")
            )
            raise OAuthToolkitError(error=error, redirect_uri=credentials["redirect_uri"])
        return scopes, credentials

    def get(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not self._approved_before(request):
            query = request.GET.copy()
            query["approval_prompt"] = "force"
            # The library reads the prompt from the query; a client's own "force" is kept.
            query._mutable = False
            request.GET = query  # type: ignore[assignment]
        return super().get(request, *args, **kwargs)

    def _approved_before(self, request: HttpRequest) -> bool:
        application = (
            get_application_model().objects.filter(client_id=request.GET.get("client_id", "")).first()
        )
        if application is None or not request.user.is_authenticated:
            return True  # nothing to approve: the library answers the request's error
        scope = request.GET.get("scope") or " ".join(oauth2_settings.DEFAULT_SCOPES)
        return oauth_consent_given(
            user=request.user,
            application=application,
            scopes=set(scope.split()),
            resources=request.GET.getlist("resource"),
        )

    def get_form(self, form_class: object = None) -> Any:
        form = super().get_form(form_class)
        requested = str(form.initial.get("scope") or self.request.POST.get("scope") or "").split()
        descriptions = oauth2_settings.SCOPES
        form.fields["granted"].choices = [(scope, descriptions.get(scope, scope)) for scope in requested]
        form.fields["granted"].initial = requested
        if self.request.user.is_authenticated:
            form.fields["space"].choices = [
                (str(space.id), space.name) for space in space_list(owner=self.request.user)
            ]
            application = (
                get_application_model()
                .objects.filter(
                    client_id=self.request.GET.get("client_id") or self.request.POST.get("client_id", "")
                )
                .first()
            )
            current = self._space(application)
            if current is not None:
                form.fields["space"].initial = str(current.id)
        return form

    def form_valid(self, form: Any) -> HttpResponse:
        problem = resource_problem(str(form.cleaned_data.get("resource") or "").split())
        if problem:
            # A changed hidden field: the redirect URI is not validated yet, so nothing is sent there.
            error = CustomOAuth2Error(error="invalid_target", description=f"Refused: {problem}.")
            return self.render_to_response({"error": error}, status=400)
        # The person may untick scopes (MCP clients ask for every scope a URL offers, so an agent
        # can write without a step-up the TypeScript SDK cannot do); unticking all is a Deny.
        granted = set(form.cleaned_data.get("granted") or [])
        chosen = [scope for scope in str(form.cleaned_data.get("scope") or "").split() if scope in granted]
        form.cleaned_data["scope"] = " ".join(chosen)
        if not chosen:
            form.cleaned_data["allow"] = False
        response = super().form_valid(form)
        issued = parse_qs(urlsplit(response.get("Location", "")).query).get("code")
        space_id = form.cleaned_data.get("space")
        if issued and form.cleaned_data.get("allow") and space_id:
            application = get_application_model().objects.get(client_id=form.cleaned_data["client_id"])
            grant_space_choose(
                actor=session_actor(self.request), application_id=application.pk, space_id=space_id
            )
        return response

    def get_context_data(self, **kwargs: object) -> dict[str, object]:
        context = super().get_context_data(**kwargs)
        if self.request.user.is_authenticated:
            context["space"] = self._space(context.get("application"))
        context["profile"] = self._profile()
        context["resource_label"] = self._resource_label()
        redirect = urlsplit(str(context.get("redirect_uri") or ""))
        context["redirect_host"] = redirect.netloc
        context["redirect_is_local"] = is_loopback(redirect.hostname)
        return context

    def _space(self, application: AbstractApplication | None) -> Space | None:
        """The space the app will use: the one this app's grant switched to, else the default."""
        return space_granted_or_default(
            user=self.request.user, application_id=application.pk if application is not None else None
        )

    def _resource(self) -> str:
        return (self.request.GET.get("resource") or self.request.POST.get("resource") or "").rstrip("/")

    def _profile(self) -> Profile | None:
        """The MCP tool profile the token is for (its `resource`), so the person sees what they allow."""
        return next((p for p in PROFILES.values() if resource_url(p.path) == self._resource()), None)

    def _resource_label(self) -> str:
        resource = self._resource()
        if resource and resource == resource_url(REST_PATH):
            return "the Deep Recall REST API"
        return resource
