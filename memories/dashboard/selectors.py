"""Reads the dashboard composes from the shared selectors and the `recall` operation. Nothing here writes.

Every function is keyword-only and takes the owner explicitly; rows of another
account never come back, and asking for one looks like asking for nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

from accounts.caller import ALL_SCOPES, Caller
from accounts.models import User
from memories import errors, selectors
from memories.models import AuditEvent, Memory, Relation
from memories.operations import registry
from memories.read_selectors import STATUS_ALL, memory_search_list

# How many results a search shows: recall's own ceiling, and more than a person reads.
SEARCH_LIMIT = 50
RECALL = "recall"
DATE_BY_RECORDED = "recorded"
DATE_BY_OCCURRED = "occurred"


@dataclass(frozen=True)
class MemoryFilters:
    """What the memories page filters by (all optional; status defaults to active)."""

    kind: str | None = None
    tags: list[str] = field(default_factory=list)
    space_id: uuid.UUID | None = None
    pinned: bool | None = None
    status: str = Memory.Status.ACTIVE
    date_by: str = DATE_BY_RECORDED
    date_from: datetime | None = None
    date_to: datetime | None = None


@dataclass(frozen=True)
class SearchResult:
    memories: list[Memory]
    # "recall" (hybrid search, ranked) or "text" (every word in the content, newest first).
    method: str


def memory_filtered_list(*, owner: User, filters: MemoryFilters) -> QuerySet[Memory]:
    """The owner's memories matching `filters`, newest first, shaped for the list page."""
    by_recorded = filters.date_by == DATE_BY_RECORDED
    return memory_search_list(
        owner=owner,
        kind=filters.kind,
        tags=filters.tags,
        status=filters.status,
        pinned=filters.pinned,
        space_id=filters.space_id,
        recorded_from=filters.date_from if by_recorded else None,
        recorded_to=filters.date_to if by_recorded else None,
        occurred_from=None if by_recorded else filters.date_from,
        occurred_to=None if by_recorded else filters.date_to,
    )


def recall_available() -> bool:
    """Whether the operations registry offers `recall` (hybrid search)."""
    return any(operation.name == RECALL for operation in registry.operations())


def _text_match(query: str) -> Q:
    # Every word, anywhere in the content: "ana lisbon" finds "Ana moved to Lisbon".
    condition = Q()
    for word in query.split():
        condition &= Q(content__icontains=word)
    return condition


def _recalled_ids(*, owner: User, query: str, filters: MemoryFilters) -> list[uuid.UUID]:
    """Memory ids recall ranks for `query`, best first, over the chosen space or all of them.

    Recall searches one space per call; with no space chosen each space is asked
    and the hits are merged by score (the same scoring runs on every call).
    """
    space_ids = (
        [filters.space_id]
        if filters.space_id is not None
        else [space.id for space in selectors.space_list(owner=owner)]
    )
    arguments: dict[str, Any] = {
        "query": query,
        "top_k": SEARCH_LIMIT,
        "types": [filters.kind] if filters.kind else [],
        "tags": list(filters.tags),
    }
    hits: list[tuple[float, str]] = []
    for space_id in space_ids:
        caller = Caller(user=owner, scopes=ALL_SCOPES, space_id=space_id)
        result = registry.run(RECALL, caller, dict(arguments))
        hits.extend((float(hit["score"]), str(hit["id"])) for hit in result["memories"])
    hits.sort(key=lambda hit: -hit[0])
    return list(dict.fromkeys(uuid.UUID(memory_id) for _, memory_id in hits))


def memory_search(*, owner: User, query: str, filters: MemoryFilters) -> SearchResult:
    """The owner's memories for a search box query, with the page's filters applied.

    With the `recall` operation registered, active memories are ranked by recall
    (hybrid vector + full-text search) and then narrowed by the filters recall
    does not know (pinned, dates). Recall never returns suppressed memories, by
    design; when the status filter asks for them they are matched by the words
    of their content and listed after the recalled ones.
    """
    base = memory_filtered_list(owner=owner, filters=filters)
    if not recall_available():
        return SearchResult(memories=list(base.filter(_text_match(query))[:SEARCH_LIMIT]), method="text")
    memories: list[Memory] = []
    if filters.status != Memory.Status.SUPPRESSED:
        ranked = _recalled_ids(owner=owner, query=query, filters=filters)
        by_id = {memory.id: memory for memory in base.filter(id__in=ranked)}
        memories = [by_id[memory_id] for memory_id in ranked if memory_id in by_id]
    if filters.status in (Memory.Status.SUPPRESSED, STATUS_ALL):
        suppressed = base.filter(_text_match(query), status=Memory.Status.SUPPRESSED)
        memories += list(suppressed[: SEARCH_LIMIT - len(memories)])
    return SearchResult(memories=memories[:SEARCH_LIMIT], method=RECALL)


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


def relation_list(*, owner: User) -> QuerySet[Relation]:
    """The owner's relations in every space, newest first, with both ends and the space loaded."""
    return (
        Relation.objects.filter(owner=owner)
        .select_related("subject", "object", "space")
        .order_by("-recorded_at", "id")
    )


def relation_get(*, owner: User, relation_id: Any) -> Relation:
    """One of the owner's relations; `relation_not_found` (404) for an unknown or another's id."""
    relation = relation_list(owner=owner).filter(id=relation_id).first()
    if relation is None:
        raise errors.AppError("relation_not_found", "No such relation in your account.", http_status=404)
    return relation
