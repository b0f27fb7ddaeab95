"""The wire's parts: how a row looks in every answer, built from the row alone (no query of its own).

Ids are strings, datetimes ISO 8601 with their offset (`iso`), the clocks one object (`clocks`), and
embeddings never leave. The references (a space, a source, an entity), an entity, a relation, a
memory as the graph shows it, a job's progress and the purge receipt are here, at the floor, so the
selectors that answer with them (the graph's payloads, the export) and the services that return a
receipt use the one shape; `memories.representations` builds the larger shapes from these parts.
The TypedDicts below name every shape that crosses a layer, the representations' ones included.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NotRequired, TypedDict, cast

from django.utils import timezone

from memories.as_of import is_current, world_start
from memories.errors import Code
from memories.models import AuditEvent, Entity, Import, Job, Memory, Relation, Source, Space

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


# --- the shapes, as TypedDicts: what every layer that passes one on may rely on ----------------------

# A memory's or a relation's clocks (MEMORY_CLOCKS, RELATION_CLOCKS): ISO 8601, or an id for
# `superseded_by`, None where unknown.
Clocks = dict[str, str | None]


class SpaceRef(TypedDict):
    id: str
    name: str


class DocumentRef(TypedDict):
    kind: str
    ref: str
    version: int


class SourceRef(TypedDict):
    id: str
    origin: str
    title: str | None
    document: DocumentRef | None


class EntityRef(TypedDict):
    id: str
    name: str
    type: str


class EntityDict(EntityRef):
    aliases: list[str]
    attributes: dict[str, Any]
    memory_count: int
    relation_count: int


class JobProgress(TypedDict):
    stage: str
    done: int
    total: int


class ReplacedRef(TypedDict):
    id: str
    content: str
    valid_from: str | None
    valid_until: str | None
    superseded_at: str | None
    superseded_by: str | None
    source_id: str | None


class HistoryEntry(ReplacedRef):
    recorded_at: str | None


class CompactMemory(TypedDict):
    id: str
    content: str
    kind: str
    category: str | None
    confidence: float
    status: str
    clocks: Clocks
    evidence_count: int
    contradiction_count: int
    entities: NotRequired[list[EntityRef]]


class GraphMemory(CompactMemory):
    """A memory as the graph's context shows it: with what it replaced, and how a save met it."""

    replaced: list[ReplacedRef]
    # graph `remember`: "created" or "confirmed" (memories.selectors.graph.job_saved_memories).
    outcome: NotRequired[str]


class Invalidation(TypedDict):
    at: str | None
    reason: str | None


class RelationDict(TypedDict):
    id: str
    type: str
    statement: str
    subject: EntityRef
    object: EntityRef
    current: bool
    clocks: Clocks
    evidence_count: int
    contradiction_count: int
    invalidation: Invalidation | None
    # From an entity's perspective (`relation_dict(perspective=...)`).
    direction: NotRequired[str]
    other: NotRequired[EntityRef]


class AgentRef(TypedDict):
    id: int
    name: str


class Provenance(TypedDict):
    source_id: str | None
    job_id: str | None
    agent: AgentRef | None
    session_id: str | None
    span: list[int | None] | None


class EvidenceEntry(TypedDict):
    source_id: str
    stance: str
    recorded_at: str | None


class MemoryDict(TypedDict):
    """A memory as the API shows it (memories.representations.memory_dict)."""

    id: str
    content: str
    kind: str
    category: str | None
    tags: list[str]
    entities: list[EntityRef]
    status: str
    pinned: bool
    confidence: float
    space: SpaceRef
    clocks: Clocks
    provenance: Provenance
    evidence_count: int
    # A memory read from a picture: a fresh signed link.
    image_url: NotRequired[str]
    # With detail=True.
    source_excerpt: NotRequired[str]
    history: NotRequired[list[HistoryEntry]]
    evidence: NotRequired[list[EvidenceEntry]]


class HitDict(MemoryDict):
    """A recalled memory (memories.representations.hit_dict): the memory, its source and scores."""

    source: SourceRef | None
    score: float
    similarity: float
    matched_words: list[str]


class JobError(TypedDict):
    code: str
    message: str


class JobDict(TypedDict):
    """A job as the API shows it (memories.representations.job_dict)."""

    id: str
    kind: str
    status: str
    attempts: int
    error: JobError | None
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    duration_ms: int | None
    space_id: str
    source_id: str | None
    memory_ids: list[str]
    progress: JobProgress
    memories: NotRequired[list[MemoryDict]]


class ImportCounts(TypedDict):
    total: int
    read: int
    stored: int
    skipped: int
    failed: int


class ImportFailure(TypedDict):
    source_id: str
    reason: str


class ImportDict(TypedDict):
    """An import as the API and the dashboard show it (import_dict)."""

    id: str
    status: str
    format: str
    filename: str
    size_bytes: int
    space_id: str
    job_id: str
    items: ImportCounts
    skipped_reasons: dict[str, int]
    failures: list[ImportFailure]
    error: JobError | None
    created_at: str | None
    finished_at: str | None
    cancel_requested_at: str | None
    undone_at: str | None
    undo_receipt: PurgeReceipt | None
    restored: ImportRestored | None


class ImportRestored(TypedDict):
    """What an import of our own export applied beside its items (memories/worker/restore.py)."""

    spaces_created: int
    relations: int
    memories: int
    # Memories of the file the engine did not make again from their words (their states are lost).
    not_rebuilt: int


class PurgeReceipt(TypedDict):
    """The receipt of every hard delete (purge_receipt)."""

    target_type: str
    target_id: str | None
    # The same id under the deleted row's own name: one of these four, by target_type.
    memory_id: NotRequired[str | None]
    relation_id: NotRequired[str | None]
    space_id: NotRequired[str | None]
    account_id: NotRequired[str | None]
    reason: str | None
    purged: dict[str, int]
    audit_event_id: str
    # An audit row's creation time: never null.
    purged_at: str


class Validity(TypedDict):
    """Which clocks an evidence answer was read at (the evidence profile's envelope)."""

    view: str
    at: str | None
    known_at: str | None
    world_time: str | None
    system_time: str | None
    counts_as_of: str | None


class Freshness(TypedDict):
    pending_jobs: int
    note: str
    latest_recorded_at: str | None


class NegativeAnswer(TypedDict):
    code: str
    message: str
    agent_action: str


class Envelope(TypedDict):
    """Every evidence profile answer (memories.operations.evidence): what one item is (`grain`),
    the clocks, how fresh, why it is empty, and its items under their own name with their `total`;
    the combined answer holds one envelope per authority instead."""

    grain: str
    validity: Validity
    freshness: Freshness
    negative: NegativeAnswer | None
    total: NotRequired[int]
    entities: NotRequired[list[dict[str, object]]]
    claims: NotRequired[list[dict[str, object]]]
    # A fact envelope's facts, or the combined answer's fact envelope.
    facts: NotRequired[list[dict[str, object]] | Envelope]
    claims_and_sources: NotRequired[Envelope]
    schema: NotRequired[str]


def iso(value: datetime | None) -> str | None:
    """A datetime as ISO 8601 with its UTC offset (microseconds kept), or None."""
    return value.isoformat() if value is not None else None


def str_or_none(value: object) -> str | None:
    """An id (or any value) as a string, None as None."""
    return str(value) if value is not None else None


def clocks(row: Any, names: tuple[str, ...] = MEMORY_CLOCKS) -> Clocks:
    """The `clocks` object of a memory or relation: each named clock as ISO 8601 (or the id of
    the row that superseded it), None where unknown."""
    shown: Clocks = {}
    for name in names:
        if name == "superseded_by":
            shown[name] = str_or_none(row.superseded_by_id)
        else:
            shown[name] = iso(getattr(row, name, None))
    return shown


def space_ref(space: Space) -> SpaceRef:
    return {"id": str(space.id), "name": space.name}


def source_ref(source: Source | None) -> SourceRef | None:
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


def entity_ref(entity: Entity) -> EntityRef:
    return {"id": str(entity.id), "name": entity.name, "type": entity.type}


def entity_dict(entity: Entity) -> EntityDict:
    """An entity with its aliases, attributes and (when annotated) link counts."""
    return {
        **entity_ref(entity),
        "aliases": list(entity.aliases),
        "attributes": dict(entity.attributes),
        "memory_count": int(getattr(entity, "memory_count", 0)),
        "relation_count": int(getattr(entity, "relation_count", 0)),
    }


JOB_STAGES = ("queued", "reading", "extracting", "embedding", "storing", "done")


def job_progress(job: Job) -> JobProgress:
    """Where a job is, as its worker last wrote it: `stage` (one of JOB_STAGES), and the segments
    embedded so far (`done`) of those found (`total`, 0 until the text is segmented). A job from
    before the worker wrote progress reads as queued or done by its status."""
    written = job.progress or {}
    default = "done" if job.status == Job.Status.SUCCEEDED else "queued"
    stage = str(written["stage"]) if written.get("stage") in JOB_STAGES else default
    return {"stage": stage, "done": int(written.get("done") or 0), "total": int(written.get("total") or 0)}


def import_status(made: Import) -> str:
    """queued | running | succeeded | failed | cancelled | undone: the job's status, told apart."""
    if made.undone_at is not None:
        return "undone"
    job = made.job
    if job.status == Job.Status.FAILED and job.error_code == Code.IMPORT_CANCELLED:
        return "cancelled"
    return str(job.status)


def import_dict(made: Import) -> ImportDict:
    """An import with its progress (items read, stored, skipped with their reasons, failed), read
    from its row and its job's (select_related("job"))."""
    job = made.job
    return {
        "id": str(made.id),
        "status": import_status(made),
        "format": made.format,
        "filename": made.filename,
        "size_bytes": made.size_bytes,
        "space_id": str(made.space_id),
        "job_id": str(job.id),
        "items": {
            "total": made.items_total,
            "read": made.items_read,
            "stored": made.items_stored,
            "skipped": made.items_skipped,
            "failed": made.items_failed,
        },
        "skipped_reasons": {str(k): int(v) for k, v in (made.skipped_reasons or {}).items()},
        "failures": [
            {"source_id": str(f.get("source_id", "")), "reason": str(f.get("reason", ""))}
            for f in made.failures or []
        ],
        "error": {"code": job.error_code, "message": job.error_message} if job.error_code else None,
        "created_at": iso(made.created_at),
        "finished_at": iso(job.finished_at),
        "cancel_requested_at": iso(made.cancel_requested_at),
        "undone_at": iso(made.undone_at),
        "undo_receipt": cast(PurgeReceipt, made.undo_receipt) if made.undo_receipt else None,
        "restored": _import_restored(made),
    }


def _import_restored(made: Import) -> ImportRestored | None:
    applied = made.restored if isinstance(made.restored, dict) else {}
    if made.format != Import.Format.DEEPRECALL or "memories" not in applied:
        return None  # another format, or not applied yet
    return {
        "spaces_created": len(applied.get("spaces", [])),
        "relations": int(applied.get("relations", 0)),
        "memories": int(applied.get("memories", 0)),
        "not_rebuilt": int(applied.get("not_rebuilt", 0)),
    }


def replaced_ref(older: Memory) -> ReplacedRef:
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


def memory_compact(memory: Memory, *, with_entities: bool = False) -> CompactMemory:
    """A memory as the graph shows it: content, kind, clocks and evidence, nothing heavier."""
    data: CompactMemory = {
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
) -> RelationDict:
    """A relation with both ends, its clocks and evidence. From `perspective` (an entity at one
    end) it also says `direction` and which end is the `other`."""
    now = now or timezone.now()
    data: RelationDict = {
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


def purge_receipt(event: AuditEvent) -> PurgeReceipt:
    """The receipt of a hard delete (a memory, a relation, a space's memories, an account), read
    from its audit row: the one shape every surface returns and the dashboard shows again later.

    The deleted row's id is under `target_id` and, as the API has always returned it, under its own
    name (`memory_id`, `relation_id`, `space_id`, `account_id`). `purged` counts what went
    (`memories.services.purge.PURGE_COUNTS`, plus what an account itself held).
    """
    target_id = str_or_none(event.target_id)
    # The id's second key is named by the row's type, which a TypedDict cannot spell: cast.
    return cast(
        PurgeReceipt,
        {
            "target_type": event.target_type,
            "target_id": target_id,
            f"{event.target_type}_id": target_id,
            "reason": event.detail.get("reason") or None,
            "purged": dict(event.detail.get("purged", {})),
            "audit_event_id": str(event.id),
            "purged_at": iso(event.created_at),
        },
    )


def relation_text(relation: Relation) -> str:
    """A relation as a fact reads: "Alice lives_in Berlin"."""
    return f"{relation.subject.name} {relation.type} {relation.object.name}"
