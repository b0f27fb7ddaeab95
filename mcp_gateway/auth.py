"""Bearer tokens at the MCP endpoint: OAuth access tokens (with audience) and personal tokens."""

from __future__ import annotations

import hashlib

from oauth2_provider.models import get_access_token_model

from accounts.authentication import pat_authenticate
from accounts.caller import ALL_SCOPES, Caller
from accounts.models import TOKEN_PREFIX
from accounts.oauth import audience_allows
from accounts.selectors import app_pause_check


def caller_for_bearer(raw: str, *, resource: str) -> Caller | None:
    """The caller a bearer token stands for at `resource`, or None if it may not be used there;
    raises AppError `app_paused` for a valid token of an app its owner paused.

    OAuth tokens must name this resource (accounts.oauth.audience_allows, the rule REST
    follows too). Personal access tokens are the user's own credential and work on every
    Deep Recall endpoint.
    """
    if not raw or len(raw) > 512:
        return None
    if raw.startswith(TOKEN_PREFIX):
        token = pat_authenticate(raw)
        if token is None:
            return None
        return Caller(
            user=token.user,
            scopes=frozenset(token.scopes.split()) & ALL_SCOPES,
            via="pat",
            token_id=str(token.id),
        )
    checksum = hashlib.sha256(raw.encode("utf-8")).hexdigest()
    access = get_access_token_model().objects.select_related("user").filter(token_checksum=checksum).first()
    if access is None or access.is_expired() or access.user is None or not access.user.is_active:
        return None
    if not audience_allows(access.resource, resource):
        return None
    # Raises `app_paused`: a valid token of a paused app is refused, and told why.
    app_pause_check(user=access.user, application_id=access.application_id)
    scopes = frozenset(access.scope.split()) & ALL_SCOPES
    return Caller(
        user=access.user,
        scopes=scopes,
        agent_id=access.application_id,
        via="oauth",
        token_id=str(access.id),
    )
