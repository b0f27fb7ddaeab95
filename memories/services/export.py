"""The account export: recorded in the audit trail before the first byte leaves."""

from __future__ import annotations

from collections.abc import Iterator

from accounts.caller import Actor
from memories.models import AuditEvent
from memories.selectors.export import export_lines
from memories.services.audit import audit_record


def export_begin(*, actor: Actor) -> Iterator[str]:
    """Record the export in the audit trail, then return `export_lines` for it.

    The audit row is written before the first byte leaves, so a download that is
    cut off half-way is still on record as an export.
    """
    audit_record(
        actor=actor, action=AuditEvent.Action.EXPORTED, target_type="account", target_id=actor.owner.id
    )
    return export_lines(owner=actor.owner)
