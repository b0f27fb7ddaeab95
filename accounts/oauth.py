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
from typing import Any
from urllib.parse import urlsplit

from oauth2_provider.oauth2_validators import OAuth2Validator

GRANT_TYPES = ("authorization_code", "refresh_token")


RESPONSE_TYPES = ("code",)


# One registration names a handful of callbacks; thousands are an abuse of storage, not a client.
MAX_REDIRECT_URIS = 10


MAX_REDIRECT_URI_LENGTH = 2000


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


def registration_problem(metadata: Any) -> str:
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
    """django-oauth-toolkit's validator, held to this server's grants and redirect URIs."""

    def validate_grant_type(
        self, client_id: Any, grant_type: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if grant_type not in GRANT_TYPES:
            return False
        return bool(super().validate_grant_type(client_id, grant_type, client, request, *args, **kwargs))

    def validate_response_type(
        self, client_id: Any, response_type: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if response_type not in RESPONSE_TYPES:
            return False
        return bool(
            super().validate_response_type(client_id, response_type, client, request, *args, **kwargs)
        )

    def validate_redirect_uri(
        self, client_id: Any, redirect_uri: str, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if redirect_uri_problem(redirect_uri):
            return False
        return bool(super().validate_redirect_uri(client_id, redirect_uri, request, *args, **kwargs))
