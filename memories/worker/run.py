"""The worker's side of remember and document ingest: from a Source to Memory rows.

job_process() is idempotent and crash-safe:
1. claim the job: a lease in the database (a short transaction). A job whose lease another process
   holds is left to it; an expired lease (its holder died, or lost the database) is taken over;
2. extract candidates (rules, or the LLM when configured) and embed them, outside
   any transaction, since this is the slow part, while a heartbeat thread extends the lease;
3. write every row and mark the job succeeded in ONE transaction, after checking
   that the claim is still ours. A crash before step 3 commits leaves nothing
   behind, and a re-run starts again from the Source.

Short saves are taken in batches (job_batch_claim): the job whose message arrived claims up to
BATCH_MAX - 1 other queued short saves of any owner, embeds every text of the batch in one model call
and writes them in one transaction, each job in a savepoint of its own, under its own owner and space.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connection, transaction
from django.db.models import BooleanField, Case, ExpressionWrapper, Q, Value, When
from django.db.models.functions import Length, Now
from django.utils import timezone

from accounts.models import User
from memories import embeddings
from memories.errors import Code, job_code
from memories.models import Entity, Evidence, Job, Memory, Source
from memories.pipeline.dedupe import fingerprint_of
from memories.pipeline.entities import capitalised_words, normalize_entity_name
from memories.pipeline.extract import Candidate, extract, extract_contents, extract_document, stated_kind
from memories.pipeline.judge_llm import llm_judge
from memories.pipeline.parse_sandbox import DocumentRefused
from memories.pipeline.supersede import (
    document_retire_unsupported,
    judge_priors,
    memory_rivals,
    nearest_priors,
    same_event_day,
    supersede,
)
from memories.pipeline.update import Verdict, frame_of
from memories.selectors.as_of import active_q
from memories.selectors.compiled import CompiledQuery, compile_once, compiled_rows, model_order
from memories.selectors.graph import entity_names_known, entity_names_known_each
from memories.services.documents import document_text_store
from memories.services.entities import entity_record
from memories.services.images import image_store
from memories.services.rows import rows_insert

logger = logging.getLogger(__name__)


# How long a claim holds without a heartbeat. A job whose holder stopped (killed, cut off from the
# database) is taken over this long after its last beat; the holder beats every third of it.
LEASE = timedelta(seconds=30)
HEARTBEAT_EVERY = LEASE / 3


@dataclass(frozen=True)
class Claim:
    job_id: Any
    attempt: int
    # A short save (_batchable_flag), read with the claim: it may take other queued saves along.
    batchable: bool = False


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


def _lease_end() -> Any:
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


def job_claim(*, job_id: Any) -> Claim | None:
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
    with connection.cursor() as cursor:
        params: list[Any] = [
            Job.Status.RUNNING,
            _me(),
            LEASE,
            Job._meta.pk.to_python(job_id),
            Job.Status.QUEUED,
            *_claim_read().params(job_id=Job._meta.pk.to_python(job_id)),
        ]
        cursor.execute(_claim_sql(), params)
        seen = cursor.fetchone()
    if seen is None or seen[1] in (Job.Status.SUCCEEDED, Job.Status.FAILED):
        return None
    # The id as the database holds it (a message carries it as text): a batch keys its claims by it.
    job_id, status, _, batchable, leased, claimed_by, lease_expires_at, won = seen
    if won is not None:
        return Claim(job_id, won, batchable=bool(batchable))
    if status == Job.Status.RUNNING and leased and claimed_by != _me():
        raise _held(lease_expires_at, batched=bool(batchable))
    with transaction.atomic():
        # One row lock: two processes claiming at once see each other's lease, never both win. A row
        # locked now is in someone's hands (a claim, a batch's write): that holder is at work.
        job = (
            Job.objects.select_for_update(skip_locked=True)
            .filter(id=job_id)
            .annotate(leased=_leased())
            .first()
        )
        if job is None:
            if Job.objects.filter(id=job_id).exists():
                raise _held(None, batched=bool(batchable))
            return None
        if job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED):
            return None
        if job.status == Job.Status.RUNNING and job.leased and job.claimed_by != _me():
            raise _held(job.lease_expires_at, batched=bool(batchable))
        Job.objects.filter(id=job.id).update(
            status=Job.Status.RUNNING,
            attempts=job.attempts + 1,
            started_at=Now(),
            claimed_by=_me(),
            lease_expires_at=_lease_end(),
        )
        return Claim(job.id, job.attempts + 1, batchable=bool(batchable))


@functools.cache
def _claim_read() -> CompiledQuery:
    # job_claim's first read, compiled once: every message of every save asks it (memories.selectors
    # .compiled says why).
    return compile_once(
        lambda job_id: (
            Job.objects.filter(id=job_id)
            .annotate(source_chars=Length("source__content"), batchable=_batchable_flag(), leased=_leased())
            .values_list("id", "status", "attempts", "batchable", "leased", "claimed_by", "lease_expires_at")[
                :1
            ]
        ),
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
    WHERE id = %s AND status = %s
    RETURNING attempts)
SELECT seen.*, (SELECT attempts FROM won) FROM ({_claim_read().sql}) AS seen"""  # noqa: S608 - the table's name and a statement compiled from a queryset


def job_lease_extend(*, claim: Claim) -> bool:
    """Push the lease forward; False when the job is no longer this claim's (taken over, finished)."""
    updated = Job.objects.filter(
        id=claim.job_id, status=Job.Status.RUNNING, attempts=claim.attempt, claimed_by=_me()
    ).update(lease_expires_at=_lease_end())
    return bool(updated)


def job_lease_release(*, claim: Claim) -> None:
    """Let the lease go at once (the attempt failed and will be retried), so the retry, wherever it
    lands, takes the job over without waiting for the lease to run out."""
    Job.objects.filter(
        id=claim.job_id, status=Job.Status.RUNNING, attempts=claim.attempt, claimed_by=_me()
    ).update(lease_expires_at=Now())


@contextmanager
def _heartbeat(claims: list[Claim]) -> Iterator[None]:
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


def job_fail(*, job_id: Any, code: Code, message: str) -> None:
    """Record a permanent failure with its stable code (a job code of the catalogue; the message
    is safe to show the owner).

    Not while another process holds a live lease on the job: an earlier attempt that gave up
    (its retries spent, an unexpected error) must not fail the attempt that took the job over and
    is still at work; that one records its own outcome.
    """
    held_elsewhere = Q(status=Job.Status.RUNNING, lease_expires_at__gt=Now()) & ~Q(claimed_by=_me())
    Job.objects.filter(id=job_id).exclude(status=Job.Status.SUCCEEDED).exclude(held_elsewhere).update(
        status=Job.Status.FAILED,
        lease_expires_at=None,
        error_code=job_code(code),
        error_message=message[:500],
        finished_at=timezone.now(),
    )


def _candidates(source: Source, job: Job, *, known: set[str] | None = None) -> list[Candidate]:
    """The job's statements. `known`: the names of the text the space already knows, when the
    caller has read them (a batch reads them for all its saves at once: _names_known)."""
    reference = source.refers_to or source.recorded_at
    kind = stated_kind(kind=job.options.get("kind"), category=job.options.get("category"))
    if settings.LLM_BASE_URL:
        from memories.pipeline.extract_llm import llm_extract

        candidates = llm_extract(source.content, reference=reference)
    else:
        # Names the space already knows are kept where a sentence starts with them.
        if known is None:
            known = entity_names_known(
                owner=job.owner, space_id=job.space_id, names=capitalised_words(source.content)
            )
        if source.origin == Source.Origin.DOCUMENT:
            # A document is a set of statements: one memory per item, row and sentence, so a later
            # version can change one of them without touching the others.
            candidates = extract_document(
                source.content, media_type=source.media_type, reference=reference, known=known
            )
        elif source.origin == Source.Origin.IMAGE:
            # Caption and text read in the picture are paragraphs of plain text (images.ocr_text).
            candidates = extract_document(
                source.content, media_type="text/plain", reference=reference, known=known
            )
        else:
            _, candidates = extract(source.content, reference=reference, known=known, kind=kind)
    tags = job.options.get("tags") or []
    clocks = _stated_clocks(job)
    for candidate in candidates:
        candidate.stated_at = candidate.stated_at or reference
        if clocks is not None:
            # A revision states its dates (memories.services.memories.memory_revise): they win over
            # what the rules read in the text, an empty one included.
            candidate.occurred_at = clocks.get("occurred_at")
            candidate.valid_from = clocks.get("valid_from")
            candidate.due_at = clocks.get("due_at")
            candidate.starts_by = None
            candidate.tags = list(tags)
        if kind:
            # Where the rules did not take the stated kind (the LLM, a Markdown note), it wins here.
            candidate.kind = kind
        if tags and clocks is None:
            candidate.tags = list(dict.fromkeys([*candidate.tags, *tags]))
    return candidates


def _stated_clocks(job: Job) -> dict[str, datetime | None] | None:
    raw = job.options.get("clocks")
    if not isinstance(raw, dict):
        return None
    return {name: datetime.fromisoformat(value) if value else None for name, value in raw.items()}


def _revised(job: Job) -> uuid.UUID | None:
    """The memory a revision was asked to replace (memory_revise), if this job is one."""
    revises = job.options.get("revises")
    return uuid.UUID(revises) if revises else None


def _revision_target(job: Job) -> tuple[uuid.UUID | None, str]:
    """The version a revision replaces, read when it is written, or why there is none (a message for
    the owner); (None, "") for a job that is no revision.

    memory_revise checks that the edited memory is current when the person saves, but the job runs
    later: two edits of one memory (two tabs, a quick second fix) are both queued against the version
    the page showed, and the first to be written replaces it. The second then revises the version
    that is current now, at the end of the chain of versions: the person's later word is the later
    testimony, and the first edit stays in the history. Left aimed at the replaced version, the
    second edit was judged against the first edit's version as any save is, and became evidence for
    it (a rewording, the same words with a new date: the edit silently lost) or a second current
    memory beside it (issue 39). A memory deleted or suppressed meanwhile, or retired with no version
    current, fails the job where the person sees it: they took it away, and a queued edit must not
    bring it back.

    Read in the job's write transaction, under the owner's write lock, so no other save of the owner
    replaces the version before this one does; each version on the way is locked, so a suppress or
    a delete from the dashboard waits for this job to commit.
    """
    memory_id = _revised(job)
    if memory_id is None:
        return None, ""
    seen: set[uuid.UUID] = set()
    next_id: uuid.UUID | None = memory_id
    while next_id is not None and next_id not in seen:
        seen.add(next_id)
        version = (
            Memory.objects.select_for_update()
            .filter(owner_id=job.owner_id, id=next_id)
            .values_list("status", "superseded_at", "superseded_by_id")
            .first()
        )
        if version is None:
            return None, "The memory was deleted while this edit waited; no new version was saved."
        status, superseded_at, next_by = version
        if superseded_at is None:
            if status != Memory.Status.ACTIVE:
                return None, (
                    "The memory was suppressed while this edit waited; no new version was saved. "
                    "Restore it, then edit it again."
                )
            return next_id, ""
        next_id = next_by
    return None, "The memory was replaced while this edit waited and no version of it is current now."


def job_process(*, job_id: Any) -> None:
    """Run one job to completion (or to a permanent failure), and with it, when it is a short save,
    the other short saves waiting in the queue (job_batch_claim). Safe to call again."""
    claim = job_claim(job_id=job_id)
    if claim is None:
        return
    claims = [claim]
    try:
        # A job on a second attempt runs alone: should it be what crashed its process, it takes no
        # other save down with it again.
        if claim.attempt == 1 and not settings.LLM_BASE_URL and claim.batchable:
            claims += job_batch_claim(exclude=claim.job_id, limit=BATCH_MAX - 1)
        with _heartbeat(claims):
            if len(claims) == 1:
                _job_run(job_id=job_id, claim=claim)
            else:
                _batch_run(claims=claims)
    except BaseException:
        try:
            job_lease_release(claim=claim)
            _batch_members_resend(claims[1:])
        except Exception:
            # The database is away: the leases run out on their own, LEASE after the last beat, and
            # the sweep sends the jobs again.
            logger.info("job %s: could not release the leases", job_id)
        raise


# Short saves taken in one batch. One model call embeds them all (about a third of the CPU of one
# call each), and a batch is one write transaction; a bigger batch makes its first saves wait for
# the last ones longer than it saves.
BATCH_MAX = 16
# Longer saves are many segments, a batch of their own; they run alone.
BATCH_TEXT_MAX = 4000
# Saves of text. Uploads (documents, pictures) read their text in a child process first, and a
# document is many segments: they run alone.
_BATCHED_ORIGINS = (Source.Origin.REMEMBER, Source.Origin.REST, Source.Origin.IMPORT, Source.Origin.RELATE)


def _batchable() -> Q:
    # Needs the annotation source_chars=Length("source__content").
    return Q(
        kind=Job.Kind.REMEMBER,
        source__origin__in=_BATCHED_ORIGINS,
        source__raw__isnull=True,
        source_chars__lte=BATCH_TEXT_MAX,
    )


def _batchable_flag() -> Case:
    # Whether the job is a short save, which a batch may take (job_batch_claim): _batchable() as a
    # column, read with the job's status (job_claim). A job whose source is gone is not one.
    return Case(When(_batchable(), then=Value(True)), default=Value(False), output_field=BooleanField())


def job_batch_claim(*, exclude: Any, limit: int) -> list[Claim]:
    """Claim the oldest `limit` (at most) queued short saves of any owner for this process's batch.

    SKIP LOCKED: a job another process is claiming right now is left to it, and two batches never
    share a job. Only jobs never tried are taken (attempt 1), so a job that failed once runs alone.
    One statement (its own implicit transaction): the queued jobs' read, locked, inside the UPDATE
    that claims them, compiled once; every batch asks it.
    """
    params: list[Any] = [Job.Status.RUNNING, _me(), LEASE, *_batch_read(limit).params(exclude=exclude)]
    with connection.cursor() as cursor:
        cursor.execute(_batch_claim_sql(limit), params)
        return [Claim(job_id, 1, batchable=True) for (job_id,) in cursor.fetchall()]


@functools.cache
def _batch_read(limit: int) -> CompiledQuery:
    return compile_once(
        lambda exclude: (
            Job.objects.select_for_update(skip_locked=True, of=("self",))
            .annotate(source_chars=Length("source__content"))
            .filter(_batchable(), status=Job.Status.QUEUED, attempts=0)
            .exclude(id=exclude)
            .order_by("created_at")
            .values_list("id", flat=True)[:limit]
        ),
        exclude=uuid.uuid4(),
    )


@functools.cache
def _batch_claim_sql(limit: int) -> str:
    # The same columns as job_claim's UPDATE: running, first attempt, started and leased now by the
    # database's clock (_lease_end), by this process.
    job = Job._meta.db_table
    return f"""UPDATE {job} SET status = %s, attempts = 1, started_at = STATEMENT_TIMESTAMP(),
    claimed_by = %s, lease_expires_at = STATEMENT_TIMESTAMP() + %s
WHERE id IN ({_batch_read(limit).sql})
RETURNING id"""  # noqa: S608 - the table's name and a statement compiled from a queryset


def _batch_members_resend(claims: list[Claim]) -> None:
    """A batch that failed as a whole (the database or the model service hiccuped) lets its other
    jobs go, as job_lease_release does, and sends them again: their own messages found them held and
    did nothing. Each then runs alone (its second attempt)."""
    if not claims:
        return
    from memories.services.jobs import job_enqueue

    for claim in claims:
        job_lease_release(claim=claim)
    for claim in claims:
        job_enqueue(job_id=claim.job_id)


def _job_run(*, job_id: Any, claim: Claim) -> None:
    job = _job_with_source(job_id)
    source = job.source
    if source is None:
        job_fail(job_id=job_id, code=Code.SOURCE_MISSING, message="The saved content is gone (deleted).")
        return
    if source.raw is not None:
        # An uploaded document's text (an image's pixels) is read here, in a child process, not in
        # the upload request.
        _progress(job_id, "reading")
        try:
            if source.origin == Source.Origin.IMAGE:
                source = image_store(source=source)
            else:
                source = document_text_store(source=source)
        except DocumentRefused as refused:
            job_fail(job_id=job_id, code=refused.code, message=refused.message)
            return
    # The statements' words are known before the rules run (extract_contents): they are embedded on
    # another thread while the rules read the names the space knows and do their work. Not for
    # documents and pictures (read by the document reader), a chat model's statements (its own
    # words), or more statements than one embedding batch (their progress is written batch by batch).
    contents = (
        None
        if settings.LLM_BASE_URL or source.origin in (Source.Origin.DOCUMENT, Source.Origin.IMAGE)
        else extract_contents(source.content, reference=source.refers_to or source.recorded_at)
    )
    early = embeddings.embed_soon(contents) if contents and len(contents) <= PROGRESS_BATCH else None
    _progress(job_id, "extracting")
    candidates = _candidates(source, job)
    if not candidates:
        job_fail(job_id=job_id, code=Code.NOTHING_TO_REMEMBER, message="No memory could be derived from it.")
        return
    total = len(candidates)
    vectors: list[list[float]] = []
    # In the model's own batch size, one progress write per batch: a note is one batch and one
    # write, a 40-page PDF shows its segments being done.
    for start in range(0, total, PROGRESS_BATCH):
        _progress(job_id, "embedding", done=len(vectors), total=total)
        texts = [c.content for c in candidates[start : start + PROGRESS_BATCH]]
        # The early vectors are those of these very words (compared, not assumed).
        vectors += early.result() if early is not None and texts == contents else embeddings.embed(texts)
    _progress(job_id, "storing", done=total, total=total)
    advice = _model_advice(job, candidates, vectors) if settings.LLM_BASE_URL else {}
    with transaction.atomic():
        # The owner's write lock (OWNER_WRITE_LOCK), then the job's row and its source's, locked by
        # one statement, in one message; the job's claim columns as they are now. The rest of both
        # rows is what was read above: a save's source does not change, and the job's other columns
        # are only this claim's to write.
        owner_lock, owner_keys = _owner_write_lock([job.owner_id])
        with connection.cursor() as cursor:
            cursor.execute(owner_lock + ";\n" + _LOCK_JOB_AND_SOURCE_SQL, [*owner_keys, source.id, job.id])
            if not cursor.nextset():
                raise RuntimeError("the job's lock returned no result")
            locked = cursor.fetchone()
        if locked is None:
            return  # the job was deleted since (its owner's account, say)
        job.status, job.attempts, job.claimed_by, source_kept = locked
        if not _still_ours(job, claim):
            logger.info("job %s was taken over; dropping attempt %s", job_id, claim.attempt)
            return
        if not source_kept:
            # Deleted since (the job's source_id is cleared with it).
            job_fail(job_id=job_id, code=Code.SOURCE_MISSING, message="The saved content is gone (deleted).")
            return
        _job_write(job=job, source=source, candidates=candidates, vectors=vectors, advice=advice)


# Every column of a job and of its source, in their models' field order (Model.from_db reads them so).
_JOB_FIELDS = model_order(Job, tuple(field.attname for field in Job._meta.concrete_fields))
_SOURCE_FIELDS = model_order(Source, tuple(field.attname for field in Source._meta.concrete_fields))


@functools.cache
def _job_read() -> CompiledQuery:
    # A job with its source, in one read compiled once: every job a worker runs starts with it
    # (memories.selectors.compiled).
    return compile_once(
        lambda job_id: Job.objects.filter(id=job_id).values_list(
            *_JOB_FIELDS, *(f"source__{name}" for name in _SOURCE_FIELDS)
        ),
        job_id=uuid.uuid4(),
    )


def _job_with_source(job_id: Any) -> Job:
    """The job, its source (None when deleted) and its owner as a bare id (the rules ask which names
    the owner's space knows: _candidates); raises Job.DoesNotExist when the job is gone."""
    rows = compiled_rows(_job_read(), job_id=Job._meta.pk.to_python(job_id))
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


# A batch's jobs and their sources, locked in one statement, in id order: what _LOCK_JOB_AND_SOURCE_SQL
# reads of one job, for each. The ORM's two select_for_update().in_bulk() built and hydrated every
# column of both (a tenth of a pool process's Python at concurrency 8); the write uses the job and
# source read before the embedding, as a lone job does.
_LOCK_JOBS_AND_SOURCES_SQL = f"""SELECT j.id, j.status, j.attempts, j.claimed_by, s.id IS NOT NULL
FROM {Job._meta.db_table} j
LEFT JOIN LATERAL (
    SELECT id FROM {Source._meta.db_table} WHERE id = j.source_id FOR UPDATE
) s ON true
WHERE j.id = ANY(%s::uuid[])
ORDER BY j.id
FOR UPDATE OF j"""  # noqa: S608 - the tables' names only


_LOCK_JOB_AND_SOURCE_SQL = f"""SELECT j.status, j.attempts, j.claimed_by, s.id IS NOT NULL
FROM {Job._meta.db_table} j
LEFT JOIN LATERAL (
    SELECT id FROM {Source._meta.db_table} WHERE id = %s AND id = j.source_id FOR UPDATE
) s ON true
WHERE j.id = %s
FOR UPDATE OF j"""  # noqa: S608 - the tables' names only


def _still_ours(job: Job, claim: Claim) -> bool:
    """Read under the job's row lock: the claim was not taken over since (its lease expired)."""
    return job.status == Job.Status.RUNNING and job.attempts == claim.attempt and job.claimed_by == _me()


def _job_write(
    *,
    job: Job,
    source: Source,
    candidates: list[Candidate],
    vectors: list[list[float]],
    advice: dict[int, dict[Any, Verdict]],
) -> None:
    """Every row of one job, and the job succeeded (or, for a revision with no version left to
    replace, failed); inside the caller's transaction, with the job and its source locked."""
    # Once per job, before its first row: a revision of several statements replaces one version,
    # and the next statement must not take the first one's new row for it.
    revised, refused = _revision_target(job)
    if refused:
        job_fail(job_id=job.id, code=Code.MEMORY_NOT_CURRENT, message=refused)
        return
    stored = [
        _store(
            job=job,
            source=source,
            candidate=candidate,
            vector=vector,
            advice=advice.get(index),
            revised=revised,
        )
        for index, (candidate, vector) in enumerate(zip(candidates, vectors, strict=True))
    ]
    if source.versioning_mode == Source.VersioningMode.LIVING and source.version > 1:
        document_retire_unsupported(source=source, kept={m.id for m in stored})
    total = len(candidates)
    job.status = Job.Status.SUCCEEDED
    job.finished_at = timezone.now()
    job.error_code = job.error_message = ""
    job.lease_expires_at = None
    job.progress = {"stage": "done", "done": total, "total": total}
    with connection.cursor() as cursor:
        cursor.execute(_SUCCEEDED_SQL, [job.status, job.finished_at, json.dumps(job.progress), job.id])


# A job's last write, sent as written (every save ends with it; building the UPDATE cost more CPU
# than the database spends on it, as _PROGRESS_SQL says).
_SUCCEEDED_SQL = f"""UPDATE {Job._meta.db_table} SET status = %s, finished_at = %s, error_code = '',
    error_message = '', lease_expires_at = NULL, progress = %s::jsonb
WHERE id = %s"""  # noqa: S608 - the table's name only


# What the owner reads of a job that failed on a fault of ours (the log has the detail).
FAILED_MESSAGE = "Processing failed; saving again may help."

# One owner's writes run one at a time, whichever process runs them, a lone job's and a batch's:
# two of them can name the same entities in different orders, and their row locks would deadlock;
# and a save's duplicate check and the update engine's nearest priors must see what the owner's
# earlier write stored (two lone saves running side by side each missed the other: both stayed
# current). Owners share no row a save writes, so different owners' writes run in parallel: one
# lock for every batch held them all back, and at ingest concurrency 8 it was held three quarters
# of the time (docs/pipeline.md). Embedding, the slow part, runs in parallel anyway. The keys are
# pg_advisory_xact_lock(int, int)'s: this lock's class, and a number drawn from the owner's id (two
# owners that draw the same one only wait for each other).
OWNER_WRITE_LOCK = 0x6465_6570  # "deep"


def owner_write_keys(owner_ids: Iterable[uuid.UUID]) -> list[int]:
    """The second keys of the write locks of these owners, in the order they are taken: sorted, so
    two writes that share owners take them in the same order and cannot deadlock."""
    return sorted({int.from_bytes(owner_id.bytes[:4], "big", signed=True) for owner_id in owner_ids})


def _owner_write_lock(owner_ids: Iterable[uuid.UUID]) -> tuple[str, list[int]]:
    """The statement that takes these owners' write locks, and its parameters: one statement, whose
    target list is evaluated left to right."""
    keys = owner_write_keys(owner_ids)
    sql = "SELECT " + ", ".join(["pg_advisory_xact_lock(%s, %s)"] * len(keys))
    return sql, [value for key in keys for value in (OWNER_WRITE_LOCK, key)]


def _batch_run(*, claims: list[Claim]) -> None:
    """Several short saves (job_batch_claim): each extracted on its own, all embedded in one model
    call, all written in one transaction. A job that cannot be done fails alone with its code and
    the others are stored; a database error fails the batch as a whole (nothing of it committed),
    and job_process retries it."""
    by_id = {claim.job_id: claim for claim in claims}
    jobs = sorted(
        Job.objects.select_related("source", "owner").filter(id__in=by_id),
        # In the order they were saved, as one process would have run them: a later save supersedes.
        key=lambda job: (job.created_at, str(job.id)),
    )
    _progress_many({job.id: 0 for job in jobs}, "extracting")
    known = _names_known(jobs)
    work: list[tuple[Job, list[Candidate]]] = []
    for job in jobs:
        try:
            candidates = (
                _candidates(job.source, job, known=known.get(job.id)) if job.source is not None else []
            )
        except (OperationalError, InterfaceError):
            raise
        except Exception:
            logger.exception("job %s failed while extracting", job.id)
            job_fail(job_id=job.id, code=Code.INTERNAL_ERROR, message=FAILED_MESSAGE)
            continue
        if job.source is None:
            job_fail(job_id=job.id, code=Code.SOURCE_MISSING, message="The saved content is gone (deleted).")
        elif not candidates:
            job_fail(
                job_id=job.id, code=Code.NOTHING_TO_REMEMBER, message="No memory could be derived from it."
            )
        else:
            work.append((job, candidates))
    if not work:
        return
    totals = {job.id: len(candidates) for job, candidates in work}
    _progress_many(totals, "embedding")
    vectors = iter(embeddings.embed([c.content for _, candidates in work for c in candidates]))
    _progress_many(totals, "storing", done=True)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(*_owner_write_lock(job.owner_id for job, _ in work))
        with connection.cursor() as cursor:
            cursor.execute(_LOCK_JOBS_AND_SOURCES_SQL, [[job.id for job, _ in work]])
            locked = {row[0]: row[1:] for row in cursor.fetchall()}
        for job, candidates in work:
            mine = [next(vectors) for _ in candidates]
            state = locked.get(job.id)
            if state is not None:
                job.status, job.attempts, job.claimed_by, source_kept = state
            if state is None or not _still_ours(job, by_id[job.id]):
                logger.info(
                    "job %s was taken over (%s); dropping it from the batch",
                    job.id,
                    (job.status, job.attempts, job.claimed_by) if state else "gone",
                )
                continue
            if job.source is None or not source_kept:
                job_fail(
                    job_id=job.id, code=Code.SOURCE_MISSING, message="The saved content is gone (deleted)."
                )
                continue
            try:
                # A savepoint per job: one that fails leaves the others' rows as they were.
                with transaction.atomic():
                    _job_write(job=job, source=job.source, candidates=candidates, vectors=mine, advice={})
            except (OperationalError, InterfaceError):
                raise
            except Exception:
                logger.exception("job %s failed while storing", job.id)
                job_fail(job_id=job.id, code=Code.INTERNAL_ERROR, message=FAILED_MESSAGE)


def _names_known(jobs: list[Job]) -> dict[Any, set[str]]:
    """For each job with a source, the names of its text its space already knows (the rules'
    `known`, see _candidates): one query per owner and space of the batch, not one per job."""
    spaces: dict[tuple[Any, Any], list[Job]] = {}
    for job in jobs:
        if job.source is not None:
            spaces.setdefault((job.owner_id, job.space_id), []).append(job)
    known: dict[Any, set[str]] = {}
    for (_, space_id), group in spaces.items():
        names = {job.id: capitalised_words(job.source.content) for job in group if job.source is not None}
        known |= entity_names_known_each(owner=group[0].owner, space_id=space_id, names=names)
    return known


def _progress_many(totals: dict[Any, int], stage: str, *, done: bool = False) -> None:
    """_progress for a batch, in one statement: each job with its own segment count."""
    _progress_write(
        {
            job_id: {"stage": stage, "done": total if done else 0, "total": total}
            for job_id, total in totals.items()
        }
    )


# The local model's batch size (memories.embeddings.embed), so batching here changes no batch.
PROGRESS_BATCH = 64


def _progress(job_id: Any, stage: str, *, done: int = 0, total: int = 0) -> None:
    # One small UPDATE outside any transaction, so the job page sees it at once; it only
    # describes the work (a taken-over attempt writing a stale stage changes no result).
    _progress_write({job_id: {"stage": stage, "done": done, "total": total}})


def _progress_write(progress: dict[Any, dict[str, Any]]) -> None:
    """Each running job's progress, in one UPDATE written once: a short save writes three stages in
    a few milliseconds, and building and compiling a queryset for each cost the worker more CPU
    than the database spent on them (memories.selectors.compiled)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _PROGRESS_SQL,
            [list(progress), [json.dumps(value) for value in progress.values()], Job.Status.RUNNING],
        )


_PROGRESS_SQL = f"""UPDATE {Job._meta.db_table} j SET progress = p.progress
FROM unnest(%s::uuid[], %s::jsonb[]) AS p(id, progress)
WHERE j.id = p.id AND j.status = %s"""  # noqa: S608 - the table's name only


def _model_advice(
    job: Job, candidates: list[Candidate], vectors: list[list[float]]
) -> dict[int, dict[Any, Verdict]]:
    """The chat model's verdicts, by candidate and prior memory id, asked before the write
    transaction over what is committed now (rows this save creates are judged by the rules)."""
    priors = [
        list(nearest_priors(owner_id=job.owner_id, space_id=job.space_id, vector=vector))
        for vector in vectors
    ]
    decided = llm_judge([c.content for c in candidates], [[p.content for p in rows] for rows in priors])
    advice: dict[int, dict[Any, Verdict]] = {}
    for (i, j), verdict in decided.items():
        advice.setdefault(i, {})[priors[i][j].id] = verdict
    return advice


def _store(
    *,
    job: Job,
    source: Source,
    candidate: Candidate,
    vector: list[float],
    advice: dict[Any, Verdict] | None = None,
    revised: uuid.UUID | None = None,
) -> Memory:
    """One statement of the job stored: evidence for a memory that holds it, or a new memory that
    supersedes what it replaces. `revised`: the version a revision replaces (_revision_target)."""
    fingerprint = fingerprint_of(candidate.content)
    # The same fact again (same space, still current): more evidence, not a new row.
    # A forgotten memory takes no part: the words said again are a new memory (docs/decisions.md).
    # The same words about an event on another day are another event.
    existing = [
        Memory.from_db(DEFAULT_DB_ALIAS, _SAME_FIELDS, row)
        for row in compiled_rows(
            _same_fingerprint(), owner_id=job.owner_id, space_id=job.space_id, fingerprint=fingerprint
        )
    ]
    # A revision is a new version even when its words repeat the one it revises (new dates or kind).
    existing_match = next((m for m in existing if m.id != revised and same_event_day(candidate, m)), None)
    stated = [(e["name"], e["type"]) for e in job.options.get("entities") or []]
    if existing_match is not None:
        return _confirm(job=job, source=source, memory=existing_match, entities=stated)
    frame = frame_of(candidate.content)
    judged = judge_priors(job=job, candidate=candidate, frame=frame, vector=vector, advice=advice)
    same = next(
        (memory for memory, verdict in judged if verdict is Verdict.SAME and memory.id != revised), None
    )
    if same is not None:
        # A rewording ("I have a peanut allergy" after "I'm allergic to peanuts"): evidence.
        return _confirm(job=job, source=source, memory=same, entities=stated)
    now = timezone.now()
    memory = Memory(
        owner_id=job.owner_id,
        space_id=job.space_id,
        source=source,
        job=job,
        agent_id=job.agent_id,
        session_id=source.session_id,
        kind=candidate.kind,
        content=candidate.content[:20000],
        fingerprint=fingerprint,
        names_time=candidate.names_time,
        tags=[t[:100] for t in candidate.tags][:50],
        embedding=vector,
        occurred_at=candidate.occurred_at,
        valid_from=candidate.valid_from,
        valid_until=(_stated_clocks(job) or {}).get("valid_until"),
        due_at=candidate.due_at,
        stated_at=candidate.stated_at,
        starts_by=candidate.starts_by,
        span_start=candidate.span_start,
        span_end=candidate.span_end,
        # A hypothetical, a question or a quote fills no slot: "If I moved to Berlin" is not a move.
        slot="" if frame.tentative else candidate.slot[:200],
        slot_value="" if frame.tentative else candidate.slot_value[:200],
        category=str(job.options.get("category", ""))[:20],
        confidence=float(job.options.get("confidence", 0.9)),
        recorded_at=now,
    )
    # The memory, its evidence and its entity links: one message (rows_insert), after the entities
    # are found or made (their rows locked, in key order, until the job commits).
    links = [
        Memory.entities.through(memory_id=memory.id, entity_id=entity.id)
        for entity in _entities_recorded(job=job, entities=[*candidate.entities, *stated])
    ]
    rows_insert(memory, Evidence(owner_id=job.owner_id, memory=memory, source=source), *links)
    replaced = {m.id for m, verdict in judged if verdict in (Verdict.UPDATE, Verdict.NEGATION)}
    if memory.slot:
        replaced |= set(memory_rivals(memory).values_list("id", flat=True))
    if revised is not None:
        # The person said this replaces that memory: the same supersede rule closes it.
        replaced.add(revised)
    if replaced:
        rivals = Memory.objects.filter(id__in=replaced, superseded_at__isnull=True)
        supersede(new=memory, rivals=rivals, source=source, now=now)
    return memory


# What _store reads of a memory with the same fingerprint: its id, and whether it is the same event
# (in the model's field order, as Memory.from_db reads them).
_SAME_FIELDS = model_order(Memory, ("id", "kind", "occurred_at"))


@functools.cache
def _same_fingerprint() -> CompiledQuery:
    # The current memories of a space with a fingerprint, oldest first, locked until the job commits:
    # every new statement asks it, so it is compiled once (memories.selectors.compiled).
    return compile_once(
        lambda owner_id, space_id, fingerprint: (
            Memory.objects.select_for_update()
            .filter(owner_id=owner_id, space_id=space_id, fingerprint=fingerprint, superseded_at__isnull=True)
            .filter(active_q())
            .order_by("recorded_at")
            .values_list(*_SAME_FIELDS)
        ),
        owner_id=uuid.uuid4(),
        space_id=uuid.uuid4(),
        fingerprint=f"sample {uuid.uuid4()}",
    )


def _confirm(*, job: Job, source: Source, memory: Memory, entities: list[tuple[str, str]]) -> Memory:
    """The same fact said again: the new source is evidence for the memory that holds it."""
    Evidence.objects.get_or_create(
        memory=memory,
        source=source,
        stance=Evidence.Stance.SUPPORTS,
        defaults={"owner_id": job.owner_id},
    )
    # The entities a saver names are added; the first claimant's category and
    # confidence stay (a repetition is evidence, not an edit).
    _link_entities(job=job, memory=memory, entities=entities)
    return memory


def _link_entities(*, job: Job, memory: Memory, entities: list[tuple[str, str]]) -> None:
    linked = _entities_recorded(job=job, entities=entities)
    if linked:
        # One INSERT for the memory's links (a link already there is skipped, as add() does).
        memory.entities.add(*linked)


def _entities_recorded(*, job: Job, entities: list[tuple[str, str]]) -> list[Entity]:
    """The entities of the job's space that `entities` name (entity_record), each once."""
    valid_types = set(Entity.Type.values)
    # entity_record locks each row until the job commits; key order makes two saves naming the same
    # entities take the locks in one order. A deadlock left (across memories) is an OperationalError,
    # which the task retries.
    linked: dict[Any, Entity] = {}
    for name, type_ in sorted(entities, key=lambda item: normalize_entity_name(item[0])):
        if not normalize_entity_name(name) or type_ not in valid_types:
            continue
        entity, _ = entity_record(owner_id=job.owner_id, space_id=job.space_id, name=name, type_=type_)
        linked.setdefault(entity.id, entity)
    return list(linked.values())


# A job committed but not yet marked published is given this long for its publish to finish (it
# runs right after the commit) before the sweep sends it from the database.
UNPUBLISHED_AFTER = timedelta(seconds=5)

# A published job still queued after this long may have lost its message (a broker restarted
# without persistence, a message left unacknowledged by a connection that died): it is sent again,
# and marked published again, so a long backlog is sent at most once per this long. A second
# message is harmless (the claim runs a job once).
REPUBLISH_AFTER = timedelta(seconds=30)


def jobs_to_recover() -> list[Any]:
    """Jobs to send to the workers from the database: queued ones whose publish failed after their
    commit (the outbox), queued ones whose message may be lost, and running ones whose lease expired
    (the holder died or lost the database)."""
    queued = Job.objects.filter(status=Job.Status.QUEUED)
    unpublished = Q(published_at__isnull=True, created_at__lt=Now() - UNPUBLISHED_AFTER)
    lost = Q(published_at__lt=Now() - REPUBLISH_AFTER)
    ids = list(queued.filter(unpublished | lost).values_list("id", flat=True))
    expired = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=Now())
    ids += list(Job.objects.filter(status=Job.Status.RUNNING).filter(expired).values_list("id", flat=True))
    return ids
