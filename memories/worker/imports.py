"""Running an import: a history of many items stored as a bulk load, batch by batch, in time order.

Each batch of items (settings.IMPORT_BATCH) is extracted, embedded in one model call per 64 texts,
and written in ONE transaction under the owner's write lock: its sources (one per item, keyed by the
item's own id), each item's statements through the same update engine a save goes through
(store.statements_write), in the items' order, so a later statement supersedes an earlier one
exactly as if they had been saved one by one; and the import's counts with the position reached.

Crash-safe and idempotent: a batch is written whole or not at all, and the position is written with
it, so a worker killed mid-import leaves the batches before committed and the one in hand absent; the
job's lease runs out, the recovery sweep sends it again, and the next attempt starts at the position
stored. An item whose key is already stored in the space (an earlier import of the same file, or an
item said twice in it) is skipped, so importing twice adds nothing.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import logging
import uuid
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from config import replicas
from memories import embeddings
from memories.errors import Code
from memories.models import Import, Job, Source
from memories.pipeline.entities import capitalised_words, normalize_entity_name
from memories.pipeline.extract import Candidate
from memories.pipeline.import_formats import ExportedMemory, ExportState, ImportItem, import_parse
from memories.selectors.graph import entity_names_known
from memories.services.imports import (
    archive_limits,
    import_claimant,
    import_job_stop,
    import_source_kind,
    own_sources,
)
from memories.services.sources import content_hash
from memories.worker import lease, restore, store
from memories.worker.candidates import candidates_of

logger = logging.getLogger(__name__)

# The namespace of an imported conversation's session id (derived: the same conversation imported
# again is the same session).
SESSION_NAMESPACE = uuid.UUID("0b7d4c1e-93a2-5f60-8c1d-5e2f7a9b3c44")
# The items of an attempt's first batch (memories.worker.imports.import_run says why it is small).
FIRST_BATCH = 32
# How many failures an import keeps with their reason (the count has them all).
FAILURES_KEPT = 20


@dataclass
class _Tally:
    stored: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    failed: list[dict[str, str]] = field(default_factory=list)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def item_ref(item: ImportItem) -> str:
    """The item's key among its format's items (Source.source_ref holds 500 characters)."""
    if len(item.source_id) <= 500:
        return item.source_id
    return "sha256:" + hashlib.sha256(item.source_id.encode()).hexdigest()


def item_content(item: ImportItem) -> str:
    """What is stored of an item: the person's own words as they said them; an assistant's answer
    marked as the assistant's, so "I" in it is not read as the person (docs/decisions.md)."""
    if item.role == "assistant":
        return f"Assistant: {item.text}"
    return item.text


def import_run(*, job: Job, claim: lease.Claim) -> None:
    """Store the import's items from where the last attempt stopped; mark the job done."""
    made = Import.objects.filter(owner_id=job.owner_id, job_id=job.id).first()
    if made is None:
        return  # deleted with its owner meanwhile
    if made.cancel_requested_at is not None:
        with transaction.atomic():
            import_job_stop(job=job, made=made)
        return
    if made.data is None:
        _finish(job, made)
        return
    parsed = import_parse(data=bytes(made.data), filename=made.filename, limits=archive_limits())
    items = parsed.items
    # Our own export names the spaces its items were said in: each is the owner's space of that name
    # (made if missing), its default space the import's own.
    spaces = restore.spaces_made(job=job, made=made, state=parsed.state) if parsed.state else {}
    # The first batch small: nothing is written while it is embedded, and every later batch is
    # embedded while the one before it is written.
    size, first = settings.IMPORT_BATCH, min(FIRST_BATCH, settings.IMPORT_BATCH)
    starts = [made.items_read, *range(made.items_read + first, len(items), size)]
    batches = [items[start : start + (first if n == 0 else size)] for n, start in enumerate(starts)]
    # A batch is written in one space (the engine judges within a space); an export's items come
    # space by space, so this splits a batch at most once per space; and it starts after each moment
    # the person forgot a memory (restore.forgetting_cuts).
    cuts = restore.forgetting_cuts(items=items, state=parsed.state) if parsed.state else set()
    forgetting = restore.Forgetting(items=items, state=parsed.state) if parsed.state else None
    batches = [part for batch in batches for part in _parts(batch, cuts)]
    seen: set[str] = set()
    upcoming = _prepare(job=job, made=made, items=batches[0], seen=seen, spaces=spaces) if batches else None
    for index in range(len(batches)):
        current = upcoming
        assert current is not None
        if index:
            # Read again now that the batch before is stored: the names it made known, as a save
            # one by one would have seen them (its vectors are kept where its words are the same).
            _refresh(prepared=current)
        vectors = current.vectors.result()
        # The next batch is read and its texts embedded on another thread while this one is
        # written: the model's run releases the GIL, and the database works on the other core.
        upcoming = (
            _prepare(job=job, made=made, items=batches[index + 1], seen=seen, spaces=spaces)
            if index + 1 < len(batches)
            else None
        )
        forget = forgetting.due(current.items) if forgetting else []
        if not _stored(job=job, made=made, claim=claim, prepared=current, vectors=vectors, forget=forget):
            if upcoming is not None:
                upcoming.vectors.cancel()
            return
    if parsed.state is not None and not _restored(
        job=job, made=made, claim=claim, state=parsed.state, spaces=spaces
    ):
        return
    _finish(job, made)


def _restored(
    *, job: Job, made: Import, claim: lease.Claim, state: ExportState, spaces: dict[str, uuid.UUID]
) -> bool:
    """What our export carries beside its items, applied after its last batch, in a transaction of
    its own under the owner's write lock (memories/worker/restore.py). Applied again by an attempt
    that finds it done: it only touches what this import made, and sets it to the same values."""
    with transaction.atomic():
        if _held(job=job, made=made, claim=claim) is None:
            return False
        applied = restore.state_apply(job=job, made=made, state=state, spaces=spaces)
        # Read again under the row lock: an undo of another import may have handed it a space.
        stored = Import.objects.filter(id=made.id).values_list("restored", flat=True).first()
        made.restored = {**(stored or made.restored), **applied}
        Import.objects.filter(owner_id=job.owner_id, id=made.id).update(restored=made.restored)
    return True


def _held(*, job: Job, made: Import, claim: lease.Claim) -> int | None:
    """Inside the caller's transaction: the owner's write lock, the job's and the import's rows
    locked; the import's position, or None when it must stop (cancelled, gone, or the job taken
    over by another process)."""
    lock, keys = store.owner_write_lock([job.owner_id])
    with connection.cursor() as cursor:
        cursor.execute(lock, keys)
    locked = (
        Job.objects.select_for_update()
        .filter(id=job.id)
        .values_list("status", "attempts", "claimed_by")
        .first()
    )
    state = (
        Import.objects.select_for_update()
        .filter(id=made.id)
        .values_list("cancel_requested_at", "items_read")
        .first()
    )
    if locked is None or state is None:
        return None
    job.status, job.attempts, job.claimed_by = locked
    if not lease.claim_still_ours(job, claim):
        logger.info("import %s was taken over; dropping attempt %s", made.id, claim.attempt)
        return None
    if state[0] is not None:
        import_job_stop(job=job, made=made)
        return None
    return int(state[1])


def _parts(batch: list[ImportItem], cuts: set[str]) -> list[list[ImportItem]]:
    parts: list[list[ImportItem]] = []
    for item in batch:
        if parts and parts[-1][-1].space == item.space and item.source_id not in cuts:
            parts[-1].append(item)
        else:
            parts.append([item])
    return parts


def job_in_space(job: Job, space_id: uuid.UUID) -> Job:
    """The import's job as the engine sees it while it stores items of one space (store.py reads
    the job's space): the same job, its space the items'."""
    if space_id == job.space_id:
        return job
    acting = copy.copy(job)
    acting.space_id = space_id
    return acting


def _finish(job: Job, made: Import) -> None:
    total = made.items_total
    with transaction.atomic():
        Import.objects.filter(owner_id=job.owner_id, id=made.id).update(data=None)
        job.progress = {"stage": "done", "done": total, "total": total}
        Job.objects.filter(owner_id=job.owner_id, id=job.id, status=Job.Status.RUNNING).update(
            status=Job.Status.SUCCEEDED,
            finished_at=timezone.now(),
            lease_expires_at=None,
            error_code="",
            error_message="",
            progress=job.progress,
        )
        # As for a save (store.py): once committed, the owner's next reads wait for a replica that
        # has replayed the import.
        transaction.on_commit(functools.partial(replicas.writes_seen, job.owner_id))


def _sources(
    job: Job, made: Import, items: list[ImportItem], tally: _Tally, seen: set[str]
) -> list[tuple[Source, ImportItem]]:
    # `job`: in the items' space (job_in_space).
    """The batch's items that are new and savable, as unsaved sources; the others tallied as skipped.
    `seen`: the keys this attempt has taken so far (the batch before may not be written yet)."""
    kind = import_source_kind(made.format)
    refs = [item_ref(item) for item in items]
    stored = set(
        Source.objects.filter(
            owner_id=job.owner_id, space_id=job.space_id, source_kind=kind, source_ref__in=refs
        ).values_list("source_ref", flat=True)
    )
    if made.format == restore.DEEPRECALL:
        # An export of this very account: its sources are here already.
        stored |= own_sources(owner_id=job.owner_id, refs=refs)
    claimant = import_claimant(made.id)
    # Each item its own moment, in the items' order: recall finds a statement's neighbours in its
    # conversation by the order their sources were recorded (memories.retrieval.recall's context),
    # which one shared timestamp for a whole batch would leave undefined.
    now = timezone.now()
    fresh: list[tuple[Source, ImportItem]] = []
    for item, ref in zip(items, refs, strict=True):
        content = item_content(item)
        if ref in seen:
            tally.skip("duplicate_in_file")
        elif ref in stored:
            tally.skip("already_imported")
        elif not item.text.strip():
            tally.skip("empty")
        elif len(content) > settings.REMEMBER_MAX_CHARS:
            tally.skip("too_long")
        else:
            seen.add(ref)
            group = f"{job.owner_id}\n{kind}\n{item.group}"
            source = Source(
                owner_id=job.owner_id,
                space_id=job.space_id,
                agent_id=job.agent_id,
                origin=Source.Origin.IMPORT,
                content=content,
                content_hash=content_hash(content.encode()),
                claimant=claimant,
                source_kind=kind,
                source_ref=ref,
                title=item.title[:300],
                session_id=uuid.uuid5(SESSION_NAMESPACE, group) if item.group else None,
                refers_to=item.at,
                # Our export's items keep the moment the service first recorded them.
                recorded_at=item.recorded_at or now + timedelta(microseconds=len(fresh)),
            )
            fresh.append((source, item))
    return fresh


@dataclass
class _Prepared:
    """A batch read and extracted, its texts being embedded (`vectors`)."""

    # The import's job in the batch's space (job_in_space).
    job: Job
    items: list[ImportItem]
    tally: _Tally
    work: list[tuple[Source, ImportItem, list[Candidate]]]
    vectors: Future[list[list[float]]]
    # The batch's names the space knew when its statements were read (_known of `fresh`, its new
    # items, those that said nothing included).
    known: set[str]
    fresh: list[tuple[Source, ImportItem]]


def _known(job: Job, fresh: list[tuple[Source, ImportItem]]) -> set[str]:
    """The names of these items that the space knows now (one query)."""
    return entity_names_known(
        owner=job.owner,
        space_id=job.space_id,
        names={word for source, _ in fresh for word in capitalised_words(source.content)},
    )


def _extracted(
    job: Job, fresh: list[tuple[Source, ImportItem]], tally: _Tally | None, known: set[str]
) -> list[tuple[Source, ImportItem, list[Candidate]]]:
    """Each new item's statements (with the item's tags), read with the names the space knows
    (`known`, _known's: not changed here); an item without one tallied as skipped (when `tally` is
    given)."""
    known = set(known)
    work: list[tuple[Source, ImportItem, list[Candidate]]] = []
    for source, item in fresh:
        candidates = candidates_of(source, job, known=known)
        if not candidates:
            if tally is not None:
                tally.skip(Code.NOTHING_TO_REMEMBER.value)
            continue
        for candidate in candidates:
            candidate.tags = list(dict.fromkeys([*candidate.tags, *item.tags]))[:50]
            # The names this item will record are known to the items after it, as they would be to
            # the next save (a speaker's name at the start of every turn of a conversation).
            known |= {key for name, _ in candidate.entities if (key := normalize_entity_name(name))}
        work.append((source, item, candidates))
    return work


def _texts(work: list[tuple[Source, ImportItem, list[Candidate]]]) -> list[str]:
    return [candidate.content for _, _, candidates in work for candidate in candidates]


def _prepare(
    *, job: Job, made: Import, items: list[ImportItem], seen: set[str], spaces: dict[str, uuid.UUID]
) -> _Prepared:
    tally = _Tally()
    job = job_in_space(job, spaces.get(items[0].space, job.space_id))
    fresh = _sources(job, made, items, tally, seen)
    known = _known(job, fresh)
    work = _extracted(job, fresh, tally, known)
    # The statements' vectors only: the masked texts the update engine compares are embedded when a
    # prior asks for them (supersede.frame_similarities), as for a save. Embedding every typed
    # statement's masked text up front cost a third of the model's work for texts few priors ask
    # for (LoCoMo conversation 26: 232 embedded, 155 asked for; 10% less CPU and wall without).
    vectors = embeddings.embed_soon(_texts(work))
    return _Prepared(job, items, tally, work, vectors, known, fresh)


def _refresh(*, prepared: _Prepared) -> None:
    """The batch's statements read again with the names known now, if the batch before made any of
    its names known (else they would be read the same: nothing else they depend on has changed); its
    texts embedded again only where they changed (a name made known can change an entity, seldom
    the words)."""
    # The same items' names as when the batch was read, so an unchanged answer means unchanged reads.
    known = _known(prepared.job, prepared.fresh)
    if known == prepared.known:
        return
    prepared.known = known
    before = _texts(prepared.work)
    prepared.work = _extracted(
        prepared.job, [(source, item) for source, item, _ in prepared.work], None, known
    )
    after = _texts(prepared.work)
    if after != before:
        prepared.vectors.cancel()
        prepared.vectors = embeddings.embed_soon(after)


def _stored(
    *,
    job: Job,
    made: Import,
    claim: lease.Claim,
    prepared: _Prepared,
    vectors: list[list[float]],
    forget: list[ExportedMemory],
) -> bool:
    """One batch written; False when the import must stop (cancelled, or the job taken over by
    another process). `forget`: what our export says was forgotten before the batch was said."""
    arguments = {
        "forget": forget,
        "job": job,
        "acting": prepared.job,
        "made": made,
        "claim": claim,
        "items": prepared.items,
        "work": prepared.work,
        "vectors": vectors,
        "tally": prepared.tally,
    }
    try:
        return _write(**arguments)  # type: ignore[arg-type]
    except (OperationalError, InterfaceError):
        raise
    except Exception:
        # An item the engine cannot store: the batch again, each item in a savepoint of its own, so
        # that one fails alone (the fast path has no savepoint per item: a round trip each).
        logger.exception("import %s: a batch failed; storing its items one by one", made.id)
        return _write(**arguments, careful=True)  # type: ignore[arg-type]


def _write(
    *,
    job: Job,
    acting: Job,
    made: Import,
    claim: lease.Claim,
    items: list[ImportItem],
    work: list[tuple[Source, ImportItem, list[Candidate]]],
    vectors: list[list[float]],
    tally: _Tally,
    forget: list[ExportedMemory],
    careful: bool = False,
) -> bool:
    stored = 0
    failed: list[dict[str, str]] = []
    with transaction.atomic():
        reached = _held(job=job, made=made, claim=claim)
        if reached is None:
            return False
        # Before the batch's reads: what was forgotten by then takes no part in its judgements.
        restore.forgotten_apply(job=acting, made=made, memories=forget)
        reads = None
        if not careful:
            Source.objects.bulk_create([source for source, _, _ in work])
            # The batch's duplicate and entity reads made once (store.BatchReads); a careful pass,
            # whose items may roll back alone, reads per statement.
            reads = store.batch_reads(
                job=acting, candidates=[c for _, _, candidates in work for c in candidates]
            )
        position = 0
        for source, item, candidates in work:
            mine = vectors[position : position + len(candidates)]
            position += len(candidates)
            if not careful:
                store.statements_write(
                    job=acting, source=source, candidates=candidates, vectors=mine, reads=reads
                )
                stored += 1
                continue
            try:
                with transaction.atomic():
                    source.save(force_insert=True)
                    store.statements_write(job=acting, source=source, candidates=candidates, vectors=mine)
                stored += 1
            except (OperationalError, InterfaceError):
                raise
            except Exception:
                logger.exception("import %s: item %s failed", made.id, item.source_id)
                failed.append({"source_id": item.source_id[:200], "reason": Code.INTERNAL_ERROR.value})
        if reads is not None:
            reads.entities.write()
        made.items_read = reached + len(items)
        made.items_stored += stored
        made.items_skipped += sum(tally.skipped.values())
        made.items_failed += len(failed)
        reasons = dict(made.skipped_reasons)
        for reason, count in tally.skipped.items():
            reasons[reason] = reasons.get(reason, 0) + count
        made.skipped_reasons = reasons
        made.failures = [*made.failures, *failed][:FAILURES_KEPT]
        made.save(
            update_fields=[
                "items_read",
                "items_stored",
                "items_skipped",
                "items_failed",
                "skipped_reasons",
                "failures",
            ]
        )
        progress = {"stage": "storing", "done": made.items_read, "total": made.items_total}
        Job.objects.filter(owner_id=job.owner_id, id=job.id).update(progress=progress)
    return True
