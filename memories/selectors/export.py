"""Everything an account holds, as JSON Lines: the export file. Nothing here writes."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db.models import Prefetch

from accounts.models import User
from memories.models import AuditEvent, Entity, Evidence, Job, Memory, Relation, Source, Space
from memories.wire import RELATION_CLOCKS, clocks

EXPORT_FORMAT_VERSION = 1


CHUNK_SIZE = 500


def _plain(value: object) -> Any:
    # Ids as strings, times as ISO 8601 with their offset; everything else is JSON already.
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def _fields(row: object, names: str) -> dict[str, object]:
    """The named fields of `row` (space-separated), as JSON values."""
    return {name: _plain(getattr(row, name)) for name in names.split()}


# What else a reader may take for the end of a line (Python's str.splitlines, httpx's iter_lines),
# which json.dumps leaves as it is: escaped, still the same JSON string.
_LINE_ENDS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})


def _line(record: dict[str, Any]) -> str:
    # ensure_ascii=False keeps the file readable; json.dumps escapes newlines and the other control
    # characters inside strings, and _LINE_ENDS the rest, so one record is always exactly one line
    # however the reader splits lines.
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).translate(_LINE_ENDS) + "\n"


def _evidence(items: Any) -> list[dict[str, Any]]:
    ordered = sorted(items, key=lambda e: (e.recorded_at, str(e.id)))
    return [_fields(item, "source_id stance recorded_at") for item in ordered]


def _account(owner: User) -> dict[str, object]:
    return {
        "type": "account",
        **_fields(owner, "id email display_name date_joined"),
        "export_format_version": EXPORT_FORMAT_VERSION,
    }


def _space(space: Space) -> dict[str, object]:
    return {"type": "space", **_fields(space, "id name is_default created_at")}


def _source(source: Source) -> dict[str, object]:
    names = (
        "id space_id origin content content_hash source_text title claimant agent_id session_id "
        "source_kind source_ref version versioning_mode source_modified_at source_version_ref filename "
        "media_type size_bytes refers_to recorded_at purged_at"
    )
    record = {"type": "source", **_fields(source, names)}
    if source.origin == Source.Origin.IMAGE:
        record["image"] = _image(source)
    return record


def _image(source: Source) -> dict[str, Any] | None:
    """The picture itself, as it is served (no metadata), in base64: an export is kept for years,
    so it holds the bytes rather than a link that stops working in an hour. None once deleted."""
    from memories.selectors.images import image_storage

    if not source.image_name:
        return None
    try:
        with image_storage().open(source.image_name, "rb") as picture:
            data = picture.read()
    except FileNotFoundError:
        return None
    return {
        "media_type": source.media_type,
        "width": source.image_width,
        "height": source.image_height,
        "data_base64": base64.b64encode(data).decode(),
    }


def _entity(entity: Entity) -> dict[str, object]:
    return {
        "type": "entity",
        **_fields(entity, "id space_id name normalized_name"),
        "entity_type": entity.type,
        "aliases": list(entity.aliases),
        **_fields(entity, "attributes created_at updated_at"),
    }


def _memory(memory: Memory) -> dict[str, object]:
    return {
        "type": "memory",
        **_fields(memory, "id space_id kind"),
        "category": memory.category or None,
        "content": memory.content,
        "tags": list(memory.tags),
        "entity_ids": sorted(str(entity.id) for entity in memory.entities.all()),
        **_fields(memory, "confidence pinned status suppressed_at suppressed_reason suppressed_note"),
        "clocks": clocks(memory),
        "provenance": _fields(memory, "source_id job_id agent_id session_id"),
        "evidence": _evidence(memory.evidence.all()),
    }


def _relation(relation: Relation) -> dict[str, object]:
    return {
        "type": "relation",
        **_fields(relation, "id space_id subject_id object_id"),
        "relation_type": relation.type,
        **clocks(relation, RELATION_CLOCKS),
        **_fields(relation, "invalidated_at invalidated_note"),
        "evidence": _evidence(relation.evidence.all()),
    }


def _job(job: Job) -> dict[str, object]:
    return {
        "type": "job",
        **_fields(job, "id space_id source_id agent_id kind status attempts"),
        "error": {"code": job.error_code, "message": job.error_message} if job.error_code else None,
        **_fields(job, "created_at started_at finished_at"),
    }


def _audit(event: AuditEvent) -> dict[str, object]:
    # By contract (audit_record) detail never holds memory content.
    names = "id action target_type target_id actor_user_id actor_agent_id detail request_id created_at"
    return {"type": "audit", **_fields(event, names)}


def export_lines(*, owner: User) -> Iterator[str]:
    """Every record of `owner`, one JSON line each, in a fixed order of types.

    account, then spaces, sources, entities, memories (with tags, entity ids,
    clocks and evidence), relations (with evidence), jobs and audit events. Only
    rows of `owner`; nothing of any other account.
    """
    yield _line(_account(owner))
    for space in Space.objects.filter(owner=owner).order_by("created_at", "id").iterator(CHUNK_SIZE):
        yield _line(_space(space))
    # An upload's bytes not yet read are no testimony yet (and up to DOCUMENT_MAX_BYTES each).
    sources = Source.objects.filter(owner=owner).defer("raw").order_by("recorded_at", "id")
    for source in sources.iterator(CHUNK_SIZE):
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
