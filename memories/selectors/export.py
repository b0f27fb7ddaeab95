"""Everything an account holds, as JSON Lines: the export file. Nothing here writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db.models import Prefetch

from accounts.models import User
from memories.models import AuditEvent, Entity, Evidence, Job, Memory, Relation, Source, Space

EXPORT_FORMAT_VERSION = 1


CHUNK_SIZE = 500


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _id(value: Any) -> str | None:
    return str(value) if value is not None else None


def _line(record: dict[str, Any]) -> str:
    # ensure_ascii=False keeps the file readable; json.dumps escapes newlines inside
    # strings, so one record is always exactly one line.
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _evidence(items: Any) -> list[dict[str, Any]]:
    return [
        {"source_id": str(e.source_id), "stance": e.stance, "recorded_at": _iso(e.recorded_at)}
        for e in sorted(items, key=lambda e: (e.recorded_at, str(e.id)))
    ]


def _account(owner: User) -> dict[str, Any]:
    return {
        "type": "account",
        "id": str(owner.id),
        "email": owner.email,
        "display_name": owner.display_name,
        "date_joined": _iso(owner.date_joined),
        "export_format_version": EXPORT_FORMAT_VERSION,
    }


def _space(space: Space) -> dict[str, Any]:
    return {
        "type": "space",
        "id": str(space.id),
        "name": space.name,
        "is_default": space.is_default,
        "created_at": _iso(space.created_at),
    }


def _source(source: Source) -> dict[str, Any]:
    return {
        "type": "source",
        "id": str(source.id),
        "space_id": str(source.space_id),
        "origin": source.origin,
        "content": source.content,
        "content_hash": source.content_hash,
        "source_text": source.source_text,
        "title": source.title,
        "claimant": source.claimant,
        "agent_id": source.agent_id,
        "session_id": _id(source.session_id),
        "source_kind": source.source_kind,
        "source_ref": source.source_ref,
        "version": source.version,
        "versioning_mode": source.versioning_mode,
        "source_modified_at": _iso(source.source_modified_at),
        "filename": source.filename,
        "media_type": source.media_type,
        "size_bytes": source.size_bytes,
        "refers_to": _iso(source.refers_to),
        "recorded_at": _iso(source.recorded_at),
        "purged_at": _iso(source.purged_at),
    }


def _entity(entity: Entity) -> dict[str, Any]:
    return {
        "type": "entity",
        "id": str(entity.id),
        "space_id": str(entity.space_id),
        "name": entity.name,
        "normalized_name": entity.normalized_name,
        "entity_type": entity.type,
        "aliases": list(entity.aliases),
        "attributes": entity.attributes,
        "created_at": _iso(entity.created_at),
        "updated_at": _iso(entity.updated_at),
    }


def _memory(memory: Memory) -> dict[str, Any]:
    return {
        "type": "memory",
        "id": str(memory.id),
        "space_id": str(memory.space_id),
        "kind": memory.kind,
        "category": memory.category or None,
        "content": memory.content,
        "tags": list(memory.tags),
        "entity_ids": sorted(str(entity.id) for entity in memory.entities.all()),
        "confidence": memory.confidence,
        "pinned": memory.pinned,
        "status": memory.status,
        "suppressed_at": _iso(memory.suppressed_at),
        "suppressed_reason": memory.suppressed_reason,
        "clocks": {
            "occurred_at": _iso(memory.occurred_at),
            "valid_from": _iso(memory.valid_from),
            "valid_until": _iso(memory.valid_until),
            "due_at": _iso(memory.due_at),
            "recorded_at": _iso(memory.recorded_at),
            "superseded_at": _iso(memory.superseded_at),
            "superseded_by": _id(memory.superseded_by_id),
        },
        "provenance": {
            "source_id": _id(memory.source_id),
            "job_id": _id(memory.job_id),
            "agent_id": memory.agent_id,
            "session_id": _id(memory.session_id),
        },
        "evidence": _evidence(memory.evidence.all()),
    }


def _relation(relation: Relation) -> dict[str, Any]:
    return {
        "type": "relation",
        "id": str(relation.id),
        "space_id": str(relation.space_id),
        "subject_id": str(relation.subject_id),
        "object_id": str(relation.object_id),
        "relation_type": relation.type,
        "valid_from": _iso(relation.valid_from),
        "valid_until": _iso(relation.valid_until),
        "recorded_at": _iso(relation.recorded_at),
        "superseded_at": _iso(relation.superseded_at),
        "superseded_by": _id(relation.superseded_by_id),
        "evidence": _evidence(relation.evidence.all()),
    }


def _job(job: Job) -> dict[str, Any]:
    return {
        "type": "job",
        "id": str(job.id),
        "space_id": str(job.space_id),
        "source_id": _id(job.source_id),
        "agent_id": job.agent_id,
        "kind": job.kind,
        "status": job.status,
        "attempts": job.attempts,
        "error": {"code": job.error_code, "message": job.error_message} if job.error_code else None,
        "created_at": _iso(job.created_at),
        "started_at": _iso(job.started_at),
        "finished_at": _iso(job.finished_at),
    }


def _audit(event: AuditEvent) -> dict[str, Any]:
    return {
        "type": "audit",
        "id": str(event.id),
        "action": event.action,
        "target_type": event.target_type,
        "target_id": _id(event.target_id),
        "actor_user_id": _id(event.actor_user_id),
        "actor_agent_id": event.actor_agent_id,
        # By contract (audit_record) detail never holds memory content.
        "detail": event.detail,
        "request_id": event.request_id,
        "created_at": _iso(event.created_at),
    }


def export_lines(*, owner: User) -> Iterator[str]:
    """Every record of `owner`, one JSON line each, in a fixed order of types.

    account, then spaces, sources, entities, memories (with tags, entity ids,
    clocks and evidence), relations (with evidence), jobs and audit events. Only
    rows of `owner`; nothing of any other account.
    """
    yield _line(_account(owner))
    for space in Space.objects.filter(owner=owner).order_by("created_at", "id").iterator(CHUNK_SIZE):
        yield _line(_space(space))
    for source in Source.objects.filter(owner=owner).order_by("recorded_at", "id").iterator(CHUNK_SIZE):
        yield _line(_source(source))
    for entity in Entity.objects.filter(owner=owner).order_by("created_at", "id").iterator(CHUNK_SIZE):
        yield _line(_entity(entity))
    evidence = Prefetch(
        "evidence",
        queryset=Evidence.objects.filter(owner=owner).only(
            "id", "source_id", "stance", "recorded_at", "memory_id", "relation_id"
        ),
    )
    memories = (
        Memory.objects.filter(owner=owner)
        .defer("embedding", "search_vector")
        .prefetch_related(
            Prefetch("entities", queryset=Entity.objects.filter(owner=owner).only("id")), evidence
        )
        .order_by("recorded_at", "id")
    )
    # With chunk_size, iterator() runs the prefetches once per chunk of rows.
    for memory in memories.iterator(CHUNK_SIZE):
        yield _line(_memory(memory))
    relations = Relation.objects.filter(owner=owner).prefetch_related(evidence).order_by("recorded_at", "id")
    for relation in relations.iterator(CHUNK_SIZE):
        yield _line(_relation(relation))
    for job in Job.objects.filter(owner=owner).order_by("created_at", "id").iterator(CHUNK_SIZE):
        yield _line(_job(job))
    events = AuditEvent.objects.filter(owner_id_snapshot=owner.id).order_by("created_at", "id")
    for event in events.iterator(CHUNK_SIZE):
        yield _line(_audit(event))
