"""Writes of memories: save (`remember`), suppress and restore, pin. A hard delete purges through
`memories.services.purge`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.caller import Actor, Caller
from accounts.models import User
from memories import errors
from memories.errors import AppError, Code
from memories.models import AuditEvent, Job, Memory, Source
from memories.services.audit import audit_record
from memories.services.jobs import job_queue
from memories.services.purge import memories_purge, purge_record
from memories.services.sources import source_record
from memories.services.spaces import space_for_caller


def _memory_for_update(*, owner: User, memory_id: Any) -> Memory:
    # Row lock: two concurrent suppress/restore calls must not interleave their
    # read-check-write, or the audit trail would record a change that did not happen.
    memory = Memory.objects.select_for_update().filter(owner=owner, id=memory_id).first()
    if memory is None:
        raise AppError(Code.MEMORY_NOT_FOUND)
    return memory


_STATUS_FIELDS = ["status", "suppressed_at", "suppressed_reason", "suppressed_note"]


def _audit(actor: Actor, memory: Memory, action: str, **detail: Any) -> None:
    audit_record(actor=actor, action=action, target_type="memory", target_id=memory.id, detail=detail)


@transaction.atomic
def memory_suppress(*, actor: Actor, memory_id: Any, reason: str = "other", note: str = "") -> Memory:
    """Hide a memory from recall and answer, restorably, with a reason code and optionally the
    reason in words (`note`). Idempotent: an already suppressed memory keeps its first reason."""
    memory = _memory_for_update(owner=actor.owner, memory_id=memory_id)
    if memory.status != Memory.Status.SUPPRESSED:
        memory.status = Memory.Status.SUPPRESSED
        memory.suppressed_at = timezone.now()
        memory.suppressed_reason = reason[:50]
        memory.suppressed_note = note.strip()
        memory.save(update_fields=_STATUS_FIELDS)
        # The note stays on the row: an audit row never holds words that may repeat a memory.
        _audit(actor, memory, AuditEvent.Action.SUPPRESSED, reason=memory.suppressed_reason)
    return memory


@transaction.atomic
def memory_restore(*, actor: Actor, memory_id: Any) -> Memory:
    """Bring a suppressed memory back into recall. Idempotent."""
    memory = _memory_for_update(owner=actor.owner, memory_id=memory_id)
    if memory.status != Memory.Status.ACTIVE:
        memory.status, memory.suppressed_at = Memory.Status.ACTIVE, None
        memory.suppressed_reason = memory.suppressed_note = ""
        memory.save(update_fields=_STATUS_FIELDS)
        _audit(actor, memory, AuditEvent.Action.RESTORED)
    return memory


def remember(
    *,
    caller: Caller,
    content: str,
    origin: str = Source.Origin.REMEMBER,
    session_id: Any = None,
    occurred_at: datetime | None = None,
    space_id: Any = None,
    kind: str | None = None,
    tags: list[str] | None = None,
    category: str | None = None,
    entities: list[dict[str, str]] | None = None,
    confidence: float | None = None,
    source_text: str = "",
) -> Job:
    """Store `content` as an immutable Source and queue the job that derives memories.

    Attribution (user, agent) comes from `caller`, never from the request body.
    The task is sent only after the transaction commits, so the worker always
    finds the rows.
    """
    content = content.strip()
    if not content:
        raise errors.AppError(
            Code.VALUE_TOO_SHORT, "content must not be empty.", details={"field": "content"}
        )
    if len(content) > settings.REMEMBER_MAX_CHARS:
        raise errors.AppError(
            Code.VALUE_TOO_LONG,
            f"content is longer than {settings.REMEMBER_MAX_CHARS} characters.",
            details={"field": "content", "max_length": settings.REMEMBER_MAX_CHARS},
        )
    options: dict[str, Any] = {}
    if kind:
        options["kind"] = kind
    if tags:
        options["tags"] = list(tags)
    # What the saver states about the content (REST save): applied to every memory
    # the job derives from it.
    if category:
        options["category"] = category
    if entities:
        options["entities"] = [{"name": e["name"], "type": e["type"]} for e in entities]
    if confidence is not None:
        options["confidence"] = confidence
    with transaction.atomic():
        space = space_for_caller(caller=caller, space_id=space_id)
        source = source_record(
            caller=caller,
            space=space,
            origin=origin,
            content=content,
            source_text=source_text.strip(),
            session_id=session_id,
            refers_to=occurred_at,
        )
        job = job_queue(caller=caller, space=space, source=source, kind=Job.Kind.REMEMBER, options=options)
    return job


@transaction.atomic
def memory_set_pinned(*, actor: Actor, memory_id: Any, pinned: bool) -> Memory:
    """Pin (boosted in recall) or unpin a memory. Idempotent; audited when it changes."""
    memory = _memory_for_update(owner=actor.owner, memory_id=memory_id)
    if memory.pinned != pinned:
        memory.pinned = pinned
        memory.save(update_fields=["pinned"])
        action = AuditEvent.Action.PINNED if pinned else AuditEvent.Action.UNPINNED
        _audit(actor, memory, action)
    return memory


@transaction.atomic
def memory_hard_delete(*, actor: Actor, memory_id: Any, reason: str = "other") -> dict[str, Any]:
    """Permanently remove a memory and its traces, in one transaction; return the receipt."""
    memory = _memory_for_update(owner=actor.owner, memory_id=memory_id)
    purged = memories_purge(owner=actor.owner, memories=[memory])
    return purge_record(actor=actor, target_type="memory", target_id=memory.id, purged=purged, reason=reason)
