"""Reads of memories: lists with filters, one memory with its evidence and history, and the
dashboard's search. Nothing here writes.

Every function is keyword-only and takes the owner explicitly: a row of another
account is indistinguishable from a row that does not exist.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, F, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Greatest, Substr

from accounts.models import User
from memories.as_of import View, active_q, held_q, recorded_by_q, started_q
from memories.errors import AppError, Code
from memories.models import Entity, Evidence, Memory, Space
from memories.selectors.images import image_source_of_memory


def memory_list(*, owner: User, status: str | None = Memory.Status.ACTIVE) -> QuerySet[Memory]:
    """The owner's memories, newest first, without their embeddings."""
    qs = Memory.objects.filter(owner=owner).defer("embedding")
    if status is not None:
        qs = qs.filter(status=status)
    return qs


# What a detail view shows of the memory's source: enough to recognise it,
# without loading a 10 MB document to cut 500 characters out of it.
SOURCE_EXCERPT_CHARS = 500


# How much of the source before a memory's span its excerpt shows.
EXCERPT_LEAD_CHARS = 120


# A supersession chain longer than this is a bug elsewhere; stop walking rather than loop.
HISTORY_MAX_STEPS = 200


STATUS_ALL = "all"


STATUS_CHOICES = (Memory.Status.ACTIVE.value, Memory.Status.SUPPRESSED.value, STATUS_ALL)


def _memories(*, owner: User) -> QuerySet[Memory]:
    """The owner's memories, shaped for rendering: no vectors, related rows loaded in bulk."""
    # A correlated subquery rather than a JOIN + GROUP BY: PostgreSQL evaluates it
    # only for the rows of the page that is returned, not for every matching row.
    # Evidence counts distinct claimants that support it: two agents saying it are
    # two, one agent (or one document) saying it twice is one.
    distinct_sources = (
        Evidence.objects.filter(
            owner_id=OuterRef("owner_id"),
            memory_id=OuterRef("pk"),
            source__owner_id=OuterRef("owner_id"),
            stance=Evidence.Stance.SUPPORTS,
        )
        .order_by()
        .values("memory_id")
        .annotate(n=Count("source__claimant", distinct=True))
        .values("n")[:1]
    )
    return (
        Memory.objects.filter(owner=owner)
        .defer("embedding", "search_vector")
        .select_related("space", "agent")
        .prefetch_related(
            Prefetch("entities", queryset=Entity.objects.filter(owner=owner).only("id", "name", "type"))
        )
        .annotate(evidence_count=Coalesce(Subquery(distinct_sources, output_field=IntegerField()), Value(0)))
        # The picture the memory was read from (or that said it again), for its image_url.
        .annotate(image_source_id=image_source_of_memory())
    )


def _range(field: str, start: datetime | None, end: datetime | None) -> Q:
    # Half-open [start, end): consecutive ranges neither overlap nor leave gaps.
    condition = Q()
    if start is not None:
        condition &= Q(**{f"{field}__gte": start})
    if end is not None:
        condition &= Q(**{f"{field}__lt": end})
    return condition


def memory_search_list(
    *,
    owner: User,
    kind: str | None = None,
    tags: list[str] | None = None,
    status: str = Memory.Status.ACTIVE,
    pinned: bool | None = None,
    space_id: uuid.UUID | None = None,
    recorded_from: datetime | None = None,
    recorded_to: datetime | None = None,
    occurred_from: datetime | None = None,
    occurred_to: datetime | None = None,
    at: datetime | None = None,
    known_at: datetime | None = None,
    include_superseded: bool = False,
) -> QuerySet[Memory]:
    """The owner's memories matching every given filter, newest first (-recorded_at, -id).

    - `tags`: the memory carries all of them.
    - `status`: "active" (default), "suppressed" or "all".
    - `space_id`: one of the owner's spaces; another id raises `space_not_found`.
    - `recorded_from` / `recorded_to`: system time, half-open [from, to).
    - `occurred_from` / `occurred_to`: world time, half-open; a memory matches when its
      `occurred_at`, `valid_from` or `due_at` falls in the range.
    - `at`: what held at T in the world, as the service knows it now (`memories.as_of`).
    - `known_at`: system time, only what the service had recorded by S (and not yet superseded
      then); alone it sets `at` too: what the service believed at S about S.
      Without `at`, the current view: superseded and ended memories are left out. `include_superseded` keeps
      them in either way (with `at`: every memory whose world time had started by T).

    Rows carry `evidence_count` (distinct sources), their space, agent and entities.
    """
    qs = _memories(owner=owner)
    if kind is not None:
        qs = qs.filter(kind=kind)
    if tags:
        qs = qs.filter(tags__contains=list(tags))
    if status != STATUS_ALL:
        qs = qs.filter(status=status)
    if pinned is not None:
        qs = qs.filter(pinned=pinned)
    if space_id is not None:
        if not Space.objects.filter(owner=owner, id=space_id).exists():
            raise AppError(Code.SPACE_NOT_FOUND)
        qs = qs.filter(space_id=space_id)
    if recorded_from is not None or recorded_to is not None:
        qs = qs.filter(_range("recorded_at", recorded_from, recorded_to))
    if occurred_from is not None or occurred_to is not None:
        qs = qs.filter(
            _range("occurred_at", occurred_from, occurred_to)
            | _range("valid_from", occurred_from, occurred_to)
            | _range("due_at", occurred_from, occurred_to)
        )
    if known_at is not None:
        at = at or known_at
        qs = qs.filter(recorded_by_q(known_at))
    if at is not None:
        qs = qs.filter(started_q(at) if include_superseded else held_q(View(at=at, known_at=known_at)))
    elif not include_superseded:
        # The current view: neither replaced nor over (a fact learnt late about an earlier time
        # ends before now).
        qs = qs.filter(held_q())
    return qs.order_by("-recorded_at", "-id")


def memory_get(*, owner: User, memory_id: uuid.UUID) -> Memory:
    """One of the owner's memories, whatever its status, with its evidence and source excerpt.

    Raises `memory_not_found` for an unknown id and for another account's memory.
    """
    memory = (
        _memories(owner=owner)
        .prefetch_related(
            Prefetch(
                "evidence",
                queryset=Evidence.objects.filter(owner=owner).order_by("recorded_at", "id"),
            )
        )
        .annotate(
            # The part of the source the memory came from, with a little of what leads up to it.
            source_excerpt=Substr(
                "source__content",
                Greatest(Coalesce(F("span_start"), Value(0)) - EXCERPT_LEAD_CHARS + 1, Value(1)),
                SOURCE_EXCERPT_CHARS,
            ),
            source_purged_at=F("source__purged_at"),
        )
        .filter(id=memory_id)
        .first()
    )
    if memory is None:
        raise AppError(Code.MEMORY_NOT_FOUND)
    return memory


def evidence_count(memory: Memory, *, stance: str = Evidence.Stance.SUPPORTS) -> int:
    """Distinct claimants whose sources support (or contradict) `memory`."""
    return (
        Evidence.objects.filter(
            owner_id=memory.owner_id, memory=memory, source__owner_id=memory.owner_id, stance=stance
        )
        .values("source__claimant")
        .distinct()
        .count()
    )


def memory_replaced_list(*, owner_id: uuid.UUID, memory_ids: Iterable[uuid.UUID]) -> QuerySet[Memory]:
    """What the memories `memory_ids` replaced (their history), the latest replaced first, without
    their vectors: what an answer says came "before that" and a graph memory's `replaced`.

    A forgotten memory is nobody's history, even one that was replaced before it was forgotten
    (`memories.as_of.active_q`).
    """
    return (
        Memory.objects.filter(owner_id=owner_id, superseded_by_id__in=list(memory_ids))
        .filter(active_q())
        .defer("embedding", "search_vector")
        .order_by("-superseded_at", "-id")
    )


def memory_history(*, owner: User, memory: Memory) -> list[Memory]:
    """The supersession chain around `memory`, oldest first, without `memory` itself.

    Everything it superseded, transitively, and everything that superseded it
    since, so a reader sees how the fact changed over time. Rows carry only id,
    content, their clocks (world and system), superseded_by_id and source_id.
    A forgotten memory is not in it, and the chain stops there: what lies beyond it
    was replaced through the forgotten one.
    """
    fields = (
        "id",
        "content",
        "recorded_at",
        "superseded_at",
        "superseded_by_id",
        "source_id",
        "valid_from",
        "valid_until",
        "occurred_at",
        "stated_at",
    )
    base = Memory.objects.filter(owner=owner).filter(active_q()).only(*fields)
    seen: set[uuid.UUID] = {memory.id}
    chain: list[Memory] = []

    frontier = [memory.id]
    for _ in range(HISTORY_MAX_STEPS):
        # One query per generation: a memory may have replaced several older ones.
        older = [m for m in base.filter(superseded_by_id__in=frontier) if m.id not in seen]
        if not older:
            break
        seen.update(m.id for m in older)
        chain.extend(older)
        frontier = [m.id for m in older]

    next_id = memory.superseded_by_id
    for _ in range(HISTORY_MAX_STEPS):
        if next_id is None or next_id in seen:
            break
        newer = base.filter(id=next_id).first()
        if newer is None:
            break
        seen.add(newer.id)
        chain.append(newer)
        next_id = newer.superseded_by_id

    chain.sort(key=lambda m: (m.recorded_at, str(m.id)))
    return chain


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
