"""What a hard delete removes: the purge behind every permanent delete (a memory, a relation,
every memory of a space, an account), its receipt, and the clean-up of what nothing mentions any more.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.models import User
from memories import errors
from memories.models import AuditEvent, Entity, Evidence, Memory, Relation, Source, Space
from memories.services.audit import audit_record
from memories.services.sources import content_hash


def memories_purge(*, owner: User, memories: list[Memory]) -> dict[str, Any]:
    """Delete `memories` and everything derived from them; redact their text from sources.

    Runs inside the caller's transaction. A Source that supported only purged
    memories is deleted; one that still supports others keeps its text with
    every purged memory's content cut out, so the words are gone everywhere.
    """
    memory_ids = [m.id for m in memories]
    source_ids = set(
        Evidence.objects.filter(memory_id__in=memory_ids).values_list("source_id", flat=True)
    ) | {m.source_id for m in memories if m.source_id}
    entity_ids = set(
        Memory.entities.through.objects.filter(memory_id__in=memory_ids).values_list("entity_id", flat=True)
    )
    evidence_count = Evidence.objects.filter(memory_id__in=memory_ids).count()
    contents = [m.content for m in memories if m.content]
    Memory.objects.filter(id__in=memory_ids).delete()  # cascades evidence and entity links

    sources_deleted = sources_redacted = 0
    for source in Source.objects.select_for_update().filter(owner=owner, id__in=source_ids):
        still_needed = (
            Memory.objects.filter(source_id=source.id).exists()
            or Evidence.objects.filter(source_id=source.id).exists()
        )
        if not still_needed:
            source.delete()
            sources_deleted += 1
            continue
        redacted = source.content
        for text in contents:
            redacted = redacted.replace(text, "[deleted]")
        # The raw text a save was distilled from may say the purged fact in other
        # words, so it cannot be redacted by matching: it goes entirely.
        if redacted != source.content or source.source_text:
            source.content = redacted
            source.content_hash = content_hash(redacted.encode())
            source.source_text = ""
            source.save(update_fields=["content", "content_hash", "source_text"])
            sources_redacted += 1
    orphaned = list(
        Entity.objects.filter(owner=owner, id__in=entity_ids, memories__isnull=True)
        .exclude(id__in=Relation.objects.filter(owner=owner).values("subject_id"))
        .exclude(id__in=Relation.objects.filter(owner=owner).values("object_id"))
        .values_list("id", flat=True)
    )
    Entity.objects.filter(id__in=orphaned).delete()
    return {
        "memories": len(memory_ids),
        "evidence": evidence_count,
        "sources_deleted": sources_deleted,
        "sources_redacted": sources_redacted,
        "entities_deleted": len(orphaned),
    }


@transaction.atomic
def memories_hard_delete_in_space(
    *, owner: User, space: Space, actor_user: User | None = None, request_id: str = ""
) -> dict[str, Any]:
    """Hard-delete every memory of one of the owner's spaces; return the receipt."""
    if space.owner_id != owner.id:
        raise errors.AppError(
            errors.SPACE_NOT_FOUND, "No space with this id exists in your account.", http_status=404
        )
    memories = list(Memory.objects.select_for_update().filter(owner=owner, space=space).defer("embedding"))
    purged = memories_purge(owner=owner, memories=memories)
    # Sources of the space that never produced a memory (failed jobs) go too.
    leftover = Source.objects.filter(owner=owner, space=space)
    purged["sources_deleted"] += leftover.count()
    leftover.delete()
    event = audit_record(
        owner=owner,
        actor_user=actor_user,
        action=AuditEvent.Action.HARD_DELETED,
        target_id=space.id,
        target_type="space",
        detail={"purged": purged},
        request_id=request_id,
    )
    return {
        "space_id": str(space.id),
        "purged": purged,
        "audit_event_id": str(event.id),
        "purged_at": event.created_at.isoformat(),
    }
