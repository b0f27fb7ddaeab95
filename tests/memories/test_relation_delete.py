"""Deleting a relation for good: REST `DELETE /api/v1/relations/{id}` and the dashboard's Relations page.

A relation recorded with the graph profile's `relate` is a claim (a Source) plus the fact it
supports. A hard delete removes the relation, the claims that asserted it (their text is the
deleted statement) and entities nothing else mentions, leaves an audit row without content and
returns a receipt; the relation it had replaced is current again (the statement that replaced it
is gone). An outsider gets a 404 and changes nothing.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from accounts.caller import ALL_SCOPES, Caller
from accounts.models import User
from memories.models import AuditEvent, Entity, Evidence, Relation, Source
from memories.services.relations import relation_record
from tests.helpers import READ, error_of, pat_client

pytestmark = pytest.mark.django_db


def relate(user: User, source: str, target: str, relation_type: str = "lives_in") -> Relation:
    caller = Caller(user=user, scopes=ALL_SCOPES, via="session")
    return relation_record(
        caller=caller, source_name=source, target_name=target, relation_type=relation_type
    ).relation


def text_anywhere(needle: str) -> list[str]:
    """Every text column of the memory tables that still holds `needle`."""
    hits = []
    with connection.cursor() as cursor:
        for table, column in (
            ("memories_source", "content"),
            ("memories_source", "source_text"),
            ("memories_entity", "name"),
            ("memories_entity", "normalized_name"),
            ("memories_auditevent", "detail::text"),
        ):
            cursor.execute(f"SELECT count(*) FROM {table} WHERE {column} ILIKE %s", [f"%{needle}%"])  # noqa: S608
            if cursor.fetchone()[0]:
                hits.append(f"{table}.{column}")
    return hits


class TestRestDelete:
    def test_it_removes_the_relation_its_claims_and_orphaned_entities_with_a_receipt(self, alice):
        paris = relate(alice, "Mara Lind", "Paris")
        relate(alice, "Mara Lind", "Oslo Fjordhus", "works_at")
        berlin = relate(alice, "Mara Lind", "Berlin")
        assert Relation.objects.get(id=paris.id).superseded_by_id == berlin.id
        before_sources = Source.objects.filter(owner=alice).count()

        response = pat_client(alice).delete(f"/api/v1/relations/{berlin.id}")

        assert response.status_code == 200, response.json()
        receipt = response.json()["receipt"]
        assert receipt["relation_id"] == str(berlin.id)
        assert receipt["purged"] == {
            "memories": 0,
            "relations": 1,
            "evidence": 1,
            "sources_deleted": 1,
            "sources_redacted": 0,
            "entities_deleted": 1,
            "images_deleted": 0,
        }
        assert not Relation.objects.filter(id=berlin.id).exists()
        # Its claim is gone, with the contradiction it recorded on Paris; the words are nowhere.
        assert Source.objects.filter(owner=alice).count() == before_sources - 1
        assert text_anywhere("Berlin") == []
        assert not Evidence.objects.filter(relation_id=paris.id, stance="contradicts").exists()
        # Mara and the places still linked stay.
        assert set(Entity.objects.filter(owner=alice).values_list("name", flat=True)) == {
            "Mara Lind",
            "Paris",
            "Oslo Fjordhus",
        }
        # Paris is current again: what replaced it is gone, and something must hold.
        paris.refresh_from_db()
        assert (paris.superseded_at, paris.superseded_by_id, paris.valid_until) == (None, None, None)
        event = AuditEvent.objects.get(id=receipt["audit_event_id"])
        assert (event.action, event.target_type, str(event.target_id)) == (
            "hard_deleted",
            "relation",
            str(berlin.id),
        )

    def test_deleting_a_replaced_relation_leaves_the_current_one_current(self, alice):
        paris = relate(alice, "Mara Lind", "Paris")
        berlin = relate(alice, "Mara Lind", "Berlin")
        oslo = relate(alice, "Mara Lind", "Oslo")
        berlin.refresh_from_db()
        assert berlin.superseded_by_id == oslo.id
        assert pat_client(alice).delete(f"/api/v1/relations/{berlin.id}").status_code == 200
        oslo.refresh_from_db()
        paris.refresh_from_db()
        assert oslo.superseded_at is None
        assert paris.superseded_at is not None  # still history: Oslo holds

    def test_an_outsider_gets_404_and_nothing_changes(self, alice, charlie):
        relation = relate(alice, "Mara Lind", "Paris")
        response = pat_client(charlie).delete(f"/api/v1/relations/{relation.id}")
        assert response.status_code == 404
        assert error_of(response)["code"] == "relation_not_found"
        assert Relation.objects.filter(id=relation.id).exists()
        assert Source.objects.filter(owner=alice, origin="relate").count() == 1

    def test_it_needs_the_write_scope_and_a_known_reason(self, alice):
        relation = relate(alice, "Mara Lind", "Paris")
        response = pat_client(alice, scopes=(READ,)).delete(f"/api/v1/relations/{relation.id}")
        assert response.status_code == 403 and error_of(response)["code"] == "insufficient_scope"
        response = pat_client(alice).delete(f"/api/v1/relations/{relation.id}?reason_code=because")
        assert response.status_code == 400 and error_of(response)["code"] == "invalid_value"
        assert Relation.objects.filter(id=relation.id).exists()


class TestDashboard:
    @pytest.fixture
    def alice_client(self, alice: User) -> Client:
        client = Client()
        client.force_login(alice)
        return client

    def test_it_lists_relations_and_deletes_one_after_the_typed_confirmation(self, alice, alice_client):
        relation = relate(alice, "Mara Lind", "Paris")
        listing = alice_client.get(reverse("dashboard:relations")).content.decode()
        assert "Mara Lind" in listing and "Paris" in listing
        url = reverse("dashboard:relation-delete", args=[relation.id])
        assert "delete this relation for good" in alice_client.get(url).content.decode()
        refused = alice_client.post(url, {"confirm": "yes"})
        assert refused.status_code == 400 and Relation.objects.filter(id=relation.id).exists()
        done = alice_client.post(url, {"confirm": "delete"})
        assert done.status_code == 302 and not Relation.objects.filter(id=relation.id).exists()
        receipt = alice_client.get(done["Location"]).content.decode()
        assert "The relation was permanently deleted." in receipt and str(relation.id) in receipt
        assert "Paris" not in alice_client.get(reverse("dashboard:relations")).content.decode()

    def test_an_outsider_sees_none_of_them_and_cannot_delete_one(self, alice, charlie):
        relation = relate(alice, "Mara Lind", "Paris")
        client = Client()
        client.force_login(charlie)
        assert "Mara" not in client.get(reverse("dashboard:relations")).content.decode()
        url = reverse("dashboard:relation-delete", args=[relation.id])
        assert client.get(url).status_code == 404
        assert client.post(url, {"confirm": "delete"}).status_code == 404
        assert Relation.objects.filter(id=relation.id).exists()

    def test_deleting_needs_the_csrf_token(self, alice):
        relation = relate(alice, "Mara Lind", "Paris")
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        url = reverse("dashboard:relation-delete", args=[relation.id])
        assert client.post(url, {"confirm": "delete"}).status_code == 403
        assert Relation.objects.filter(id=relation.id).exists()
