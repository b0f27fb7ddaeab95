"""The facts layer: memories and relations that match a query, with evidence counts and the typed negative."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from accounts.models import User
from memories import embeddings
from memories.as_of import CURRENT_VIEW, View, relation_visible
from memories.models import Evidence, Memory, Relation, Source, Space
from memories.retrieval.evidence.common import (
    MIN_SIMILARITY,
    RELATION_ENTITY_MIN_SCORE,
    EvidenceResult,
    Fact,
    _cosine,
    _forgotten_match,
    _negative,
    _pending,
    _text_query,
)
from memories.retrieval.evidence.entities import _entity_matches
from memories.retrieval.recall import RecallRequest, memory_recall
from memories.retrieval.rows import SOURCE_REF_FIELDS

# --- facts ----------------------------------------------------------------------------------------


def _memory_facts(
    *,
    owner: User,
    space: Space,
    query: str,
    vector: Sequence[float],
    pool: int,
    view: View,
    entity_ids: set[uuid.UUID],
) -> list[Fact]:
    result = memory_recall(
        owner=owner,
        space=space,
        request=RecallRequest(query=query, top_k=pool, at=view.at, known_at=view.known_at),
        query_vector=vector,
    )
    if not result.hits:
        return []
    text_query = _text_query(query)
    worded: set[uuid.UUID] = set()
    if text_query is not None:
        worded = set(
            Memory.objects.filter(
                owner=owner, id__in=[hit.memory.id for hit in result.hits], search_vector=text_query
            ).values_list("id", flat=True)
        )
    facts = []
    for hit in result.hits:
        names_entity = any(entity.id in entity_ids for entity in hit.memory.entities.all())
        if hit.similarity >= MIN_SIMILARITY or hit.memory.id in worded or names_entity:
            facts.append(Fact(memory=hit.memory, relevance=hit.similarity))
    return facts


def _relations_of(
    *, owner: User, space: Space, pool: int, view: View, now: datetime, entity_ids: set[uuid.UUID]
) -> list[Relation]:
    """The relations (held at `at`, or now) of the entities the query names, newest first."""
    if not entity_ids:
        return []
    return list(
        Relation.objects.filter(owner=owner, space=space)
        .filter(Q(subject_id__in=entity_ids) | Q(object_id__in=entity_ids))
        .filter(relation_visible(view, now=now))
        .select_related("subject", "object")
        .order_by("-recorded_at", "id")[:pool]
    )


def _relation_facts(
    relations: list[Relation], vector: Sequence[float], vectors: Sequence[Sequence[float]]
) -> list[Fact]:
    facts = [Fact(relation=r, relevance=_cosine(vector, v)) for r, v in zip(relations, vectors, strict=True)]
    return sorted(facts, key=lambda f: -f.relevance)


def _merge(memories: list[Fact], relations: list[Fact]) -> list[Fact]:
    """Relations slotted into recall's order of memories by relevance; recall's own order is kept."""
    merged: list[Fact] = []
    i = j = 0
    while i < len(memories) or j < len(relations):
        take_relation = j < len(relations) and (
            i >= len(memories) or relations[j].relevance > memories[i].relevance
        )
        if take_relation:
            merged.append(relations[j])
            j += 1
        else:
            merged.append(memories[i])
            i += 1
    return merged


def _attach_counts(*, owner: User, facts: Iterable[Fact]) -> None:
    """Distinct supporting and contradicting claimants of each fact (as known now), in one query; and
    each relation's first supporting claim, its source, in one more (a memory's source is its own)."""
    facts = list(facts)
    memory_ids = [f.id for f in facts if f.memory is not None]
    relation_ids = [f.id for f in facts if f.relation is not None]
    if not facts:
        return
    if relation_ids:
        first: dict[Any, Source] = {}
        claims = (
            Evidence.objects.filter(
                owner=owner,
                relation_id__in=relation_ids,
                source__owner=owner,
                stance=Evidence.Stance.SUPPORTS,
            )
            .select_related("source")
            .only(*(f"source__{name}" for name in SOURCE_REF_FIELDS), "relation_id", "recorded_at")
            .order_by("relation_id", "recorded_at", "id")
        )
        for claim in claims:
            first.setdefault(claim.relation_id, claim.source)
        for fact in facts:
            if fact.relation is not None:
                fact.relation_source = first.get(fact.id)
    rows = (
        Evidence.objects.filter(owner=owner)
        .filter(Q(memory_id__in=memory_ids) | Q(relation_id__in=relation_ids))
        .values("memory_id", "relation_id", "stance")
        .annotate(n=Count("source__claimant", distinct=True))
    )
    counts: dict[tuple[Any, str], int] = {}
    for row in rows:
        counts[(row["memory_id"] or row["relation_id"], row["stance"])] = row["n"]
    for fact in facts:
        fact.evidence_count = counts.get((fact.id, Evidence.Stance.SUPPORTS), 0)
        fact.contradiction_count = counts.get((fact.id, Evidence.Stance.CONTRADICTS), 0)


def _matching_facts(
    *, owner: User, space: Space, query: str, pool: int, view: View, now: datetime
) -> tuple[list[Fact], Sequence[float], bool]:
    """(facts best first, the query's vector, whether a forgotten entity matched by name)."""
    visible, hidden = _entity_matches(owner=owner, space=space, query=query)
    entity_ids = {m.entity.id for m in visible if m.score >= RELATION_ENTITY_MIN_SCORE}
    relations = _relations_of(owner=owner, space=space, pool=pool, view=view, now=now, entity_ids=entity_ids)
    # A relation ranks against memories by the same cosine to the query. `relate` stores its
    # sentence's embedding; one made before that is embedded here, in the query's model call.
    missing = [r for r in relations if r.embedding is None]
    vector, *fresh = embeddings.embed([query, *(r.sentence() for r in missing)])
    computed = dict(zip((r.id for r in missing), fresh, strict=True))
    relation_vectors = [computed[r.id] if r.embedding is None else list(r.embedding) for r in relations]
    memories = _memory_facts(
        owner=owner, space=space, query=query, vector=vector, pool=pool, view=view, entity_ids=entity_ids
    )
    return _merge(memories, _relation_facts(relations, vector, relation_vectors)), vector, bool(hidden)


def fact_search(
    *, owner: User, space: Space, query: str, k: int = 10, view: View = CURRENT_VIEW
) -> EvidenceResult:
    """The facts of `space` that match `query`, best first: memories (hybrid recall with its clock
    rules, kept only when they share a word with the query, name an entity it names, or come within
    MIN_SIMILARITY in meaning) and relations of the entities the query names, held at `at` (or now).

    Each carries its evidence and contradiction counts as known now, so a fact of the past shows
    what contradicted it since.
    """
    now = timezone.now()
    facts, vector, hidden_entity = _matching_facts(
        owner=owner, space=space, query=query, pool=k, view=view, now=now
    )
    facts = facts[:k]
    _attach_counts(owner=owner, facts=facts)
    pending, pending_relevant = _pending(owner=owner, space=space, view=view, now=now)
    negative = None
    if not facts:
        forgotten = hidden_entity or _forgotten_match(
            owner=owner, space=space, query=query, vector=vector, view=view, now=now
        )
        negative = _negative(
            owner=owner, space=space, view=view, now=now, pending=pending_relevant, forgotten_match=forgotten
        )
    return EvidenceResult(facts=facts, claims=[], view=view, now=now, pending=pending, negative=negative)
