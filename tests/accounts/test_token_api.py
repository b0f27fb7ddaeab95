"""Managing personal access tokens over REST: session only, shown once, revocable."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient

from accounts.models import PersonalAccessToken
from tests.helpers import error_of, pat_client

pytestmark = pytest.mark.django_db


def _session(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


class TestTokenApi:
    def test_it_creates_a_token_shown_once_that_then_works(self, alice):
        response = _session(alice).post(
            "/api/v1/tokens", {"name": "laptop", "scopes": ["memory:read"]}, format="json"
        )
        assert response.status_code == 201, response.json()
        raw = response.json()["token"]
        listed = _session(alice).get("/api/v1/tokens").json()["results"]
        assert [t["name"] for t in listed] == ["laptop"] and "token" not in listed[0]
        agent = APIClient()
        agent.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        assert agent.get("/api/v1/memories").status_code == 200
        assert agent.post("/api/v1/memories", {"content": "x"}, format="json").status_code == 403

    def test_it_stores_the_expiry_as_the_instant_it_names(self, alice):
        response = _session(alice).post(
            "/api/v1/tokens",
            {"name": "trip", "scopes": ["memory:read"], "expires_at": "2099-01-01t01:00:00+01:00"},
            format="json",
        )
        assert response.status_code == 201, response.json()
        token = PersonalAccessToken.objects.get(id=response.json()["id"])
        assert token.expires_at == datetime(2099, 1, 1, tzinfo=UTC)

    def test_it_revokes_and_the_token_stops_working(self, alice):
        created = _session(alice).post(
            "/api/v1/tokens", {"name": "t", "scopes": ["memory:read"]}, format="json"
        )
        token_id, raw = created.json()["id"], created.json()["token"]
        assert _session(alice).delete(f"/api/v1/tokens/{token_id}").json()["revoked_at"]
        agent = APIClient()
        agent.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        assert agent.get("/api/v1/memories").status_code == 401

    def test_a_token_cannot_mint_tokens(self, alice):
        response = pat_client(alice).post(
            "/api/v1/tokens", {"name": "more", "scopes": ["memory:write"]}, format="json"
        )
        assert response.status_code == 403
        assert error_of(response)["code"] == "session_required"
        assert PersonalAccessToken.objects.filter(user=alice).count() == 1  # only the client's own

    @pytest.mark.parametrize(
        "body,code",
        [
            ({"name": "x", "scopes": ["memory:admin"]}, "invalid_value"),
            ({"name": "x", "scopes": []}, "value_out_of_range"),
            ({"name": "   ", "scopes": ["memory:read"]}, "value_too_short"),
            ({"name": "x", "scopes": ["memory:read"], "owner": "bob"}, "unknown_field"),
            (
                {"name": "x", "scopes": ["memory:read"], "expires_at": "2001-01-01T00:00:00Z"},
                "invalid_expiry",
            ),
            (
                {"name": "x", "scopes": ["memory:read"], "expires_at": "2099-01-01T00:00+01:00"},
                "invalid_format",
            ),
            ({"name": "x" * 101, "scopes": ["memory:read"]}, "value_too_long"),
        ],
    )
    def test_it_validates_and_stores_nothing(self, alice, body, code):
        response = _session(alice).post("/api/v1/tokens", body, format="json")
        assert response.status_code == 400, response.json()
        assert error_of(response)["code"] == code
        assert not PersonalAccessToken.objects.exists()

    def test_an_outsider_cannot_revoke_or_see_someone_elses_token(self, alice, charlie):
        created = _session(alice).post(
            "/api/v1/tokens", {"name": "t", "scopes": ["memory:read"]}, format="json"
        )
        token_id = created.json()["id"]
        response = _session(charlie).delete(f"/api/v1/tokens/{token_id}")
        assert response.status_code == 404
        assert error_of(response)["code"] == "token_not_found"
        assert _session(charlie).get("/api/v1/tokens").json()["results"] == []
        assert PersonalAccessToken.objects.get(id=token_id).revoked_at is None
