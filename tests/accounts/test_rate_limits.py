"""Rate limits: sign-in, the token endpoint, sign-up, client registration, saves and uploads.

The sign-in rule: failed sign-ins count against the submitted email (trimmed, lower case) from
any address and against the client address whatever the email; once either budget is spent the
next attempt is refused with 429 before the password is looked at, so the right password is
refused too until the oldest failure leaves the window. A refused attempt is not counted.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from ipaddress import ip_network

import pytest
import time_machine
from django.test import Client, RequestFactory

from accounts.models import User
from accounts.throttles import client_address
from memories.models import Source
from memories.selectors.spaces import space_default
from tests.conftest import PASSWORD
from tests.helpers import error_of, oauth_app, pat_client

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)
ALICE_HOME = "203.0.113.7"
ELSEWHERE = "198.51.100.9"


@pytest.fixture
def limits(settings):
    def set_limits(**rates: str) -> None:
        settings.RATE_LIMITS = {**settings.RATE_LIMITS, **rates}

    return set_limits


def _sign_in(
    client: Client, email: str, password: str, address: str = ALICE_HOME, path: str = "/accounts/login/"
):
    return client.post(path, {"username": email, "password": password}, REMOTE_ADDR=address)


class TestSignIn:
    def test_it_refuses_the_sixth_failed_sign_in_of_an_account_even_from_another_address(self, alice):
        client = Client()
        with time_machine.travel(NOW, tick=False):
            failures = [_sign_in(client, "alice@example.com", "wrong").status_code for _ in range(5)]
            refused = _sign_in(client, " Alice@Example.com ", "wrong again", address=ELSEWHERE)
        assert failures == [200] * 5
        assert refused.status_code == 429
        assert 1 <= int(refused["Retry-After"]) <= 60
        assert "Too many failed sign-ins" in refused.content.decode()

    def test_it_refuses_the_right_password_past_the_limit_until_the_window_passes(self, alice):
        client = Client()
        with time_machine.travel(NOW, tick=False):
            for _ in range(5):
                _sign_in(client, "alice@example.com", "wrong")
            refused = _sign_in(client, "alice@example.com", PASSWORD)
            assert refused.status_code == 429
            assert "_auth_user_id" not in client.session
        with time_machine.travel(NOW + timedelta(seconds=30), tick=False):
            assert _sign_in(client, "alice@example.com", PASSWORD).status_code == 429
        with time_machine.travel(NOW + timedelta(seconds=61), tick=False):
            signed_in = _sign_in(client, "alice@example.com", PASSWORD)
        assert signed_in.status_code == 302
        assert client.session["_auth_user_id"] == str(alice.pk)

    def test_it_limits_failures_from_one_address_across_accounts(self, alice, bob, limits):
        limits(signin_address="3/m")
        client = Client()
        with time_machine.travel(NOW, tick=False):
            for email in ("x@example.com", "y@example.com", "bob@example.com"):
                assert _sign_in(client, email, "guess").status_code == 200
            assert _sign_in(client, "alice@example.com", PASSWORD).status_code == 429
            assert _sign_in(Client(), "alice@example.com", PASSWORD, address=ELSEWHERE).status_code == 302

    def test_it_does_not_count_successful_sign_ins(self, alice):
        with time_machine.travel(NOW, tick=False):
            for _ in range(8):
                assert _sign_in(Client(), "alice@example.com", PASSWORD).status_code == 302

    def test_it_shares_the_budget_with_the_admin_sign_in(self, alice):
        User.objects.filter(pk=alice.pk).update(is_staff=True, is_superuser=True)
        client = Client()
        with time_machine.travel(NOW, tick=False):
            for _ in range(3):
                assert _sign_in(client, "alice@example.com", "wrong").status_code == 200
            for _ in range(2):
                admin = _sign_in(client, "alice@example.com", "wrong", path="/admin/login/")
                assert admin.status_code == 200
            refused = _sign_in(client, "alice@example.com", PASSWORD, path="/admin/login/")
        assert refused.status_code == 429
        assert refused["Retry-After"]
        assert "Too many failed sign-ins" in refused.content.decode()


class TestTokenEndpoint:
    def _guess(self, client_id: str, address: str = ALICE_HOME):
        return Client().post(
            "/o/token/",
            {
                "grant_type": "authorization_code",
                "code": "guessed-code",
                "client_id": client_id,
                "redirect_uri": "http://127.0.0.1:9/callback",
                "code_verifier": "v" * 43,
            },
            REMOTE_ADDR=address,
        )

    def test_it_refuses_a_brute_force_of_one_client_with_429(self, alice):
        app = oauth_app("Guessing Agent", alice)
        with time_machine.travel(NOW, tick=False):
            guesses = [self._guess(app.client_id).status_code for _ in range(10)]
            refused = self._guess(app.client_id)
            other_address = self._guess(app.client_id, address=ELSEWHERE)
        assert guesses == [400] * 10
        assert refused.status_code == 429
        assert 1 <= int(refused["Retry-After"]) <= 60
        assert refused.json()["error"] == "rate_limited"
        assert refused["Access-Control-Allow-Origin"] == "*"
        assert other_address.status_code == 400
        with time_machine.travel(NOW + timedelta(seconds=61), tick=False):
            assert self._guess(app.client_id).status_code == 400


class TestSignUp:
    def test_it_refuses_sign_ups_past_the_budget_of_an_address(self, limits):
        limits(signup="3/h")
        with time_machine.travel(NOW, tick=False):
            made = [
                Client()
                .post(
                    "/accounts/signup/",
                    {"email": f"n{i}@example.com", "password": PASSWORD},
                    REMOTE_ADDR=ALICE_HOME,
                )
                .status_code
                for i in range(3)
            ]
            refused = Client().post(
                "/accounts/signup/", {"email": "n9@example.com", "password": PASSWORD}, REMOTE_ADDR=ALICE_HOME
            )
            elsewhere = Client().post(
                "/accounts/signup/", {"email": "n8@example.com", "password": PASSWORD}, REMOTE_ADDR=ELSEWHERE
            )
        assert made == [302] * 3
        assert refused.status_code == 429
        assert 3500 <= int(refused["Retry-After"]) <= 3600
        assert "Too many sign-ups" in refused.content.decode()
        assert not User.objects.filter(email="n9@example.com").exists()
        assert elsewhere.status_code == 302


class TestRegistration:
    def _register(self, body: dict) -> int:
        return (
            Client()
            .post("/o/register/", body, content_type="application/json", REMOTE_ADDR=ALICE_HOME)
            .status_code
        )

    def test_it_counts_only_successful_registrations(self, limits):
        limits(register="2/h")
        good = {
            "client_name": "Registered Agent",
            "redirect_uris": ["http://127.0.0.1:9999/callback"],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
        }
        with time_machine.travel(NOW, tick=False):
            bad = [self._register({"redirect_uris": "not a list"}) for _ in range(5)]
            made = [self._register(good) for _ in range(2)]
            refused = self._register(good)
        assert all(status == 400 for status in bad), bad
        assert made == [201, 201]
        assert refused == 429


class TestSavesAndUploads:
    def test_a_save_flood_gets_429_with_retry_after_in_the_error_shape(
        self, alice, bob, limits, no_worker_broker
    ):
        limits(save="3/m")
        client = pat_client(alice)
        with time_machine.travel(NOW, tick=False):
            saved = [
                client.post("/api/v1/memories", {"content": f"Fact {i}."}, format="json").status_code
                for i in range(2)
            ]
            saved.append(
                client.post("/api/v1/operations/remember", {"content": "Fact 2."}, format="json").status_code
            )
            sources = Source.objects.filter(owner=alice).count()
            refused = client.post("/api/v1/memories", {"content": "One too many."}, format="json")
            refused_op = client.post("/api/v1/operations/remember", {"content": "Again."}, format="json")
            bobs = pat_client(bob).post("/api/v1/memories", {"content": "Bob's own."}, format="json")
        assert all(status in (200, 201, 202) for status in saved), saved
        for response in (refused, refused_op):
            assert response.status_code == 429
            error = error_of(response)
            assert error["code"] == "rate_limited"
            assert error["retryable"] is True
            assert error["details"]["retry_after"] == int(response["Retry-After"])
            assert 1 <= error["details"]["retry_after"] <= 60
        assert Source.objects.filter(owner=alice).count() == sources
        assert bobs.status_code in (201, 202)

    def test_it_limits_uploads_per_user(self, alice, limits, no_worker_broker):
        limits(upload="1/m")
        client = pat_client(alice)

        def upload(name: str):
            from django.core.files.uploadedfile import SimpleUploadedFile

            document = SimpleUploadedFile(name, f"Notes of {name}.".encode(), content_type="text/plain")
            return client.post("/api/v1/documents", {"file": document}, format="multipart")

        with time_machine.travel(NOW, tick=False):
            assert upload("a.txt").status_code in (201, 202)
            refused = upload("b.txt")
        assert refused.status_code == 429
        assert error_of(refused)["code"] == "rate_limited"

    def test_the_dashboard_save_page_says_429(self, alice, limits, no_worker_broker):
        limits(save="1/m")
        client = Client()
        client.force_login(alice)
        space = str(space_default(owner=alice).id)
        with time_machine.travel(NOW, tick=False):
            first = client.post("/memories/new/", {"content": "I like tea.", "space": space})
            refused = client.post("/memories/new/", {"content": "I like coffee.", "space": space})
        assert first.status_code == 302
        assert refused.status_code == 429
        assert refused["Retry-After"]
        assert "Too many attempts" in refused.content.decode()


class TestClientAddress:
    def _address(self, remote: str, forwarded: str = "") -> str:
        request = RequestFactory().get("/", REMOTE_ADDR=remote)
        if forwarded:
            request.META["HTTP_X_FORWARDED_FOR"] = forwarded
        return client_address(request)

    def test_it_ignores_x_forwarded_for_by_default(self):
        assert self._address("203.0.113.7", "1.2.3.4") == "203.0.113.7"

    def test_it_reads_x_forwarded_for_from_a_trusted_proxy_from_the_right(self, settings):
        settings.TRUSTED_PROXIES = [ip_network("10.0.0.0/8")]
        # The client forged the left-most hop; the proxies' own hops are skipped.
        assert self._address("10.0.0.1", "6.6.6.6, 1.2.3.4, 10.0.0.2") == "1.2.3.4"
        assert self._address("203.0.113.7", "1.2.3.4") == "203.0.113.7"
        assert self._address("10.0.0.1", "not-an-address") == "10.0.0.1"

    def test_it_keys_ipv6_clients_by_their_64(self):
        assert (
            self._address("2001:db8:1:2:aaaa::1")
            == self._address("2001:db8:1:2:bbbb::9")
            == "2001:db8:1:2::/64"
        )
        assert self._address("::ffff:203.0.113.7") == "203.0.113.7"
