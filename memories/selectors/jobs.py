"""Reads of jobs: lists, one job and the memories it produced, saves still pending, and where each
job is in the pipeline (`job_readiness_list`, behind `pipeline_readiness`); for the worker, the job it
runs with its source (`job_with_source`) and the recovery sweep's rule (`jobs_to_recover`). Nothing
here writes.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, models
from django.db.models import (
    BooleanField,
    ExpressionWrapper,
    F,
    FilteredRelation,
    Prefetch,
    Q,
    QuerySet,
)
from django.db.models.functions import Now
from django.utils import timezone

from accounts.models import User
from config.compiled import CompiledQuery, compile_once, compiled_rows, model_order
from memories.as_of import active_q, expired_q, memory_visible, superseded_q
from memories.errors import AppError, Code
from memories.models import Evidence, Job, Memory, Source, Space
from memories.parsing import RowId
from memories.selectors.memories import _memories


def _jobs(*, owner: User) -> QuerySet[Job]:
    return Job.objects.filter(owner=owner).prefetch_related(
        Prefetch(
            "memories",
            # A forgotten memory is no job's result an agent is told of (as_of.active_q).
            queryset=Memory.objects.filter(active_q(), owner=owner)
            .only("id", "job_id")
            .order_by("recorded_at", "id"),
        )
    )


def job_list(*, owner: User, status: str | None = None) -> QuerySet[Job]:
    """The owner's jobs, newest first (-created_at, -id), each with the ids of its memories."""
    qs = _jobs(owner=owner)
    if status is not None:
        qs = qs.filter(status=status)
    return qs.order_by("-created_at", "-id")


def job_get(*, owner: User, job_id: uuid.UUID) -> Job:
    """One of the owner's jobs. Raises `job_not_found` for an unknown id or another account's job."""
    job = _jobs(owner=owner).filter(id=job_id).first()
    if job is None:
        raise AppError(Code.JOB_NOT_FOUND)
    return job


def job_memory_list(*, owner: User, job: Job) -> QuerySet[Memory]:
    """The memories a job produced or confirmed (a repeated fact gains evidence instead of a
    new row), in the order they were recorded, whatever their clocks now; not the ones forgotten
    since (the owner's Suppressed page lists those)."""
    produced = Q(job=job)
    if job.source_id is not None:
        # Supporting evidence only: a memory the save contradicted is not one it produced.
        confirmed = Evidence.objects.filter(
            owner=owner, source_id=job.source_id, stance=Evidence.Stance.SUPPORTS
        )
        produced |= Q(id__in=confirmed.values("memory_id"))
    return _memories(owner=owner).filter(produced, active_q()).order_by("recorded_at", "id")


def job_wait(job: Job, seconds: float) -> Job:
    """Poll the job until it finishes or `seconds` pass (at most SAVE_MAX_WAIT_SECONDS): a
    save's read-your-write in one call (REST `wait`, graph `remember`)."""
    deadline = time.monotonic() + min(seconds, settings.SAVE_MAX_WAIT_SECONDS)
    while job.status in (Job.Status.QUEUED, Job.Status.RUNNING) and time.monotonic() < deadline:
        time.sleep(0.05)
        job.refresh_from_db(
            fields=["status", "attempts", "error_code", "error_message", "started_at", "finished_at"]
        )
    return job


# The saves of a space that are not recallable yet: queued or running. SQL with named parameters
# (`owner`, `space`: primary keys), so that recall can send it in the message of its retrieval
# statement and answer freshness without a round trip of its own (memories.retrieval.recall).
PENDING_SAVES_SQL = (
    f"SELECT count(*) FROM {Job._meta.db_table}"  # noqa: S608 - the model's own names, no input
    " WHERE owner_id = %(owner)s AND space_id = %(space)s"
    f" AND status IN ('{Job.Status.QUEUED.value}', '{Job.Status.RUNNING.value}')"
)


def pending_saves(*, owner: User, space: Space) -> int:
    """How many of the owner's saves into `space` are still queued or running."""
    with connection.cursor() as cursor:
        cursor.execute(PENDING_SAVES_SQL, {"owner": owner.pk, "space": space.pk})
        return int(cursor.fetchone()[0])


STAGES = ("queued", "extract", "embed", "store", "searchable")


# The pipeline stages the worker runs between claiming a job and committing its rows.
WORK_STAGES = ("extract", "embed", "store")


# Stage statuses.
PENDING = "pending"


IN_PROGRESS = "in_progress"


DONE = "done"


FAILED = "failed"


NOT_REACHED = "not_reached"


UNKNOWN = "unknown"


NOT_SEARCHABLE = "not_searchable"


STAGE_STATUSES = (PENDING, IN_PROGRESS, DONE, FAILED, NOT_REACHED, UNKNOWN, NOT_SEARCHABLE)


# Error codes the worker records while reading and extracting the source, before embedding.
_EXTRACT_FAILURES = frozenset(
    {
        Code.NOTHING_TO_REMEMBER,
        Code.SOURCE_MISSING,
        # A document's text is read by the worker, as the first step of extracting.
        Code.DOCUMENT_UNREADABLE,
        Code.DOCUMENT_EMPTY,
        Code.DOCUMENT_TOO_LARGE,
        Code.DOCUMENT_TOO_COMPLEX,
    }
)


FAILED_STAGES = ("queued", "extract", "embed", "store", "unknown")


@dataclass(frozen=True)
class Stage:
    name: str
    status: str
    # When the stage reached `status`, when a row records it; None when nothing does.
    at: datetime | None = None


# Why recall does or does not find a memory now (`MergedMemory.state`).
CURRENT = "current"
SUPPRESSED = "suppressed"
SUPERSEDED = "superseded"
EXPIRED = "expired"
MERGED_STATES = (CURRENT, SUPPRESSED, SUPERSEDED, EXPIRED)


@dataclass(frozen=True)
class MergedMemory:
    """A memory that already held a save's content when the save ran: the same fact again is
    evidence for it, not a second row, so the save's searchability is that memory's."""

    memory_id: uuid.UUID
    searchable: bool
    # CURRENT, SUPPRESSED (forgotten), SUPERSEDED or EXPIRED (past its valid_until).
    state: str


@dataclass(frozen=True)
class MemoryCounts:
    """The memories a job produced or confirmed, and how many of them recall finds now."""

    total: int = 0
    searchable: int = 0
    suppressed: int = 0
    superseded: int = 0
    # Of those, the ones the job confirmed rather than created, oldest first.
    merged: tuple[MergedMemory, ...] = ()


@dataclass(frozen=True)
class JobReadiness:
    job_id: uuid.UUID
    # None: not one of the owner's jobs (another account's, or no such job).
    job: Job | None
    stages: list[Stage] = field(default_factory=list)
    counts: MemoryCounts = field(default_factory=MemoryCounts)
    failed_stage: str | None = None

    @property
    def status(self) -> str:
        return self.job.status if self.job is not None else "not_found"

    @property
    def done(self) -> bool:
        """The pipeline has finished with it, for good: succeeded, or failed permanently."""
        return self.job is not None and self.job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED)

    @property
    def searchable(self) -> bool:
        return self.job is not None and self.job.status == Job.Status.SUCCEEDED and self.counts.searchable > 0

    @property
    def stop_polling(self) -> bool:
        """Asking again cannot change the answer: finished, or not the caller's job at all."""
        return self.done or self.job is None


def job_readiness_list(
    *, owner: User, job_ids: Sequence[uuid.UUID], now: datetime | None = None
) -> list[JobReadiness]:
    """Readiness of each id in `job_ids` (same order), for `owner` only.

    Four queries whatever the number of ids: the jobs, the memories they created, the
    memories their sources confirmed (a repeated fact gains evidence, not a new row), and
    the state of all those memories.
    """
    now = now or timezone.now()
    # The source only for its version number: never load a document's text for that.
    rows = (
        Job.objects.filter(owner=owner, id__in=list(job_ids))
        .select_related("source")
        .defer("source__content", "source__source_text", "source__raw")
    )
    jobs = {job.id: job for job in rows}
    counts = _memory_counts(owner=owner, jobs=list(jobs.values()), now=now)
    results = []
    for job_id in job_ids:
        job = jobs.get(job_id)
        if job is None:
            results.append(JobReadiness(job_id=job_id, job=None))
            continue
        job_counts = counts.get(job.id, MemoryCounts())
        failed_stage = _failed_stage(job) if job.status == Job.Status.FAILED else None
        results.append(
            JobReadiness(
                job_id=job_id,
                job=job,
                stages=_stages(job, job_counts, failed_stage),
                counts=job_counts,
                failed_stage=failed_stage,
            )
        )
    return results


def version_job_ids(*, owner: User, version_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, uuid.UUID | None]:
    """The job that processes each version (a Source id) of `owner`: its newest, since a version re-run
    by an operator gets a new job. None: not one of the owner's versions, or purged with its job."""
    found: dict[uuid.UUID, uuid.UUID | None] = dict.fromkeys(version_ids)
    rows = (
        Job.objects.filter(owner=owner, source_id__in=list(version_ids))
        .order_by("source_id", "-created_at", "-id")
        .distinct("source_id")
        .values_list("source_id", "id")
    )
    for source_id, job_id in rows:
        found[source_id] = job_id
    return found


def _failed_stage(job: Job) -> str:
    if job.started_at is None:
        return "queued"  # failed before any worker claimed it
    if job.error_code in _EXTRACT_FAILURES:
        return "extract"
    return "unknown"


def _stages(job: Job, counts: MemoryCounts, failed_stage: str | None) -> list[Stage]:
    status = job.status
    if status == Job.Status.QUEUED:
        return [
            Stage("queued", IN_PROGRESS, job.created_at),
            *(Stage(name, PENDING) for name in WORK_STAGES),
            Stage("searchable", PENDING),
        ]
    if status == Job.Status.RUNNING:
        return [
            Stage("queued", DONE, job.created_at),
            *(Stage(name, IN_PROGRESS, job.started_at) for name in WORK_STAGES),
            Stage("searchable", PENDING),
        ]
    if status == Job.Status.SUCCEEDED:
        # Extract and embed finished at some moment no row records; store and searchability
        # are the one commit that marked the job succeeded.
        searchable = (
            Stage("searchable", DONE, job.finished_at)
            if counts.searchable
            else Stage("searchable", NOT_SEARCHABLE)
        )
        return [
            Stage("queued", DONE, job.created_at),
            Stage("extract", DONE),
            Stage("embed", DONE),
            Stage("store", DONE, job.finished_at),
            searchable,
        ]
    # Failed.
    if failed_stage == "queued":
        return [
            Stage("queued", FAILED, job.finished_at),
            *(Stage(name, NOT_REACHED) for name in (*WORK_STAGES, "searchable")),
        ]
    stages = [Stage("queued", DONE, job.created_at)]
    if failed_stage in WORK_STAGES:
        reached = True
        for name in WORK_STAGES:
            if name == failed_stage:
                stages.append(Stage(name, FAILED, job.finished_at))
                reached = False
            else:
                stages.append(Stage(name, DONE if reached else NOT_REACHED))
    else:
        stages.extend(Stage(name, UNKNOWN) for name in WORK_STAGES)
    stages.append(Stage("searchable", NOT_REACHED))
    return stages


def _memory_counts(*, owner: User, jobs: list[Job], now: datetime) -> dict[Any, MemoryCounts]:
    if not jobs:
        return {}
    memory_jobs: dict[Any, set[Any]] = defaultdict(set)
    job_ids = [job.id for job in jobs]
    for memory_id, job_id in Memory.objects.filter(owner=owner, job_id__in=job_ids).values_list(
        "id", "job_id"
    ):
        memory_jobs[job_id].add(memory_id)
    created = {job_id: set(ids) for job_id, ids in memory_jobs.items()}
    jobs_of_source: dict[Any, list[Any]] = defaultdict(list)
    for job in jobs:
        if job.source_id is not None:
            jobs_of_source[job.source_id].append(job.id)
    if jobs_of_source:
        # Only supporting evidence: the contradicting evidence a source leaves on the fact it
        # superseded does not make that older fact one of its memories.
        confirmed = Evidence.objects.filter(
            owner=owner,
            source_id__in=list(jobs_of_source),
            stance=Evidence.Stance.SUPPORTS,
            memory__isnull=False,
        ).values_list("memory_id", "source_id")
        for memory_id, source_id in confirmed:
            for job_id in jobs_of_source[source_id]:
                memory_jobs[job_id].add(memory_id)
    every_memory = set().union(*memory_jobs.values()) if memory_jobs else set()
    # The same conditions recall applies for "now": active and current (memories.as_of),
    # and embedded.
    rows = (
        Memory.objects.filter(owner=owner, id__in=every_memory)
        .annotate(
            is_searchable=ExpressionWrapper(
                memory_visible(now=now) & Q(embedding__isnull=False),
                output_field=BooleanField(),
            ),
            is_suppressed=ExpressionWrapper(Q(status=Memory.Status.SUPPRESSED), output_field=BooleanField()),
            is_superseded=ExpressionWrapper(superseded_q(), output_field=BooleanField()),
            is_expired=ExpressionWrapper(expired_q(now=now), output_field=BooleanField()),
        )
        .order_by("recorded_at", "id")
        .values_list("id", "is_searchable", "is_suppressed", "is_superseded", "is_expired")
    )
    states = {memory_id: flags for memory_id, *flags in rows}
    result = {}
    for job_id, memory_ids in memory_jobs.items():
        # A memory hard-deleted since is gone from `states`: it no longer counts.
        present = [states[m] for m in memory_ids if m in states]
        merged = tuple(
            MergedMemory(memory_id=m, searchable=bool(flags[0]), state=_state(*flags))
            for m, flags in states.items()  # in recorded order
            if m in memory_ids and m not in created.get(job_id, ())
        )
        result[job_id] = MemoryCounts(
            total=len(present),
            searchable=sum(1 for s in present if s[0]),
            suppressed=sum(1 for s in present if s[1]),
            superseded=sum(1 for s in present if s[2]),
            merged=merged,
        )
    return result


def _state(searchable: bool, suppressed: bool, superseded: bool, expired: bool) -> str:
    # Suppression first: a forgotten memory stays forgotten whatever its clocks say.
    if suppressed:
        return SUPPRESSED
    if superseded:
        return SUPERSEDED
    if expired:
        return EXPIRED
    return CURRENT


@dataclass(frozen=True)
class PipelineSummary:
    """The whole pipeline for an operator (`manage.py pipeline_status`), across every account."""

    counts: dict[str, int]
    oldest_queued_at: datetime | None
    stuck: list[Job]
    recent_failures: list[Job]


def pipeline_summary(*, waiting: int | None, failures: int = 10) -> PipelineSummary:
    """Jobs by status, the oldest still queued, the stuck ones and the latest failures.

    Stuck is the recovery sweep's own rule (`jobs_to_recover`: never published, running on an expired
    lease, or waiting for a message the broker, holding `waiting` messages, provably lost), so this
    shows what the next sweep will re-send.
    """
    counts = {status: 0 for status in Job.Status.values}
    for row in Job.objects.values("status").annotate(n=models.Count("id")):
        counts[row["status"]] = row["n"]
    oldest = (
        Job.objects.filter(status=Job.Status.QUEUED)
        .order_by("created_at")
        .values_list("created_at", flat=True)
    ).first()
    stuck_ids = [job_id for job_id, _owner_id in jobs_to_recover(waiting=waiting)]
    stuck = list(Job.objects.filter(id__in=stuck_ids).select_related("owner").order_by("created_at"))
    recent = list(
        Job.objects.filter(status=Job.Status.FAILED)
        .select_related("owner")
        .order_by("-finished_at")[:failures]
    )
    return PipelineSummary(counts=counts, oldest_queued_at=oldest, stuck=stuck, recent_failures=recent)


# Every column of a job and of its source, in their models' field order (Model.from_db reads them so).
_JOB_FIELDS = model_order(Job, tuple(field.attname for field in Job._meta.concrete_fields))
_SOURCE_FIELDS = model_order(Source, tuple(field.attname for field in Source._meta.concrete_fields))


@functools.cache
def _job_read() -> CompiledQuery:
    # A job with its source, in one read compiled once: every job a worker runs starts with it
    # (config.compiled).
    return compile_once(
        lambda owner_id, job_id: (
            Job.objects.filter(owner_id=owner_id, id=job_id)
            .annotate(held_source=FilteredRelation("source", condition=Q(source__owner_id=F("owner_id"))))
            .values_list(*_JOB_FIELDS, *(f"held_source__{name}" for name in _SOURCE_FIELDS))
        ),
        owner_id=uuid.uuid4(),
        job_id=uuid.uuid4(),
    )


def job_with_source(*, job_id: RowId, owner_id: RowId) -> Job:
    """The job the worker runs, its source (None when deleted) and its owner as a bare id (the rules
    ask which names the owner's space knows: memories.worker.run); raises Job.DoesNotExist when the
    job is gone."""
    rows = compiled_rows(
        _job_read(), owner_id=Job._meta.pk.to_python(owner_id), job_id=Job._meta.pk.to_python(job_id)
    )
    if not rows:
        raise Job.DoesNotExist(f"job {job_id} does not exist")
    row, width = rows[0], len(_JOB_FIELDS)
    job = Job.from_db(DEFAULT_DB_ALIAS, _JOB_FIELDS, row[:width])
    source_row = row[width:]
    # A job's source row is absent when the source was deleted (the job's source_id is cleared
    # with it): its origin, never null in a row, says whether the join found one.
    origin = source_row[_SOURCE_FIELDS.index("origin")]
    job.source = Source.from_db(DEFAULT_DB_ALIAS, _SOURCE_FIELDS, source_row) if origin is not None else None
    job.owner = User.from_db(DEFAULT_DB_ALIAS, ["id"], [job.owner_id])
    return job


# A job committed but not yet marked published is given this long for its publish to finish (it
# runs right after the commit) before the sweep sends it from the database.
UNPUBLISHED_AFTER = timedelta(seconds=5)


# A published job still waiting for a worker after this long may have lost its message (a broker
# restarted without persistence, a message taken by a worker killed before it claimed the job): it is
# sent again when the broker holds fewer messages than there are jobs waiting (jobs_to_recover).
REPUBLISH_AFTER = timedelta(seconds=30)


def _holder_gone() -> Q:
    # Running on a lease that ran out (its holder died or lost the database), not sent again since:
    # the message that started it was consumed, so nothing in the broker will take it over. Once sent
    # (published after the lease's end) it waits for a worker like a queued job (_awaiting). A running
    # job without a lease (none should be) is sent at most once per REPUBLISH_AFTER.
    expired = Q(status=Job.Status.RUNNING, lease_expires_at__lte=Now()) & (
        Q(published_at__isnull=True) | Q(published_at__lte=F("lease_expires_at"))
    )
    leaseless = Q(status=Job.Status.RUNNING, lease_expires_at__isnull=True) & (
        Q(published_at__isnull=True) | Q(published_at__lt=Now() - REPUBLISH_AFTER)
    )
    return expired | leaseless


def _awaiting() -> Q:
    # Jobs that should each have one message in the broker: queued and published, or sent again after
    # their holder's lease ran out.
    return Q(status=Job.Status.QUEUED, published_at__isnull=False) | Q(
        status=Job.Status.RUNNING, lease_expires_at__lte=Now(), published_at__gt=F("lease_expires_at")
    )


def jobs_to_recover(*, waiting: int | None) -> list[tuple[Any, Any]]:
    """Jobs to send to the workers from the database, as (id, owner id), so that each job has at most
    one live message:

    - queued ones whose publish failed after their commit (the outbox), UNPUBLISHED_AFTER on;
    - running ones whose lease ran out and that were not sent again since (_holder_gone);
    - of the jobs waiting for a message's delivery (_awaiting), those the broker provably lost:
      `waiting` is how many messages the broker's task queue holds, read just before this; when
      fewer than the jobs published before UNPUBLISHED_AFTER ago, at least the difference lost
      theirs, and that many are sent again, those waiting longest first (past REPUBLISH_AFTER). A job
      merely waiting its turn in a backlog is never sent again: a backlog no longer multiplies its
      own messages (issue 44: 45,522 messages for 2,953 jobs). None: the broker could not tell, and
      no waiting job is sent again this time.

    The count proves how many messages are missing, not whose: a message taken by a worker and
    not yet run (its prefetch) is not in the queue, so its job may be sent a second time; at most
    the difference is sent, so the broker never holds more messages than jobs waiting. Messages of
    jobs a batch already did (memories.worker.lease.job_batch_claim) count as waiting: they only
    delay a lost job's re-send until the queue has drained that far, and a batch takes that job
    from the database meanwhile.

    Each read spans every owner (on Citus, each shard answers for its owners in parallel); each job
    is then sent with its owner.
    """
    queued = Job.objects.filter(status=Job.Status.QUEUED)
    unpublished = Q(published_at__isnull=True, created_at__lt=Now() - UNPUBLISHED_AFTER)
    ids = list(queued.filter(unpublished).values_list("id", "owner_id"))
    ids += list(Job.objects.filter(_holder_gone()).values_list("id", "owner_id"))
    if waiting is None:
        return ids
    # Jobs whose message, if the broker has it, was in the queue when `waiting` was read: published
    # more than UNPUBLISHED_AFTER ago (a save's publish follows its commit within milliseconds).
    awaiting = Job.objects.filter(_awaiting())
    missing = awaiting.filter(published_at__lt=Now() - UNPUBLISHED_AFTER).count() - waiting
    if missing > 0:
        lost = awaiting.filter(published_at__lt=Now() - REPUBLISH_AFTER).order_by("published_at", "id")
        ids += list(lost.values_list("id", "owner_id")[:missing])
    return ids
