"""Running a job: the worker's side of remember and document ingest, from a Source to Memory rows.

job_process() is idempotent and crash-safe:
1. claim the job (memories.worker.lease);
2. extract candidates (rules, or the LLM when configured) and embed them, outside
   any transaction, since this is the slow part, while a heartbeat thread extends the lease;
3. write every row and mark the job succeeded in ONE transaction (memories.worker.store), after
   checking that the claim is still ours. A crash before step 3 commits leaves nothing
   behind, and a re-run starts again from the Source.

Short saves are taken in batches (lease.job_batch_claim): the job whose message arrived claims up to
BATCH_MAX - 1 other queued short saves of any owner, embeds every text of the batch in one model call
and writes them in one transaction, each job in a savepoint of its own, under its own owner and space.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction

from memories import embeddings
from memories.errors import Code
from memories.models import Job, Source
from memories.parsing import RowId
from memories.pipeline.entities import capitalised_words
from memories.pipeline.extract import Candidate, extract_contents
from memories.pipeline.judge_llm import llm_judge
from memories.pipeline.parse_sandbox import DocumentRefused
from memories.pipeline.supersede import nearest_priors
from memories.pipeline.update import Verdict
from memories.selectors.graph import entity_names_known_each
from memories.selectors.jobs import job_with_source
from memories.services.documents import document_text_store
from memories.services.images import image_store
from memories.worker import imports, lease, store
from memories.worker.candidates import candidates_of

logger = logging.getLogger(__name__)


def job_process(*, job_id: RowId, owner_id: RowId | None = None) -> None:
    """Run one job to completion (or to a permanent failure), and with it, when it is a short save,
    the other short saves waiting in the queue (lease.job_batch_claim). Safe to call again."""
    claim = lease.job_claim(job_id=job_id, owner_id=owner_id)
    if claim is None:
        return
    claims = [claim]
    try:
        # A job on a second attempt runs alone: should it be what crashed its process, it takes no
        # other save down with it again.
        if claim.attempt == 1 and not settings.LLM_BASE_URL and claim.batchable:
            claims += lease.job_batch_claim(
                owner_id=claim.owner_id, exclude=claim.job_id, limit=lease.BATCH_MAX - 1
            )
        with lease.heartbeat(claims):
            if len(claims) == 1:
                _job_run(job_id=job_id, claim=claim)
            else:
                _batch_run(claims=claims)
    except BaseException:
        try:
            lease.job_lease_release(claim=claim)
            lease.batch_members_resend(claims[1:])
        except Exception:
            # The database is away: the leases run out on their own, LEASE after the last beat, and
            # the sweep sends the jobs again.
            logger.info("job %s: could not release the leases", job_id)
        raise


def _job_run(*, job_id: RowId, claim: lease.Claim) -> None:
    job = job_with_source(job_id=job_id, owner_id=claim.owner_id)
    if job.kind == Job.Kind.IMPORT:
        # A history of many items under one job: stored batch by batch (memories.worker.imports).
        imports.import_run(job=job, claim=claim)
        return
    source = job.source
    if source is None:
        lease.job_fail(
            owner_id=claim.owner_id,
            job_id=job_id,
            code=Code.SOURCE_MISSING,
            message="The saved content is gone (deleted).",
        )
        return
    if source.raw is not None:
        # An uploaded document's text (an image's pixels) is read here, in a child process, not in
        # the upload request.
        _progress(claim.owner_id, job_id, "reading")
        try:
            if source.origin == Source.Origin.IMAGE:
                source = image_store(source=source)
            else:
                source = document_text_store(source=source)
        except DocumentRefused as refused:
            lease.job_fail(owner_id=claim.owner_id, job_id=job_id, code=refused.code, message=refused.message)
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
    _progress(claim.owner_id, job_id, "extracting")
    candidates = candidates_of(source, job)
    if not candidates:
        lease.job_fail(
            owner_id=claim.owner_id,
            job_id=job_id,
            code=Code.NOTHING_TO_REMEMBER,
            message="No memory could be derived from it.",
        )
        return
    total = len(candidates)
    vectors: list[list[float]] = []
    # In the model's own batch size, one progress write per batch: a note is one batch and one
    # write, a 40-page PDF shows its segments being done.
    for start in range(0, total, PROGRESS_BATCH):
        _progress(claim.owner_id, job_id, "embedding", done=len(vectors), total=total)
        texts = [c.content for c in candidates[start : start + PROGRESS_BATCH]]
        # The early vectors are those of these very words (compared, not assumed).
        vectors += early.result() if early is not None and texts == contents else embeddings.embed(texts)
    _progress(claim.owner_id, job_id, "storing", done=total, total=total)
    advice = _model_advice(job, candidates, vectors) if settings.LLM_BASE_URL else {}
    with transaction.atomic():
        # The owner's write lock (OWNER_WRITE_LOCK), then the job's row and its source's, locked by
        # one statement, in one message; the job's claim columns as they are now. The rest of both
        # rows is what was read above: a save's source does not change, and the job's other columns
        # are only this claim's to write.
        owner_lock, owner_keys = store.owner_write_lock([job.owner_id])
        with connection.cursor() as cursor:
            cursor.execute(
                owner_lock + ";\n" + _LOCK_JOB_AND_SOURCE_SQL,
                [*owner_keys, job.owner_id, source.id, job.owner_id, job.id],
            )
            if not cursor.nextset():
                raise RuntimeError("the job's lock returned no result")
            locked = cursor.fetchone()
        if locked is None:
            return  # the job was deleted since (its owner's account, say)
        job.status, job.attempts, job.claimed_by, source_kept = locked
        if not lease.claim_still_ours(job, claim):
            logger.info("job %s was taken over; dropping attempt %s", job_id, claim.attempt)
            return
        if not source_kept:
            # Deleted since (the job's source_id is cleared with it).
            lease.job_fail(
                owner_id=claim.owner_id,
                job_id=job_id,
                code=Code.SOURCE_MISSING,
                message="The saved content is gone (deleted).",
            )
            return
        store.job_write(job=job, source=source, candidates=candidates, vectors=vectors, advice=advice)


# A batch's jobs and their sources, locked in one statement, in id order: what _LOCK_JOB_AND_SOURCE_SQL
# reads of one job, for each. The ORM's two select_for_update().in_bulk() built and hydrated every
# column of both (a tenth of a pool process's Python at concurrency 8); the write uses the job and
# source read before the embedding, as a lone job does.
_LOCK_JOBS_AND_SOURCES_SQL = f"""SELECT j.id, j.status, j.attempts, j.claimed_by, s.id IS NOT NULL
FROM {Job._meta.db_table} j
LEFT JOIN LATERAL (
    SELECT id FROM {Source._meta.db_table} WHERE owner_id = j.owner_id AND id = j.source_id FOR UPDATE
) s ON true
WHERE j.owner_id = %s AND j.id = ANY(%s::uuid[])
ORDER BY j.id
FOR UPDATE OF j"""  # noqa: S608 - the tables' names only


_LOCK_JOB_AND_SOURCE_SQL = f"""SELECT j.status, j.attempts, j.claimed_by, s.id IS NOT NULL
FROM {Job._meta.db_table} j
LEFT JOIN LATERAL (
    SELECT id FROM {Source._meta.db_table} WHERE owner_id = %s AND id = %s AND id = j.source_id FOR UPDATE
) s ON true
WHERE j.owner_id = %s AND j.id = %s
FOR UPDATE OF j"""  # noqa: S608 - the tables' names only


# What the owner reads of a job that failed on a fault of ours (the log has the detail).
FAILED_MESSAGE = "Processing failed; saving again may help."


def _batch_run(*, claims: list[lease.Claim]) -> None:
    """Several short saves (lease.job_batch_claim): each extracted on its own, all embedded in one model
    call, all written in one transaction. A job that cannot be done fails alone with its code and
    the others are stored; a database error fails the batch as a whole (nothing of it committed),
    and job_process retries it."""
    by_id = {claim.job_id: claim for claim in claims}
    # One owner's saves (lease.job_batch_claim): every statement below names that owner.
    owner_id = claims[0].owner_id
    # The source as select_related("source") would set it, joined on the owner too.
    found: list[Job] = list(
        Job.objects.filter(owner_id=owner_id, id__in=by_id)
        .annotate(held_source=lease.held_source())
        .select_related("held_source", "owner")  # type: ignore[misc]
    )
    for job in found:
        job.source = getattr(job, "held_source")  # noqa: B009 - an annotation the type does not know
    jobs = sorted(
        found,
        # In the order they were saved, as one process would have run them: a later save supersedes.
        key=lambda job: (job.created_at, str(job.id)),
    )
    _progress_many(owner_id, {job.id: 0 for job in jobs}, "extracting")
    known = _names_known(jobs)
    work: list[tuple[Job, list[Candidate]]] = []
    for job in jobs:
        try:
            candidates = (
                candidates_of(job.source, job, known=known.get(job.id)) if job.source is not None else []
            )
        except (OperationalError, InterfaceError):
            raise
        except Exception:
            logger.exception("job %s failed while extracting", job.id)
            lease.job_fail(
                owner_id=job.owner_id, job_id=job.id, code=Code.INTERNAL_ERROR, message=FAILED_MESSAGE
            )
            continue
        if job.source is None:
            lease.job_fail(
                owner_id=job.owner_id,
                job_id=job.id,
                code=Code.SOURCE_MISSING,
                message="The saved content is gone (deleted).",
            )
        elif not candidates:
            lease.job_fail(
                owner_id=job.owner_id,
                job_id=job.id,
                code=Code.NOTHING_TO_REMEMBER,
                message="No memory could be derived from it.",
            )
        else:
            work.append((job, candidates))
    if not work:
        return
    totals = {job.id: len(candidates) for job, candidates in work}
    _progress_many(owner_id, totals, "embedding")
    vectors = iter(embeddings.embed([c.content for _, candidates in work for c in candidates]))
    _progress_many(owner_id, totals, "storing", done=True)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(*store.owner_write_lock(job.owner_id for job, _ in work))
        with connection.cursor() as cursor:
            cursor.execute(_LOCK_JOBS_AND_SOURCES_SQL, [owner_id, [job.id for job, _ in work]])
            locked = {row[0]: row[1:] for row in cursor.fetchall()}
        for job, candidates in work:
            mine = [next(vectors) for _ in candidates]
            state = locked.get(job.id)
            if state is not None:
                job.status, job.attempts, job.claimed_by, source_kept = state
            if state is None or not lease.claim_still_ours(job, by_id[job.id]):
                logger.info(
                    "job %s was taken over (%s); dropping it from the batch",
                    job.id,
                    (job.status, job.attempts, job.claimed_by) if state else "gone",
                )
                continue
            if job.source is None or not source_kept:
                lease.job_fail(
                    owner_id=job.owner_id,
                    job_id=job.id,
                    code=Code.SOURCE_MISSING,
                    message="The saved content is gone (deleted).",
                )
                continue
            try:
                # A savepoint per job: one that fails leaves the others' rows as they were.
                with transaction.atomic():
                    store.job_write(
                        job=job, source=job.source, candidates=candidates, vectors=mine, advice={}
                    )
            except (OperationalError, InterfaceError):
                raise
            except Exception:
                logger.exception("job %s failed while storing", job.id)
                lease.job_fail(
                    owner_id=job.owner_id, job_id=job.id, code=Code.INTERNAL_ERROR, message=FAILED_MESSAGE
                )


def _names_known(jobs: list[Job]) -> dict[uuid.UUID, set[str]]:
    """For each job with a source, the names of its text its space already knows (the rules'
    `known`, see _candidates): one query per owner and space of the batch, not one per job."""
    spaces: dict[tuple[Any, Any], list[Job]] = {}
    for job in jobs:
        if job.source is not None:
            spaces.setdefault((job.owner_id, job.space_id), []).append(job)
    known: dict[uuid.UUID, set[str]] = {}
    for (_, space_id), group in spaces.items():
        names = {job.id: capitalised_words(job.source.content) for job in group if job.source is not None}
        known |= entity_names_known_each(owner=group[0].owner, space_id=space_id, names=names)
    return known


def _progress_many(owner_id: Any, totals: dict[uuid.UUID, int], stage: str, *, done: bool = False) -> None:
    """_progress for a batch, in one statement: each job with its own segment count."""
    _progress_write(
        owner_id,
        {
            job_id: {"stage": stage, "done": total if done else 0, "total": total}
            for job_id, total in totals.items()
        },
    )


# The local model's batch size (memories.embeddings.embed), so batching here changes no batch.
PROGRESS_BATCH = 64


def _progress(owner_id: Any, job_id: RowId, stage: str, *, done: int = 0, total: int = 0) -> None:
    # One small UPDATE outside any transaction, so the job page sees it at once; it only
    # describes the work (a taken-over attempt writing a stale stage changes no result).
    _progress_write(owner_id, {job_id: {"stage": stage, "done": done, "total": total}})


def _progress_write(owner_id: Any, progress: dict[Any, dict[str, Any]]) -> None:
    """Each running job's progress, in one UPDATE written once: a short save writes three stages in
    a few milliseconds, and building and compiling a queryset for each cost the worker more CPU
    than the database spent on them (config.compiled)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _PROGRESS_SQL,
            [
                list(progress),
                [json.dumps(value) for value in progress.values()],
                owner_id,
                Job.Status.RUNNING,
            ],
        )


_PROGRESS_SQL = f"""UPDATE {Job._meta.db_table} j SET progress = p.progress
FROM unnest(%s::uuid[], %s::jsonb[]) AS p(id, progress)
WHERE j.id = p.id AND j.owner_id = %s AND j.status = %s"""  # noqa: S608 - the table's name only


def _model_advice(
    job: Job, candidates: list[Candidate], vectors: list[list[float]]
) -> dict[int, dict[uuid.UUID, Verdict]]:
    """The chat model's verdicts, by candidate and prior memory id, asked before the write
    transaction over what is committed now (rows this save creates are judged by the rules)."""
    priors = [
        list(nearest_priors(owner_id=job.owner_id, space_id=job.space_id, vector=vector))
        for vector in vectors
    ]
    decided = llm_judge([c.content for c in candidates], [[p.content for p in rows] for rows in priors])
    advice: dict[int, dict[uuid.UUID, Verdict]] = {}
    for (i, j), verdict in decided.items():
        advice.setdefault(i, {})[priors[i][j].id] = verdict
    return advice
