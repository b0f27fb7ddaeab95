"""Supersession: a newer value of the same fact (or single-valued relation) closes the current
one and keeps it as history; a new version of a living document retires what only older versions said.
"""

from __future__ import annotations

import math
import threading
import uuid
from collections import OrderedDict
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from django.db import DEFAULT_DB_ALIAS
from django.db.models import QuerySet, Value
from django.utils import timezone
from pgvector import Vector
from pgvector.django import CosineDistance

from config.compiled import CompiledQuery, compile_once, compiled_rows, model_order
from memories import embeddings
from memories.as_of import active_q, memory_visible, world_start, world_start_latest
from memories.models import Evidence, Memory, Relation, Source
from memories.pipeline.language import split_speaker, statement_sentences
from memories.pipeline.second_reading import read_pair
from memories.pipeline.update import (
    LOOSELY_RELATED,
    RELATED,
    Frame,
    Verdict,
    claims,
    frame_of,
    same_frame,
    same_subject,
    typed_change,
)


def supersede(*, new: Memory | Relation, rivals: QuerySet[Any], source: Source, now: datetime) -> list[Any]:
    """The one supersede rule, for memories and relations alike.

    `rivals` are the current rows that `new` competes with (another value of the same fact, another
    object of the same single-valued relation). The later testimony wins: a rival said later than the
    new row (`said_at`: an old conversation imported after newer ones) stays current, and `new` is
    history from the start, valid until that rival starts; so does one said at the same time when the
    new row's whole period is earlier ("I live in Paris. Before that I lived in Rome since 2015").
    Otherwise the rival is closed: superseded now, by `new`, valid until the change, with `source` as
    contradicting evidence, and kept as history.

    The change is the new row's start. When the new row names a period that contains the rival's
    start ("I moved to Berlin last month", after "I live in Paris" was said during that month), the
    rival still held when it was said, so the change falls between then and the end of the period
    (or when the new row was said): the midpoint, the least biased guess, and the new row starts
    there, so the two never hold at the same time. A change dated before the rival was said ("I
    started at Stripe last week" after "I work at Google" today) leaves the rival an empty interval:
    the later statement says it no longer held when it was said. Returns the rows closed.

    A forgotten (suppressed) memory is never a rival, whoever named it: it neither closes the new row
    nor is closed by it, so it becomes nobody's history (`memories.as_of`, issue 40).
    """
    evidence_for = "memory" if isinstance(new, Memory) else "relation"
    if isinstance(new, Memory):
        rivals = rivals.filter(active_q())
    new_from = world_start(new)
    new_latest = world_start_latest(new)
    new_said = said_at(new)
    closed = []
    for older in rivals.select_for_update().exclude(id=new.id).order_by("recorded_at", "id"):
        old_from = world_start(older)
        old_said = said_at(older)
        if new_said < old_said or (new_said == old_said and new_latest < old_from):
            new.valid_until = min(filter(None, (new.valid_until, old_from)))
            new.save(update_fields=["valid_until"])
            continue
        change = new_from
        if (due := _due_change(new, older, said=new_said)) is not None:
            # "In June we're moving to Portland" after "I live in Denver": the plan changes the fact
            # when it is due, so the move holds from June, and Denver until then.
            change = new.valid_from = due
            new.save(update_fields=["valid_from"])
        elif new_from < old_from <= new_latest:
            change = old_from + (max(min(new_latest, new_said), old_from) - old_from) / 2
            new.valid_from = change
            new.save(update_fields=["valid_from"])
        if change > new_said and (_is_plan(older) or old_from > new_said):
            # A plan, or a row that had not started yet, replaced by one that starts later, ends when
            # it is replaced: it never comes to hold ("Starting April ..." after "Starting March ...").
            change = new_said
        older.superseded_at = now
        older.superseded_by = new
        # A change to come (`change` after now) leaves the row holding until then: the current view
        # reads `valid_until`, not only `superseded_at` (memories.as_of).
        older.valid_until = change
        older.save(update_fields=["superseded_at", "superseded_by", "valid_until"])
        Evidence.objects.get_or_create(
            **{evidence_for: older},
            source=source,
            stance=Evidence.Stance.CONTRADICTS,
            defaults={"owner_id": new.owner_id},
        )
        closed.append(older)
    return closed


def _is_plan(row: Memory | Relation) -> bool:
    return isinstance(row, Memory) and row.kind == Memory.Kind.FORESIGHT


def _due_change(new: Memory | Relation, older: Memory | Relation, *, said: datetime) -> datetime | None:
    """When a plan that replaces a fact takes effect: its due time, if that is still to come and
    it has no start of its own; None otherwise (another plan is replaced now, rescheduled)."""
    if not _is_plan(new) or _is_plan(older) or not isinstance(new, Memory):
        return None
    if new.valid_from is not None or new.due_at is None or new.due_at <= said:
        return None
    return new.due_at


def supersession_undo(*, successor: Memory | Relation) -> list[Any]:
    """Reopen the rows `successor` closed, because it is about to be deleted: the statement that
    replaced them is gone, and leaving them replaced by nothing would leave nothing current. An end
    (`valid_until`) the supersession set (the successor's start) goes with it; an end a row had of
    its own stays. Returns the rows reopened."""
    start = world_start(successor)
    reopened = []
    rows: QuerySet[Any] = type(successor).objects.select_for_update()
    for older in rows.filter(superseded_by_id=successor.id):
        older.superseded_at = older.superseded_by = None
        # The successor's start, or when it was said (a plan it replaced ended then).
        if older.valid_until in (start, said_at(successor)):
            older.valid_until = None
        older.save(update_fields=["superseded_at", "superseded_by", "valid_until"])
        reopened.append(older)
    return reopened


def relation_retire(*, relation: Relation, now: datetime) -> None:
    """End a relation an agent says no longer holds (`invalidate`): replaced by nothing, from now, and
    kept as history like any closed row. Not saved here: the caller saves it with the reason."""
    if relation.superseded_at is None:
        relation.superseded_at = now


def relation_retire_undo(*, relation: Relation, retired_at: datetime) -> bool:
    """Reopen a relation `relation_retire` ended at `retired_at` (not one a newer relation replaced
    since: that end stays). True when it holds again. Not saved here."""
    if relation.superseded_by_id is None and relation.superseded_at == retired_at:
        relation.superseded_at = None
        return True
    return False


# How many prior statements, nearest in meaning, the update engine judges a new one against.
PRIORS = 8


def said_at(row: Memory | Relation) -> datetime:
    """When a row was said, in world time: a memory's `stated_at`; a relation (or an older memory
    without it) is taken as said when it starts."""
    return getattr(row, "stated_at", None) or world_start(row)


def nearest_priors(*, owner_id: Any, space_id: Any, vector: list[float]) -> QuerySet[Memory]:
    """The current memories of a space that a statement with this vector may be about, nearest first."""
    return _nearest(owner_id=owner_id, space_id=space_id, vector=Value(Vector(vector).to_text()), now=None)


def _nearest(*, owner_id: Any, space_id: Any, vector: Value, now: datetime | None) -> QuerySet[Memory]:
    # nearest_priors' rule, with the vector as its text (the parameter CosineDistance sends).
    return (
        Memory.objects.filter(owner_id=owner_id, space_id=space_id, embedding__isnull=False)
        .filter(memory_visible(now=now))
        .annotate(distance=CosineDistance("embedding", vector))
        .filter(distance__lte=1 - LOOSELY_RELATED)
        .order_by("distance")
        .only(*_PRIOR_FIELDS)[:PRIORS]
    )


# What the update engine reads of a prior (judge_priors) and the worker of a match (its id).
# In the model's field order, as Memory.from_db reads a row of them (nearest_prior_rows).
_PRIOR_FIELDS = model_order(Memory, ("id", "content", "kind", "occurred_at", "stated_at", "recorded_at"))


@lru_cache(maxsize=1)
def _nearest_compiled() -> CompiledQuery:
    # Every new statement asks it: compiled once (config.compiled says why).
    return compile_once(
        lambda owner_id, space_id, vector, now: _nearest(
            owner_id=owner_id, space_id=space_id, vector=Value(vector), now=now
        ).values_list(*_PRIOR_FIELDS, "distance"),
        owner_id=uuid.uuid4(),
        space_id=uuid.uuid4(),
        vector=Vector([0.5] * 3).to_text(),
        now=datetime(1901, 2, 3, 4, 5, 6, 789, tzinfo=UTC),
    )


def nearest_prior_rows(*, owner_id: Any, space_id: Any, vector: list[float]) -> list[Memory]:
    """nearest_priors' memories (with their `distance`), read by its statement compiled once."""
    rows = compiled_rows(
        _nearest_compiled(),
        owner_id=owner_id,
        space_id=space_id,
        vector=Vector(vector).to_text(),
        now=timezone.now(),
    )
    priors = []
    for row in rows:
        prior = Memory.from_db(DEFAULT_DB_ALIAS, _PRIOR_FIELDS, row[:-1])
        # As the queryset's annotation sets it.
        setattr(prior, "distance", row[-1])  # noqa: B010 - an attribute the model does not declare
        priors.append(prior)
    return priors


def judge_priors(
    *,
    job: Any,
    source: Any,
    candidate: Any,
    frame: Frame,
    vector: list[float],
    advice: dict[Any, Verdict] | None = None,
) -> list[tuple[Memory, Verdict]]:
    """The current memories of the job's space that the new statement (of `source`) may be about,
    each with its verdict, nearest in meaning first: the model's (`advice`, by memory id) where it
    gave one, else the update engine's rules (`memories.pipeline.update.judge`)."""
    judged: list[tuple[Memory, Verdict]] = []
    several = _several_claims(candidate.content)
    priors = nearest_prior_rows(owner_id=job.owner_id, space_id=job.space_id, vector=vector)
    # A bare correction ("Sorry, I meant Wednesday") is about the last thing the person said, however
    # far in meaning: that statement is judged too, and is the only one it may replace.
    last = latest_prior_row(job=job, source=source, vector=vector) if frame.bare else None
    if last is not None and all(prior.id != last.id for prior in priors):
        priors.append(last)
    frames = [frame_of(prior.content) for prior in priors]
    # The frames of the priors related in meaning that the model did not judge.
    undecided = [
        old
        for prior, old in zip(priors, frames, strict=True)
        if prior.id not in (advice or {}) and 1 - float(prior.distance) >= RELATED  # type: ignore[attr-defined]
    ]
    frame_similarity = frame_similarities(frame, undecided)
    for prior, old in zip(priors, frames, strict=True):
        verdict = (advice or {}).get(prior.id) or read_pair(
            frame,
            old,
            similarity=1 - float(getattr(prior, "distance")),  # noqa: B009 - annotated by the query
            new_kind=candidate.kind,
            old_kind=prior.kind,
            same_day=same_event_day(candidate, prior),
            frame_similarity=frame_similarity.get(old.masked),
            latest=last is not None and prior.id == last.id,
        )
        if verdict is not Verdict.ADD and (several or _several_claims(prior.content)):
            # A conversation turn or a paragraph says several things: one of them changing must not
            # hide the others, and one of them repeated must not swallow the rest, so the judgement
            # replaces and merges only single statements (an exact repeat is merged by fingerprint).
            verdict = Verdict.ADD
        judged.append((prior, verdict))
    return judged


def frame_similarities(new: Frame, olds: list[Frame]) -> dict[str, float]:
    """How close in meaning the new statement's frame (values masked) is to each prior's, by the
    prior's masked text: "I earn <money> a year" / "My salary went up to <money>". Only for the
    candidates of a change (related in meaning, the same subject, another value of one type, not
    already the same frame by words), and each masked text is embedded once per process
    (`_masked_vectors`), so most saves embed nothing more (ingest stays as fast)."""
    wanted = sorted(
        {
            old.masked
            for old in olds
            if same_subject(new.subject, old.subject)
            and not old.tentative
            and typed_change(new, old)
            and not same_frame(new, old, frame_similarity=None)
        }
    )
    if not wanted:
        return {}
    vectors = _masked_vectors([new.masked, *wanted])
    return {text: _cosine(vectors[new.masked], vectors[text]) for text in wanted}


# Masked texts recur (a frame is the same whatever its values): their vectors, kept per process.
_MASKED_CACHE: OrderedDict[str, list[float]] = OrderedDict()
_MASKED_CACHE_SIZE = 4096
_MASKED_LOCK = threading.Lock()


def _masked_vectors(texts: list[str]) -> dict[str, list[float]]:
    with _MASKED_LOCK:
        found = {text: _MASKED_CACHE[text] for text in texts if text in _MASKED_CACHE}
    missing = sorted(set(texts) - set(found))
    if missing:
        computed = dict(zip(missing, embeddings.embed(missing), strict=True))
        masked_vectors_keep(computed)
        found.update(computed)
    return found


def masked_vectors_keep(vectors: dict[str, list[float]]) -> None:
    """Keep masked texts' vectors for frame_similarities (the per-process cache, bounded)."""
    with _MASKED_LOCK:
        for text, vector in vectors.items():
            _MASKED_CACHE[text] = vector
            _MASKED_CACHE.move_to_end(text)
        while len(_MASKED_CACHE) > _MASKED_CACHE_SIZE:
            _MASKED_CACHE.popitem(last=False)


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


@lru_cache(maxsize=4096)
def _several_claims(text: str) -> bool:
    # Asked of every prior of every new statement; the same priors recur (frame_of says the same).
    # A sentence that only says a correction follows ("That was wrong.", "Wait, no.") claims nothing:
    # "That was wrong. It starts at 6pm." is one claim, and may replace what it corrects.
    _, body = split_speaker(text.strip())
    return sum(1 for sentence in statement_sentences(body) if claims(sentence)) > 1


def latest_prior_row(*, job: Any, source: Any, vector: list[float]) -> Memory | None:
    """The current memory of the job's space that its owner said last before this job's `source`
    (with its `distance` to `vector`, as nearest_priors gives it), or None."""
    return (
        Memory.objects.filter(owner_id=job.owner_id, space_id=job.space_id, embedding__isnull=False)
        .filter(memory_visible(now=timezone.now()))
        # What this very source said is not before it: a save's job is its source's, but an import
        # stores many sources under one job, and each item's "last thing said" is the item before
        # it, as it would be had the items been saved one by one.
        .exclude(job_id=job.id, source_id=source.id)
        .annotate(distance=CosineDistance("embedding", Value(Vector(vector).to_text())))
        .only(*_PRIOR_FIELDS)
        .order_by("-recorded_at", "-id")
        .first()
    )


def same_event_day(candidate: Any, memory: Memory) -> bool:
    """Whether two statements can be the same event: not both episodes, or episodes of one day."""
    if candidate.kind != Memory.Kind.EPISODE or memory.kind != Memory.Kind.EPISODE:
        return True
    if candidate.occurred_at is None or memory.occurred_at is None:
        return candidate.occurred_at is memory.occurred_at
    return bool(candidate.occurred_at.date() == memory.occurred_at.date())


def memory_rivals(memory: Memory) -> QuerySet[Memory]:
    """The current memories of the same slot in the same space with another value; never a
    forgotten one (it takes no part in any judgement)."""
    return (
        Memory.objects.filter(
            owner_id=memory.owner_id, space_id=memory.space_id, slot=memory.slot, superseded_at__isnull=True
        )
        .filter(active_q())
        .exclude(slot_value=memory.slot_value)
    )


def relation_rivals(relation: Relation) -> QuerySet[Relation]:
    """The current relations of the same subject and (single-valued) type to another object."""
    return Relation.objects.filter(
        owner_id=relation.owner_id,
        space_id=relation.space_id,
        subject_id=relation.subject_id,
        type=relation.type,
        superseded_at__isnull=True,
    ).exclude(object_id=relation.object_id)


def document_retire_unsupported(*, source: Source, kept: set[Any]) -> None:
    """A new version of a living document: what only older versions said is superseded."""
    older_versions = Source.objects.filter(
        owner_id=source.owner_id,
        space_id=source.space_id,
        source_kind=source.source_kind,
        source_ref=source.source_ref,
        version__lt=source.version,
    )
    now = timezone.now()
    stale_ids = (
        set(
            Memory.objects.filter(
                owner_id=source.owner_id, evidence__source__in=older_versions, superseded_at__isnull=True
            ).values_list("id", flat=True)
        )
        - kept
    )
    stale = Memory.objects.select_for_update().filter(id__in=stale_ids)
    for memory in stale:
        # Still asserted by some other, unrelated source? Then it stays current.
        others = Evidence.objects.filter(memory=memory, stance=Evidence.Stance.SUPPORTS).exclude(
            source__in=older_versions
        )
        if others.exists():
            continue
        memory.superseded_at = now
        memory.valid_until = source.source_modified_at or now
        memory.save(update_fields=["superseded_at", "valid_until"])
