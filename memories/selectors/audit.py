"""Reads of the audit trail: the receipt of a hard delete, from its audit row."""

from __future__ import annotations

import uuid
from typing import Any

from accounts.models import User
from memories import errors
from memories.models import AuditEvent


def purge_receipt_get(*, owner: User, event_id: Any) -> dict[str, Any]:
    """The receipt of one of the owner's hard deletes (of a memory or a space), from its audit row.

    The same shape `memory_hard_delete` returns. Raises `not_found` (404) for an
    unknown id, another account's event, or an event that is not a hard delete.
    """
    try:
        pk = uuid.UUID(str(event_id))
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
        raise errors.AppError(errors.NOT_FOUND, "No such receipt in your account.", http_status=404)
    return {
        "target_type": event.target_type,
        "target_id": str(event.target_id),
        "purged": dict(event.detail.get("purged", {})),
        "reason": event.detail.get("reason", ""),
        "audit_event_id": str(event.id),
        "purged_at": event.created_at,
    }
