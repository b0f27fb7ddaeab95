"""Pausing an app: its tokens are refused with `app_paused` until resumed; only your own apps."""

from __future__ import annotations

import pytest
from oauth2_provider.models import get_access_token_model
from rest_framework.test import APIClient

from accounts.oauth import REST_PATH, resource_url
from accounts.services import app_pause, app_resume
from mcp_gateway.auth import caller_for_bearer
from memories.errors import AppError, Code
from tests.helpers import error_of, oauth_client

pytestmark = pytest.mark.django_db


class TestAppPause:
    def test_it_refuses_a_paused_apps_token_over_rest_until_it_is_resumed(self, alice):
        client, application = oauth_client(alice, "Claude")
        assert client.get("/api/v1/memories").status_code == 200

        app_pause(user=alice, application_id=application.id)
        response = client.get("/api/v1/memories")
        assert response.status_code == 403
        error = error_of(response)
        assert error["code"] == Code.APP_PAUSED and error["retryable"] is False

        app_resume(user=alice, application_id=application.id)
        assert client.get("/api/v1/memories").status_code == 200

    def test_it_refuses_a_paused_apps_token_at_the_mcp_endpoint(self, alice):
        _, application = oauth_client(alice, "Claude")
        token = get_access_token_model().objects.get(application=application)
        token.resource = [resource_url("/mcp")]
        token.save()
        assert caller_for_bearer(token.token, resource=resource_url("/mcp")) is not None
        app_pause(user=alice, application_id=application.id)
        with pytest.raises(AppError) as raised:
            caller_for_bearer(token.token, resource=resource_url("/mcp"))
        assert raised.value.code == Code.APP_PAUSED and raised.value.http_status == 403

    def test_it_pauses_only_for_the_person_who_paused(self, alice, bob):
        alice_client, application = oauth_client(alice, "Shared agent")
        # Bob uses the same application with his own token.
        get_access_token_model().objects.create(
            user=bob,
            application=application,
            token="bob-token-" + "y" * 30,
            expires=get_access_token_model().objects.get(user=alice).expires,
            scope="memory:read memory:write",
            resource=[resource_url(REST_PATH)],
        )
        bob_client = APIClient()
        bob_client.credentials(HTTP_AUTHORIZATION="Bearer bob-token-" + "y" * 30)
        app_pause(user=bob, application_id=application.id)
        assert bob_client.get("/api/v1/memories").status_code == 403
        assert alice_client.get("/api/v1/memories").status_code == 200

    def test_it_does_not_let_an_outsider_pause_someone_elses_app(self, alice, charlie):
        alice_client, application = oauth_client(alice, "Claude")
        with pytest.raises(AppError) as raised:
            app_pause(user=charlie, application_id=application.id)
        assert raised.value.code == Code.APPLICATION_NOT_FOUND
        assert alice_client.get("/api/v1/memories").status_code == 200
        with pytest.raises(AppError):
            app_resume(user=charlie, application_id=application.id)

    def test_it_keeps_the_first_pause_when_paused_twice(self, alice):
        _, application = oauth_client(alice, "Claude")
        first = app_pause(user=alice, application_id=application.id)
        again = app_pause(user=alice, application_id=application.id)
        assert first.pk == again.pk and first.paused_at == again.paused_at
