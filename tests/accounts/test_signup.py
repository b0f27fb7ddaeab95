from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.caller import Actor
from accounts.models import User
from memories.models import Space
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


class TestSignUp:
    def test_it_creates_the_user_with_a_default_space_and_logs_them_in(self, client):
        response = client.post(
            reverse("account:signup"), {"email": " New@Example.com ", "password": PASSWORD}
        )
        assert response.status_code == 302
        user = User.objects.get(email="new@example.com")
        assert user.check_password(PASSWORD)
        assert list(Space.objects.filter(owner=user).values_list("name", "is_default")) == [
            ("Personal", True)
        ]
        home = client.get(reverse("home"))
        assert home.status_code == 200
        assert b"new@example.com" in home.content

    def test_it_rejects_an_email_that_is_taken_in_any_case(self, client, alice):
        response = client.post(
            reverse("account:signup"), {"email": "ALICE@example.com", "password": PASSWORD}
        )
        assert response.status_code == 400
        assert b"already exists" in response.content
        assert User.objects.filter(email__iexact="alice@example.com").count() == 1

    def test_it_rejects_a_weak_password_and_stores_nothing(self, client):
        response = client.post(reverse("account:signup"), {"email": "weak@example.com", "password": "123"})
        assert response.status_code == 400
        assert b"too short" in response.content
        assert not User.objects.filter(email="weak@example.com").exists()
        assert not Space.objects.exists()

    def test_it_rejects_a_malformed_email(self, client):
        response = client.post(reverse("account:signup"), {"email": "not-an-email", "password": PASSWORD})
        assert response.status_code == 400
        assert b"valid email" in response.content
        assert not User.objects.exists()


class TestLogInOut:
    def test_it_logs_in_by_email_case_insensitively(self, client, alice):
        response = client.post(
            reverse("accounts:login"), {"username": "Alice@Example.com", "password": PASSWORD}
        )
        assert response.status_code == 302
        assert client.get(reverse("home")).status_code == 200

    def test_it_refuses_a_wrong_password(self, client, alice):
        response = client.post(reverse("accounts:login"), {"username": alice.email, "password": "wrong"})
        assert response.status_code == 200
        assert b"Please enter a correct" in response.content
        assert client.get(reverse("home")).status_code == 302

    def test_it_logs_out_with_post_only(self, client, alice):
        client.force_login(alice)
        assert client.get(reverse("accounts:logout")).status_code == 405
        assert client.post(reverse("accounts:logout")).status_code == 302
        assert client.get(reverse("home"))["Location"].startswith(reverse("accounts:login"))

    def test_it_sends_anonymous_visitors_to_log_in(self, client):
        response = client.get(reverse("home"))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("accounts:login"))


class TestHomeTenancy:
    def test_it_shows_only_the_users_own_spaces(self, client, alice, charlie):
        from memories.services.spaces import space_create

        space_create(actor=Actor.owner_acting(alice), name="Alice secret project")
        client.force_login(charlie)
        response = client.get(reverse("home"))
        assert b"Alice secret project" not in response.content
        client.force_login(alice)
        assert b"Alice secret project" in client.get(reverse("home")).content
