"""A job's lease: who runs it. Claiming a job (alone, or a batch of short saves), keeping the claim
alive while the job runs, letting it go, and recording a job's failure.

A claim is a lease in the database (a short transaction). A job whose lease another process holds is
left to it (LeaseHeld); an expired lease (its holder died, or lost the database) is taken over. While
a job runs, a heartbeat thread extends its lease; the write checks that the claim is still ours.

Short saves are taken in batches (job_batch_claim): the job whose message arrived claims up to
BATCH_MAX - 1 other queued short saves of any owner (memories.worker.run runs them together).
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import BooleanField, Case, ExpressionWrapper, F, FilteredRelation, Q, Value, When
from django.db.models.expressions import CombinedExpression
from django.db.models.functions import Length, Now
from django.utils import timezone

from config.compiled import CompiledQuery, compile_once
from memories.errors import Code, job_code
from memories.models import Job, Source
from memories.parsing import RowId
from memories.services.jobs import job_enqueue

logger = logging.getLogger(__name__)


# How long a claim holds without a heartbeat. A job whose holder stopped (killed, cut off from the
# database) is taken over this long after its last beat; the holder beats every third of it.
LEASE = timedelta(seconds=30)
HEARTBEAT_EVERY = LEASE / 3


@dataclass(frozen=True)
class Claim:
    job_id: RowId
    attempt: int
    # A short save (_batchable_flag), read with the claim: it may take other queued saves along.
    batchable: bool = False
    # The job's owner: every statement about the claim names it (docs/scale.md).
    owner_id: Any = None


@dataclass(frozen=True)
class LeaseHeld(Exception):
    """Another process holds a live lease on the job; it may be asked again after `seconds`.

    `batched`: the job is a short save (_batchable_flag), which a batch may be holding: its holder
    commits it within the batch, so the message has nothing left to do.
    """

    seconds: float
    batched: bool = False


def _me() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _lease_end() -> CombinedExpression:
    # The database's clock, not this host's: leases are compared across machines.
    return Now() + LEASE


def _leased() -> ExpressionWrapper:
    # Whether the job's lease is live, by the database's clock (_lease_end).
    return ExpressionWrapper(Q(lease_expires_at__gt=Now()), output_field=BooleanField())


def _held(lease_expires_at: datetime | None, *, batched: bool) -> LeaseHeld:
    """LeaseHeld for a job in another process's hands: ask again once its lease would have run out."""
    remaining = (
        (lease_expires_at - timezone.now()).total_seconds() if lease_expires_at else LEASE.total_seconds()
    )
    return LeaseHeld(max(1.0, min(remaining, LEASE.total_seconds())) + 1.0, batched=batched)


def job_owner(*, job_id: RowId) -> Any:
    """The owner of a job whose message did not say (sent before messages carried it): read by id
    alone, the one such read left, which a database sharded by owner asks every shard. None when
    the job is gone."""
    return Job.objects.filter(id=job_id).values_list("owner_id", flat=True).first()


def job_claim(*, job_id: RowId, owner_id: Any = None) -> Claim | None:
    """Take the job's lease for this process: None when it is finished or gone.

    Raises LeaseHeld when another process holds a lease that has not expired: the job is in hand,
    and the caller may ask again once the lease would have run out.
    """
    # One statement: a plain read of the job, and beside it the conditional UPDATE that claims it
    # when it is queued (the usual case). Most other messages are those of a batch's members
    # (job_batch_claim), which the batch has done or still holds: the read answers them without
    # waiting on a lock the holder keeps until its batch commits. The read also says whether the job
    # is a short save, which the batch claim needs. Of two processes sending a queued job at once,
    # the row lock makes the second's UPDATE wait and re-check the row, and only the first finds it
    # still queued; the read shows both the row as it was before.
    if owner_id is None:
        owner_id = job_owner(job_id=job_id)
        if owner_id is None:
            return None
    owner_id = Job._meta.pk.to_python(owner_id)
    with connection.cursor() as cursor:
        params: list[Any] = [
            Job.Status.RUNNING,
            _me(),
            LEASE,
            owner_id,
            Job._meta.pk.to_python(job_id),
            Job.Status.QUEUED,
            *_claim_read().params(owner_id=owner_id, job_id=Job._meta.pk.to_python(job_id)),
        ]
        cursor.execute(_claim_sql(), params)
        seen = cursor.fetchone()
    if seen is None or seen[1] in (Job.Status.SUCCEEDED, Job.Status.FAILED):
        return None
    # The id as the database holds it (a message carries it as text): a batch keys its claims by it.
    job_id, status, _, batchable, leased, claimed_by, lease_expires_at, won = seen
    if won is not None:
        return Claim(job_id, won, batchable=bool(batchable), owner_id=owner_id)
    if status == Job.Status.RUNNING and leased and claimed_by != _me():
        raise _held(lease_expires_at, batched=bool(batchable))
    with transaction.atomic():
        # One row lock: two processes claiming at once see each other's lease, never both win. A row
        # locked now is in someone's hands (a claim, a batch's write): that holder is at work.
        job = (
            Job.objects.select_for_update(skip_locked=True)
            .filter(owner_id=owner_id, id=job_id)
            .annotate(leased=_leased())
            .first()
        )
        if job is None:
            if Job.objects.filter(owner_id=owner_id, id=job_id).exists():
                raise _held(None, batched=bool(batchable))
            return None
        if job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED):
            return None
        if job.status == Job.Status.RUNNING and job.leased and job.claimed_by != _me():
            raise _held(job.lease_expires_at, batched=bool(batchable))
        Job.objects.filter(owner_id=owner_id, id=job.id).update(
            status=Job.Status.RUNNING,
            attempts=job.attempts + 1,
            started_at=Now(),
            claimed_by=_me(),
            lease_expires_at=_lease_end(),
        )
        return Claim(job.id, job.attempts + 1, batchable=bool(batchable), owner_id=owner_id)


@functools.cache
def _claim_read() -> CompiledQuery:
    # job_claim's first read, compiled once: every message of every save asks it (memories.selectors
    # .compiled says why).
    return compile_once(
        lambda owner_id, job_id: (
            Job.objects.filter(owner_id=owner_id, id=job_id)
            .annotate(held_source=held_source())
            .annotate(
                source_chars=Length("held_source__content"), batchable=_batchable_flag(), leased=_leased()
            )
            .values_list("id", "status", "attempts", "batchable", "leased", "claimed_by", "lease_expires_at")[
                :1
            ]
        ),
        owner_id=uuid.uuid4(),
        job_id=uuid.uuid4(),
    )


@functools.cache
def _claim_sql() -> str:
    # The same columns as job_batch_claim's UPDATE: running, one attempt more, started and leased
    # now by the database's clock (_lease_end), by this process. `won` is the claim's attempt, NULL
    # when the job was not queued.
    job = Job._meta.db_table
    return f"""WITH won AS (
    UPDATE {job} SET status = %s, attempts = attempts + 1, started_at = STATEMENT_TIMESTAMP(),
        claimed_by = %s, lease_expires_at = STATEMENT_TIMESTAMP() + %s
    WHERE owner_id = %s AND id = %s AND status = %s
    RETURNING attempts)
SELECT seen.*, (SELECT attempts FROM won) FROM ({_claim_read().sql}) AS seen"""  # noqa: S608 - the table's name and a statement compiled from a queryset


def job_lease_extend(*, claim: Claim) -> bool:
    """Push the lease forward; False when the job is no longer this claim's (taken over, finished)."""
    updated = Job.objects.filter(
        owner_id=claim.owner_id,
        id=claim.job_id,
        status=Job.Status.RUNNING,
        attempts=claim.attempt,
        claimed_by=_me(),
    ).update(lease_expires_at=_lease_end())
    return bool(updated)


def job_lease_release(*, claim: Claim) -> None:
    """Let the lease go at once (the attempt failed and will be retried), so the retry, wherever it
    lands, takes the job over without waiting for the lease to run out."""
    Job.objects.filter(
        owner_id=claim.owner_id,
        id=claim.job_id,
        status=Job.Status.RUNNING,
        attempts=claim.attempt,
        claimed_by=_me(),
    ).update(lease_expires_at=Now())


@contextmanager
def heartbeat(claims: list[Claim]) -> Iterator[None]:
    """Extend the leases from a thread while the body runs (extracting and embedding take seconds
    to minutes). A beat that fails (the database is away) is tried again at the next one; if
    a lease expires meanwhile, another process may take over and that attempt's commit is refused."""
    stop = threading.Event()
    name = claims[0].job_id

    def beat() -> None:
        held = list(claims)
        try:
            while held and not stop.wait(HEARTBEAT_EVERY.total_seconds()):
                try:
                    held = [claim for claim in held if job_lease_extend(claim=claim)]
                except Exception:
                    logger.warning("job %s: heartbeat failed; trying again", name, exc_info=True)
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"lease-{name}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=HEARTBEAT_EVERY.total_seconds())


def job_fail(*, job_id: RowId, code: Code, message: str, owner_id: Any = None) -> None:
    """Record a permanent failure with its stable code (a job code of the catalogue; the message
    is safe to show the owner).

    Not while another process holds a live lease on the job: an earlier attempt that gave up
    (its retries spent, an unexpected error) must not fail the attempt that took the job over and
    is still at work; that one records its own outcome.
    """
    held_elsewhere = Q(status=Job.Status.RUNNING, lease_expires_at__gt=Now()) & ~Q(claimed_by=_me())
    owner_id = owner_id if owner_id is not None else job_owner(job_id=job_id)
    Job.objects.filter(owner_id=owner_id, id=job_id).exclude(status=Job.Status.SUCCEEDED).exclude(
        held_elsewhere
    ).update(
        status=Job.Status.FAILED,
        lease_expires_at=None,
        error_code=job_code(code),
        error_message=message[:500],
        finished_at=timezone.now(),
    )


# Short saves taken in one batch. One model call embeds them all (about a third of the CPU of one
# call each), and a batch is one write transaction; a bigger batch makes its first saves wait for
# the last ones longer than it saves.
BATCH_MAX = 16
# Longer saves are many segments, a batch of their own; they run alone.
BATCH_TEXT_MAX = 4000
# Saves of text. Uploads (documents, pictures) read their text in a child process first, and a
# document is many segments: they run alone.
_BATCHED_ORIGINS = (Source.Origin.REMEMBER, Source.Origin.REST, Source.Origin.IMPORT, Source.Origin.RELATE)


def held_source() -> FilteredRelation:
    # The job's source joined on the owner too: the statement stays on the owner's shard.
    return FilteredRelation("source", condition=Q(source__owner_id=F("owner_id")))


def _batchable() -> Q:
    # Needs the annotations held_source=held_source(), source_chars=Length("held_source__content").
    return Q(
        kind=Job.Kind.REMEMBER,
        held_source__origin__in=_BATCHED_ORIGINS,
        held_source__raw__isnull=True,
        source_chars__lte=BATCH_TEXT_MAX,
    )


def _batchable_flag() -> Case:
    # Whether the job is a short save, which a batch may take (job_batch_claim): _batchable() as a
    # column, read with the job's status (job_claim). A job whose source is gone is not one.
    return Case(When(_batchable(), then=Value(True)), default=Value(False), output_field=BooleanField())


def job_batch_claim(*, owner_id: Any, exclude: object, limit: int) -> list[Claim]:
    """Claim the oldest `limit` (at most) queued short saves of the owner for this process's batch.

    One owner's: on a database sharded by owner a statement with `FOR UPDATE SKIP LOCKED` runs on
    one shard only, and a batch's write runs under its owner's write lock anyway (store.py).

    SKIP LOCKED: a job another process is claiming right now is left to it, and two batches never
    share a job. Only jobs never tried are taken (attempt 1), so a job that failed once runs alone.
    One statement (its own implicit transaction): the queued jobs' read, locked, inside the UPDATE
    that claims them, compiled once; every batch asks it.
    """
    owner_id = Job._meta.pk.to_python(owner_id)
    read = _batch_read(limit).params(owner_id=owner_id, exclude=exclude)
    params: list[Any] = [*read, Job.Status.RUNNING, _me(), LEASE, owner_id]
    with connection.cursor() as cursor:
        cursor.execute(_batch_claim_sql(limit), params)
        return [Claim(job_id, 1, batchable=True, owner_id=owner_id) for (job_id,) in cursor.fetchall()]


@functools.cache
def _batch_read(limit: int) -> CompiledQuery:
    return compile_once(
        lambda owner_id, exclude: (
            Job.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(owner_id=owner_id)
            .annotate(held_source=held_source())
            .annotate(source_chars=Length("held_source__content"))
            .filter(_batchable(), status=Job.Status.QUEUED, attempts=0)
            .exclude(id=exclude)
            .order_by("created_at")
            .values_list("id", flat=True)[:limit]
        ),
        owner_id=uuid.uuid4(),
        exclude=uuid.uuid4(),
    )


@functools.cache
def _batch_claim_sql(limit: int) -> str:
    # The same columns as job_claim's UPDATE: running, first attempt, started and leased now by the
    # database's clock (_lease_end), by this process.
    # The locked read is a MATERIALIZED CTE, read once: with the owner beside `id IN (...)`, the
    # planner rescanned the subquery per row of the owner's jobs, and each rescan skipped the rows
    # the last had locked and took the next ones (17 claimed for a limit of 15).
    job = Job._meta.db_table
    return f"""WITH batch AS MATERIALIZED ({_batch_read(limit).sql})
UPDATE {job} SET status = %s, attempts = 1, started_at = STATEMENT_TIMESTAMP(),
    claimed_by = %s, lease_expires_at = STATEMENT_TIMESTAMP() + %s
FROM batch WHERE {job}.owner_id = %s AND {job}.id = batch.id
RETURNING {job}.id"""  # noqa: S608 - the table's name and a statement compiled from a queryset


def batch_members_resend(claims: list[Claim]) -> None:
    """A batch that failed as a whole (the database or the model service hiccuped) lets its other
    jobs go, as job_lease_release does, and sends them again: their own messages found them held and
    did nothing. Each then runs alone (its second attempt)."""
    if not claims:
        return
    for claim in claims:
        job_lease_release(claim=claim)
    for claim in claims:
        job_enqueue(job_id=claim.job_id, owner_id=claim.owner_id)


def claim_still_ours(job: Job, claim: Claim) -> bool:
    """Read under the job's row lock: the claim was not taken over since (its lease expired)."""
    return job.status == Job.Status.RUNNING and job.attempts == claim.attempt and job.claimed_by == _me()
