from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.test import RequestFactory
from django.urls import path
from django.utils import timezone
from oauth2_provider.models import get_access_token_model
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.authentication import (
    CsrfSessionAuthentication,
    OAuthBearerAuthentication,
    PersonalAccessTokenAuthentication,
    caller_from_request,
    require_scope,
)
from accounts.caller import Caller
from accounts.oauth import REST_PATH, resource_url
from accounts.services import pat_create, pat_revoke
from memories.errors import AppError
from tests.helpers import oauth_app

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.accounts.test_authentication")]


class WhoAmI(APIView):
    authentication_classes = [
        PersonalAccessTokenAuthentication,
        OAuthBearerAuthentication,
        CsrfSessionAuthentication,
    ]
    permission_classes = [IsAuthenticated]

    def get(self, request: Request) -> Response:
        caller = caller_from_request(request)
        return Response(
            {
                "user": caller.user.email,
                "scopes": sorted(caller.scopes),
                "agent_id": caller.agent_id,
                "via": caller.via,
                "token_id": caller.token_id,
            }
        )

    post = get


urlpatterns = [path("whoami", WhoAmI.as_view())]


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def assert_no_caller_data(response) -> None:
    # Whatever error shape the project's exception handler renders, nothing of the
    # caller may be in it.
    body = response.content.decode()
    for leak in ("alice", '"scopes"', '"via"', '"agent_id"'):
        assert leak not in body


@pytest.fixture
def agent(alice):
    return oauth_app("Claude Desktop", alice, "https://agent.example.com/callback")


OAUTH_TOKEN = "oauth-abc"


# A 401 names the API's protected-resource metadata (RFC 9728), where an OAuth client learns how to
# get a token for it.
REST_CHALLENGE = (
    f'Bearer realm="api", resource_metadata="{settings.PUBLIC_URL}/.well-known/oauth-protected-resource/api"'
)


def oauth_token(
    *, user, application, scope="memory:read", expires_in=timedelta(hours=1), token=OAUTH_TOKEN, resource=None
):
    if resource is None:
        resource = [resource_url(REST_PATH)]
    return get_access_token_model().objects.create(
        user=user,
        application=application,
        token=token,
        expires=timezone.now() + expires_in,
        scope=scope,
        resource=resource,
    )


class TestPersonalAccessToken:
    def test_it_authenticates_a_pat_with_its_scopes(self, client, alice):
        token, raw = pat_create(user=alice, name="cli", scopes=["memory:read"])
        response = client.get("/whoami", **bearer(raw))
        assert response.status_code == 200
        assert response.json() == {
            "user": "alice@example.com",
            "scopes": ["memory:read"],
            "agent_id": None,
            "via": "pat",
            "token_id": str(token.id),
        }

    def test_it_refuses_a_revoked_pat_with_401(self, client, alice):
        token, raw = pat_create(user=alice, name="cli", scopes=["memory:read", "memory:write"])
        pat_revoke(user=alice, token_id=token.id)
        response = client.get("/whoami", **bearer(raw))
        assert response.status_code == 401
        assert response["WWW-Authenticate"] == REST_CHALLENGE
        assert "revoked" in response.content.decode()
        assert_no_caller_data(response)

    def test_it_refuses_an_expired_pat_with_401(self, client, alice):
        token, raw = pat_create(
            user=alice, name="cli", scopes=["memory:read"], expires_at=timezone.now() + timedelta(hours=1)
        )
        type(token).objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        assert client.get("/whoami", **bearer(raw)).status_code == 401

    def test_it_refuses_an_unknown_pat_even_with_a_session_cookie(self, client, alice):
        # A broken token must not silently fall back to the browser's session.
        client.force_login(alice)
        response = client.get("/whoami", **bearer("drp_not-a-real-token"))
        assert response.status_code == 401

    def test_it_refuses_a_pat_of_an_inactive_user(self, client, alice):
        _, raw = pat_create(user=alice, name="cli", scopes=["memory:read"])
        alice.is_active = False
        alice.save(update_fields=["is_active"])
        assert client.get("/whoami", **bearer(raw)).status_code == 401

    def test_it_needs_no_csrf_token_for_a_pat(self, alice):
        from django.test import Client

        _, raw = pat_create(user=alice, name="cli", scopes=["memory:write"])
        response = Client(enforce_csrf_checks=True).post("/whoami", **bearer(raw))
        assert response.status_code == 200
        assert response.json()["scopes"] == ["memory:write"]


class TestOAuth:
    def test_it_authenticates_an_oauth_token_as_the_agent(self, client, alice, agent):
        access = oauth_token(user=alice, application=agent, scope="memory:read")
        response = client.get("/whoami", **bearer(OAUTH_TOKEN))
        assert response.status_code == 200
        assert response.json() == {
            "user": "alice@example.com",
            "scopes": ["memory:read"],
            "agent_id": agent.pk,
            "via": "oauth",
            "token_id": str(access.id),
        }

    def test_it_keeps_only_memory_scopes(self, client, alice, agent):
        oauth_token(user=alice, application=agent, scope="openid memory:write profile")
        response = client.get("/whoami", **bearer(OAUTH_TOKEN))
        assert response.json()["scopes"] == ["memory:write"]

    def test_it_refuses_an_expired_oauth_token_with_401(self, client, alice, agent):
        oauth_token(user=alice, application=agent, expires_in=-timedelta(seconds=1))
        response = client.get("/whoami", **bearer(OAUTH_TOKEN))
        assert response.status_code == 401
        assert_no_caller_data(response)

    def test_it_refuses_an_unknown_oauth_token_with_401(self, client, alice, agent):
        oauth_token(user=alice, application=agent)
        assert client.get("/whoami", **bearer("oauth-abd")).status_code == 401

    def test_it_refuses_an_oauth_token_of_an_inactive_user(self, client, alice, agent):
        oauth_token(user=alice, application=agent)
        alice.is_active = False
        alice.save(update_fields=["is_active"])
        assert client.get("/whoami", **bearer(OAUTH_TOKEN)).status_code == 401

    def test_it_leaves_drp_tokens_to_the_pat_class(self, alice, agent):
        # Even an OAuth row whose string happens to look like a PAT is not accepted
        # through the OAuth class.
        oauth_token(user=alice, application=agent, token="drp_lookalike")
        request = Request(RequestFactory().get("/whoami", **bearer("drp_lookalike")))
        assert OAuthBearerAuthentication().authenticate(request) is None


class TestSession:
    def test_it_gives_a_logged_in_person_every_scope(self, client, alice):
        client.force_login(alice)
        response = client.get("/whoami")
        assert response.status_code == 200
        assert response.json() == {
            "user": "alice@example.com",
            "scopes": ["memory:read", "memory:write"],
            "agent_id": None,
            "via": "session",
            "token_id": "",
        }

    def test_it_enforces_csrf_for_session_writes(self, alice):
        from django.test import Client

        browser = Client(enforce_csrf_checks=True)
        browser.force_login(alice)
        response = browser.post("/whoami")
        assert response.status_code == 403
        assert_no_caller_data(response)
        assert browser.get("/whoami").status_code == 200


class TestAnonymous:
    def test_it_refuses_an_anonymous_request_without_data(self, client, alice):
        response = client.get("/whoami")
        # 401 rather than DRF's 403 because the PAT class supplies a WWW-Authenticate challenge.
        assert response.status_code == 401
        assert response["WWW-Authenticate"] == REST_CHALLENGE
        assert_no_caller_data(response)

    def test_it_raises_not_authenticated_for_an_anonymous_caller(self):
        request = RequestFactory().get("/whoami")
        request.user = AnonymousUser()
        with pytest.raises(AppError) as caught:
            caller_from_request(request)
        assert caught.value.code == "not_authenticated"
        assert caught.value.http_status == 401


class TestRequireScope:
    def test_it_refuses_a_read_only_caller_a_write(self, alice):
        caller = Caller(user=alice, scopes=frozenset({"memory:read"}), via="pat")
        with pytest.raises(AppError) as caught:
            require_scope(caller, "memory:write")
        error = caught.value
        assert error.code == "insufficient_scope"
        assert error.http_status == 403
        assert error.message == "This needs the memory:write scope."
        assert error.agent_action == "ask the user to grant memory:write"
        assert error.details == {"required_scope": "memory:write"}

    def test_it_lets_a_caller_with_the_scope_through(self, alice):
        caller = Caller(user=alice, scopes=frozenset({"memory:read"}), via="pat")
        assert require_scope(caller, "memory:read") is None
