"""A new password can end the access of every app and token of the account (the person chooses,
ticked by default), on the password change page and on the reset-by-email page alike. A post that
does not say (a script, a client that leaves the field out) gets the safe choice, and the audit row
says the choice was not made.

Each credential is tried where it is used: an OAuth access token as a bearer on /api/ and at the
MCP endpoint's gate, its refresh token at the token endpoint, a personal access token on /api/.
Charlie, the outsider, changes nothing and loses nothing.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_grant_model,
    get_refresh_token_model,
    set_token_value,
)
from rest_framework.test import APIClient

from accounts.models import User
from accounts.oauth import REST_PATH, resource_url
from accounts.services import pat_create
from mcp_gateway.auth import caller_for_bearer
from memories.models import AuditEvent
from tests.conftest import PASSWORD
from tests.helpers import READ, WRITE, oauth_app

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a brand new long passphrase 31"
CHANGE = "account:password-change"


@dataclass
class Credentials:
    """What one person has handed out: a connected app's tokens and a personal access token."""

    application: Any
    api_access: str
    mcp_access: str
    refresh: str
    pat: str

    def api_works(self, raw: str) -> bool:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        status = client.get("/api/v1/memories").status_code
        assert status in (200, 401), status
        return status == 200

    def mcp_works(self, raw: str) -> bool:
        return caller_for_bearer(raw, resource=resource_url()) is not None

    def refresh_works(self) -> bool:
        data = {
            "grant_type": "refresh_token",
            "refresh_token": self.refresh,
            "client_id": self.application.client_id,
        }
        response = Client().post("/o/token/", data)
        assert response.status_code in (200, 400), response.content
        return response.status_code == 200

    def all_working(self) -> dict[str, bool]:
        """Whether each still works; the refresh last, since a refresh that works rotates the tokens."""
        return {
            "access on /api/": self.api_works(self.api_access),
            "access at /mcp": self.mcp_works(self.mcp_access),
            "personal token on /api/": self.api_works(self.pat),
            "personal token at /mcp": self.mcp_works(self.pat),
            "refresh": self.refresh_works(),
        }


def _access_token(user: User, application: Any, resource: list[str]) -> tuple[Any, str]:
    raw = secrets.token_urlsafe(30)
    access = get_access_token_model()(
        user=user,
        application=application,
        expires=timezone.now() + timedelta(hours=1),
        scope=f"{READ} {WRITE}",
        resource=resource,
    )
    set_token_value(access, raw)
    access.save()
    return access, raw


def hand_out(user: User) -> Credentials:
    """A connected app (an access token for /api/, one for /mcp with its refresh token, a pending
    grant) and a personal access token, stored as django-oauth-toolkit and pat_create store them."""
    application = oauth_app(f"Agent of {user.email}", user)
    # An OAuth token names the one resource it is for (RFC 8707): /mcp's is refused on /api/.
    _, api_raw = _access_token(user, application, [resource_url(REST_PATH)])
    mcp_access, mcp_raw = _access_token(user, application, [resource_url()])
    refresh_raw = secrets.token_urlsafe(30)
    refresh = get_refresh_token_model()(user=user, application=application, access_token=mcp_access)
    set_token_value(refresh, refresh_raw)
    refresh.save()
    get_grant_model().objects.create(
        user=user,
        application=application,
        code=secrets.token_urlsafe(20),
        expires=timezone.now() + timedelta(minutes=1),
        redirect_uri="http://127.0.0.1:9/callback",
        scope=READ,
        code_challenge="x" * 43,
        code_challenge_method="S256",
    )
    _, pat = pat_create(user=user, name="cli", scopes=[READ, WRITE])
    return Credentials(application, api_access=api_raw, mcp_access=mcp_raw, refresh=refresh_raw, pat=pat)


ALL_WORK = {
    "access on /api/": True,
    "access at /mcp": True,
    "personal token on /api/": True,
    "personal token at /mcp": True,
    "refresh": True,
}
NONE_WORK = dict.fromkeys(ALL_WORK, False)


def _signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _change(client: Client, **extra: str) -> Any:
    data = {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD, **extra}
    response = client.post(reverse(CHANGE), data)
    assert response.status_code == 302, response.content
    return response


def _checkbox(html: str) -> str:
    match = re.search(r'<input type="checkbox" name="sign_out"[^>]*>', html)
    assert match is not None, "no sign-out checkbox"
    return match.group(0)


def _unticked(html: str) -> dict[str, str]:
    """What a browser sends for the box left unticked: the page's hidden field of the same name
    (an unticked checkbox sends nothing, so without it "unticked" and "not said" would look alike)."""
    match = re.search(r'<input type="hidden" name="sign_out" value="([^"]*)"[^>]*>\s*(<input[^>]*>)', html)
    assert match is not None, "no hidden sign_out field"
    # It comes before the box: a ticked box's value is the later one, the one Django reads.
    assert match.group(2) == _checkbox(html)
    return {"sign_out": match.group(1)}


def _audit_row(user: User) -> dict[str, Any]:
    return dict(AuditEvent.objects.get(owner_id_snapshot=user.id, action="password_changed").detail)


class TestPasswordChange:
    def test_it_offers_the_sign_out_ticked(self, alice):
        html = _signed_in(alice).get(reverse(CHANGE)).content.decode()
        box = _checkbox(html)
        assert " checked" in box
        # Not `required`: a browser would then refuse to send the form with the box unticked.
        assert " required" not in box
        assert "Also sign out my apps and tokens" in html
        assert _unticked(html) == {"sign_out": "false"}

    def test_it_ends_every_app_and_token_when_ticked(self, alice):
        mine = hand_out(alice)
        client = _signed_in(alice)
        response = _change(client, sign_out="on")
        assert mine.all_working() == NONE_WORK
        assert not get_access_token_model().objects.filter(user=alice).exists()
        assert not get_refresh_token_model().objects.filter(user=alice).exists()
        assert not get_grant_model().objects.filter(user=alice).exists()
        # The session that changed it stays signed in and is told what happened.
        page = client.get(response["Location"]).content.decode()
        assert "Your apps and tokens are signed out" in page
        assert _audit_row(alice) == {
            "changed": "changed",
            "signed_out": True,
            "sign_out_field": "sent",
            "access_tokens": 2,
            "refresh_tokens": 1,
            "grants": 1,
            "personal_access_tokens": 1,
        }

    def test_it_keeps_every_app_and_token_when_unticked(self, alice):
        mine = hand_out(alice)
        client = _signed_in(alice)
        unticked = _unticked(client.get(reverse(CHANGE)).content.decode())
        response = _change(client, **unticked)
        assert mine.all_working() == ALL_WORK
        assert "signed out" not in client.get(response["Location"]).content.decode()
        assert _audit_row(alice) == {"changed": "changed", "signed_out": False, "sign_out_field": "sent"}

    def test_it_ends_every_app_and_token_when_the_post_leaves_the_field_out(self, alice):
        # A script or a client that omits the box: the safe choice, and the audit says nobody chose.
        mine = hand_out(alice)
        client = _signed_in(alice)
        response = _change(client)
        assert mine.all_working() == NONE_WORK
        assert mine.api_works(mine.pat) is False  # the old personal token gets 401 on /api/
        assert "Your apps and tokens are signed out" in client.get(response["Location"]).content.decode()
        assert _audit_row(alice) == {
            "changed": "changed",
            "signed_out": True,
            "sign_out_field": "absent",
            "access_tokens": 2,
            "refresh_tokens": 1,
            "grants": 1,
            "personal_access_tokens": 1,
        }

    def test_other_sessions_end_either_way(self, alice):
        for sign_out in ({"sign_out": "on"}, {"sign_out": "false"}, {}):
            alice.refresh_from_db()
            other, current = _signed_in(alice), _signed_in(alice)
            response = _change(current, **sign_out)
            assert current.get(response["Location"]).status_code == 200
            # Django keys a session to the password hash: a browser signed in before is signed out.
            assert other.get(reverse("account:account")).status_code == 302
            alice.set_password(PASSWORD)
            alice.save(update_fields=["password"])

    def test_charlies_apps_and_tokens_keep_working(self, alice, charlie):
        theirs = hand_out(charlie)
        _change(_signed_in(alice), sign_out="on")
        assert theirs.all_working() == ALL_WORK
        assert not AuditEvent.objects.filter(owner_id_snapshot=charlie.id, action="password_changed").exists()

    def test_a_wrong_current_password_ends_nothing(self, alice):
        mine = hand_out(alice)
        data = {"old_password": "wrong", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
        response = _signed_in(alice).post(reverse(CHANGE), {**data, "sign_out": "on"})
        assert response.status_code == 400
        assert " checked" in _checkbox(response.content.decode())
        assert mine.all_working() == ALL_WORK


class TestPasswordReset:
    def _reset_form(self, client: Client) -> str:
        client.post(reverse("account:password-reset"), {"email": "alice@example.com"})
        link = re.search(r"http://\S+", str(mail.outbox[-1].body))
        assert link is not None
        return client.get(link.group(0).split("testserver", 1)[1])["Location"]

    def test_it_offers_the_sign_out_ticked(self, client, alice):
        html = client.get(self._reset_form(client)).content.decode()
        assert " checked" in _checkbox(html)
        assert _unticked(html) == {"sign_out": "false"}

    @pytest.mark.parametrize(
        "box,signed_out",
        [("ticked", True), ("unticked", False), ("left out", True)],
    )
    def test_a_reset_ends_every_app_and_token_unless_unticked(self, client, alice, charlie, box, signed_out):
        mine, theirs = hand_out(alice), hand_out(charlie)
        form = self._reset_form(client)
        data = {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
        if box == "ticked":
            data["sign_out"] = "on"
        elif box == "unticked":
            data.update(_unticked(client.get(form).content.decode()))
        response = client.post(form, data)
        assert response["Location"] == reverse("account:password-reset-complete")
        alice.refresh_from_db()
        assert alice.check_password(NEW_PASSWORD)
        assert mine.all_working() == (NONE_WORK if signed_out else ALL_WORK)
        assert theirs.all_working() == ALL_WORK
        row = _audit_row(alice)
        assert row["signed_out"] is signed_out
        assert row["changed"] == "reset"
        assert row["sign_out_field"] == ("absent" if box == "left out" else "sent")
