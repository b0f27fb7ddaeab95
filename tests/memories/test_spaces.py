"""Spaces over REST: list, create, rename, switch the default, delete (move or delete)."""

from __future__ import annotations

import uuid

import pytest
from rest_framework.test import APIClient

from accounts.caller import Actor
from accounts.services import pat_create
from memories.errors import AppError
from memories.models import AuditEvent, Entity, Job, Memory, Relation, Source, Space
from memories.services.spaces import space_delete, space_set_default
from tests.helpers import link
from tests.memories.test_api_read import (
    assert_error,
    default_space,
    logged_in,
    make_job,
    make_memory,
    make_source,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(alice) -> APIClient:
    return logged_in(alice)


@pytest.fixture
def work(alice) -> Space:
    return Space.objects.create(owner=alice, name="Work")


def names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["name"] for row in response.json()["results"]]


class TestSpaceList:
    def test_it_lists_spaces_default_first_with_memory_counts(self, api, alice, work):
        make_memory(alice, "one", space=work)
        make_memory(alice, "two", space=work, status="suppressed")
        Space.objects.create(owner=alice, name="Archive")

        response = api.get("/api/v1/spaces")

        assert names(response) == ["Personal", "Archive", "Work"]
        personal, _archive, listed_work = response.json()["results"]
        assert personal["is_default"] is True and personal["memory_count"] == 0
        assert listed_work == {
            "id": str(work.id),
            "name": "Work",
            "is_default": False,
            "created_at": work.created_at.isoformat(),
            "memory_count": 2,
        }

    def test_it_shows_one_space(self, api, alice, work):
        make_memory(alice, "one", space=work)
        body = api.get(f"/api/v1/spaces/{work.id}").json()
        assert body["name"] == "Work" and body["memory_count"] == 1


class TestSpaceCreate:
    def test_it_creates_a_space_and_audits_it(self, api, alice):
        response = api.post("/api/v1/spaces", {"name": "  Side project "}, format="json")
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["name"] == "Side project" and body["is_default"] is False and body["memory_count"] == 0
        space = Space.objects.get(owner=alice, id=body["id"])
        assert AuditEvent.objects.filter(action="space_created", target_id=space.id).exists()

    def test_it_refuses_a_duplicate_name_with_409(self, api, alice, work):
        assert_error(api.post("/api/v1/spaces", {"name": "Work"}, format="json"), 409, "space_name_taken")
        assert Space.objects.filter(owner=alice).count() == 2

    def test_it_refuses_a_missing_or_empty_name(self, api, alice):
        assert_error(api.post("/api/v1/spaces", {}, format="json"), 400, "invalid_parameter")
        assert_error(api.post("/api/v1/spaces", {"name": 7}, format="json"), 400, "invalid_parameter")
        assert_error(api.post("/api/v1/spaces", {"name": "  "}, format="json"), 400, "invalid_space_name")

    def test_it_refuses_an_unknown_field(self, api, alice):
        response = api.post("/api/v1/spaces", {"name": "X", "is_default": True}, format="json")
        assert assert_error(response, 400, "unknown_parameter")["details"]["parameter"] == "is_default"
        assert not Space.objects.filter(name="X").exists()

    def test_it_needs_the_write_scope(self, client, alice):
        _, raw = pat_create(user=alice, name="reader", scopes=["memory:read"])
        response = client.post(
            "/api/v1/spaces",
            {"name": "X"},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )
        assert_error(response, 403, "insufficient_scope")
        assert not Space.objects.filter(name="X").exists()

    def test_it_accepts_a_token_with_the_write_scope(self, client, alice):
        _, raw = pat_create(user=alice, name="writer", scopes=["memory:write"])
        response = client.post(
            "/api/v1/spaces",
            {"name": "X"},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )
        assert response.status_code == 201

    def test_it_enforces_csrf_for_a_session(self, alice):
        browser = APIClient(enforce_csrf_checks=True)
        browser.force_login(alice)
        assert_error(browser.post("/api/v1/spaces", {"name": "X"}, format="json"), 403, "forbidden")
        assert not Space.objects.filter(name="X").exists()


class TestSpaceUpdate:
    def test_it_renames_and_audits(self, api, alice, work):
        response = api.patch(f"/api/v1/spaces/{work.id}", {"name": "Job"}, format="json")
        assert response.status_code == 200 and response.json()["name"] == "Job"
        work.refresh_from_db()
        assert work.name == "Job"
        event = AuditEvent.objects.get(action="updated", target_id=work.id)
        assert event.detail == {"changed": "name"} and event.actor_user == alice

    def test_it_refuses_a_taken_name(self, api, alice, work):
        response = api.patch(f"/api/v1/spaces/{work.id}", {"name": "Personal"}, format="json")
        assert_error(response, 409, "space_name_taken")
        work.refresh_from_db()
        assert work.name == "Work"

    def test_it_switches_the_default_leaving_exactly_one(self, api, alice, work):
        response = api.patch(f"/api/v1/spaces/{work.id}", {"is_default": True}, format="json")
        assert response.status_code == 200 and response.json()["is_default"] is True
        assert list(Space.objects.filter(owner=alice, is_default=True)) == [work]
        assert AuditEvent.objects.filter(target_id=work.id, detail={"changed": "is_default"}).exists()

    def test_it_is_idempotent_for_the_current_default(self, api, alice):
        personal = default_space(alice)
        assert (
            api.patch(f"/api/v1/spaces/{personal.id}", {"is_default": True}, format="json").status_code == 200
        )
        assert not AuditEvent.objects.filter(target_id=personal.id, action="updated").exists()

    def test_it_renames_and_switches_together_or_not_at_all(self, api, alice, work):
        Space.objects.create(owner=alice, name="Taken")
        response = api.patch(
            f"/api/v1/spaces/{work.id}", {"name": "Taken", "is_default": True}, format="json"
        )
        assert_error(response, 409, "space_name_taken")
        work.refresh_from_db()
        assert work.name == "Work" and work.is_default is False
        assert default_space(alice).name == "Personal"

    def test_it_refuses_unsetting_the_default(self, api, alice):
        personal = default_space(alice)
        response = api.patch(f"/api/v1/spaces/{personal.id}", {"is_default": False}, format="json")
        assert assert_error(response, 400, "invalid_parameter")["details"]["parameter"] == "is_default"
        assert default_space(alice) == personal

    def test_it_refuses_an_empty_or_unknown_body(self, api, alice, work):
        assert_error(api.patch(f"/api/v1/spaces/{work.id}", {}, format="json"), 400, "invalid_arguments")
        assert_error(
            api.patch(f"/api/v1/spaces/{work.id}", {"title": "x"}, format="json"), 400, "unknown_parameter"
        )


class TestSpaceDelete:
    def test_it_moves_everything_into_the_default_space(self, api, alice, work):
        personal = default_space(alice)
        source = make_source(alice, "work notes", space=work)
        memory = make_memory(alice, "Ships on Friday", space=work, source=source)
        job = make_job(alice, space=work, source=source)
        ada = Entity.objects.create(owner=alice, space=work, name="Ada", normalized_name="ada", type="Person")
        acme = Entity.objects.create(
            owner=alice, space=work, name="Acme", normalized_name="acme", type="Organization"
        )
        relation = Relation.objects.create(owner=alice, space=work, subject=ada, object=acme, type="works_at")

        response = api.delete(f"/api/v1/spaces/{work.id}?memories=move")

        assert response.status_code == 200, response.content
        assert response.json() == {
            "deleted_space_id": str(work.id),
            "memories": "moved",
            "count": 1,
            "into_space_id": str(personal.id),
        }
        assert not Space.objects.filter(id=work.id).exists()
        for model, row_id in (
            (Memory, memory.id),
            (Source, source.id),
            (Job, job.id),
            (Entity, ada.id),
            (Entity, acme.id),
            (Relation, relation.id),
        ):
            assert model.objects.get(id=row_id).space_id == personal.id
        event = AuditEvent.objects.get(action="space_deleted", target_id=work.id)
        assert event.detail["memories"] == "moved" and event.detail["moved"]["memories"] == 1

    def test_it_merges_entities_that_collide_in_the_default_space(self, api, alice, work):
        personal = default_space(alice)
        kept = Entity.objects.create(
            owner=alice,
            space=personal,
            name="Ada Lovelace",
            normalized_name="ada",
            type="Person",
            aliases=["Countess"],
            attributes={"role": "mathematician"},
        )
        dup = Entity.objects.create(
            owner=alice,
            space=work,
            name="Ada",
            normalized_name="ada",
            # Another type is no other thing: one entity per name, the type refined by the votes.
            type="Product",
            aliases=["A. L."],
            attributes={"role": "ignored", "born": "1815"},
        )
        acme = Entity.objects.create(
            owner=alice, space=work, name="Acme", normalized_name="acme", type="Organization"
        )
        in_work = make_memory(alice, "Ada works at Acme", space=work)
        link(in_work, dup, acme)
        both = make_memory(alice, "Ada and Ada", space=work)
        link(both, dup, kept)
        relation = Relation.objects.create(owner=alice, space=work, subject=dup, object=acme, type="works_at")

        assert api.delete(f"/api/v1/spaces/{work.id}?memories=move").status_code == 200

        assert not Entity.objects.filter(id=dup.id).exists()
        kept.refresh_from_db()
        assert kept.aliases == ["Countess", "A. L.", "Ada"]
        assert kept.type == "Person"  # a tie of votes keeps the type the kept entity has
        assert kept.attributes == {
            "role": "mathematician",
            "born": "1815",
            "type_votes": {"Person": 1, "Product": 1},
        }
        assert set(in_work.entities.all()) == {kept, acme}
        assert list(both.entities.all()) == [kept]
        relation.refresh_from_db()
        assert relation.subject_id == kept.id and relation.space_id == personal.id
        assert Entity.objects.get(id=acme.id).space_id == personal.id

    def test_it_hard_deletes_the_memories_with_a_receipt(self, api, alice, work):
        source = make_source(alice, "secret plans", space=work)
        memory = make_memory(alice, "Secret plan", space=work, source=source)
        make_memory(alice, "Another", space=work)
        make_job(alice, space=work, source=source)
        entity = Entity.objects.create(owner=alice, space=work, name="X", normalized_name="x", type="Concept")
        link(memory, entity)
        keep = make_memory(alice, "Kept in Personal")

        response = api.delete(f"/api/v1/spaces/{work.id}?memories=delete")

        assert response.status_code == 200, response.content
        body = response.json()
        assert (
            body["deleted_space_id"] == str(work.id) and body["memories"] == "deleted" and body["count"] == 2
        )
        assert body["receipt"]["purged"]["memories"] == 2
        assert not Space.objects.filter(id=work.id).exists()
        assert not Memory.objects.filter(space_id=work.id).exists()
        assert not Source.objects.filter(content__contains="secret").exists()
        assert not Entity.objects.filter(id=entity.id).exists()
        assert not Job.objects.filter(space_id=work.id).exists()
        assert Memory.objects.filter(id=keep.id).exists()
        assert AuditEvent.objects.filter(
            action="space_deleted", target_id=work.id, detail__memories="deleted"
        ).exists()
        assert "Secret" not in str(list(AuditEvent.objects.values_list("detail", flat=True)))

    def test_it_refuses_to_delete_the_default_space(self, api, alice):
        personal = default_space(alice)
        make_memory(alice, "stays")
        response = api.delete(f"/api/v1/spaces/{personal.id}?memories=delete")
        assert_error(response, 409, "cannot_delete_default_space")
        assert Memory.objects.filter(space=personal).count() == 1

    def test_it_asks_what_to_do_with_the_memories(self, api, alice, work):
        make_memory(alice, "stays", space=work)
        for url in (f"/api/v1/spaces/{work.id}", f"/api/v1/spaces/{work.id}?memories=keep"):
            error = assert_error(api.delete(url), 400, "invalid_parameter")
            assert error["details"] == {"parameter": "memories", "allowed": ["move", "delete"]}
            assert "memories=move" in error["message"] and "memories=delete" in error["message"]
        assert Space.objects.filter(id=work.id).exists() and Memory.objects.filter(space=work).count() == 1

    def test_it_refuses_an_unknown_parameter(self, api, alice, work):
        assert_error(api.delete(f"/api/v1/spaces/{work.id}?memories=move&force=1"), 400, "unknown_parameter")
        assert Space.objects.filter(id=work.id).exists()

    def test_it_answers_space_not_found_for_an_unknown_id(self, api, alice):
        assert_error(api.delete(f"/api/v1/spaces/{uuid.uuid4()}?memories=move"), 404, "space_not_found")
        assert_error(api.get(f"/api/v1/spaces/{uuid.uuid4()}"), 404, "space_not_found")


class TestSpaceServices:
    def test_it_switches_the_default_directly(self, alice, work):
        space_set_default(actor=Actor.owner_acting(alice), space_id=work.id)
        assert list(Space.objects.filter(owner=alice, is_default=True)) == [work]

    def test_it_refuses_another_owners_space(self, alice, charlie, work):
        with pytest.raises(AppError) as exc:
            space_delete(actor=Actor.owner_acting(charlie), space_id=work.id, memories="delete")
        assert exc.value.code == "space_not_found"
        assert Space.objects.filter(id=work.id).exists()


class TestOutsider:
    @pytest.fixture
    def alices_work(self, alice, work) -> Space:
        make_memory(alice, "Alice's work secret", space=work)
        return work

    def test_it_shows_charlie_none_of_alices_spaces(self, alice, charlie, alices_work):
        assert names(logged_in(charlie).get("/api/v1/spaces")) == ["Personal"]
        listed = logged_in(charlie).get("/api/v1/spaces").json()["results"]
        assert str(alices_work.id) not in [s["id"] for s in listed]

    def test_it_answers_space_not_found_for_alices_space(self, alice, charlie, alices_work):
        assert_error(logged_in(charlie).get(f"/api/v1/spaces/{alices_work.id}"), 404, "space_not_found")

    def test_it_lets_charlie_change_nothing_of_alices(self, alice, charlie, alices_work):
        charlie_api = logged_in(charlie)
        personal = default_space(alice)
        for response in (
            charlie_api.patch(f"/api/v1/spaces/{alices_work.id}", {"name": "Mine"}, format="json"),
            charlie_api.patch(f"/api/v1/spaces/{alices_work.id}", {"is_default": True}, format="json"),
            charlie_api.delete(f"/api/v1/spaces/{alices_work.id}?memories=delete"),
            charlie_api.delete(f"/api/v1/spaces/{alices_work.id}?memories=move"),
            charlie_api.delete(f"/api/v1/spaces/{personal.id}?memories=move"),
        ):
            assert_error(response, 404, "space_not_found")
        alices_work.refresh_from_db()
        assert alices_work.name == "Work" and not alices_work.is_default
        assert Memory.objects.filter(space=alices_work).count() == 1
        assert default_space(alice) == personal
        assert (
            not AuditEvent.objects.filter(owner_id_snapshot=alice.id)
            .exclude(action__in=["space_created", "account_created"])
            .exists()
        )

    def test_it_creates_charlies_space_in_charlies_account_only(self, alice, charlie, alices_work):
        response = logged_in(charlie).post("/api/v1/spaces", {"name": "Work"}, format="json")
        assert response.status_code == 201
        assert Space.objects.get(id=response.json()["id"]).owner == charlie
        assert Space.objects.filter(owner=alice).count() == 2
