"""The authorization server as OAuth 2.1 and RFC 9700 say (issue 15), against the real server.

Only the authorization code grant with PKCE and the refresh token grant exist, for registration and
at the token endpoint; redirect URIs are https, or http on a loopback address; a replayed refresh
token revokes its whole family; the authorization response names its issuer (RFC 9207).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model

from accounts.oauth import redirect_uri_problem, registration_problem
from tests.helpers import READ
from tests.mcp_gateway.oauth_browser import Browser
from tests.mcp_gateway.test_tenancy import _pkce, mcp_url

pytestmark = [pytest.mark.django_db(transaction=True)]

LOOPBACK = "http://127.0.0.1:9999/callback"


def _register(server: Any, **metadata: Any) -> httpx.Response:
    body = {"client_name": "Probe", "redirect_uris": [LOOPBACK], "token_endpoint_auth_method": "none"}
    return httpx.post(f"{server.url}/o/register/", json={**body, **metadata}, timeout=10)


@pytest.mark.parametrize(
    "metadata",
    [
        {"grant_types": ["password"]},
        {"grant_types": ["authorization_code", "password"]},
        {"grant_types": ["implicit"]},
        {"grant_types": ["client_credentials"]},
        {"grant_types": ["urn:ietf:params:oauth:grant-type:device_code"]},
        {"response_types": ["token"]},
    ],
)
def test_registration_refuses_every_grant_but_code_and_refresh(asgi_server, metadata):
    response = _register(asgi_server, **metadata)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_client_metadata"
    assert not get_application_model().objects.filter(name="Probe").exists()


@pytest.mark.parametrize(
    "uris,accepted",
    [
        (["https://claude.ai/api/mcp/auth_callback"], True),
        (["http://127.0.0.1:33418/callback", "http://[::1]:8080/cb", "http://localhost:5173/cb"], True),
        (["com.example.notes:/oauth/callback"], False),
        (["http://evil.example/callback"], False),
        (["http://192.168.1.5/callback"], False),
        (["javascript:alert(1)"], False),
        (["https://example.com/cb#fragment"], False),
        ([f"https://example.com/cb/{n}" for n in range(11)], False),
    ],
)
def test_registration_takes_https_or_loopback_redirect_uris_only(asgi_server, uris, accepted):
    response = _register(asgi_server, redirect_uris=uris)
    assert (response.status_code == 201) is accepted, response.text
    if not accepted:
        assert response.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")


def test_a_registration_is_small(asgi_server):
    response = _register(asgi_server, client_name="Probe", logo_uri="https://a.example/" + "x" * 40_000)
    assert response.status_code == 400 and response.json()["error"] == "invalid_client_metadata"
    assert not get_application_model().objects.filter(name="Probe").exists()


def test_an_update_is_held_to_the_same_rules(asgi_server):
    client = _register(asgi_server).json()
    response = httpx.put(
        f"{asgi_server.url}/o/register/{client['client_id']}/",
        json={"redirect_uris": [LOOPBACK], "grant_types": ["password"], "client_name": "Probe"},
        headers={"Authorization": f"Bearer {client['registration_access_token']}"},
        timeout=10,
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_client_metadata"
    stored = get_application_model().objects.get(client_id=client["client_id"])
    assert stored.authorization_grant_type == "authorization-code"


def _legacy_application(grant: str, user: Any) -> Any:
    """An application as one registered before these rules could have been stored."""
    return get_application_model().objects.create(
        name="Legacy",
        client_type="confidential",
        authorization_grant_type=grant,
        client_secret="legacy-secret-of-forty-characters-or-so-123",
        redirect_uris="http://evil.example/callback",
        user=user,
        skip_authorization=True,
        hash_client_secret=False,
    )


@pytest.mark.parametrize("grant", ["password", "client-credentials"])
def test_the_token_endpoint_refuses_password_and_client_credentials_even_for_a_stored_app(
    asgi_server, browser_user, grant
):
    app = _legacy_application(grant, browser_user)
    data = {
        "grant_type": grant.replace("-", "_"),
        "username": browser_user.email,
        "password": "a long and unusual passphrase 42",
        "scope": f"{READ} memory:write",
        "client_id": app.client_id,
        "client_secret": "legacy-secret-of-forty-characters-or-so-123",
    }
    response = httpx.post(f"{asgi_server.url}/o/token/", data=data, timeout=10)
    assert response.status_code in (400, 401), response.text
    assert "access_token" not in response.text
    assert not get_access_token_model().objects.filter(application=app).exists()


def test_the_implicit_grant_never_puts_a_token_in_a_url(asgi_server, browser_user):
    app = _legacy_application("implicit", browser_user)
    query = {
        "response_type": "token",
        "client_id": app.client_id,
        "redirect_uri": "http://evil.example/callback",
    }
    browser = Browser(asgi_server.url, browser_user.email)
    try:
        browser.authorize(f"{asgi_server.url}/o/authorize/?{urlencode(query)}")
    except AssertionError as refused:
        # An error page instead of a redirect: refused too.
        assert "access_token" not in str(refused)
    assert not get_access_token_model().objects.filter(application=app).exists()


def _tokens(asgi_server: Any, user: Any) -> tuple[str, dict[str, Any], dict[str, str]]:
    client_id = _register(asgi_server).json()["client_id"]
    verifier, challenge = _pkce()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": LOOPBACK,
        "scope": READ,
        "state": "s1",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": mcp_url(asgi_server),
    }
    answer = Browser(asgi_server.url, user.email).authorize(
        f"{asgi_server.url}/o/authorize/?{urlencode(query)}"
    )
    token = httpx.post(
        f"{asgi_server.url}/o/token/",
        data={
            "grant_type": "authorization_code",
            "code": answer["code"],
            "redirect_uri": LOOPBACK,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": mcp_url(asgi_server),
        },
        timeout=10,
    )
    assert token.status_code == 200, token.text
    return client_id, token.json(), answer


def test_the_authorization_response_names_its_issuer(asgi_server, browser_user):
    _, _, answer = _tokens(asgi_server, browser_user)
    # The server's own public URL, as its metadata says (RFC 9207).
    assert answer.get("iss") == asgi_server.url
    metadata = httpx.get(f"{asgi_server.url}/.well-known/oauth-authorization-server", timeout=10).json()
    assert metadata["issuer"] == asgi_server.url
    assert metadata["authorization_response_iss_parameter_supported"] is True


def test_a_replayed_refresh_token_revokes_the_whole_family(asgi_server, browser_user):
    client_id, first, _ = _tokens(asgi_server, browser_user)

    def refresh(token: str) -> httpx.Response:
        data = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id}
        return httpx.post(f"{asgi_server.url}/o/token/", data=data, timeout=10)

    second = refresh(first["refresh_token"])
    assert second.status_code == 200, second.text
    # The rotated-out token again: refused, and the family it belongs to is revoked with it.
    assert refresh(first["refresh_token"]).status_code == 400
    assert refresh(second.json()["refresh_token"]).status_code == 400
    assert (
        not get_refresh_token_model()
        .objects.filter(application__client_id=client_id, revoked__isnull=True)
        .exists()
    )


@pytest.mark.parametrize(
    "uri,ok",
    [
        ("https://a.example/cb", True),
        ("http://127.0.0.2:1/cb", True),
        ("http://localhost/cb", True),
        ("http://a.example/cb", False),
        ("ftp://a.example/cb", False),
        ("data:text/html,x", False),
        ("https:///cb", False),
    ],
)
def test_redirect_uri_rule(uri, ok):
    assert (redirect_uri_problem(uri) == "") is ok


def test_registration_rule_takes_the_defaults():
    assert registration_problem({"redirect_uris": [LOOPBACK]}) == ""
    assert registration_problem([]) != ""
