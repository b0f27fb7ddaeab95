"""Reads of the audit trail: the audit row of a hard delete (its receipt is rendered from it)."""

from __future__ import annotations

import uuid
from typing import Any

from accounts.models import User
from memories import errors
from memories.errors import Code
from memories.models import AuditEvent
from memories.parsing import parse_uuid


def purge_event_get(*, owner: User, event_id: Any) -> AuditEvent:
    """One of the owner's hard deletes (of a memory, a relation or a space's memories), by its audit
    row's id; `memories.representations.purge_receipt` renders it.

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
