"""Writes of memories: save (`remember`), revise (a corrected version) and retag, suppress and
restore, pin. A hard delete purges through `memories.services.purge`.
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
from memories.limits import tags_cleaned
from memories.models import AuditEvent, Job, Memory, Source
from memories.parsing import RowId
from memories.pipeline.extract import extract_contents
from memories.services.audit import audit_record
from memories.services.jobs import job_queue
from memories.services.purge import memories_purge, purge_record
from memories.services.sources import source_new
from memories.services.spaces import space_for_caller
from memories.wire import PurgeReceipt


def _memory_for_update(*, owner: User, memory_id: RowId) -> Memory:
    # Row lock: two concurrent suppress/restore calls must not interleave their
    # read-check-write, or the audit trail would record a change that did not happen.
    memory = Memory.objects.select_for_update().filter(owner=owner, id=memory_id).first()
    if memory is None:
        raise AppError(Code.MEMORY_NOT_FOUND)
    return memory


_STATUS_FIELDS = ["status", "suppressed_at", "suppressed_reason", "suppressed_note"]


def _audit(actor: Actor, memory: Memory, action: str, **detail: object) -> None:
    audit_record(actor=actor, action=action, target_type="memory", target_id=memory.id, detail=detail)


@transaction.atomic
def memory_suppress(*, actor: Actor, memory_id: RowId, reason: str = "other", note: str = "") -> Memory:
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
def memory_restore(*, actor: Actor, memory_id: RowId) -> Memory:
    """Bring a suppressed memory back into recall. Idempotent."""
    memory = _memory_for_update(owner=actor.owner, memory_id=memory_id)
    if memory.status != Memory.Status.ACTIVE:
        memory.status, memory.suppressed_at = Memory.Status.ACTIVE, None
        memory.suppressed_reason = memory.suppressed_note = ""
        memory.save(update_fields=_STATUS_FIELDS)
        _audit(actor, memory, AuditEvent.Action.RESTORED)
    return memory


def _check_content(content: str) -> str:
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
    # Text the worker's segmenter finds no statement in (punctuation, emoji, "Caroline:") would only
    # become a failed job: refused now, by the same segmenter. A Markdown note (None) is the
    # document reader's to split.
    if extract_contents(content, reference=timezone.now()) == []:
        raise errors.AppError(Code.NOTHING_TO_REMEMBER, details={"field": "content"})
    return content


def remember(
    *,
    caller: Caller,
    content: str,
    origin: str = Source.Origin.REMEMBER,
    session_id: object = None,
    occurred_at: datetime | None = None,
    space_id: RowId | None = None,
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
    content = _check_content(content)
    options: dict[str, object] = {}
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
    # No transaction of its own: the source and its job are one message (job_queue), all or nothing,
    # and the space read before it needs no lock (a default space created for it may stay).
    space = space_for_caller(caller=caller, space_id=space_id)
    source = source_new(
        caller=caller,
        space=space,
        origin=origin,
        content=content,
        source_text=source_text.strip(),
        session_id=session_id,
        refers_to=occurred_at,
    )
    return job_queue(caller=caller, space=space, source=source, kind=Job.Kind.REMEMBER, options=options)


# The clocks a person may correct on a memory (the world-time ones; system time is the service's).
REVISED_CLOCKS = ("occurred_at", "valid_from", "valid_until", "due_at")


def memory_revise(
    *,
    caller: Caller,
    memory_id: RowId,
    content: str,
    kind: str,
    tags: list[str],
    clocks: dict[str, datetime | None],
) -> Job:
    """A person's correction of a memory's words, kind or dates: a new version, never an edit in place.

    The corrected text is saved as a Source and goes through the pipeline like any save, with the
    kind and clocks stated (`clocks`: each of REVISED_CLOCKS, None for none); the job's memory then
    supersedes this one by the one supersede rule (`memories.pipeline.supersede`), so the old
    version is kept as history with its evidence. Only the current, unsuppressed version can be
    revised: an older one was already replaced, a suppressed one is restored first.
    """
    content = _check_content(content)
    if kind not in Memory.Kind.values:
        raise AppError(
            Code.INVALID_VALUE, "kind must be fact, episode or foresight.", details={"field": "kind"}
        )
    with transaction.atomic():
        memory = _memory_for_update(owner=caller.user, memory_id=memory_id)
        if memory.superseded_at is not None or memory.status != Memory.Status.ACTIVE:
            raise AppError(Code.MEMORY_NOT_CURRENT)
        space = space_for_caller(caller=caller, space_id=memory.space_id)
        source = source_new(caller=caller, space=space, origin=Source.Origin.REMEMBER, content=content)
        options: dict[str, object] = {
            "kind": kind,
            "tags": list(tags),
            "revises": str(memory.id),
            "clocks": {name: value.isoformat() if value else None for name, value in clocks.items()},
        }
        return job_queue(caller=caller, space=space, source=source, kind=Job.Kind.REMEMBER, options=options)


@transaction.atomic
def memory_retag(*, actor: Actor, memory_id: RowId, tags: list[str]) -> Memory:
    """Replace a memory's tags, in place: tags are the person's labels, not something the memory
    states, so no new version. Audited (the tags themselves are not in the audit row) when they change."""
    memory = _memory_for_update(owner=actor.owner, memory_id=memory_id)
    tags = tags_cleaned(tags)
    if memory.tags != tags:
        memory.tags = tags
        memory.save(update_fields=["tags"])
        _audit(actor, memory, AuditEvent.Action.UPDATED, fields=["tags"])
    return memory


@transaction.atomic
def memory_set_pinned(*, actor: Actor, memory_id: RowId, pinned: bool) -> Memory:
    """Pin (boosted in recall) or unpin a memory. Idempotent; audited when it changes."""
    memory = _memory_for_update(owner=actor.owner, memory_id=memory_id)
    if memory.pinned != pinned:
        memory.pinned = pinned
        memory.save(update_fields=["pinned"])
        action = AuditEvent.Action.PINNED if pinned else AuditEvent.Action.UNPINNED
        _audit(actor, memory, action)
    return memory


@transaction.atomic
def memory_hard_delete(*, actor: Actor, memory_id: RowId, reason: str = "other") -> PurgeReceipt:
    """Permanently remove a memory and its traces, in one transaction; return the receipt."""
    memory = _memory_for_update(owner=actor.owner, memory_id=memory_id)
    purged = memories_purge(owner=actor.owner, memories=[memory])
    return purge_record(actor=actor, target_type="memory", target_id=memory.id, purged=purged, reason=reason)


@transaction.atomic
def memories_suppress(*, actor: Actor, memory_ids: list[Any], reason: str = "other") -> int:
    """Suppress several memories at once (each as memory_suppress); return how many were newly
    suppressed. An unknown id (or another account's) is `memory_not_found`, and none changes."""
    changed = 0
    for memory_id in dict.fromkeys(str(i) for i in memory_ids):
        before = _memory_for_update(owner=actor.owner, memory_id=memory_id).status
        memory_suppress(actor=actor, memory_id=memory_id, reason=reason)
        changed += before != Memory.Status.SUPPRESSED
    return changed


@transaction.atomic
def memories_hard_delete(*, actor: Actor, memory_ids: list[Any], reason: str = "other") -> list[PurgeReceipt]:
    """Permanently remove several memories, each through the purge path as memory_hard_delete (an
    audit row and a receipt each), in one transaction: an unknown id (or another account's) is
    `memory_not_found`, and nothing is deleted. Returns the receipts."""
    return [
        memory_hard_delete(actor=actor, memory_id=memory_id, reason=reason)
        for memory_id in dict.fromkeys(str(i) for i in memory_ids)
    ]
