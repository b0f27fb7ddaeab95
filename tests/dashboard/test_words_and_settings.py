"""Plain words, the time zone setting, password forms that say their rules, Relations filters."""

from __future__ import annotations

import html as html_module
import re
from datetime import UTC, datetime

import pytest
from django.test import Client
from django.urls import reverse

from accounts.caller import ALL_SCOPES, Caller
from memories.models import Job, Source
from memories.services.relations import relation_record
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


def _text(response) -> str:
    return html_module.unescape(re.sub(r"<[^>]+>", " ", response.content.decode()))


class TestWords:
    def test_memory_kinds_and_jobs_are_named_for_people(self, alice, alice_client, make_memory):
        make_memory(alice, "Dinner with Ana.", kind="episode")
        make_memory(alice, "Dentist on Friday.", kind="foresight")
        page = alice_client.get(reverse("dashboard:memories")).content.decode()
        assert '<span class="badge episode">Event</span>' in page
        assert '<span class="badge foresight">Plan</span>' in page
        assert ">Episode<" not in page and ">Foresight<" not in page
        source = Source.objects.filter(owner=alice).first()
        job = Job.objects.create(owner=alice, space=source.space, source=source, kind="remember")
        detail = alice_client.get(reverse("dashboard:job", args=[job.id])).content.decode()
        assert '<h1 id="page-title">Saving a note</h1>' in detail and "Remember job" not in detail


class TestTimeZone:
    def test_it_saves_the_zone_and_shows_times_in_it(self, alice, alice_client, make_memory):
        memory = make_memory(alice, "Likes tea.", recorded_at=datetime(2026, 1, 15, 12, 0, tzinfo=UTC))
        before = alice_client.get(reverse("dashboard:memory", args=[memory.id])).content.decode()
        assert "15 Jan 2026, 12:00 UTC" in before
        response = alice_client.post(reverse("account:time-zone"), {"time_zone": "Asia/Tokyo"})
        assert response.status_code == 302
        alice.refresh_from_db()
        assert alice.time_zone == "Asia/Tokyo"
        after = alice_client.get(reverse("dashboard:memory", args=[memory.id])).content.decode()
        assert "15 Jan 2026, 21:00 JST" in after
        assert 'data-time-zone="Asia/Tokyo"' in after

    def test_the_api_stays_in_utc(self, alice, alice_client, make_memory):
        alice.time_zone = "Asia/Tokyo"
        alice.save()
        memory = make_memory(alice, "Likes tea.", recorded_at=datetime(2026, 1, 15, 12, 0, tzinfo=UTC))
        body = alice_client.get(f"/api/v1/memories/{memory.id}").json()
        assert body["clocks"]["recorded_at"] == "2026-01-15T12:00:00+00:00"

    def test_it_refuses_an_unknown_zone(self, alice, alice_client):
        response = alice_client.post(reverse("account:time-zone"), {"time_zone": "Mars/Olympus"})
        assert response.status_code == 400
        alice.refresh_from_db()
        assert alice.time_zone == ""

    def test_it_needs_the_csrf_token(self, alice):
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        assert client.post(reverse("account:time-zone"), {"time_zone": "Asia/Tokyo"}).status_code == 403
        alice.refresh_from_db()
        assert alice.time_zone == ""


class TestPasswordWords:
    def test_the_change_form_has_plain_labels_and_the_rule_error_under_the_new_password(self, alice_client):
        url = reverse("account:password-change")
        page = _text(alice_client.get(url))
        assert "Current password" in page and "New password, again" in page
        assert "At least 8 characters" in page and "Old password" not in page
        response = alice_client.post(
            url, {"old_password": PASSWORD, "new_password1": "12345678", "new_password2": "12345678"}
        )
        assert response.status_code == 400
        html = response.content.decode()
        first = re.search(r'id="id_new_password1_error">(.*?)</ul>', html, re.S)
        assert first is not None and "entirely numeric" in first.group(1)
        assert 'id="id_new_password2_error"' not in html

    def test_sign_up_states_the_password_rules(self, client):
        assert "At least 8 characters" in _text(client.get(reverse("account:signup")))


def _relate(user, source: str, target: str, relation_type: str = "lives_in"):
    caller = Caller(user=user, scopes=ALL_SCOPES, via="session")
    return relation_record(
        caller=caller, source_name=source, target_name=target, relation_type=relation_type
    ).relation


class TestRelationFilters:
    def test_it_filters_by_name_type_and_state(self, alice, alice_client):
        _relate(alice, "Mara Lind", "Paris")
        _relate(alice, "Mara Lind", "Berlin")
        _relate(alice, "Jon Berg", "Acme", "works_at")
        url = reverse("dashboard:relations")
        current = _text(alice_client.get(url, {"state": "current"}))
        assert "Berlin" in current and "Paris" not in current and "Acme" in current
        by_type = _text(alice_client.get(url, {"type": "works_at"}))
        assert "Acme" in by_type and "Berlin" not in by_type
        by_name = _text(alice_client.get(url, {"name": "mara"}))
        assert "Berlin" in by_name and "Paris" in by_name and "Acme" not in by_name
        assert "No relation matches" in _text(alice_client.get(url, {"name": "nobody"}))

    def test_an_outsider_sees_none_of_them_and_cannot_filter_by_her_space(self, alice, charlie_client):
        relation = _relate(alice, "Mara Lind", "Paris")
        page = _text(charlie_client.get(reverse("dashboard:relations")))
        assert "Mara Lind" not in page
        response = charlie_client.get(reverse("dashboard:relations"), {"space": str(relation.space_id)})
        assert response.status_code == 400 and "Mara Lind" not in _text(response)
