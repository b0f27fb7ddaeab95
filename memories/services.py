"""Writes. Every function takes the owner explicitly and is keyword-only.

Views, API endpoints, MCP tools, admin actions and Celery tasks call these and
never write models themselves.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.caller import Caller
from accounts.models import User
from memories import errors
from memories.models import AuditEvent, Entity, Evidence, Job, Memory, Relation, Source, Space

DEFAULT_SPACE_NAME = "Personal"


def audit_record(
    *,
    owner: User,
    action: str,
    actor_user: User | None = None,
    actor_agent_id: int | None = None,
    target_id: Any = None,
    target_type: str = "",
    detail: dict[str, Any] | None = None,
    request_id: str = "",
) -> AuditEvent:
    """Append an audit row. `detail` must never carry memory content."""
    return AuditEvent.objects.create(
        owner_id_snapshot=owner.id,
        actor_user=actor_user,
        actor_agent_id=actor_agent_id,
        action=action,
        target_id=target_id,
        target_type=target_type,
        detail=detail or {},
        request_id=request_id,
    )


def space_create_default(*, owner: User) -> Space:
    """Return the owner's default space, creating it if they have none."""
    existing = Space.objects.filter(owner=owner, is_default=True).first()
    if existing is not None:
        return existing
    try:
        # A savepoint: a concurrent sign-in creating the same default must not
        # break the caller's transaction.
        with transaction.atomic():
            return Space.objects.create(owner=owner, name=DEFAULT_SPACE_NAME, is_default=True)
    except IntegrityError:
        return Space.objects.get(owner=owner, is_default=True)


def space_create(*, owner: User, name: str) -> Space:
    """Create another space for `owner`; names are unique per owner."""
    name = name.strip()
    if not name or len(name) > 100:
        raise errors.AppError("invalid_space_name", "A space name has 1 to 100 characters.")
    try:
        with transaction.atomic():
            space = Space.objects.create(owner=owner, name=name)
            audit_record(
                owner=owner,
                actor_user=owner,
                action=AuditEvent.Action.SPACE_CREATED,
                target_id=space.id,
                target_type="space",
            )
    except IntegrityError:
        raise errors.AppError(
            "space_name_taken",
            f"You already have a space named {name!r}.",
            http_status=409,
            agent_action="choose another name",
        ) from None
    return space


def _memory_for_update(*, owner: User, memory_id: Any) -> Memory:
    # Row lock: two concurrent suppress/restore calls must not interleave their
    # read-check-write, or the audit trail would record a change that did not happen.
    memory = Memory.objects.select_for_update().filter(owner=owner, id=memory_id).first()
    if memory is None:
        raise errors.memory_not_found()
    return memory


@transaction.atomic
def memory_suppress(
    *,
    owner: User,
    memory_id: Any,
    reason: str = "other",
    actor_user: User | None = None,
    actor_agent_id: int | None = None,
    request_id: str = "",
) -> Memory:
    """Hide a memory from recall and answer, restorably. Idempotent."""
    memory = _memory_for_update(owner=owner, memory_id=memory_id)
    if memory.status == Memory.Status.SUPPRESSED:
        return memory
    memory.status = Memory.Status.SUPPRESSED
    memory.suppressed_at = timezone.now()
    memory.suppressed_reason = reason[:50]
    memory.save(update_fields=["status", "suppressed_at", "suppressed_reason"])
    audit_record(
        owner=owner,
        actor_user=actor_user,
        actor_agent_id=actor_agent_id,
        action=AuditEvent.Action.SUPPRESSED,
        target_id=memory.id,
        target_type="memory",
        detail={"reason": memory.suppressed_reason},
        request_id=request_id,
    )
    return memory


@transaction.atomic
def memory_restore(
    *,
    owner: User,
    memory_id: Any,
    actor_user: User | None = None,
    actor_agent_id: int | None = None,
    request_id: str = "",
) -> Memory:
    """Bring a suppressed memory back into recall. Idempotent."""
    memory = _memory_for_update(owner=owner, memory_id=memory_id)
    if memory.status == Memory.Status.ACTIVE:
        return memory
    memory.status = Memory.Status.ACTIVE
    memory.suppressed_at = None
    memory.suppressed_reason = ""
    memory.save(update_fields=["status", "suppressed_at", "suppressed_reason"])
    audit_record(
        owner=owner,
        actor_user=actor_user,
        actor_agent_id=actor_agent_id,
        action=AuditEvent.Action.RESTORED,
        target_id=memory.id,
        target_type="memory",
        request_id=request_id,
    )
    return memory


# --- remember ---------------------------------------------------------------------------


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def space_for_caller(*, caller: Caller, space_id: Any = None) -> Space:
    """The space a write goes to: the one asked for (must be the caller's), else the default."""
    space_id = space_id if space_id is not None else caller.space_id
    if space_id is None:
        return space_create_default(owner=caller.user)
    space = Space.objects.filter(owner=caller.user, id=space_id).first()
    if space is None:
        raise errors.AppError(
            errors.SPACE_NOT_FOUND,
            "No space with this id exists in your account.",
            http_status=404,
            agent_action="list your spaces and use one of their ids",
        )
    return space


def claimant_of(caller: Caller) -> str:
    """Who is asserting, for the evidence count: one agent saying a thing twice is one claimant."""
    if caller.agent_id is not None:
        return f"agent:{caller.agent_id}"
    if caller.via == "pat" and caller.token_id:
        return f"token:{caller.token_id}"
    return "user"


def document_claimant(*, source_kind: str, source_ref: str, digest: str) -> str:
    """A document is its own claimant: a named document across versions, else its bytes."""
    return f"document:{source_kind}:{source_ref}"[:600] if source_ref else f"document:{digest}"


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
        raise errors.AppError("value_too_short", "content must not be empty.", details={"field": "content"})
    if len(content) > settings.REMEMBER_MAX_CHARS:
        raise errors.AppError(
            "value_too_long",
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
        source = Source.objects.create(
            owner=caller.user,
            space=space,
            agent_id=caller.agent_id,
            origin=origin,
            content=content,
            content_hash=content_hash(content.encode()),
            claimant=claimant_of(caller),
            source_text=source_text.strip(),
            session_id=session_id,
            refers_to=occurred_at,
            size_bytes=len(content.encode()),
        )
        job = _job_queue(caller=caller, space=space, source=source, kind=Job.Kind.REMEMBER, options=options)
    return job


def _job_queue(*, caller: Caller, space: Space, source: Source, kind: str, options: dict[str, Any]) -> Job:
    job = Job.objects.create(
        owner=caller.user,
        space=space,
        agent_id=caller.agent_id,
        source=source,
        kind=kind,
        options=options,
    )
    job_id = job.id
    transaction.on_commit(lambda: job_enqueue(job_id=job_id))
    return job


def job_enqueue(*, job_id: Any) -> None:
    """Send the job to the worker. Safe to call twice: the worker claims a job once."""
    from memories.tasks import process_job

    process_job.delay(str(job_id))


# --- pin / hard delete -------------------------------------------------------------------


@transaction.atomic
def memory_set_pinned(
    *,
    owner: User,
    memory_id: Any,
    pinned: bool,
    actor_user: User | None = None,
    actor_agent_id: int | None = None,
    request_id: str = "",
) -> Memory:
    """Pin (boosted in recall) or unpin a memory. Idempotent; audited when it changes."""
    memory = _memory_for_update(owner=owner, memory_id=memory_id)
    if memory.pinned == pinned:
        return memory
    memory.pinned = pinned
    memory.save(update_fields=["pinned"])
    audit_record(
        owner=owner,
        actor_user=actor_user,
        actor_agent_id=actor_agent_id,
        action=AuditEvent.Action.PINNED if pinned else AuditEvent.Action.UNPINNED,
        target_id=memory.id,
        target_type="memory",
        request_id=request_id,
    )
    return memory


def _purge(*, owner: User, memories: list[Memory]) -> dict[str, Any]:
    """Delete `memories` and everything derived from them; redact their text from sources.

    Runs inside the caller's transaction. A Source that supported only purged
    memories is deleted; one that still supports others keeps its text with
    every purged memory's content cut out, so the words are gone everywhere.
    """
    memory_ids = [m.id for m in memories]
    source_ids = set(
        Evidence.objects.filter(memory_id__in=memory_ids).values_list("source_id", flat=True)
    ) | {m.source_id for m in memories if m.source_id}
    entity_ids = set(
        Memory.entities.through.objects.filter(memory_id__in=memory_ids).values_list("entity_id", flat=True)
    )
    evidence_count = Evidence.objects.filter(memory_id__in=memory_ids).count()
    contents = [m.content for m in memories if m.content]
    Memory.objects.filter(id__in=memory_ids).delete()  # cascades evidence and entity links

    sources_deleted = sources_redacted = 0
    for source in Source.objects.select_for_update().filter(owner=owner, id__in=source_ids):
        still_needed = (
            Memory.objects.filter(source_id=source.id).exists()
            or Evidence.objects.filter(source_id=source.id).exists()
        )
        if not still_needed:
            source.delete()
            sources_deleted += 1
            continue
        redacted = source.content
        for text in contents:
            redacted = redacted.replace(text, "[deleted]")
        # The raw text a save was distilled from may say the purged fact in other
        # words, so it cannot be redacted by matching: it goes entirely.
        if redacted != source.content or source.source_text:
            source.content = redacted
            source.content_hash = content_hash(redacted.encode())
            source.source_text = ""
            source.save(update_fields=["content", "content_hash", "source_text"])
            sources_redacted += 1
    orphaned = list(
        Entity.objects.filter(owner=owner, id__in=entity_ids, memories__isnull=True)
        .exclude(id__in=Relation.objects.filter(owner=owner).values("subject_id"))
        .exclude(id__in=Relation.objects.filter(owner=owner).values("object_id"))
        .values_list("id", flat=True)
    )
    Entity.objects.filter(id__in=orphaned).delete()
    return {
        "memories": len(memory_ids),
        "evidence": evidence_count,
        "sources_deleted": sources_deleted,
        "sources_redacted": sources_redacted,
        "entities_deleted": len(orphaned),
    }


@transaction.atomic
def memory_hard_delete(
    *,
    owner: User,
    memory_id: Any,
    reason: str = "other",
    actor_user: User | None = None,
    actor_agent_id: int | None = None,
    request_id: str = "",
) -> dict[str, Any]:
    """Permanently remove a memory and its traces, in one transaction; return the receipt."""
    memory = _memory_for_update(owner=owner, memory_id=memory_id)
    purged = _purge(owner=owner, memories=[memory])
    event = audit_record(
        owner=owner,
        actor_user=actor_user,
        actor_agent_id=actor_agent_id,
        action=AuditEvent.Action.HARD_DELETED,
        target_id=memory_id,
        target_type="memory",
        detail={"reason": reason[:50], "purged": purged},
        request_id=request_id,
    )
    return {
        "memory_id": str(memory_id),
        "purged": purged,
        "audit_event_id": str(event.id),
        "purged_at": event.created_at.isoformat(),
    }


@transaction.atomic
def memories_hard_delete_in_space(
    *, owner: User, space: Space, actor_user: User | None = None, request_id: str = ""
) -> dict[str, Any]:
    """Hard-delete every memory of one of the owner's spaces; return the receipt."""
    if space.owner_id != owner.id:
        raise errors.AppError(
            errors.SPACE_NOT_FOUND, "No space with this id exists in your account.", http_status=404
        )
    memories = list(Memory.objects.select_for_update().filter(owner=owner, space=space).defer("embedding"))
    purged = _purge(owner=owner, memories=memories)
    # Sources of the space that never produced a memory (failed jobs) go too.
    leftover = Source.objects.filter(owner=owner, space=space)
    purged["sources_deleted"] += leftover.count()
    leftover.delete()
    event = audit_record(
        owner=owner,
        actor_user=actor_user,
        action=AuditEvent.Action.HARD_DELETED,
        target_id=space.id,
        target_type="space",
        detail={"purged": purged},
        request_id=request_id,
    )
    return {
        "space_id": str(space.id),
        "purged": purged,
        "audit_event_id": str(event.id),
        "purged_at": event.created_at.isoformat(),
    }


# --- documents ---------------------------------------------------------------------------


def document_ingest(
    *,
    caller: Caller,
    filename: str,
    data: bytes,
    declared_media_type: str = "",
    source_kind: str = "",
    source_ref: str = "",
    versioning_mode: str = Source.VersioningMode.SNAPSHOT,
    source_modified_at: datetime | None = None,
    space_id: Any = None,
    title: str = "",
) -> tuple[Source, Job, bool]:
    """Store an uploaded document version as a Source and queue its ingest job.

    Returns (source, job, created). The same bytes again (same owner and space)
    create nothing and return the earlier source and job with created=False.
    A new version of a `living` document (same source_kind + source_ref) gets the
    next version number; its job supersedes what only the old version said.
    """
    from memories.documents import extract_text

    if bool(source_kind) != bool(source_ref):
        raise errors.AppError(
            "source_ref_incomplete",
            "source_kind and source_ref must be given together.",
            details={"fields": ["source_kind", "source_ref"]},
            agent_action="send both source_kind and source_ref, or neither",
        )
    if versioning_mode == Source.VersioningMode.LIVING and not source_ref:
        # What names the document across versions; without it there is no next version.
        raise errors.AppError(
            "source_ref_required",
            "A living document needs source_kind and source_ref: they name it across versions.",
            details={"fields": ["source_kind", "source_ref"]},
            agent_action="send source_kind and source_ref (e.g. 'gdrive' and the file id), or use snapshot",
        )
    digest = content_hash(data)
    # A filename is the client's text: keep it printable (PostgreSQL refuses NUL).
    filename = "".join(ch for ch in filename if ch.isprintable()).strip() or "document"
    space = space_for_caller(caller=caller, space_id=space_id)
    earlier = (
        Source.objects.filter(
            owner=caller.user, space=space, origin=Source.Origin.DOCUMENT, content_hash=digest
        )
        .filter(source_kind=source_kind, source_ref=source_ref)
        .first()
    )
    if earlier is not None:
        job = Job.objects.filter(owner=caller.user, source=earlier).order_by("-created_at").first()
        if job is not None:
            return earlier, job, False
    document = extract_text(
        filename=filename,
        data=data,
        declared_media_type=declared_media_type,
        max_bytes=settings.DOCUMENT_MAX_BYTES,
    )
    with transaction.atomic():
        version = 1
        if source_ref:
            # Lock the document's versions so two uploads cannot take the same number.
            previous = (
                Source.objects.select_for_update()
                .filter(owner=caller.user, space=space, source_kind=source_kind, source_ref=source_ref)
                .order_by("-version")
                .first()
            )
            if previous is not None:
                version = previous.version + 1
        source = Source.objects.create(
            owner=caller.user,
            space=space,
            agent_id=caller.agent_id,
            origin=Source.Origin.DOCUMENT,
            content=document.text,
            content_hash=digest,
            claimant=document_claimant(source_kind=source_kind, source_ref=source_ref, digest=digest),
            # The caller's title, else the document's own (PDF metadata, HTML <title>, a Markdown H1).
            title=(title.strip() or document.title)[:300],
            filename=filename[:255],
            media_type=document.media_type,
            size_bytes=len(data),
            source_kind=source_kind,
            source_ref=source_ref,
            version=version,
            versioning_mode=versioning_mode,
            source_modified_at=source_modified_at,
            refers_to=source_modified_at,
        )
        job = _job_queue(caller=caller, space=space, source=source, kind=Job.Kind.INGEST, options={})
    return source, job, True
