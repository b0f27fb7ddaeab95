"""Error pages inside the site frame, and the admin for a person who is no operator."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from django.urls import reverse

from memories.services.purge import memories_purge

pytestmark = pytest.mark.django_db


class TestNotFound:
    def test_it_shows_an_unknown_path_inside_the_site_frame(self, alice, alice_client):
        response = alice_client.get("/no-such-page/")
        html = response.content.decode()
        assert response.status_code == 404
        assert 'class="site-header"' in html and "dashboard.css" in html
        assert '<h1 id="page-title">Not found</h1>' in html
        assert alice.email in html  # the signed-in header, not a bare page

    def test_it_shows_another_users_memory_as_the_same_page(self, alice, charlie_client, make_memory):
        memory = make_memory(alice, "Ana lives in Lisbon.")
        response = charlie_client.get(reverse("dashboard:memory", args=[memory.id]))
        assert response.status_code == 404
        html = response.content.decode()
        assert '<h1 id="page-title">Not found</h1>' in html and "Lisbon" not in html

    def test_it_shows_a_deleted_memory_as_not_found(self, alice, alice_client, make_memory):
        memory = make_memory(alice, "Ana lives in Lisbon.")
        memories_purge(owner=alice, memories=[memory])
        response = alice_client.get(reverse("dashboard:memory", args=[memory.id]))
        assert response.status_code == 404 and "may have been deleted" in response.content.decode()

    def test_the_api_keeps_its_json_error(self, alice_client):
        response = alice_client.get(f"/api/v1/nothing/{uuid.uuid4()}")
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


class TestServerError:
    def test_the_500_page_renders_in_the_frame_without_a_request(self):
        from django.template import loader

        html = loader.render_to_string("500.html")
        assert 'class="site-header"' in html and "Something went wrong" in html


class TestAdmin:
    def test_a_signed_in_person_who_is_no_operator_is_told_so_not_shown_a_login(self, alice_client, alice):
        response = alice_client.get("/admin/", follow=True)
        html = response.content.decode()
        assert response.status_code == 403
        assert "This is the operators' area" in html and alice.email in html
        assert 'name="password"' not in html

    def test_a_visitor_still_gets_the_operator_login(self):
        response = Client().get("/admin/login/")
        assert response.status_code == 200 and 'name="password"' in response.content.decode()

    def test_an_operator_reaches_the_admin(self, alice):
        alice.is_staff = alice.is_superuser = True
        alice.save()
        client = Client()
        client.force_login(alice)
        assert client.get("/admin/").status_code == 200
