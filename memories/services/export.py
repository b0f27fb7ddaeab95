"""The account export: recorded in the audit trail before the first byte leaves."""

from __future__ import annotations

from collections.abc import Iterator

from accounts.models import User
from memories.models import AuditEvent
from memories.selectors.export import export_lines
from memories.services.audit import audit_record


def export_begin(
    *,
    owner: User,
    actor_user: User | None = None,
    actor_agent_id: int | None = None,
    request_id: str = "",
) -> Iterator[str]:
    """Record the export in the audit trail, then return `export_lines` for it.

    The audit row is written before the first byte leaves, so a download that is
    cut off half-way is still on record as an export.
    """
    audit_record(
        owner=owner,
        actor_user=actor_user,
        actor_agent_id=actor_agent_id,
        action=AuditEvent.Action.EXPORTED,
        target_id=owner.id,
        target_type="account",
        request_id=request_id,
    )
    return export_lines(owner=owner)
