"""How memories, jobs and spaces look on the wire (REST, and MCP tools that reuse these).

Plain dicts rather than DRF serializers: they are read-only shapes, and keeping
them in one place makes every surface render a memory the same way. Ids are
strings, datetimes ISO 8601 with their offset, and embeddings never leave.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memories.models import Job, Memory, Space
from memories.read_selectors import SOURCE_EXCERPT_CHARS, evidence_count, memory_history


def iso(value: datetime | None) -> str | None:
    """A datetime as ISO 8601 with its UTC offset (microseconds kept), or None."""
    return value.isoformat() if value is not None else None


def _str_or_none(value: Any) -> str | None:
    return str(value) if value is not None else None


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
    return source.content[:SOURCE_EXCERPT_CHARS]


def memory_dict(memory: Memory, *, detail: bool = False) -> dict[str, Any]:
    """A memory as the API shows it.

    `detail=True` adds `source_excerpt`, the supersession `history` and the
    `evidence` list; the list endpoint leaves them out to stay one query per page.
    """
    agent = memory.agent if memory.agent_id is not None else None
    data: dict[str, Any] = {
        "id": str(memory.id),
        "content": memory.content,
        "kind": memory.kind,
        "category": memory.category or None,
        "tags": list(memory.tags),
        "entities": [
            {"id": str(entity.id), "name": entity.name, "type": entity.type}
            for entity in memory.entities.all()
        ],
        "status": memory.status,
        "pinned": memory.pinned,
        "confidence": memory.confidence,
        "space": {"id": str(memory.space_id), "name": memory.space.name},
        "clocks": {
            "occurred_at": iso(memory.occurred_at),
            "valid_from": iso(memory.valid_from),
            "valid_until": iso(memory.valid_until),
            "due_at": iso(memory.due_at),
            "recorded_at": iso(memory.recorded_at),
            "superseded_at": iso(memory.superseded_at),
            "superseded_by": _str_or_none(memory.superseded_by_id),
        },
        "provenance": {
            "source_id": _str_or_none(memory.source_id),
            "job_id": _str_or_none(memory.job_id),
            "agent": {"id": agent.pk, "name": agent.name} if agent is not None else None,
            "session_id": _str_or_none(memory.session_id),
        },
        "evidence_count": _evidence_count(memory),
    }
    if detail:
        data["source_excerpt"] = _source_excerpt(memory)
        data["history"] = [
            {
                "id": str(older.id),
                "content": older.content,
                "recorded_at": iso(older.recorded_at),
                "superseded_at": iso(older.superseded_at),
            }
            for older in memory_history(owner=memory.owner, memory=memory)
        ]
        data["evidence"] = [
            {"source_id": str(item.source_id), "stance": item.stance, "recorded_at": iso(item.recorded_at)}
            for item in sorted(memory.evidence.all(), key=lambda e: (e.recorded_at, str(e.id)))
        ]
    return data


def job_dict(job: Job, *, memories: list[Memory] | None = None) -> dict[str, Any]:
    """A job as the API shows it; `memories` (rendered in full) when given."""
    duration_ms = None
    if job.started_at is not None and job.finished_at is not None:
        duration_ms = int((job.finished_at - job.started_at).total_seconds() * 1000)
    data: dict[str, Any] = {
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
        "source_id": _str_or_none(job.source_id),
        "memory_ids": [str(m.id) for m in (memories if memories is not None else job.memories.all())],
    }
    if memories is not None:
        data["memories"] = [memory_dict(memory) for memory in memories]
    return data


def space_dict(space: Space) -> dict[str, Any]:
    """A space as the API shows it, with `memory_count` when the selector annotated it."""
    data: dict[str, Any] = {
        "id": str(space.id),
        "name": space.name,
        "is_default": space.is_default,
        "created_at": iso(space.created_at),
    }
    count = getattr(space, "memory_count", None)
    if count is not None:
        data["memory_count"] = int(count)
    return data
