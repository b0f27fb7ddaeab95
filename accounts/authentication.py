"""Who is calling the API: DRF authentication classes and the resolution to a Caller.

Three ways in, tried in this order by API views:

1. `Authorization: Bearer drp_...`: a personal access token (`pat_authenticate` below);
2. any other bearer token: an OAuth access token from django-oauth-toolkit;
3. the dashboard's session cookie, with CSRF enforced.

`caller_from_request` turns the outcome into the one `Caller` that operations
see, so scopes and attribution come from the credential and never from the body.
"""

from __future__ import annotations

import functools
import secrets
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone
from oauth2_provider.contrib.rest_framework import OAuth2Authentication
from oauth2_provider.models import get_access_token_model
from rest_framework.authentication import BaseAuthentication, SessionAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from accounts.caller import ALL_SCOPES, Caller
from accounts.models import TOKEN_PREFIX, PersonalAccessToken, User, token_hash
from accounts.oauth import REST_PATH, audience_allows, metadata_url, resource_url
from accounts.selectors import app_pause_check
from config.compiled import CompiledQuery, compile_once, compiled_rows
from memories.errors import AppError, Code

_BEARER = b"bearer"


_PAT_PREFIX = TOKEN_PREFIX.encode("ascii")


def _bearer_token(request: Request) -> bytes | None:
    """The raw credential of an `Authorization: Bearer <credential>` header, if that is what was sent."""
    parts = get_authorization_header(request).split()
    if len(parts) < 2 or parts[0].lower() != _BEARER:
        return None
    return b" ".join(parts[1:])


class PersonalAccessTokenAuthentication(BaseAuthentication):
    """`Authorization: Bearer drp_...` -> (user, PersonalAccessToken).

    A bearer token without the `drp_` prefix is not ours: return None so the
    OAuth class can try it. A `drp_` token that does not work is a hard 401; it
    must not fall through to a session cookie sent alongside it.
    """

    def authenticate(self, request: Request) -> tuple[User, PersonalAccessToken] | None:
        credential = _bearer_token(request)
        if credential is None or not credential.startswith(_PAT_PREFIX):
            return None
        try:
            raw = credential.decode("ascii")
        except UnicodeDecodeError:
            raw = ""
        token = pat_authenticate(raw) if raw and " " not in raw else None
        if token is None:
            raise AuthenticationFailed(
                "This personal access token is not valid: it is unknown, revoked or expired."
            )
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        # A value here is what makes DRF answer 401 (with WWW-Authenticate) instead of 403.
        return rest_challenge()


def rest_challenge() -> str:
    """The WWW-Authenticate of a REST 401: a bearer token, and where the API's protected-resource
    metadata is (RFC 9728), so an OAuth client can find how to get one."""
    return f'Bearer realm="api", resource_metadata="{metadata_url(REST_PATH)}"'


class OAuthBearerAuthentication(OAuth2Authentication):
    """OAuth access tokens from django-oauth-toolkit, minus personal access tokens.

    Skipping `drp_` tokens keeps the two classes from answering for each other
    (and saves a pointless lookup in the OAuth token table).
    """

    def authenticate(self, request: Request) -> tuple[User, Any] | None:
        credential = _bearer_token(request)
        if credential is None or credential.startswith(_PAT_PREFIX):
            return None
        result: tuple[User | None, Any] | None = super().authenticate(request)
        if result is None:
            return None
        user, access_token = result
        # A client-credentials token acts for no person, and the toolkit does not
        # check is_active when it validates a bearer token; neither may reach memories.
        if user is None or not user.is_active:
            raise AuthenticationFailed("This access token does not belong to an active account.")
        # The rule every MCP URL follows too: a token works where it was minted for.
        if not audience_allows(access_token.resource, resource_url(REST_PATH)):
            raise AuthenticationFailed(
                "This access token was not issued for the REST API: ask for one with "
                f"resource={resource_url(REST_PATH)} (RFC 8707), or use a personal access token."
            )
        app_pause_check(user=user, application_id=access_token.application_id)
        return user, access_token


class CsrfSessionAuthentication(SessionAuthentication):
    """The dashboard's session cookie, for its own API calls.

    DRF's SessionAuthentication already enforces CSRF for logged-in users on
    unsafe methods; this name exists so API views list it explicitly and nobody
    swaps in a CSRF-exempt variant.
    """


def caller_from_request(request: Request | HttpRequest) -> Caller:
    """The Caller of an authenticated request: its user, scopes and agent.

    Session -> every scope, via "session"; personal access token -> the token's
    scopes, via "pat"; OAuth -> the granted memory scopes and the application as
    the agent, via "oauth". Raises AppError `not_authenticated` (401) otherwise.
    """
    user = getattr(request, "user", None)
    auth = getattr(request, "auth", None)
    if user is None or isinstance(user, AnonymousUser) or not user.is_authenticated:
        raise AppError(
            Code.NOT_AUTHENTICATED,
            "Authentication is required.",
            agent_action="send an OAuth access token or a personal access token as a Bearer token",
        )
    if isinstance(auth, PersonalAccessToken):
        return Caller(
            user=user,
            scopes=auth.scope_set & ALL_SCOPES,
            via="pat",
            token_id=str(auth.id),
        )
    if isinstance(auth, get_access_token_model()):
        return Caller(
            user=user,
            scopes=frozenset(auth.scope.split()) & ALL_SCOPES,
            agent_id=auth.application_id,
            via="oauth",
            token_id=str(auth.id),
        )
    if auth is not None:
        # An authentication class we do not know about: refusing is safer than
        # guessing its scopes.
        raise AppError(
            Code.NOT_AUTHENTICATED,
            "This kind of credential is not accepted here.",
            agent_action="send an OAuth access token or a personal access token as a Bearer token",
        )
    return Caller(user=user, scopes=ALL_SCOPES, via="session")


def require_scope(caller: Caller, scope: str) -> None:
    """Raise AppError `insufficient_scope` (403) unless `caller` holds `scope`."""
    if not caller.has_scope(scope):
        raise AppError(
            Code.INSUFFICIENT_SCOPE,
            f"This needs the {scope} scope.",
            agent_action=f"ask the user to grant {scope}",
            details={"required_scope": scope},
        )


# Writing last_used_at on every request would turn every API read into a write;
# a minute is precise enough to tell a person whether a token is still in use.
LAST_USED_RESOLUTION = timedelta(minutes=1)


# A real token is 47 characters; anything much longer is not worth hashing.
_RAW_MAX_LENGTH = 200


def pat_authenticate(raw: str) -> PersonalAccessToken | None:
    """The live token whose plaintext is `raw`, with its user loaded; else None.

    None for an unknown, revoked or expired token and for an inactive user. The
    lookup is by the sha256 of `raw`, so timing says nothing about how much of a
    guess matched. `last_used_at` is written at most once a minute.
    """
    if not isinstance(raw, str) or not raw.startswith(TOKEN_PREFIX) or len(raw) > _RAW_MAX_LENGTH:
        return None
    token = _token_with_user(token_hash(raw))
    now = timezone.now()
    if (
        token is None
        or token.revoked_at is not None
        or (token.expires_at is not None and token.expires_at <= now)
        or not token.user.is_active
    ):
        return None
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        # The condition is repeated in the UPDATE so that a burst of parallel
        # requests writes the row once, not once per request.
        stale = Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - LAST_USED_RESOLUTION)
        PersonalAccessToken.objects.filter(stale, pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


_TOKEN_COLUMNS = [f.attname for f in PersonalAccessToken._meta.concrete_fields]


_USER_COLUMNS = [f.attname for f in User._meta.concrete_fields]


@functools.cache
def _token_read() -> CompiledQuery:
    return compile_once(
        lambda hashed: PersonalAccessToken.objects.filter(token_hash=hashed).values_list(
            *_TOKEN_COLUMNS, *(f"user__{name}" for name in _USER_COLUMNS)
        )[:1],
        hashed=secrets.token_hex(32),
    )


def _token_with_user(hashed: str) -> PersonalAccessToken | None:
    """The token with this hash (unique), its user loaded, as
    `PersonalAccessToken.objects.select_related("user").filter(token_hash=...).first()` reads it;
    compiled once (config.compiled): every request with a personal token asks it, and
    compiling the queryset each time cost about 0.3 ms of CPU, several times the read itself."""
    rows = compiled_rows(_token_read(), hashed=hashed)
    if not rows:
        return None
    token = PersonalAccessToken.from_db(connection.alias, _TOKEN_COLUMNS, rows[0][: len(_TOKEN_COLUMNS)])
    user = User.from_db(connection.alias, _USER_COLUMNS, rows[0][len(_TOKEN_COLUMNS) :])
    token._state.fields_cache["user"] = user
    return token
