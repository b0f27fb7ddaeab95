"""Supersession: a newer value of the same fact (or single-valued relation) closes the current
one and keeps it as history; a new version of a living document retires what only older versions said.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from memories.models import Evidence, Job, Memory, Relation, Source


def relation_supersede(*, new: Relation, source: Source, now: datetime) -> list[Relation]:
    """As memories.ingest._supersede does for facts: a newer object of a single-valued relation
    closes the current one and keeps it as history, with the new claim as contradicting evidence."""
    closed: list[Relation] = []
    current = (
        Relation.objects.select_for_update()
        .filter(
            owner_id=new.owner_id,
            space_id=new.space_id,
            subject_id=new.subject_id,
            type=new.type,
            superseded_at__isnull=True,
        )
        .exclude(id=new.id)
        .exclude(object_id=new.object_id)
        .order_by("recorded_at", "id")
    )
    for older in current:
        new_from = new.valid_from or now
        old_from = older.valid_from or older.recorded_at
        if new_from < old_from:
            # Told now about an earlier time: the new relation is history from the start.
            new.valid_until = old_from
            new.save(update_fields=["valid_until"])
            continue
        older.superseded_at = now
        older.superseded_by = new
        older.valid_until = new_from
        older.save(update_fields=["superseded_at", "superseded_by", "valid_until"])
        Evidence.objects.get_or_create(
            relation=older,
            source=source,
            stance=Evidence.Stance.CONTRADICTS,
            defaults={"owner_id": new.owner_id},
        )
        closed.append(older)
    return closed


def memory_supersede(*, job: Job, source: Source, memory: Memory, now: datetime) -> None:
    """A newer value of the same slot closes the current one and keeps it as history."""
    current = (
        Memory.objects.select_for_update()
        .filter(owner_id=job.owner_id, space_id=job.space_id, slot=memory.slot, superseded_at__isnull=True)
        .exclude(id=memory.id)
        .exclude(slot_value=memory.slot_value)
    )
    for older in current:
        new_from = memory.valid_from or memory.occurred_at or now
        old_from = older.valid_from or older.occurred_at or older.recorded_at
        if new_from < old_from:
            # Learned now, but about an earlier time (an old conversation ingested
            # late): the new memory is history from the start, not a replacement.
            memory.valid_until = old_from
            memory.save(update_fields=["valid_until"])
            continue
        older.superseded_at = now
        older.superseded_by = memory
        older.valid_until = new_from
        older.save(update_fields=["superseded_at", "superseded_by", "valid_until"])
        Evidence.objects.get_or_create(
            memory=older,
            source=source,
            stance=Evidence.Stance.CONTRADICTS,
            defaults={"owner_id": job.owner_id},
        )


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
