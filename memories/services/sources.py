"""Sources are immutable testimony: what identifies one (its hash) and who asserted it (its claimant)."""

from __future__ import annotations

import hashlib

from accounts.caller import Caller


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
