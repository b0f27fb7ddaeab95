"""Sources are immutable testimony: what was said (stored once, never edited), what identifies it
(its hash) and who asserted it (its claimant). Saves, uploads and `relate` all record through
`source_new` (stored with their job) or `source_record`."""

from __future__ import annotations

import hashlib

from accounts.caller import Caller
from memories.models import Source, Space


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


def source_new(*, caller: Caller, space: Space, origin: str, content: str, **fields: object) -> Source:
    """What `caller` asserted, as an immutable Source of `space` not stored yet, attributed from the
    token: `job_queue` stores it with its job in one message.

    The hash and size are of `content`, the claimant the caller's, unless `fields` say otherwise
    (a document is its own claimant, hashed as uploaded); the rest of `fields` are the Source's.
    """
    encoded = content.encode()
    fields.setdefault("content_hash", content_hash(encoded))
    fields.setdefault("claimant", claimant_of(caller))
    fields.setdefault("size_bytes", len(encoded))
    return Source(
        owner=caller.user, space=space, agent_id=caller.agent_id, origin=origin, content=content, **fields
    )


def source_record(*, caller: Caller, space: Space, origin: str, content: str, **fields: object) -> Source:
    """source_new, stored: for a source no job is queued with (`relate`)."""
    source = source_new(caller=caller, space=space, origin=origin, content=content, **fields)
    source.save(force_insert=True)
    return source
