"""A job's rows: each statement the job found stored as a new memory (with its evidence and entities,
superseding what it replaces) or as evidence for a memory that already holds it, and the job marked
succeeded, in the caller's transaction under the owner's write lock (OWNER_WRITE_LOCK).
"""

from __future__ import annotations

import functools
import json
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import DEFAULT_DB_ALIAS, connection, transaction
from django.utils import timezone

from config import replicas
from config.compiled import CompiledQuery, compile_once, compiled_rows, model_order
from memories.as_of import active_q
from memories.errors import Code
from memories.models import Entity, Evidence, Job, Memory, MemoryEntity, Source
from memories.pipeline.dedupe import fingerprint_of
from memories.pipeline.entities import normalize_entity_name
from memories.pipeline.extract import Candidate
from memories.pipeline.supersede import (
    document_retire_unsupported,
    judge_priors,
    memory_rivals,
    same_event_day,
    supersede,
)
from memories.pipeline.update import Verdict, frame_of
from memories.services.entities import EntityBook, entity_record
from memories.services.rows import rows_insert
from memories.worker import lease

logger = logging.getLogger(__name__)


def stated_clocks(job: Job) -> dict[str, datetime | None] | None:
    """The dates a revision states (memory_revise puts them in the job's options), or None."""
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


def job_write(
    *,
    job: Job,
    source: Source,
    candidates: list[Candidate],
    vectors: list[list[float]],
    advice: dict[int, dict[uuid.UUID, Verdict]],
) -> None:
    """Every row of one job, and the job succeeded (or, for a revision with no version left to
    replace, failed); inside the caller's transaction, with the job and its source locked."""
    # Once per job, before its first row: a revision of several statements replaces one version,
    # and the next statement must not take the first one's new row for it.
    revised, refused = _revision_target(job)
    if refused:
        lease.job_fail(job_id=job.id, owner_id=job.owner_id, code=Code.MEMORY_NOT_CURRENT, message=refused)
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
        cursor.execute(
            _SUCCEEDED_SQL, [job.status, job.finished_at, json.dumps(job.progress), job.owner_id, job.id]
        )
    if replicas.configured():
        # Once committed, the owner's next reads wait for a replica that has replayed these rows.
        transaction.on_commit(functools.partial(replicas.writes_seen, job.owner_id))


def statements_write(
    *,
    job: Job,
    source: Source,
    candidates: list[Candidate],
    vectors: list[list[float]],
    reads: BatchReads | None = None,
) -> list[Memory]:
    """One source's statements stored in order, each as a save's are (_store: evidence for what holds
    it, or a new memory superseding what it replaces), in the caller's transaction under the owner's
    write lock; the job is left as it is (an import stores many sources under one job). `reads`: the
    batch's reads made once (batch_reads), whose entities the caller writes before it commits."""
    return [
        _store(job=job, source=source, candidate=candidate, vector=vector, reads=reads)
        for candidate, vector in zip(candidates, vectors, strict=True)
    ]


@dataclass
class BatchReads:
    """What _store reads per statement that no decision of the batch's own can change except through
    what it stores itself, read once for a batch of statements in one transaction (an import's): the
    entities they name (EntityBook), and the current memories with their fingerprints (oldest first),
    which _store keeps true as it goes (a memory it stores is added, one it supersedes removed), so
    a later statement of the batch sees an earlier one's memory as a save one by one would. The
    nearest priors stay a read per statement: they rank by the vector index, which the batch's own
    rows join as they are written."""

    entities: EntityBook
    same: dict[str, list[Memory]]


def batch_reads(*, job: Job, candidates: list[Candidate]) -> BatchReads:
    """The reads of these statements of the job made at once, their rows locked until it commits."""
    stated = [str(e["name"]) for e in job.options.get("entities") or []]
    names = [*(name for candidate in candidates for name, _ in candidate.entities), *stated]
    fingerprints = sorted({fingerprint_of(candidate.content) for candidate in candidates})
    same: dict[str, list[Memory]] = {}
    rows = (
        Memory.objects.select_for_update()
        .filter(owner_id=job.owner_id, space_id=job.space_id, fingerprint__in=fingerprints)
        .filter(superseded_at__isnull=True)
        .filter(active_q())
        .order_by("recorded_at")
        .values_list("fingerprint", *_SAME_FIELDS)
    )
    for fingerprint, *fields in rows:
        same.setdefault(fingerprint, []).append(Memory.from_db(DEFAULT_DB_ALIAS, _SAME_FIELDS, fields))
    return BatchReads(EntityBook(owner_id=job.owner_id, space_id=job.space_id, names=names), same)


# A job's last write, sent as written (every save ends with it; building the UPDATE cost more CPU
# than the database spends on it, as _PROGRESS_SQL says).
_SUCCEEDED_SQL = f"""UPDATE {Job._meta.db_table} SET status = %s, finished_at = %s, error_code = '',
    error_message = '', lease_expires_at = NULL, progress = %s::jsonb
WHERE owner_id = %s AND id = %s"""  # noqa: S608 - the table's name only


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


def owner_write_lock(owner_ids: Iterable[uuid.UUID]) -> tuple[str, list[int]]:
    """The statement that takes these owners' write locks, and its parameters: one statement, whose
    target list is evaluated left to right."""
    keys = owner_write_keys(owner_ids)
    sql = "SELECT " + ", ".join(["pg_advisory_xact_lock(%s, %s)"] * len(keys))
    return sql, [value for key in keys for value in (OWNER_WRITE_LOCK, key)]


def _store(
    *,
    job: Job,
    source: Source,
    candidate: Candidate,
    vector: list[float],
    advice: dict[uuid.UUID, Verdict] | None = None,
    revised: uuid.UUID | None = None,
    reads: BatchReads | None = None,
) -> Memory:
    """One statement of the job stored: evidence for a memory that holds it, or a new memory that
    supersedes what it replaces. `revised`: the version a revision replaces (_revision_target)."""
    fingerprint = fingerprint_of(candidate.content)
    # The same fact again (same space, still current): more evidence, not a new row.
    # A forgotten memory takes no part: the words said again are a new memory (docs/decisions.md).
    # The same words about an event on another day are another event.
    existing = (
        [
            Memory.from_db(DEFAULT_DB_ALIAS, _SAME_FIELDS, row)
            for row in compiled_rows(
                _same_fingerprint(), owner_id=job.owner_id, space_id=job.space_id, fingerprint=fingerprint
            )
        ]
        if reads is None
        else reads.same.get(fingerprint, [])
    )
    # A revision is a new version even when its words repeat the one it revises (new dates or kind).
    existing_match = next((m for m in existing if m.id != revised and same_event_day(candidate, m)), None)
    stated = [(e["name"], e["type"]) for e in job.options.get("entities") or []]
    if existing_match is not None:
        return _confirm(job=job, source=source, memory=existing_match, entities=stated, reads=reads)
    frame = frame_of(candidate.content)
    judged = judge_priors(
        job=job, source=source, candidate=candidate, frame=frame, vector=vector, advice=advice
    )
    same = next(
        (memory for memory, verdict in judged if verdict is Verdict.SAME and memory.id != revised), None
    )
    if same is not None:
        # A rewording ("I have a peanut allergy" after "I'm allergic to peanuts"): evidence.
        return _confirm(job=job, source=source, memory=same, entities=stated, reads=reads)
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
        valid_until=(stated_clocks(job) or {}).get("valid_until"),
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
        MemoryEntity(owner_id=job.owner_id, memory_id=memory.id, entity_id=entity.id)
        for entity in _entities_recorded(job=job, entities=[*candidate.entities, *stated], reads=reads)
    ]
    rows_insert(memory, Evidence(owner_id=job.owner_id, memory=memory, source=source), *links)
    replaced = {m.id for m, verdict in judged if verdict in (Verdict.UPDATE, Verdict.NEGATION)}
    if memory.slot:
        replaced |= set(memory_rivals(memory).values_list("id", flat=True))
    if revised is not None:
        # The person said this replaces that memory: the same supersede rule closes it.
        replaced.add(revised)
    closed: set[uuid.UUID] = set()
    if replaced:
        rivals = Memory.objects.filter(id__in=replaced, superseded_at__isnull=True)
        closed = {older.id for older in supersede(new=memory, rivals=rivals, source=source, now=now)}
    if reads is not None:
        # The batch's fingerprints as the database now holds them (BatchReads).
        for kept in reads.same.values():
            kept[:] = [m for m in kept if m.id not in closed]
        reads.same.setdefault(fingerprint, []).append(memory)
    return memory


# What _store reads of a memory with the same fingerprint: its id, and whether it is the same event
# (in the model's field order, as Memory.from_db reads them).
_SAME_FIELDS = model_order(Memory, ("id", "kind", "occurred_at"))


@functools.cache
def _same_fingerprint() -> CompiledQuery:
    # The current memories of a space with a fingerprint, oldest first, locked until the job commits:
    # every new statement asks it, so it is compiled once (config.compiled).
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


def _confirm(
    *, job: Job, source: Source, memory: Memory, entities: list[tuple[str, str]], reads: BatchReads | None
) -> Memory:
    """The same fact said again: the new source is evidence for the memory that holds it."""
    Evidence.objects.get_or_create(
        memory=memory,
        source=source,
        stance=Evidence.Stance.SUPPORTS,
        defaults={"owner_id": job.owner_id},
    )
    # The entities a saver names are added; the first claimant's category and
    # confidence stay (a repetition is evidence, not an edit).
    _link_entities(job=job, memory=memory, entities=entities, reads=reads)
    return memory


def _link_entities(
    *, job: Job, memory: Memory, entities: list[tuple[str, str]], reads: BatchReads | None
) -> None:
    linked = _entities_recorded(job=job, entities=entities, reads=reads)
    if linked:
        # One INSERT for the memory's links, with their owner (a link already there is skipped, as
        # add() does, without add()'s read of the links first, which named no owner).
        MemoryEntity.objects.bulk_create(
            [
                MemoryEntity(owner_id=job.owner_id, memory_id=memory.id, entity_id=entity.id)
                for entity in linked
            ],
            ignore_conflicts=True,
        )


def _entities_recorded(
    *, job: Job, entities: list[tuple[str, str]], reads: BatchReads | None
) -> list[Entity]:
    """The entities of the job's space that `entities` name (entity_record), each once."""
    valid_types = set(Entity.Type.values)
    # entity_record locks each row until the job commits; key order makes two saves naming the same
    # entities take the locks in one order. A deadlock left (across memories) is an OperationalError,
    # which the task retries.
    linked: dict[uuid.UUID, Entity] = {}
    for name, type_ in sorted(entities, key=lambda item: normalize_entity_name(item[0])):
        if not normalize_entity_name(name) or type_ not in valid_types:
            continue
        if reads is not None:
            entity = reads.entities.record(name=name, type_=type_)
        else:
            entity, _ = entity_record(owner_id=job.owner_id, space_id=job.space_id, name=name, type_=type_)
        linked.setdefault(entity.id, entity)
    return list(linked.values())
