"""Supersession: a newer value of the same fact (or single-valued relation) closes the current
one and keeps it as history; a new version of a living document retires what only older versions said.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from memories.models import Evidence, Memory, Relation, Source
from memories.selectors.as_of import world_start


def supersede(*, new: Memory | Relation, rivals: QuerySet[Any], source: Source, now: datetime) -> list[Any]:
    """The one supersede rule, for memories and relations alike.

    `rivals` are the current rows that `new` competes with (another value of the same slot, another
    object of the same single-valued relation). A rival whose world time starts no later than the
    new row's is closed: superseded now, by `new`, valid until the new row starts, with `source` as
    contradicting evidence, and kept as history. A rival that starts later means `new` is news about
    an earlier time (an old conversation ingested late): then `new` is history from the start, valid
    until that rival starts, and the rival stays current. Returns the rows closed.
    """
    evidence_for = "memory" if isinstance(new, Memory) else "relation"
    new_from = world_start(new)
    closed = []
    for older in rivals.select_for_update().exclude(id=new.id).order_by("recorded_at", "id"):
        old_from = world_start(older)
        if new_from < old_from:
            new.valid_until = old_from
            new.save(update_fields=["valid_until"])
            continue
        older.superseded_at = now
        older.superseded_by = new
        older.valid_until = new_from
        older.save(update_fields=["superseded_at", "superseded_by", "valid_until"])
        Evidence.objects.get_or_create(
            **{evidence_for: older},
            source=source,
            stance=Evidence.Stance.CONTRADICTS,
            defaults={"owner_id": new.owner_id},
        )
        closed.append(older)
    return closed


def memory_rivals(memory: Memory) -> QuerySet[Memory]:
    """The current memories of the same slot in the same space with another value."""
    return Memory.objects.filter(
        owner_id=memory.owner_id, space_id=memory.space_id, slot=memory.slot, superseded_at__isnull=True
    ).exclude(slot_value=memory.slot_value)


def relation_rivals(relation: Relation) -> QuerySet[Relation]:
    """The current relations of the same subject and (single-valued) type to another object."""
    return Relation.objects.filter(
        owner_id=relation.owner_id,
        space_id=relation.space_id,
        subject_id=relation.subject_id,
        type=relation.type,
        superseded_at__isnull=True,
    ).exclude(object_id=relation.object_id)


def document_retire_unsupported(*, source: Source, kept: set[Any]) -> None:
    """A new version of a living document: what only older versions said is superseded."""
    older_versions = Source.objects.filter(
        owner_id=source.owner_id,
        space_id=source.space_id,
        source_kind=source.source_kind,
        source_ref=source.source_ref,
        version__lt=source.version,
    )
    now = timezone.now()
    stale_ids = (
        set(
            Memory.objects.filter(
                owner_id=source.owner_id, evidence__source__in=older_versions, superseded_at__isnull=True
            ).values_list("id", flat=True)
        )
        - kept
    )
    stale = Memory.objects.select_for_update().filter(id__in=stale_ids)
    for memory in stale:
        # Still asserted by some other, unrelated source? Then it stays current.
        others = Evidence.objects.filter(memory=memory, stance=Evidence.Stance.SUPPORTS).exclude(
            source__in=older_versions
        )
        if others.exists():
            continue
        memory.superseded_at = now
        memory.valid_until = source.source_modified_at or now
        memory.save(update_fields=["superseded_at", "valid_until"])
