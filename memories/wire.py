"""The wire's parts: how a row looks in every answer, built from the row alone (no query of its own).

Ids are strings, datetimes ISO 8601 with their offset (`iso`), the clocks one object (`clocks`), and
embeddings never leave. The references (a space, a source, an entity), an entity, a relation, a
memory as the graph shows it, a job's progress and the purge receipt are here, at the floor, so the
selectors that answer with them (the graph's payloads, the export) and the services that return a
receipt use the one shape; `memories.representations` builds the larger shapes from these parts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from memories.as_of import is_current, world_start
from memories.models import AuditEvent, Entity, Job, Memory, Relation, Source, Space

# A memory's two clocks, world time then system time, as every surface shows them.
MEMORY_CLOCKS = (
    "occurred_at",
    "valid_from",
    "valid_until",
    "due_at",
    # When it was said (world time), and the latest its start can be when it named a period.
    "stated_at",
    "starts_by",
    "recorded_at",
    "superseded_at",
    "superseded_by",
)


# A relation has no occurred_at or due_at.
RELATION_CLOCKS = ("valid_from", "valid_until", "recorded_at", "superseded_at", "superseded_by")


def iso(value: datetime | None) -> str | None:
    """A datetime as ISO 8601 with its UTC offset (microseconds kept), or None."""
    return value.isoformat() if value is not None else None


def str_or_none(value: Any) -> str | None:
    """An id (or any value) as a string, None as None."""
    return str(value) if value is not None else None


def clocks(row: Any, names: tuple[str, ...] = MEMORY_CLOCKS) -> dict[str, Any]:
    """The `clocks` object of a memory or relation: each named clock as ISO 8601 (or the id of
    the row that superseded it), None where unknown."""
    shown: dict[str, Any] = {}
    for name in names:
        if name == "superseded_by":
            shown[name] = str_or_none(row.superseded_by_id)
        else:
            shown[name] = iso(getattr(row, name, None))
    return shown


def space_ref(space: Space) -> dict[str, Any]:
    return {"id": str(space.id), "name": space.name}


def source_ref(source: Source | None) -> dict[str, Any] | None:
    """Which source a hit came from, named: its id, origin (remember, document, relate, image ...),
    title and, for a document, its name at its home and version number. Metadata only."""
    if source is None:
        return None
    return {
        "id": str(source.id),
        "origin": source.origin,
        "title": source.title or None,
        "document": (
            {"kind": source.source_kind, "ref": source.source_ref, "version": source.version}
            if source.source_kind
            else None
        ),
    }


def entity_ref(entity: Entity) -> dict[str, Any]:
    return {"id": str(entity.id), "name": entity.name, "type": entity.type}


def entity_dict(entity: Entity) -> dict[str, Any]:
    """An entity with its aliases, attributes and (when annotated) link counts."""
    return {
        **entity_ref(entity),
        "aliases": list(entity.aliases),
        "attributes": dict(entity.attributes),
        "memory_count": int(getattr(entity, "memory_count", 0)),
        "relation_count": int(getattr(entity, "relation_count", 0)),
    }


JOB_STAGES = ("queued", "reading", "extracting", "embedding", "storing", "done")


def job_progress(job: Job) -> dict[str, Any]:
    """Where a job is, as its worker last wrote it: `stage` (one of JOB_STAGES), and the segments
    embedded so far (`done`) of those found (`total`, 0 until the text is segmented). A job from
    before the worker wrote progress reads as queued or done by its status."""
    written = job.progress or {}
    default = "done" if job.status == Job.Status.SUCCEEDED else "queued"
    stage = written.get("stage") if written.get("stage") in JOB_STAGES else default
    return {"stage": stage, "done": int(written.get("done") or 0), "total": int(written.get("total") or 0)}


def replaced_ref(older: Memory) -> dict[str, Any]:
    """A memory another one replaced, as history: what it said, when it held, what said it."""
    return {
        "id": str(older.id),
        "content": older.content,
        "valid_from": iso(world_start(older)),
        "valid_until": iso(older.valid_until),
        "superseded_at": iso(older.superseded_at),
        "superseded_by": str_or_none(older.superseded_by_id),
        "source_id": str_or_none(older.source_id),
    }


def memory_compact(memory: Memory, *, with_entities: bool = False) -> dict[str, Any]:
    """A memory as the graph shows it: content, kind, clocks and evidence, nothing heavier."""
    data: dict[str, Any] = {
        "id": str(memory.id),
        "content": memory.content,
        "kind": memory.kind,
        "category": memory.category or None,
        "confidence": memory.confidence,
        "status": memory.status,
        "clocks": clocks(memory),
        "evidence_count": int(getattr(memory, "evidence_count", 0)),
        "contradiction_count": int(getattr(memory, "contradiction_count", 0)),
    }
    if with_entities:
        data["entities"] = [entity_ref(entity) for entity in memory.entities.all()]
    return data


def relation_dict(
    relation: Relation, *, now: datetime | None = None, perspective: Entity | None = None
) -> dict[str, Any]:
    """A relation with both ends, its clocks and evidence. From `perspective` (an entity at one
    end) it also says `direction` and which end is the `other`."""
    now = now or timezone.now()
    data: dict[str, Any] = {
        "id": str(relation.id),
        "type": relation.type,
        "statement": relation_text(relation),
        "subject": entity_ref(relation.subject),
        "object": entity_ref(relation.object),
        "current": is_current(relation, now),
        "clocks": clocks(relation, RELATION_CLOCKS),
        "evidence_count": int(getattr(relation, "evidence_count", 0)),
        "contradiction_count": int(getattr(relation, "contradiction_count", 0)),
        # Retired by `invalidate`: when, and the reason given (null when it was not).
        "invalidation": (
            {"at": iso(relation.invalidated_at), "reason": relation.invalidated_note or None}
            if relation.invalidated_at is not None
            else None
        ),
    }
    if perspective is not None:
        outgoing = relation.subject_id == perspective.id
        data["direction"] = "outgoing" if outgoing else "incoming"
        data["other"] = entity_ref(relation.object if outgoing else relation.subject)
    return data


def purge_receipt(event: AuditEvent) -> dict[str, Any]:
    """The receipt of a hard delete (a memory, a relation, a space's memories, an account), read
    from its audit row: the one shape every surface returns and the dashboard shows again later.

    The deleted row's id is under `target_id` and, as the API has always returned it, under its own
    name (`memory_id`, `relation_id`, `space_id`, `account_id`). `purged` counts what went
    (`memories.services.purge.PURGE_COUNTS`, plus what an account itself held).
    """
    target_id = str_or_none(event.target_id)
    return {
        "target_type": event.target_type,
        "target_id": target_id,
        f"{event.target_type}_id": target_id,
        "reason": event.detail.get("reason") or None,
        "purged": dict(event.detail.get("purged", {})),
        "audit_event_id": str(event.id),
        "purged_at": iso(event.created_at),
    }


def relation_text(relation: Relation) -> str:
    """A relation as a fact reads: "Alice lives_in Berlin"."""
    return f"{relation.subject.name} {relation.type} {relation.object.name}"
