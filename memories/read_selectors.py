"""Reads behind the REST API's list and detail endpoints. Nothing here writes.

Every function is keyword-only and takes the owner explicitly: a row of another
account is indistinguishable from a row that does not exist.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from django.db.models import Count, F, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Substr

from accounts.models import User
from memories import errors
from memories.errors import AppError
from memories.models import Entity, Evidence, Job, Memory, Space

JOB_NOT_FOUND = "job_not_found"
# What a detail view shows of the memory's source: enough to recognise it,
# without loading a 10 MB document to cut 500 characters out of it.
SOURCE_EXCERPT_CHARS = 500
# A supersession chain longer than this is a bug elsewhere; stop walking rather than loop.
HISTORY_MAX_STEPS = 200

STATUS_ALL = "all"
STATUS_CHOICES = (Memory.Status.ACTIVE.value, Memory.Status.SUPPRESSED.value, STATUS_ALL)


def job_not_found() -> AppError:
    # Also what an outsider gets for someone else's job: existence is not revealed.
    return AppError(
        JOB_NOT_FOUND,
        "No job with this id exists in your account.",
        http_status=404,
        agent_action="check the job_id; it is returned by remember and document uploads",
    )


def space_not_found() -> AppError:
    return AppError(
        errors.SPACE_NOT_FOUND,
        "No space with this id exists in your account.",
        http_status=404,
        agent_action="list your spaces and use one of their ids",
    )


def _as_uuid(value: Any) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def _memories(*, owner: User) -> QuerySet[Memory]:
    """The owner's memories, shaped for rendering: no vectors, related rows loaded in bulk."""
    # A correlated subquery rather than a JOIN + GROUP BY: PostgreSQL evaluates it
    # only for the rows of the page that is returned, not for every matching row.
    # Evidence counts distinct claimants that support it: two agents saying it are
    # two, one agent (or one document) saying it twice is one.
    distinct_sources = (
        Evidence.objects.filter(memory_id=OuterRef("pk"), stance=Evidence.Stance.SUPPORTS)
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
    space_id: Any = None,
    recorded_from: datetime | None = None,
    recorded_to: datetime | None = None,
    occurred_from: datetime | None = None,
    occurred_to: datetime | None = None,
    at: datetime | None = None,
    include_superseded: bool = False,
) -> QuerySet[Memory]:
    """The owner's memories matching every given filter, newest first (-recorded_at, -id).

    - `tags`: the memory carries all of them.
    - `status`: "active" (default), "suppressed" or "all".
    - `space_id`: one of the owner's spaces; another id raises `space_not_found`.
    - `recorded_from` / `recorded_to`: system time, half-open [from, to).
    - `occurred_from` / `occurred_to`: world time, half-open; a memory matches when its
      `occurred_at`, `valid_from` or `due_at` falls in the range.
    - `at`: what the service knew at T: recorded by T and not yet superseded at T.
      Without `at`, superseded memories are left out. `include_superseded` keeps
      them in either way.

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
        space_uuid = _as_uuid(space_id)
        if space_uuid is None or not Space.objects.filter(owner=owner, id=space_uuid).exists():
            raise space_not_found()
        qs = qs.filter(space_id=space_uuid)
    if recorded_from is not None or recorded_to is not None:
        qs = qs.filter(_range("recorded_at", recorded_from, recorded_to))
    if occurred_from is not None or occurred_to is not None:
        qs = qs.filter(
            _range("occurred_at", occurred_from, occurred_to)
            | _range("valid_from", occurred_from, occurred_to)
            | _range("due_at", occurred_from, occurred_to)
        )
    if at is not None:
        qs = qs.filter(recorded_at__lte=at)
        if not include_superseded:
            qs = qs.filter(Q(superseded_at__isnull=True) | Q(superseded_at__gt=at))
    elif not include_superseded:
        qs = qs.filter(superseded_at__isnull=True)
    return qs.order_by("-recorded_at", "-id")


def memory_get(*, owner: User, memory_id: Any) -> Memory:
    """One of the owner's memories, whatever its status, with its evidence and source excerpt.

    Raises `memory_not_found` for an unknown id and for another account's memory.
    """
    memory_uuid = _as_uuid(memory_id)
    memory = None
    if memory_uuid is not None:
        memory = (
            _memories(owner=owner)
            .prefetch_related(
                Prefetch(
                    "evidence",
                    queryset=Evidence.objects.filter(owner=owner).order_by("recorded_at", "id"),
                )
            )
            .annotate(
                source_excerpt=Substr("source__content", 1, SOURCE_EXCERPT_CHARS),
                source_purged_at=F("source__purged_at"),
            )
            .filter(id=memory_uuid)
            .first()
        )
    if memory is None:
        raise errors.memory_not_found()
    return memory


def evidence_count(memory: Memory, *, stance: str = Evidence.Stance.SUPPORTS) -> int:
    """Distinct claimants whose sources support (or contradict) `memory`."""
    return Evidence.objects.filter(memory=memory, stance=stance).values("source__claimant").distinct().count()


def memory_history(*, owner: User, memory: Memory) -> list[Memory]:
    """The supersession chain around `memory`, oldest first, without `memory` itself.

    Everything it superseded, transitively, and everything that superseded it
    since, so a reader sees how the fact changed over time. Rows carry only id,
    content, recorded_at, superseded_at and superseded_by_id.
    """
    fields = ("id", "content", "recorded_at", "superseded_at", "superseded_by_id")
    base = Memory.objects.filter(owner=owner).only(*fields)
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


def _jobs(*, owner: User) -> QuerySet[Job]:
    return Job.objects.filter(owner=owner).prefetch_related(
        Prefetch(
            "memories",
            queryset=Memory.objects.filter(owner=owner).only("id", "job_id").order_by("recorded_at", "id"),
        )
    )


def job_list(*, owner: User, status: str | None = None) -> QuerySet[Job]:
    """The owner's jobs, newest first (-created_at, -id), each with the ids of its memories."""
    qs = _jobs(owner=owner)
    if status is not None:
        qs = qs.filter(status=status)
    return qs.order_by("-created_at", "-id")


def job_get(*, owner: User, job_id: Any) -> Job:
    """One of the owner's jobs. Raises `job_not_found` for an unknown id or another account's job."""
    job_uuid = _as_uuid(job_id)
    job = _jobs(owner=owner).filter(id=job_uuid).first() if job_uuid is not None else None
    if job is None:
        raise job_not_found()
    return job


def job_memory_list(*, owner: User, job: Job) -> QuerySet[Memory]:
    """The memories a job produced or confirmed (a repeated fact gains evidence instead of a
    new row), in the order they were recorded, whatever their status now."""
    produced = Q(job=job)
    if job.source_id is not None:
        # Supporting evidence only: a memory the save contradicted is not one it produced.
        confirmed = Evidence.objects.filter(
            owner=owner, source_id=job.source_id, stance=Evidence.Stance.SUPPORTS
        )
        produced |= Q(id__in=confirmed.values("memory_id"))
    return _memories(owner=owner).filter(produced).order_by("recorded_at", "id")


def _spaces_with_counts(*, owner: User) -> QuerySet[Space]:
    # Every memory stored in the space, whatever its status: the number a delete
    # of the space would move or destroy.
    count = (
        Memory.objects.filter(owner=owner, space_id=OuterRef("pk"))
        .order_by()
        .values("space_id")
        .annotate(n=Count("id"))
        .values("n")[:1]
    )
    return Space.objects.filter(owner=owner).annotate(
        memory_count=Coalesce(Subquery(count, output_field=IntegerField()), Value(0))
    )


def space_list_with_counts(*, owner: User) -> QuerySet[Space]:
    """The owner's spaces, default first then by name, each with `memory_count`."""
    return _spaces_with_counts(owner=owner).order_by("-is_default", "name")


def space_get(*, owner: User, space_id: Any) -> Space:
    """One of the owner's spaces with `memory_count`. Raises `space_not_found` otherwise."""
    space_uuid = _as_uuid(space_id)
    space = _spaces_with_counts(owner=owner).filter(id=space_uuid).first() if space_uuid is not None else None
    if space is None:
        raise space_not_found()
    return space
