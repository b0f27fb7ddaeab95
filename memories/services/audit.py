"""The audit trail: who did what to which row. Audit rows never hold memory content."""

from __future__ import annotations

from typing import Any

from accounts.caller import Actor
from memories.models import AuditEvent


def audit_record(
    *,
    actor: Actor,
    action: str,
    target_type: str,
    target_id: Any = None,
    detail: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append an audit row of `actor`'s change. `detail` must never carry memory content."""
    return AuditEvent.objects.create(
        owner_id_snapshot=actor.owner.id,
        actor_user=actor.user,
        actor_agent_id=actor.agent_id,
        action=action,
        target_id=target_id,
        target_type=target_type,
        detail=detail or {},
        request_id=actor.request_id,
    )
