"""Entities by name: candidates for a query with scores and match reasons."""

from __future__ import annotations

import uuid

from django.db.models import Case, CharField, Count, F, Func, IntegerField, Q, Value, When
from django.utils import timezone

from accounts.models import User
from memories.as_of import CURRENT_VIEW, relation_visible
from memories.models import Entity, Memory, MemoryEntity, Relation, Space
from memories.pipeline.language import STOP_WORDS, fold
from memories.retrieval.evidence.common import (
    ENTITY_REASONS,
    ENTITY_SCAN,
    MAX_ENTITY_WORDS,
    EntityMatch,
    EntityResult,
    _contains_phrase,
    _negative,
    _pending,
    _words,
)

# --- entities -------------------------------------------------------------------------------------


def _score_entity(entity: Entity, key: str, query_words: list[str], content_words: set[str]) -> EntityMatch:
    reasons: dict[str, float] = {}
    name = entity.normalized_name
    name_words = _words(name)
    if name == key:
        reasons["exact_name"] = ENTITY_REASONS["exact_name"]
    elif len(key) >= 2 and name.startswith(key):
        reasons["prefix"] = ENTITY_REASONS["prefix"]
    elif len(key) >= 3 and key in name:
        reasons["substring"] = ENTITY_REASONS["substring"]
    if name != key and _contains_phrase(query_words, name_words):
        reasons["name_in_query"] = ENTITY_REASONS["name_in_query"]
    shared = content_words & set(name_words)
    if shared and "exact_name" not in reasons:
        reasons["word_overlap"] = round(0.3 + 0.4 * len(shared) / len(set(name_words)), 4)
    for alias in entity.aliases:
        folded = fold(alias)
        if not folded:
            continue
        if folded == key:
            reasons["alias"] = ENTITY_REASONS["alias"]
        elif len(key) >= 2 and folded.startswith(key):
            reasons.setdefault("alias_prefix", ENTITY_REASONS["alias_prefix"])
        elif _contains_phrase(query_words, _words(folded)):
            reasons.setdefault("alias_in_query", ENTITY_REASONS["alias_in_query"])
    ordered = sorted(reasons, key=lambda r: (-reasons[r], list(ENTITY_REASONS).index(r)))
    return EntityMatch(entity=entity, score=max(reasons.values(), default=0.0), reasons=ordered)


def _match_order(match: EntityMatch) -> tuple[float, int, str, str]:
    # Best score first; among equals the entity more is known about, then by name.
    return (
        -match.score,
        -(match.memory_count + match.relation_count),
        match.entity.name.casefold(),
        str(match.entity.id),
    )


def _entity_matches(
    *, owner: User, space: Space, query: str, entity_type: str | None = None
) -> tuple[list[EntityMatch], list[EntityMatch]]:
    """(visible, hidden) entities matching `query`, best first, with their counts.

    Hidden: every memory that mentions it is suppressed and no relation links it, so showing it would
    reveal what the user asked to forget.
    """
    key = fold(query)
    if not key:
        return [], []
    query_words = _words(key)
    # Bounded: each word is one clause of the prefilter.
    content_words = set(
        list(dict.fromkeys(w for w in query_words if w not in STOP_WORDS and len(w) >= 2))[:MAX_ENTITY_WORDS]
    )
    alias_text = Func(F("aliases"), Value(" | "), function="array_to_string", output_field=CharField())
    prefilter = Q(normalized_name__contains=key) | Q(alias_text__icontains=key)
    for word in content_words:
        prefilter |= Q(normalized_name__contains=word) | Q(alias_text__icontains=word)
    candidates = Entity.objects.filter(owner=owner, space=space)
    if entity_type is not None:
        candidates = candidates.filter(type=entity_type)
    # Exact and prefix matches first, so a bounded scan never drops them in a very big space.
    closeness = Case(
        When(normalized_name=key, then=Value(0)),
        When(normalized_name__startswith=key, then=Value(1)),
        default=Value(2),
        output_field=IntegerField(),
    )
    rows = list(
        candidates.annotate(alias_text=alias_text, closeness=closeness)
        .filter(prefilter)
        .order_by("closeness", "normalized_name", "id")[:ENTITY_SCAN]
    )
    scored = [m for m in (_score_entity(e, key, query_words, content_words) for e in rows) if m.reasons]
    if not scored:
        return [], []
    ids = [m.entity.id for m in scored]
    links = (
        MemoryEntity.objects.filter(owner=owner, entity_id__in=ids, memory__owner=owner)
        .values("entity_id", "memory__status")
        .annotate(n=Count("memory_id"))
    )
    active: dict[uuid.UUID, int] = {}
    suppressed: dict[uuid.UUID, int] = {}
    for row in links:
        target = active if row["memory__status"] == Memory.Status.ACTIVE else suppressed
        target[row["entity_id"]] = target.get(row["entity_id"], 0) + row["n"]
    relations_any: dict[uuid.UUID, int] = {}
    relations_current: dict[uuid.UUID, int] = {}
    for end in ("subject_id", "object_id"):
        grouped = (
            Relation.objects.filter(owner=owner, space=space, **{f"{end}__in": ids})
            .values(end)
            .annotate(n=Count("id"), current=Count("id", filter=relation_visible()))
        )
        for row in grouped:
            relations_any[row[end]] = relations_any.get(row[end], 0) + row["n"]
            relations_current[row[end]] = relations_current.get(row[end], 0) + row["current"]
    visible: list[EntityMatch] = []
    hidden: list[EntityMatch] = []
    for match in scored:
        entity_id = match.entity.id
        match.memory_count = active.get(entity_id, 0)
        match.relation_count = relations_current.get(entity_id, 0)
        only_forgotten = (
            match.memory_count == 0 and suppressed.get(entity_id, 0) > 0 and not relations_any.get(entity_id)
        )
        (hidden if only_forgotten else visible).append(match)
    return sorted(visible, key=_match_order), sorted(hidden, key=_match_order)


def entity_resolve(
    *, owner: User, space: Space, query: str, limit: int = 10, entity_type: str | None = None
) -> EntityResult:
    """Candidate entities of `space` for a name (or a question naming one), best first.

    Each carries its score (the best of its match reasons: exact name 1.0, alias 0.95, prefix 0.8,
    name in the query 0.75, alias prefix / alias in the query 0.7, word overlap 0.3-0.7, substring 0.4),
    the reasons themselves, and how many active memories and current relations link it.
    """
    now = timezone.now()
    visible, hidden = _entity_matches(owner=owner, space=space, query=query, entity_type=entity_type)
    pending, pending_relevant = _pending(owner=owner, space=space, view=CURRENT_VIEW, now=now)
    negative = None
    if not visible:
        negative = _negative(
            owner=owner,
            space=space,
            view=CURRENT_VIEW,
            now=now,
            pending=pending_relevant,
            forgotten_match=bool(hidden),
            what="entity",
        )
    return EntityResult(matches=visible[:limit], now=now, pending=pending, negative=negative)
