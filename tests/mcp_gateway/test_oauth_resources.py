"""Which resource a token is for (RFC 8707), against the real server (issue 15).

Consent is asked again for a resource the app was not approved for; a resource this server does
not serve, or none, is refused as `invalid_target`; a token works only at the resource it names,
on REST as on MCP; a replayed authorization code revokes what it issued; the consent page says
where the person goes back to, that the name is the app's own, and lets them choose the space.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)

from accounts.caller import Actor
from accounts.models import AuthorizationCodeUse
from accounts.oauth import oauth_housekeeping
from memories.models import AuditEvent, GrantSpace
from memories.services.spaces import space_create
from tests.helpers import READ, WRITE, oauth_app
from tests.mcp_gateway import rpc
from tests.mcp_gateway.oauth_browser import Browser, _hidden_fields
from tests.mcp_gateway.test_tenancy import _pkce

pytestmark = [pytest.mark.django_db(transaction=True)]

LOOPBACK = "http://127.0.0.1:9999/callback"


def _register(server: Any, name: str = "Probe") -> str:
    body = {"client_name": name, "redirect_uris": [LOOPBACK], "token_endpoint_auth_method": "none"}
    response = httpx.post(f"{server.url}/o/register/", json=body, timeout=10)
    assert response.status_code == 201, response.text
    return str(response.json()["client_id"])


def _authorize_url(server: Any, client_id: str, challenge: str, resources: list[str], **extra: str) -> str:
    query: list[tuple[str, str]] = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", LOOPBACK),
        ("scope", extra.pop("scope", READ)),
        ("state", "s1"),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
    ]
    query += [("resource", r) for r in resources]
    query += list(extra.items())
    return f"{server.url}/o/authorize/?{urlencode(query)}"


def _exchange(server: Any, client_id: str, code: str, verifier: str) -> httpx.Response:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": LOOPBACK,
        "client_id": client_id,
        "code_verifier": verifier,
    }
    return httpx.post(f"{server.url}/o/token/", data=data, timeout=10)


def _connect(server: Any, browser: Browser, client_id: str, resource: str, **extra: str) -> dict[str, Any]:
    """Authorize (answering consent if asked) and exchange the code; the token response."""
    verifier, challenge = _pkce()
    answer = browser.authorize(_authorize_url(server, client_id, challenge, [resource], **extra))
    assert "code" in answer, answer
    token = _exchange(server, client_id, answer["code"], verifier)
    assert token.status_code == 200, token.text
    return dict(token.json())


def _mcp_status(server: Any, path: str, token: str) -> int:
    response = rpc.post(server.url + path, rpc.tools_list(), token=token)
    return response.status_code


def test_approving_one_url_does_not_approve_another(asgi_server, browser_user):
    client_id = _register(asgi_server)
    browser = Browser(asgi_server.url, browser_user.email)
    _connect(asgi_server, browser, client_id, f"{asgi_server.url}/mcp")
    assert len(browser.consent_pages) == 1

    # The same URL and scopes again: approved before, so not asked again.
    _connect(asgi_server, browser, client_id, f"{asgi_server.url}/mcp")
    assert len(browser.consent_pages) == 1

    # Another URL of this server (other tools), or a scope not approved yet: asked again.
    graph = _connect(asgi_server, browser, client_id, f"{asgi_server.url}/mcp/graph")
    assert len(browser.consent_pages) == 2 and "Memory graph" in browser.consent_pages[-1]
    _connect(asgi_server, browser, client_id, f"{asgi_server.url}/mcp", scope=f"{READ} {WRITE}")
    assert len(browser.consent_pages) == 3
    assert _mcp_status(asgi_server, "/mcp/graph", graph["access_token"]) == 200
    assert _mcp_status(asgi_server, "/mcp", graph["access_token"]) == 401


def test_a_person_who_denies_a_new_url_keeps_it_unapproved(asgi_server, browser_user):
    client_id = _register(asgi_server)
    _connect(asgi_server, Browser(asgi_server.url, browser_user.email), client_id, f"{asgi_server.url}/mcp")
    denier = Browser(asgi_server.url, browser_user.email, allow=False)
    _, challenge = _pkce()
    answer = denier.authorize(
        _authorize_url(asgi_server, client_id, challenge, [f"{asgi_server.url}/mcp/graph"])
    )
    assert answer["error"] == "access_denied" and "code" not in answer
    assert len(denier.consent_pages) == 1
    tokens = get_access_token_model().objects.filter(application__client_id=client_id, user=browser_user)
    assert all(f"{asgi_server.url}/mcp/graph" not in (t.resource or []) for t in tokens)


@pytest.mark.parametrize(
    "resources",
    [
        ["https://evil.example/"],
        ["{server}/mcp", "https://evil.example/mcp"],
        ["{server}/mcp/unknown"],
        ["{server}/admin"],
        [],
    ],
)
def test_a_resource_this_server_does_not_serve_is_invalid_target(asgi_server, browser_user, resources):
    client_id = _register(asgi_server)
    browser = Browser(asgi_server.url, browser_user.email)
    _, challenge = _pkce()
    url = _authorize_url(
        asgi_server, client_id, challenge, [r.format(server=asgi_server.url) for r in resources]
    )
    answer = browser.authorize(url)
    assert answer["error"] == "invalid_target", answer
    assert answer["state"] == "s1" and "code" not in answer
    assert browser.consent_pages == []
    assert not get_grant_model().objects.filter(application__client_id=client_id).exists()


def test_a_resource_changed_in_the_consent_form_is_refused(asgi_server, browser_user):
    client_id = _register(asgi_server)
    browser = Browser(asgi_server.url, browser_user.email)
    page = _consent_page(asgi_server, browser, client_id)
    data = {**_hidden_fields(page.text), "allow": "Authorize", "resource": "https://evil.example/"}
    response = browser.http.post(str(page.url), data=data)
    assert response.status_code == 400 and "invalid_target" in response.text
    assert "location" not in response.headers
    grants = get_grant_model().objects.filter(application__client_id=client_id)
    assert all("https://evil.example/" not in (g.resource or []) for g in grants)


def test_a_replayed_code_revokes_the_tokens_it_issued(asgi_server, browser_user):
    client_id = _register(asgi_server)
    verifier, challenge = _pkce()
    answer = Browser(asgi_server.url, browser_user.email).authorize(
        _authorize_url(asgi_server, client_id, challenge, [f"{asgi_server.url}/mcp"])
    )
    first = _exchange(asgi_server, client_id, answer["code"], verifier)
    assert first.status_code == 200, first.text
    tokens = first.json()
    assert _mcp_status(asgi_server, "/mcp", tokens["access_token"]) == 200

    replay = _exchange(asgi_server, client_id, answer["code"], verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    # Someone else had the code: what it issued stops working, the refresh token too.
    assert _mcp_status(asgi_server, "/mcp", tokens["access_token"]) == 401
    refresh = httpx.post(
        f"{asgi_server.url}/o/token/",
        data={
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": client_id,
        },
        timeout=10,
    )
    assert refresh.status_code == 400
    assert (
        not get_refresh_token_model()
        .objects.filter(application__client_id=client_id, revoked__isnull=True)
        .exists()
    )
    # Only the code's hash is kept, never the code.
    (use,) = AuthorizationCodeUse.objects.all()
    assert answer["code"] not in use.code_hash and len(use.code_hash) == 64


def test_a_replayed_code_leaves_other_grants_working(asgi_server, browser_user):
    client_id = _register(asgi_server)
    browser = Browser(asgi_server.url, browser_user.email)
    other = _connect(asgi_server, browser, client_id, f"{asgi_server.url}/mcp")
    verifier, challenge = _pkce()
    answer = browser.authorize(_authorize_url(asgi_server, client_id, challenge, [f"{asgi_server.url}/mcp"]))
    assert _exchange(asgi_server, client_id, answer["code"], verifier).status_code == 200
    assert _exchange(asgi_server, client_id, answer["code"], verifier).status_code == 400
    assert _mcp_status(asgi_server, "/mcp", other["access_token"]) == 200


def test_a_token_works_at_the_resource_it_names_on_rest_as_on_mcp(asgi_server, browser_user):
    client_id = _register(asgi_server)
    browser = Browser(asgi_server.url, browser_user.email)
    rest = _connect(asgi_server, browser, client_id, f"{asgi_server.url}/api")
    assert "the Deep Recall REST API" in browser.consent_pages[-1]
    mcp = _connect(asgi_server, browser, client_id, f"{asgi_server.url}/mcp")

    def memories(token: str) -> httpx.Response:
        return httpx.get(
            f"{asgi_server.url}/api/v1/memories", headers={"Authorization": f"Bearer {token}"}, timeout=10
        )

    assert memories(rest["access_token"]).status_code == 200
    refused = memories(mcp["access_token"])
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "not_authenticated"
    assert "resource_metadata=" in refused.headers["WWW-Authenticate"]
    assert _mcp_status(asgi_server, "/mcp", rest["access_token"]) == 401
    metadata = httpx.get(f"{asgi_server.url}/.well-known/oauth-protected-resource/api", timeout=10).json()
    assert metadata["resource"] == f"{asgi_server.url}/api"


@pytest.mark.parametrize("audience", [None, [], ["https://other.example/api"], ["{server}/mcp"]])
def test_rest_refuses_a_token_with_no_or_another_audience(client, alice, audience, settings):
    application = oauth_app("Agent", alice)
    resource = None if audience is None else [a.format(server=settings.PUBLIC_URL) for a in audience]
    get_access_token_model().objects.create(
        user=alice,
        application=application,
        token="rest-audience-probe",
        expires=timezone.now() + timedelta(hours=1),
        scope=READ,
        resource=resource,
    )
    response = client.get("/api/v1/memories", HTTP_AUTHORIZATION="Bearer rest-audience-probe")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_the_consent_page_says_where_it_returns_and_that_the_name_is_the_apps_own(asgi_server, browser_user):
    client_id = _register(asgi_server, name="Claude (official)")
    browser = Browser(asgi_server.url, browser_user.email)
    _connect(asgi_server, browser, client_id, f"{asgi_server.url}/mcp")
    (page,) = browser.consent_pages
    assert "127.0.0.1:9999" in page and "an app on this computer" in page
    assert "chose the name" in page and "has not checked it" in page
    allow = re.search(r'<button type="submit" name="allow"[^>]*>', page)
    deny = re.search(r'<button type="submit" name="deny"[^>]*>', page)
    assert allow and deny and 'class="secondary"' in deny.group(0) and "class=" not in allow.group(0)


def _consent_page(server: Any, browser: Browser, client_id: str) -> httpx.Response:
    """A consent page for a client the browser's person already connected (so signed in): a new
    resource is asked for, so the page is shown."""
    _connect(server, browser, client_id, f"{server.url}/mcp")
    _, challenge = _pkce()
    page = browser.http.get(_authorize_url(server, client_id, challenge, [f"{server.url}/mcp/graph"]))
    assert 'id="authorizationForm"' in page.text, page.text[:500]
    return page


def test_the_person_chooses_the_space_on_the_consent_page(asgi_server, browser_user):
    work = space_create(actor=Actor.owner_acting(browser_user), name="Work")
    client_id = _register(asgi_server)
    browser = Browser(asgi_server.url, browser_user.email)
    page = _consent_page(asgi_server, browser, client_id)
    assert f'<option value="{work.id}">Work</option>' in page.text

    data = {**_hidden_fields(page.text), "allow": "Authorize", "space": str(work.id)}
    answer = browser.http.post(str(page.url), data=data)
    assert answer.status_code == 302 and "code=" in answer.headers["location"]
    application = get_application_model().objects.get(client_id=client_id)
    assert GrantSpace.objects.get(owner=browser_user, application=application).space == work
    switch = AuditEvent.objects.get(
        owner_id_snapshot=browser_user.id, action=AuditEvent.Action.SPACE_SWITCHED
    )
    assert switch.detail["to"] == str(work.id) and switch.detail["on"] == "consent"


def test_a_space_of_someone_else_cannot_be_chosen(asgi_server, browser_user, charlie):
    theirs = space_create(actor=Actor.owner_acting(charlie), name="Charlie's")
    client_id = _register(asgi_server)
    browser = Browser(asgi_server.url, browser_user.email)
    page = _consent_page(asgi_server, browser, client_id)
    assert str(theirs.id) not in page.text
    data = {**_hidden_fields(page.text), "allow": "Authorize", "space": str(theirs.id)}
    answer = browser.http.post(str(page.url), data=data)
    assert answer.status_code == 200 and "code=" not in answer.headers.get("location", "")
    assert not GrantSpace.objects.filter(space=theirs).exists()


def test_housekeeping_removes_registrations_nobody_approved_and_keeps_used_ones(asgi_server, browser_user):
    unused = _register(asgi_server, name="Abandoned")
    fresh = _register(asgi_server, name="Just registered")
    used = _register(asgi_server, name="Connected")
    _connect(asgi_server, Browser(asgi_server.url, browser_user.email), used, f"{asgi_server.url}/mcp")
    # Long connected: its tokens are gone, but the audit trail still names it as an actor.
    named = _register(asgi_server, name="Named in the audit trail")
    Application = get_application_model()
    AuditEvent.objects.create(
        owner_id_snapshot=browser_user.id,
        actor_agent=Application.objects.get(client_id=named),
        action=AuditEvent.Action.SPACE_SWITCHED,
    )
    day_ago = timezone.now() - timedelta(days=1, minutes=1)
    Application.objects.filter(client_id__in=[unused, used, named]).update(created=day_ago)

    done = oauth_housekeeping()

    assert done["registrations_deleted"] == 1
    assert not Application.objects.filter(client_id=unused).exists()
    assert Application.objects.filter(client_id__in=[fresh, used, named]).count() == 3


def test_housekeeping_forgets_code_records_once_their_tokens_have_expired(settings):
    old = AuthorizationCodeUse.objects.create(
        code_hash="a" * 64, token_family="00000000-0000-0000-0000-000000000001"
    )
    recent = AuthorizationCodeUse.objects.create(
        code_hash="b" * 64, token_family="00000000-0000-0000-0000-000000000002"
    )
    AuthorizationCodeUse.objects.filter(pk=old.pk).update(used_at=timezone.now() - timedelta(days=31))
    assert oauth_housekeeping()["code_records_deleted"] == 1
    assert list(AuthorizationCodeUse.objects.values_list("pk", flat=True)) == [recent.pk]


def test_the_person_may_untick_a_scope_and_the_token_has_only_what_they_ticked(asgi_server, browser_user):
    client_id = _register(asgi_server)
    browser = Browser(asgi_server.url, browser_user.email, withhold=[{WRITE}])
    granted = _connect(asgi_server, browser, client_id, f"{asgi_server.url}/mcp", scope=f"{READ} {WRITE}")
    assert granted["scope"].split() == [READ]
    response = rpc.post(
        asgi_server.url,
        rpc.tools_call("remember", {"content": "Not allowed."}),
        token=granted["access_token"],
    )
    assert (
        response.status_code == 403 and 'error="insufficient_scope"' in response.headers["www-authenticate"]
    )


def test_unticking_every_scope_is_a_deny(asgi_server, browser_user):
    client_id = _register(asgi_server)
    browser = Browser(asgi_server.url, browser_user.email, withhold=[{READ, WRITE}])
    _, challenge = _pkce()
    url = _authorize_url(
        asgi_server, client_id, challenge, [f"{asgi_server.url}/mcp"], scope=f"{READ} {WRITE}"
    )
    answer = browser.authorize(url)
    assert answer["error"] == "access_denied" and "code" not in answer
    assert not get_grant_model().objects.filter(application__client_id=client_id).exists()
