"""The claims layer: the sources that support or contradict the matched facts, and the searches."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet
from django.db.models.functions import Length, Substr
from django.utils import timezone

from accounts.models import PersonalAccessToken, User
from memories.as_of import (
    CURRENT,
    CURRENT_VIEW,
    View,
    active_q,
    is_current,
    recorded_by_q,
    status_of,
)
from memories.models import Evidence, Memory, Relation, Source, Space
from memories.retrieval.evidence.common import (
    CLAIM_FACT_POOL,
    CLAIM_FACTS_MAX,
    FACT_REF_CHARS,
    HISTORY_STEPS,
    REDACTED,
    REDACTION_WINDOW,
    Claim,
    EvidenceResult,
    Fact,
    FactRef,
    Negative,
    _forgotten_match,
    _negative,
    _pending,
)
from memories.retrieval.evidence.facts import _attach_counts, _matching_facts
from memories.selectors.memories import SOURCE_EXCERPT_CHARS
from memories.wire import relation_text

# --- claims ---------------------------------------------------------------------------------------


def _history(
    *, owner: User, facts: list[Fact], view: View
) -> tuple[dict[uuid.UUID, int], dict[uuid.UUID, int]]:
    """Rank of every memory and relation a claim may be about: the matched facts and, transitively,
    what they superseded (which inherits the rank of the fact that replaced it)."""
    memory_rank: dict[uuid.UUID, int] = {}
    relation_rank: dict[uuid.UUID, int] = {}
    for rank, fact in enumerate(facts):
        target = memory_rank if fact.memory is not None else relation_rank
        target.setdefault(fact.id, rank)
    memories = Memory.objects.filter(active_q(), owner=owner)
    relations = Relation.objects.filter(owner=owner)
    if view.known_at is not None:
        memories = memories.filter(recorded_by_q(view.known_at))
        relations = relations.filter(recorded_by_q(view.known_at))
    _walk_back(memories.values_list("id", "superseded_by_id"), memory_rank)
    _walk_back(relations.values_list("id", "superseded_by_id"), relation_rank)
    return memory_rank, relation_rank


def _walk_back(rows: QuerySet[Any, tuple[Any, Any]], ranks: dict[uuid.UUID, int]) -> None:
    # One query per generation: a fact may have replaced several older ones.
    frontier = dict(ranks)
    for _ in range(HISTORY_STEPS):
        found = {
            row_id: frontier[newer_id]
            for row_id, newer_id in rows.filter(superseded_by_id__in=list(frontier))
            if row_id not in ranks
        }
        if not found:
            return
        ranks.update(found)
        frontier = found


def _evidence(*, owner: User, space: Space, view: View) -> QuerySet[Evidence]:
    rows = Evidence.objects.filter(owner=owner, source__space=space)
    if view.known_at is not None:
        # What had been asserted, and linked, by then.
        rows = rows.filter(recorded_by_q(view.known_at) & recorded_by_q(view.known_at, prefix="source__"))
    return rows


def _claimant(source: Source, token_names: dict[str, str]) -> tuple[str, str | None]:
    """(kind, name) of who asserted a source: agent, token, user, document or unknown."""
    claimant = source.claimant
    if claimant.startswith("agent:"):
        return "agent", source.agent.name if source.agent is not None else None
    if claimant.startswith("token:"):
        return "token", token_names.get(claimant[len("token:") :])
    if claimant == "user":
        return "user", None
    if claimant.startswith("document:"):
        return "document", source.title or source.source_ref or source.filename or None
    return "unknown", None


def _fact_refs(
    *, owner: User, memory_ids: set[uuid.UUID], relation_ids: set[uuid.UUID], now: datetime
) -> dict[uuid.UUID, FactRef]:
    """How the listed facts read in a claim (content cut to FACT_REF_CHARS)."""
    refs: dict[uuid.UUID, FactRef] = {}
    memory_rows = (
        Memory.objects.filter(active_q(), owner=owner, id__in=memory_ids)
        .annotate(short=Substr("content", 1, FACT_REF_CHARS))
        .values_list("id", "short", "superseded_at", "valid_until")
    )
    for memory_id, short, superseded_at, valid_until in memory_rows:
        current = status_of(superseded_at=superseded_at, valid_until=valid_until, now=now) == CURRENT
        refs[memory_id] = FactRef(memory_id, "memory", short, current)
    for relation in Relation.objects.filter(owner=owner, id__in=relation_ids).select_related(
        "subject", "object"
    ):
        refs[relation.id] = FactRef(
            relation.id, "relation", relation_text(relation)[:FACT_REF_CHARS], is_current(relation, now)
        )
    return refs


def _claims(
    *, owner: User, space: Space, facts: list[Fact], k: int, view: View, now: datetime
) -> list[Claim]:
    memory_rank, relation_rank = _history(owner=owner, facts=facts, view=view)
    if not memory_rank and not relation_rank:
        return []
    links = _evidence(owner=owner, space=space, view=view).filter(
        Q(memory_id__in=list(memory_rank)) | Q(relation_id__in=list(relation_rank))
    )
    source_rank: dict[uuid.UUID, int] = {}
    for source_id, memory_id, relation_id in links.values_list("source_id", "memory_id", "relation_id"):
        rank = memory_rank[memory_id] if memory_id is not None else relation_rank[relation_id]
        source_rank[source_id] = min(rank, source_rank.get(source_id, rank))
    if not source_rank:
        return []
    # Relevance (the rank of the best fact it is about) first, then the most recent claim.
    order = Source.objects.filter(owner=owner, id__in=list(source_rank)).values_list("id", "recorded_at")
    chosen = [
        source_id
        for source_id, _ in sorted(
            order, key=lambda row: (source_rank[row[0]], -row[1].timestamp(), str(row[0]))
        )
    ][:k]
    sources = {
        source.id: source
        for source in Source.objects.filter(owner=owner, id__in=chosen)
        .select_related("agent")
        .annotate(excerpt_text=Substr("content", 1, SOURCE_EXCERPT_CHARS), content_length=Length("content"))
        .defer("content", "source_text")
    }
    # Every fact each chosen source bears on (ids only: a document may bear on thousands).
    evidence = list(
        _evidence(owner=owner, space=space, view=view)
        .filter(source_id__in=chosen)
        .order_by("recorded_at", "id")
        .values_list("source_id", "memory_id", "relation_id", "stance")
    )
    # Forgotten memories a chosen source said (by evidence, or as the source it was derived from):
    # never listed, and their text is kept out of the excerpt.
    said = {memory_id for _, memory_id, _, _ in evidence if memory_id is not None}
    forgotten: dict[uuid.UUID, list[str]] = {}
    suppressed: dict[uuid.UUID, str] = {}
    for memory_id, source_id, content in Memory.objects.filter(
        Q(id__in=said) | Q(source_id__in=chosen), owner=owner, status=Memory.Status.SUPPRESSED
    ).values_list("id", "source_id", "content"):
        suppressed[memory_id] = content
        if source_id in sources:
            forgotten.setdefault(source_id, []).append(content)
    listed: dict[tuple[Any, str], list[tuple[Any, bool]]] = {}
    for source_id, memory_id, relation_id, stance in evidence:
        if memory_id in suppressed:
            forgotten.setdefault(source_id, []).append(suppressed[memory_id])
            continue
        listed.setdefault((source_id, stance), []).append((memory_id or relation_id, memory_id is not None))
    token_ids = [s.claimant[len("token:") :] for s in sources.values() if s.claimant.startswith("token:")]
    token_names = {
        str(token_id): name
        for token_id, name in PersonalAccessToken.objects.filter(
            user=owner, id__in=_uuids(token_ids)
        ).values_list("id", "name")
    }
    shown: dict[tuple[Any, str], list[tuple[Any, bool]]] = {}
    for key, fact_ids in listed.items():
        # The facts the query matched (and their history) first, then the source's others.
        unique = list(dict.fromkeys(fact_ids))
        unique.sort(key=lambda f: f[0] not in (memory_rank if f[1] else relation_rank))
        shown[key] = unique[:CLAIM_FACTS_MAX]
    refs = _fact_refs(
        owner=owner,
        memory_ids={f for ids in shown.values() for f, is_memory in ids if is_memory},
        relation_ids={f for ids in shown.values() for f, is_memory in ids if not is_memory},
        now=now,
    )
    claims = []
    for source_id in chosen:
        source = sources[source_id]
        kind, name = _claimant(source, token_names)
        claim = Claim(source=source, rank=source_rank[source_id], claimant_kind=kind, claimant_name=name)
        for stance, listing in (
            (Evidence.Stance.SUPPORTS, claim.supports),
            (Evidence.Stance.CONTRADICTS, claim.contradicts),
        ):
            listing.extend(refs[f] for f, _ in shown.get((source_id, stance), []) if f in refs)
        claims.append(claim)
    _excerpts(owner=owner, claims=claims, forgotten=forgotten)
    return claims


def _uuids(values: Iterable[str]) -> list[uuid.UUID]:
    parsed = []
    for value in values:
        try:
            parsed.append(uuid.UUID(value))
        except ValueError:
            continue
    return parsed


def _excerpts(*, owner: User, claims: list[Claim], forgotten: dict[uuid.UUID, list[str]]) -> None:
    """Bounded excerpts: never of a purged source, never showing a suppressed memory's text."""
    wide: dict[uuid.UUID, str] = {}
    needs_redaction = [c.source.id for c in claims if c.source.id in forgotten and c.source.purged_at is None]
    if needs_redaction:
        wide = dict(
            Source.objects.filter(owner=owner, id__in=needs_redaction)
            .annotate(window=Substr("content", 1, SOURCE_EXCERPT_CHARS + REDACTION_WINDOW))
            .values_list("id", "window")
        )
    for claim in claims:
        source = claim.source
        length = int(getattr(source, "content_length", 0) or 0)
        if source.purged_at is not None:
            claim.excerpt, claim.excerpt_status = "", "purged"
            continue
        if source.id not in forgotten:
            claim.excerpt = str(getattr(source, "excerpt_text", "") or "")
            claim.excerpt_status = "truncated" if length > SOURCE_EXCERPT_CHARS else "full"
            continue
        text = wide.get(source.id, "")
        for content in sorted(set(forgotten[source.id]), key=len, reverse=True):
            if not content or content not in text:
                # Said in other words (or beyond what was read): it cannot be cut out reliably.
                claim.excerpt, claim.excerpt_status = "", "withheld"
                break
            text = text.replace(content, REDACTED)
        else:
            claim.excerpt, claim.excerpt_status = text[:SOURCE_EXCERPT_CHARS], "redacted"


def claim_search(
    *, owner: User, space: Space, query: str, k: int = 10, view: View = CURRENT_VIEW
) -> EvidenceResult:
    """What sources asserted about the facts matching `query`: each claim with who, when, an excerpt,
    and the facts it supports and contradicts. Found through the matching facts (held at `at`, or now)
    and the facts they superseded; with `known_at`, only what had been asserted by then. Ordered by the
    relevance of the best fact a claim is about, then most recent first.
    """
    return _search(owner=owner, space=space, query=query, k=k, view=view, want_facts=False)


def evidence_search(
    *, owner: User, space: Space, query: str, k: int = 10, view: View = CURRENT_VIEW
) -> EvidenceResult:
    """Both layers for `query`: the top `k` facts and the top `k` claims, kept apart."""
    return _search(owner=owner, space=space, query=query, k=k, view=view, want_facts=True)


def _search(*, owner: User, space: Space, query: str, k: int, view: View, want_facts: bool) -> EvidenceResult:
    now = timezone.now()
    pool = max(k, CLAIM_FACT_POOL)
    facts, vector, hidden_entity = _matching_facts(
        owner=owner, space=space, query=query, pool=pool, view=view, now=now
    )
    claims = _claims(owner=owner, space=space, facts=facts, k=k, view=view, now=now)
    shown = facts[:k] if want_facts else []
    _attach_counts(owner=owner, facts=shown)
    pending, pending_relevant = _pending(owner=owner, space=space, view=view, now=now)
    negative = None
    if not claims and not shown:
        if facts:
            negative = Negative(
                "no_match",
                "Facts matched, but no source that asserts them"
                + (
                    f" had been recorded by {view.known_at.isoformat()}."
                    if view.known_at is not None
                    else " is left."
                ),
                "use facts_context for the facts themselves",
            )
        else:
            forgotten = hidden_entity or _forgotten_match(
                owner=owner, space=space, query=query, vector=vector, view=view, now=now
            )
            negative = _negative(
                owner=owner,
                space=space,
                view=view,
                now=now,
                pending=pending_relevant,
                forgotten_match=forgotten,
            )
    return EvidenceResult(facts=shown, claims=claims, view=view, now=now, pending=pending, negative=negative)
