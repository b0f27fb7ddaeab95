"""What this authorization server allows: OAuth 2.1 as RFC 9700 says, in one place.

Only the authorization code grant (with PKCE S256, required) and the refresh token grant exist
here, for registration and at the token endpoint alike; a redirect URI is https, or http on a
loopback address (RFC 8252 native apps such as VS Code listen on 127.0.0.1); private-use schemes
are not taken (no MCP client needs one). django-oauth-toolkit's RFC 9700 gates
(settings.OAUTH2_PROVIDER) refuse the password and implicit grants and tokens in a URL; the
validator below also refuses any other grant a stored application may carry, so an application
registered before these rules cannot use one either.
"""

from __future__ import annotations

import ipaddress
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from oauth2_provider.models import (
    clear_expired,
    get_access_token_model,
    get_application_model,
    get_refresh_token_model,
)
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.settings import oauth2_settings
from oauthlib.oauth2.rfc6749.errors import InvalidGrantError

from accounts.models import AuthorizationCodeUse, token_hash

GRANT_TYPES = ("authorization_code", "refresh_token")


RESPONSE_TYPES = ("code",)


# One registration names a handful of callbacks; thousands are an abuse of storage, not a client.
MAX_REDIRECT_URIS = 10


MAX_REDIRECT_URI_LENGTH = 2000


# Ten redirect URIs of 2,000 characters and the usual names and URLs fit well inside this.
MAX_REGISTRATION_BYTES = 32 * 1024


_LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback(host: str | None) -> bool:
    """Whether `host` is this machine: 127.0.0.0/8, ::1 or "localhost"."""
    if not host:
        return False
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def redirect_uri_problem(uri: str) -> str:
    """Why `uri` cannot be a redirect URI here ("" when it can)."""
    if len(uri) > MAX_REDIRECT_URI_LENGTH:
        return f"a redirect URI is at most {MAX_REDIRECT_URI_LENGTH} characters"
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if parts.fragment:
        return "a redirect URI must not have a fragment"
    if scheme == "https":
        return "" if parts.hostname else "an https redirect URI needs a host"
    if scheme == "http":
        if is_loopback(parts.hostname):
            return ""
        return "a plain http redirect URI is only allowed on a loopback address (127.0.0.1, [::1], localhost)"
    return f"redirect URIs must use https (or http on a loopback address), not {scheme or 'no scheme'!r}"


# The REST API is a resource of its own (RFC 8707), like each MCP profile's URL.
REST_PATH = "/api"


def resource_url(path: str = "/mcp") -> str:
    """The RFC 8707 resource identifier of an endpoint of this server (no trailing slash)."""
    return f"{settings.PUBLIC_URL}{path}".rstrip("/")


def metadata_url(path: str = "/mcp") -> str:
    """Where the endpoint's RFC 9728 protected-resource metadata lives."""
    return f"{settings.PUBLIC_URL}/.well-known/oauth-protected-resource{path}"


# The MCP profiles' paths. The profiles are the operations registry's (memories.operations.registry),
# a layer above accounts: memories' AppConfig.ready() hands their paths down here once per process.
_profile_paths: list[str] = []


def served_paths_set(profile_paths: list[str]) -> None:
    """Record the MCP profiles' paths (memories.apps at start-up): the resources tokens are for."""
    _profile_paths[:] = profile_paths


def served_paths() -> list[str]:
    """The paths of the resources this server issues tokens for: each MCP profile, then REST."""
    if not _profile_paths:
        # Never a silent REST-only server: an app that did not start has no profile to serve.
        raise RuntimeError("the MCP profiles' paths are set when Django starts (memories.apps)")
    return [*_profile_paths, REST_PATH]


def same_resource(a: str, b: str) -> bool:
    """Whether two resource identifiers name the same resource."""
    # Clients differ on a trailing slash; nothing else is forgiven.
    return a.rstrip("/") == b.rstrip("/")


def resource_problem(resources: list[str]) -> str:
    """Why an authorization request for `resources` cannot be granted ("" when it can).

    A token is good only at the resource it names, so one that names none would work nowhere,
    and one for a resource another server hosts must not be minted here (RFC 8707 `invalid_target`).
    """
    if not resources:
        return (
            "name the resource the token is for (RFC 8707 resource parameter), e.g. "
            f"resource={resource_url('/mcp')}"
        )
    served = [resource_url(path) for path in served_paths()]
    for resource in resources:
        if not any(same_resource(resource, ours) for ours in served):
            return f"{resource} is not a resource this server serves; it serves {', '.join(served)}"
    return ""


def audience_allows(audiences: Any, resource: str) -> bool:
    """The one audience rule, for REST and every MCP URL alike: an OAuth access token works at a
    resource only if it was minted for it (its RFC 8707 `resource` names it).

    django-oauth-toolkit's own `allows_audience()` accepts a token with no audience; here such a
    token works nowhere.
    """
    return any(same_resource(str(audience), resource) for audience in audiences or [])


def audience_checked_by_endpoint(request_uri: str, audiences: list[str]) -> bool:
    """django-oauth-toolkit's own audience hook (RESOURCE_SERVER_TOKEN_RESOURCE_VALIDATOR): it
    compares a token's audience with the URL the request arrived at, which behind a proxy, or
    under another host name, is not PUBLIC_URL. Each endpoint applies `audience_allows` for the
    resource it is instead (REST: accounts.authentication; MCP: mcp_gateway.auth)."""
    return True


def registration_problem(metadata: object) -> str:
    """Why RFC 7591 client metadata cannot be registered here ("" when it can)."""
    if not isinstance(metadata, dict):
        return "the registration must be a JSON object"
    grant_types = metadata.get("grant_types", ["authorization_code"])
    if isinstance(grant_types, list) and any(g not in GRANT_TYPES for g in grant_types):
        refused = sorted({str(g) for g in grant_types if g not in GRANT_TYPES})
        return f"only the grant types {', '.join(GRANT_TYPES)} are supported, not {', '.join(refused)}"
    response_types = metadata.get("response_types", ["code"])
    if isinstance(response_types, list) and any(r not in RESPONSE_TYPES for r in response_types):
        return "only the response type code is supported"
    redirect_uris = metadata.get("redirect_uris", [])
    if isinstance(redirect_uris, list):
        if len(redirect_uris) > MAX_REDIRECT_URIS:
            return f"at most {MAX_REDIRECT_URIS} redirect URIs may be registered"
        for uri in redirect_uris:
            if isinstance(uri, str) and (problem := redirect_uri_problem(uri)):
                return problem
    return ""


class Validator(OAuth2Validator):
    """django-oauth-toolkit's validator, held to this server's grants and redirect URIs, and
    revoking what a code issued when the code is replayed (RFC 6749 4.1.2, RFC 9700 4.2.4)."""

    def validate_grant_type(
        self,
        client_id: object,
        grant_type: str,
        client: object,
        request: object,
        *args: object,
        **kwargs: object,
    ) -> bool:
        if grant_type not in GRANT_TYPES:
            return False
        return bool(super().validate_grant_type(client_id, grant_type, client, request, *args, **kwargs))

    def validate_response_type(
        self,
        client_id: object,
        response_type: str,
        client: object,
        request: object,
        *args: object,
        **kwargs: object,
    ) -> bool:
        if response_type not in RESPONSE_TYPES:
            return False
        return bool(
            super().validate_response_type(client_id, response_type, client, request, *args, **kwargs)
        )

    def validate_redirect_uri(
        self, client_id: object, redirect_uri: str, request: object, *args: object, **kwargs: object
    ) -> bool:
        if redirect_uri_problem(redirect_uri):
            return False
        return bool(super().validate_redirect_uri(client_id, redirect_uri, request, *args, **kwargs))

    def _create_refresh_token(
        self, request: Any, refresh_token_code: Any, access_token: Any, previous_refresh_token: Any
    ) -> Any:
        refresh_token = super()._create_refresh_token(
            request, refresh_token_code, access_token, previous_refresh_token
        )
        # invalidate_authorization_code runs after the tokens are saved; it records this family.
        request.deeprecall_token_family = refresh_token.token_family
        return refresh_token

    def invalidate_authorization_code(
        self, client_id: object, code: str, request: object, *args: object, **kwargs: object
    ) -> None:
        family = getattr(request, "deeprecall_token_family", None)
        try:
            super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)
        except InvalidGrantError:
            # Another exchange of the same code won the race: what this one minted goes too.
            _revoke_code_family(code)
            get_refresh_token_model().revoke_family(family)
            raise
        if family is not None:
            try:
                with transaction.atomic():
                    AuthorizationCodeUse.objects.create(code_hash=token_hash(code), token_family=family)
            except IntegrityError:
                # The same code was exchanged twice at once: both families are revoked.
                _revoke_code_family(code)
                get_refresh_token_model().revoke_family(family)

    def validate_code(
        self, client_id: object, code: str, client: object, request: object, *args: object, **kwargs: object
    ) -> bool:
        if super().validate_code(client_id, code, client, request, *args, **kwargs):
            return True
        _revoke_code_family(code)
        return False


def _revoke_code_family(code: str) -> None:
    """A used code came back: revoke the refresh tokens (and their access tokens) it issued."""
    for family in AuthorizationCodeUse.objects.filter(code_hash=token_hash(code)).values_list(
        "token_family", flat=True
    ):
        get_refresh_token_model().revoke_family(family)


# An anonymous registration nobody approved within a day is a client that never finished
# connecting (or a registration made for its own sake); its row is only storage.
UNUSED_REGISTRATION_LIFETIME = timedelta(days=1)


def oauth_housekeeping(*, now: datetime | None = None) -> dict[str, int]:
    """The authorization server's clean-up, hourly in the worker's beat (config/celery.py).

    - expired tokens and grants, by the library's own `clear_expired`;
    - anonymous (RFC 7591) registrations older than UNUSED_REGISTRATION_LIFETIME that nothing
      refers to but their own registration token: no grant, token, space choice, memory, job or
      audit entry, so deleting them loses nothing and no attribution;
    - records of used authorization codes once every token their code issued has expired.
    """
    now = now or timezone.now()
    clear_expired()
    Application = get_application_model()
    candidates = list(
        Application.objects.filter(
            user__isnull=True, created__lt=now - UNUSED_REGISTRATION_LIFETIME
        ).values_list("pk", flat=True)
    )
    unused: list[Any] = []
    for start in range(0, len(candidates), 1000):
        batch = set(candidates[start : start + 1000])
        unused.extend(batch - _applications_in_use(batch))
    deleted = Application.objects.filter(pk__in=unused).delete()[1].get(Application._meta.label, 0)
    lifetime = timedelta(seconds=oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS or 0)
    codes = AuthorizationCodeUse.objects.filter(used_at__lt=now - lifetime).delete()[0]
    return {"registrations_deleted": deleted, "code_records_deleted": codes}


def _applications_in_use(ids: set[Any]) -> set[Any]:
    """Which of these applications any row refers to, other than their registration tokens.

    Every relation to the application model is asked, so a table added later counts as well.
    """
    used: set[Any] = set()
    # include_hidden: our own tables point at applications with related_name="+".
    relations = [
        field
        for field in get_application_model()._meta.get_fields(include_hidden=True)
        if field.auto_created and not field.concrete and field.is_relation and field.related_model is not None
    ]
    for relation in relations:
        rows = relation.related_model._default_manager.filter(**{f"{relation.field.name}__in": ids})
        if relation.related_model is get_access_token_model():
            # RFC 7592 registration access tokens: no user, the registration scope.
            rows = rows.exclude(user__isnull=True, scope=oauth2_settings.DCR_REGISTRATION_SCOPE)
        used.update(rows.values_list(relation.field.attname, flat=True).distinct())
    return used
