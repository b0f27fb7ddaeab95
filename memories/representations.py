"""How every row looks on the wire: REST, the MCP tools and resources of every profile, the
export's neighbours and the purge receipts all render from here, so a memory (or a relation, a
job, a space) looks the same wherever it shows.

Plain dicts rather than DRF serializers: they are read-only shapes. Ids are strings, datetimes
ISO 8601 with their offset (`iso`), the clocks one object (`clocks`), and embeddings never leave.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memories.as_of import CURRENT, status_of
from memories.models import Job, Memory, Space
from memories.retrieval import evidence
from memories.selectors.images import image_url
from memories.selectors.memories import (
    EXCERPT_LEAD_CHARS,
    SOURCE_EXCERPT_CHARS,
    evidence_count,
    memory_history,
)
from memories.wire import (
    HitDict,
    JobDict,
    MemoryDict,
    clocks,
    entity_ref,
    iso,
    job_progress,
    relation_text,
    replaced_ref,
    source_ref,
    space_ref,
    str_or_none,
)

if TYPE_CHECKING:
    from memories.retrieval.recall import Hit


# --- memories, jobs, spaces (REST, recall and answer) -----------------------------------------------


def _evidence_count(memory: Memory) -> int:
    annotated = getattr(memory, "evidence_count", None)
    if annotated is not None:
        return int(annotated)
    # Not loaded through a selector: count here, still by distinct claimant.
    return evidence_count(memory)


def _source_excerpt(memory: Memory) -> str:
    if hasattr(memory, "source_excerpt"):
        excerpt = memory.source_excerpt
        purged = getattr(memory, "source_purged_at", None) is not None
        return "" if excerpt is None or purged else str(excerpt)
    source = memory.source
    if source is None or source.purged_at is not None:
        return ""
    start = max(0, (memory.span_start or 0) - EXCERPT_LEAD_CHARS)
    return source.content[start : start + SOURCE_EXCERPT_CHARS]


def memory_dict(memory: Memory, *, detail: bool = False) -> MemoryDict:
    """A memory as the API shows it.

    `detail=True` adds `source_excerpt`, the supersession `history` and the
    `evidence` list; the list endpoint leaves them out to stay one query per page.
    """
    agent = memory.agent if memory.agent_id is not None else None
    data: MemoryDict = {
        "id": str(memory.id),
        "content": memory.content,
        "kind": memory.kind,
        "category": memory.category or None,
        "tags": list(memory.tags),
        "entities": [entity_ref(entity) for entity in memory.entities.all()],
        "status": memory.status,
        "pinned": memory.pinned,
        "confidence": memory.confidence,
        "space": space_ref(memory.space),
        "clocks": clocks(memory),
        "provenance": {
            "source_id": str_or_none(memory.source_id),
            "job_id": str_or_none(memory.job_id),
            "agent": {"id": agent.pk, "name": agent.name} if agent is not None else None,
            "session_id": str_or_none(memory.session_id),
            # Where in the source's text it came from: [start, end) in characters, or null.
            "span": [memory.span_start, memory.span_end] if memory.span_start is not None else None,
        },
        "evidence_count": _evidence_count(memory),
    }
    # Only for memories read from a picture (rows loaded through the memory selectors know it): a
    # fresh link each time, valid for an hour, so nothing that caches a response keeps access.
    image_source_id = getattr(memory, "image_source_id", None)
    if image_source_id is not None:
        data["image_url"] = image_url(owner_id=memory.owner_id, source_id=image_source_id)
    if detail:
        data["source_excerpt"] = _source_excerpt(memory)
        # What replaced what, from when to when each held in the world, and what said it.
        data["history"] = [
            {**replaced_ref(older), "recorded_at": iso(older.recorded_at)}
            for older in memory_history(owner=memory.owner, memory=memory)
        ]
        data["evidence"] = [
            {"source_id": str(item.source_id), "stance": item.stance, "recorded_at": iso(item.recorded_at)}
            for item in sorted(memory.evidence.all(), key=lambda e: (e.recorded_at, str(e.id)))
        ]
    return data


def hit_dict(hit: Hit) -> HitDict:
    """A recalled memory as recall and answer show it: the API's memory shape plus its score, and its
    source named (recall's rows carry it: no query here)."""
    return {
        **memory_dict(hit.memory),
        "source": source_ref(hit.memory.source),
        "score": round(hit.score, 6),
        "similarity": round(hit.similarity, 6),
        "matched_words": hit.matched_words,
    }


def _job_memories(job: Job) -> Iterable[Memory]:
    # A job's memories are written in the transaction that marks it succeeded (and a failed job is
    # re-run as the same job only from failed): as of the status read, any other job has none, and
    # a save's answer, or a poll of a pending job, needs no query for them.
    return job.memories.all() if job.status == Job.Status.SUCCEEDED else ()


def job_dict(job: Job, *, memories: list[Memory] | None = None) -> JobDict:
    """A job as the API shows it; `memories` (rendered in full) when given."""
    duration_ms = None
    if job.started_at is not None and job.finished_at is not None:
        duration_ms = int((job.finished_at - job.started_at).total_seconds() * 1000)
    data: JobDict = {
        "id": str(job.id),
        "kind": job.kind,
        "status": job.status,
        "attempts": job.attempts,
        "error": {"code": job.error_code, "message": job.error_message} if job.error_code else None,
        "created_at": iso(job.created_at),
        "started_at": iso(job.started_at),
        "finished_at": iso(job.finished_at),
        "duration_ms": duration_ms,
        "space_id": str(job.space_id),
        "source_id": str_or_none(job.source_id),
        "memory_ids": [str(m.id) for m in (memories if memories is not None else _job_memories(job))],
        "progress": job_progress(job),
    }
    if memories is not None:
        data["memories"] = [memory_dict(memory) for memory in memories]
    return data


def space_dict(space: Space) -> dict[str, object]:
    """A space as the API shows it, with `memory_count` when the selector annotated it."""
    data: dict[str, object] = {
        "id": str(space.id),
        "name": space.name,
        "is_default": space.is_default,
        "created_at": iso(space.created_at),
    }
    count = getattr(space, "memory_count", None)
    if count is not None:
        data["memory_count"] = int(count)
    return data


# --- the graph profile ------------------------------------------------------------------------------


# --- the evidence profile ---------------------------------------------------------------------------


def fact_dict(fact: evidence.Fact, *, now: datetime, space: Space) -> dict[str, object]:
    """A fact as the evidence profile shows it: memory or relation, same shape, naming its space and
    its source (a memory's own; a relation's first claim)."""
    row: Any = fact.memory if fact.memory is not None else fact.relation
    status = status_of(superseded_at=row.superseded_at, valid_until=row.valid_until, now=now)
    data: dict[str, object] = {
        "id": str(fact.id),
        "fact_type": fact.fact_type,
        "content": "",
        "kind": None,
        "category": None,
        "relation": None,
        "entities": [],
        "clocks": clocks(row),
        "status": status,
        "current": status == CURRENT,
        "evidence_count": fact.evidence_count,
        "contradiction_count": fact.contradiction_count,
        "relevance": round(fact.relevance, 6),
        "confidence": None,
        "source_id": None,
        "space": space_ref(space),
        "source": source_ref(fact.source),
    }
    if isinstance(row, Memory):
        data.update(
            content=row.content,
            kind=row.kind,
            category=row.category or None,
            entities=[entity_ref(entity) for entity in row.entities.all()],
            confidence=row.confidence,
            source_id=str(row.source_id) if row.source_id is not None else None,
        )
    else:
        data.update(
            content=relation_text(row),
            relation={
                "type": row.type,
                "subject": entity_ref(row.subject),
                "object": entity_ref(row.object),
            },
            entities=[entity_ref(row.subject), entity_ref(row.object)],
        )
    return data


def claimant_dict(claim: evidence.Claim, *, caller_claimant: str) -> dict[str, object]:
    source = claim.source
    kind, name = claim.claimant_kind, claim.claimant_name
    _, _, claimant_id = source.claimant.partition(":")
    if kind == "user":
        label = "you"
    elif kind == "token":
        label = (
            f"you, with the personal access token {name!r}" if name else "you, with a personal access token"
        )
    elif kind == "agent":
        label = name or "an agent that has since been removed"
    elif kind == "document":
        label = f"the document {name!r}" if name else "a document"
    else:
        label = "unknown"
    return {
        "kind": kind,
        "id": claimant_id or None,
        "name": name,
        "label": label,
        "is_caller": bool(source.claimant) and source.claimant == caller_claimant,
    }


def fact_ref_dict(ref: evidence.FactRef) -> dict[str, object]:
    return {"id": str(ref.id), "fact_type": ref.fact_type, "content": ref.content, "current": ref.current}


def claim_dict(claim: evidence.Claim, *, caller_claimant: str, space: Space) -> dict[str, object]:
    """A claim: one source, who asserted it, when, an excerpt, the facts it bears on, and its space."""
    source = claim.source
    return {
        "source_id": str(source.id),
        "space": space_ref(space),
        "origin": source.origin,
        "claimant": claimant_dict(claim, caller_claimant=caller_claimant),
        "recorded_at": iso(source.recorded_at),
        "excerpt": claim.excerpt,
        "excerpt_status": claim.excerpt_status,
        "title": source.title or None,
        "document": (
            {"kind": source.source_kind, "ref": source.source_ref, "version": source.version}
            if source.source_kind
            else None
        ),
        "session_id": str(source.session_id) if source.session_id is not None else None,
        "supports": [fact_ref_dict(ref) for ref in claim.supports],
        "contradicts": [fact_ref_dict(ref) for ref in claim.contradicts],
    }


# --- receipts ---------------------------------------------------------------------------------------
