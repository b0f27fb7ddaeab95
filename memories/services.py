"""Writes. Every function takes the owner explicitly and is keyword-only.

Views, API endpoints, MCP tools, admin actions and Celery tasks call these and
never write models themselves.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import User
from memories import errors
from memories.models import AuditEvent, Memory, Space

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
