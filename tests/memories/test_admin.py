from __future__ import annotations

import pytest
from django.contrib.admin.models import CHANGE, DELETION, LogEntry
from django.urls import reverse

from accounts.caller import Actor
from accounts.models import User
from memories.models import AuditEvent, Entity, Memory, Source
from memories.services.memories import memory_hard_delete
from memories.services.spaces import space_create_default
from tests.helpers import link, tables_containing

pytestmark = pytest.mark.django_db

MODELS = ["space", "source", "memory", "evidence", "entity", "relation", "job", "auditevent"]


@pytest.fixture
def operator(db) -> User:
    return User.objects.create_superuser(email="ops@example.com", password="x" * 20)


@pytest.fixture
def memory(alice) -> Memory:
    space = space_create_default(owner=alice)
    source = Source.objects.create(
        owner=alice, space=space, origin="remember", content="c", content_hash="3" * 64
    )
    return Memory.objects.create(
        owner=alice,
        space=space,
        source=source,
        kind="fact",
        content="Alice drinks oolong",
        embedding=[0.125] * 384,
    )


class TestAdmin:
    @pytest.mark.parametrize("model", MODELS)
    def test_it_lists_every_model(self, client, operator, memory, model):
        client.force_login(operator)
        response = client.get(reverse(f"admin:memories_{model}_changelist"))
        assert response.status_code == 200

    def test_it_never_renders_the_embedding(self, client, operator, memory):
        client.force_login(operator)
        change = client.get(reverse("admin:memories_memory_change", args=[memory.id]))
        assert change.status_code == 200
        assert b"Alice drinks oolong" in change.content
        assert b"0.125" not in change.content
        assert b'name="embedding"' not in change.content

    def test_it_suppresses_and_restores_through_the_services(self, client, operator, memory):
        client.force_login(operator)
        url = reverse("admin:memories_memory_changelist")
        client.post(url, {"action": "suppress_selected", "_selected_action": [str(memory.id)]})
        memory.refresh_from_db()
        assert memory.status == "suppressed" and memory.suppressed_reason == "operator"
        client.post(url, {"action": "restore_selected", "_selected_action": [str(memory.id)]})
        memory.refresh_from_db()
        assert memory.status == "active"
        actions = list(
            AuditEvent.objects.filter(target_id=memory.id)
            .order_by("created_at")
            .values_list("action", "actor_user")
        )
        assert actions == [("suppressed", operator.id), ("restored", operator.id)]

    def test_it_keeps_sources_and_audit_read_only(self, client, operator, memory):
        client.force_login(operator)
        url = reverse("admin:memories_source_change", args=[memory.source_id])
        client.post(url, {"content": "rewritten"})
        memory.source.refresh_from_db()
        assert memory.source.content == "c"
        assert client.get(reverse("admin:memories_auditevent_add")).status_code == 403

    def test_it_refuses_non_staff(self, client, alice):
        client.force_login(alice)
        response = client.get(reverse("admin:memories_memory_changelist"))
        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]

    def test_it_lets_operators_find_users_by_email(self, client, operator, alice):
        client.force_login(operator)
        response = client.get(reverse("admin:accounts_user_changelist"), {"q": "alice@"})
        assert b"alice@example.com" in response.content

    def test_it_lets_operators_add_a_user_by_email(self, client, operator):
        client.force_login(operator)
        url = reverse("admin:accounts_user_add")
        assert client.get(url).status_code == 200
        response = client.post(
            url,
            {
                "email": "New@Example.com",
                "password1": "a-long-pass-phrase-1",
                "password2": "a-long-pass-phrase-1",
            },
        )
        assert response.status_code == 302
        assert User.objects.filter(email="new@example.com").exists()
        assert User.objects.get(email="new@example.com").spaces.filter(is_default=True).exists()


SECRET = "vault combination 31-17-42"


class TestAdminDelete:
    """Deleting from Django admin is the same purge as every other hard delete (issue 15)."""

    def _memory(self, owner: User) -> Memory:
        space = space_create_default(owner=owner)
        source = Source.objects.create(
            owner=owner, space=space, origin="remember", content=f"My {SECRET}.", content_hash="4" * 64
        )
        return Memory.objects.create(
            owner=owner,
            space=space,
            source=source,
            kind="fact",
            content=f"My {SECRET}.",
            span_start=0,
            span_end=len(f"My {SECRET}."),
        )

    def test_the_delete_page_purges_like_a_hard_delete(self, client, operator, alice):
        memory = self._memory(alice)
        client.force_login(operator)
        url = reverse("admin:memories_memory_delete", args=[memory.id])
        response = client.post(url, {"post": "yes"})
        assert response.status_code == 302
        assert not Memory.objects.filter(id=memory.id).exists()
        assert not Source.objects.filter(content__contains=SECRET).exists()
        event = AuditEvent.objects.get(target_id=memory.id, action="hard_deleted")
        assert event.actor_user_id == operator.id and SECRET not in str(event.detail)
        # Not even in the admin's own log of what operators did (it names a row by its str()).
        assert tables_containing(SECRET) == []
        assert LogEntry.objects.get(object_id=str(memory.id)).action_flag == DELETION

    def test_the_bulk_delete_action_purges_too(self, client, operator, alice):
        memory = self._memory(alice)
        client.force_login(operator)
        url = reverse("admin:memories_memory_changelist")
        client.post(url, {"action": "delete_selected", "_selected_action": [str(memory.id)], "post": "yes"})
        assert not Memory.objects.filter(id=memory.id).exists()
        assert not Source.objects.filter(content__contains=SECRET).exists()
        assert tables_containing(SECRET) == []

    def test_a_purge_forgets_what_the_admin_log_said_of_the_memory_and_its_entities(self, operator, alice):
        memory = self._memory(alice)
        entity = Entity.objects.create(
            owner=alice, space=memory.space, name="Quibblewick", normalized_name="quibblewick", type="Person"
        )
        link(memory, entity)
        # An operator's edits are logged under the row's str(): the memory's words, the entity's name.
        for row in (memory, entity):
            LogEntry.objects.log_actions(user_id=operator.pk, queryset=[row], action_flag=CHANGE)
        assert "django_admin_log.object_repr" in tables_containing(SECRET)
        assert "django_admin_log.object_repr" in tables_containing("Quibblewick")
        memory_hard_delete(actor=Actor.owner_acting(alice), memory_id=memory.id)
        assert tables_containing(SECRET) == []
        assert tables_containing("Quibblewick") == []
        # The log keeps that an operator changed something, not what the thing said.
        assert LogEntry.objects.filter(object_id__in=[str(memory.id), str(entity.id)]).count() == 2

    def test_an_operator_cannot_rewrite_content_or_delete_a_source(self, client, operator, alice):
        memory = self._memory(alice)
        client.force_login(operator)
        change = client.get(reverse("admin:memories_memory_change", args=[memory.id]))
        assert b'name="content"' not in change.content
        assert client.get(reverse("admin:memories_source_delete", args=[memory.source_id])).status_code == 403
