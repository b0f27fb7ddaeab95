"""Reads of the audit trail: the Activity page's list, and the audit row of a hard delete (its
receipt is rendered from it)."""

from __future__ import annotations

import uuid
from datetime import datetime

from django.db.models import QuerySet

from accounts.models import User
from memories import errors
from memories.errors import Code
from memories.models import AuditEvent
from memories.parsing import parse_uuid


def purge_event_get(*, owner: User, event_id: object) -> AuditEvent:
    """One of the owner's hard deletes (of a memory, a relation or a space's memories), by its audit
    row's id; `memories.wire.purge_receipt` renders it.

    Raises `not_found` (404) for an unknown id, another account's event, or an event that is not a
    hard delete.
    """
    try:
        pk = event_id if isinstance(event_id, uuid.UUID) else parse_uuid(str(event_id))
    except ValueError:
        pk = None
    event = (
        AuditEvent.objects.filter(
            id=pk, owner_id_snapshot=owner.id, action=AuditEvent.Action.HARD_DELETED
        ).first()
        if pk is not None
        else None
    )
    if event is None:
        raise errors.AppError(Code.NOT_FOUND, "No such receipt in your account.")
    return event


def audit_event_list(
    *,
    owner: User,
    agent_id: int | None = None,
    by_person: bool = False,
    action: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[AuditEvent]:
    """The owner's audit trail, newest first, with its actors loaded; optionally only one agent's
    events (`agent_id`), only the person's own (`by_person`: no agent), one `action`, and a
    half-open time window [since, until)."""
    events = AuditEvent.objects.filter(owner_id_snapshot=owner.id).select_related("actor_agent", "actor_user")
    if agent_id is not None:
        events = events.filter(actor_agent_id=agent_id)
    elif by_person:
        events = events.filter(actor_agent__isnull=True)
    if action is not None:
        events = events.filter(action=action)
    if since is not None:
        events = events.filter(created_at__gte=since)
    if until is not None:
        events = events.filter(created_at__lt=until)
    return events.order_by("-created_at", "-id")
