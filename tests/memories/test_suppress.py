"""The suppress/restore services that the admin, REST and MCP all call."""

from __future__ import annotations

import pytest

from accounts.caller import Actor
from memories.errors import AppError
from memories.models import AuditEvent, Memory, Source
from memories.selectors.memories import memory_list
from memories.services.memories import memory_restore, memory_suppress
from memories.services.spaces import space_create_default

pytestmark = pytest.mark.django_db


@pytest.fixture
def memory(alice) -> Memory:
    space = space_create_default(owner=alice)
    source = Source.objects.create(
        owner=alice, space=space, origin="remember", content="I like tea", content_hash="2" * 64
    )
    return Memory.objects.create(owner=alice, space=space, source=source, kind="fact", content="Likes tea")


class TestSuppress:
    def test_it_hides_the_memory_and_audits_without_content(self, alice, memory):
        memory_suppress(actor=Actor.owner_acting(alice), memory_id=memory.id, reason="wrong")
        memory.refresh_from_db()
        assert memory.status == "suppressed" and memory.suppressed_reason == "wrong"
        assert memory not in memory_list(owner=alice)
        event = AuditEvent.objects.get(target_id=memory.id)
        assert event.action == "suppressed" and event.owner_id_snapshot == alice.id
        assert "tea" not in str(event.detail)

    def test_it_is_idempotent(self, alice, memory):
        memory_suppress(actor=Actor.owner_acting(alice), memory_id=memory.id)
        memory_suppress(actor=Actor.owner_acting(alice), memory_id=memory.id)
        assert AuditEvent.objects.filter(target_id=memory.id, action="suppressed").count() == 1

    def test_it_restores(self, alice, memory):
        memory_suppress(actor=Actor.owner_acting(alice), memory_id=memory.id)
        memory_restore(actor=Actor.owner_acting(alice), memory_id=memory.id)
        memory.refresh_from_db()
        assert memory.status == "active" and memory.suppressed_at is None
        assert list(memory_list(owner=alice)) == [memory]

    def test_it_refuses_an_outsider_as_not_found(self, charlie, memory):
        with pytest.raises(AppError) as exc:
            memory_suppress(actor=Actor.owner_acting(charlie), memory_id=memory.id)
        assert exc.value.code == "memory_not_found" and exc.value.http_status == 404
        memory.refresh_from_db()
        assert memory.status == "active"
        assert not AuditEvent.objects.filter(target_id=memory.id).exists()
