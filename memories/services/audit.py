"""The audit trail: who did what to which row. Audit rows never hold memory content."""

from __future__ import annotations

from typing import Any

from accounts.models import User
from memories.models import AuditEvent


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
