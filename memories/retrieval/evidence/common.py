"""Shared parts of the evidence reads: thresholds, result types, clock and text helpers."""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import reduce
from operator import or_

from django.contrib.postgres.search import SearchQuery
from pgvector.django import CosineDistance

from accounts.models import User
from memories.as_of import View, active_q, held_q, recorded_by_q
from memories.models import FTS_CONFIG, Entity, Memory, Relation, Source, Space
from memories.retrieval.recall import query_words
from memories.selectors.jobs import pending_saves

# A recalled memory counts as matching the query when it shares a word with it (full text, 'english'
# configuration), links an entity the query names, or is at least this close in meaning (cosine of
# all-MiniLM-L6-v2). Hybrid recall always returns its nearest neighbours; without a bar, "no match"
# could never be said. Unrelated text scores below 0.2 with this model, paraphrases above 0.35.
MIN_SIMILARITY = 0.3
# An entity must match the query this well (see ENTITY_REASONS) for its relations to count as facts
# about the query: a bare substring ("lin" in "Berlin") is not enough.
RELATION_ENTITY_MIN_SCORE = 0.5
# Entities read to score one resolution; the prefilter is by name, so this is only reached by very
# short queries in very big spaces.
ENTITY_SCAN = 500
MAX_ENTITY_WORDS = 16
# Matched facts a claims search starts from, before it widens to their history and evidence.
CLAIM_FACT_POOL = 20
# Generations of supersession walked back from a matched fact to find the claims about what it replaced.
HISTORY_STEPS = 10
# Facts listed per claim under `supports` and under `contradicts`.
CLAIM_FACTS_MAX = 20
# A fact's content as a claim lists it.
FACT_REF_CHARS = 200
# Characters read past the excerpt to cut a suppressed memory's text out of it (a memory's content
# is at most 20,000 characters, so any occurrence overlapping the excerpt lies in this window).
REDACTION_WINDOW = 20_000
REDACTED = "[suppressed]"

# Why an entity matched, strongest first, with the score each gives (the best one is the entity's score).
ENTITY_REASONS: dict[str, float] = {
    "exact_name": 1.0,
    "alias": 0.95,
    "prefix": 0.8,
    "name_in_query": 0.75,
    "alias_prefix": 0.7,
    "alias_in_query": 0.7,
    "word_overlap": 0.7,  # at most; 0.3 + 0.4 * (share of the name's words the query has)
    "substring": 0.4,
}

NEGATIVE_CODES = ("no_match", "no_memories_in_space", "all_suppressed", "not_yet_processed")
_WORD_RE = re.compile(r"[^\W_]+")


# --- results --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Negative:
    """Why a read is empty, typed so an agent can act on it (see `NEGATIVE_CODES`)."""

    code: str
    message: str
    agent_action: str


@dataclass
class EntityMatch:
    entity: Entity
    score: float
    reasons: list[str]
    memory_count: int = 0
    relation_count: int = 0


@dataclass
class Fact:
    """One fact: a memory or a relation, with its relevance to the query and its evidence counts."""

    memory: Memory | None = None
    relation: Relation | None = None
    relevance: float = 0.0
    evidence_count: int = 0
    contradiction_count: int = 0
    # A relation's first supporting claim (`facts._attach_counts`); a memory's source is its own.
    relation_source: Source | None = None

    @property
    def source(self) -> Source | None:
        """Where the fact came from: a memory's source (recall's rows carry it), a relation's first
        claim."""
        return self.memory.source if self.memory is not None else self.relation_source

    @property
    def fact_type(self) -> str:
        return "memory" if self.memory is not None else "relation"

    @property
    def id(self) -> uuid.UUID:
        row = self.memory if self.memory is not None else self.relation
        assert row is not None
        return row.id

    @property
    def recorded_at(self) -> datetime:
        row = self.memory if self.memory is not None else self.relation
        assert row is not None
        return row.recorded_at


@dataclass(frozen=True)
class FactRef:
    """A fact as a claim lists it: enough to recognise it and look it up."""

    id: uuid.UUID
    fact_type: str
    content: str
    current: bool


@dataclass
class Claim:
    """One Source: what was asserted, by whom, when, and which facts it supports or contradicts."""

    source: Source
    rank: int
    excerpt: str = ""
    # "full", "truncated", "redacted" (suppressed text cut out), "withheld" (it could not be cut out
    # reliably, so nothing is shown) or "purged".
    excerpt_status: str = "full"
    claimant_kind: str = "unknown"
    claimant_name: str | None = None
    supports: list[FactRef] = field(default_factory=list)
    contradicts: list[FactRef] = field(default_factory=list)


@dataclass
class EntityResult:
    matches: list[EntityMatch]
    now: datetime
    pending: int
    negative: Negative | None


@dataclass
class EvidenceResult:
    """Facts and/or claims for one query; `negative` is set when the asked-for part is empty."""

    facts: list[Fact]
    claims: list[Claim]
    view: View
    now: datetime
    pending: int
    negative: Negative | None


# --- helpers --------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


def _contains_phrase(haystack: list[str], needle: list[str]) -> bool:
    size = len(needle)
    return size > 0 and any(haystack[i : i + size] == needle for i in range(len(haystack) - size + 1))


def evidence_view(*, at: datetime | None, known_at: datetime | None) -> View:
    """The evidence profile's clocks. `at` is world time (what held then, as the service knows it
    now); `known_at` is system time (only what the service had recorded by then). `known_at` alone
    asks what the service believed at that moment about that moment (both axes at `known_at`)."""
    if known_at is not None and at is None:
        return View(at=known_at, known_at=known_at)
    return View(at=at, known_at=known_at)


def _text_query(query: str) -> SearchQuery | None:
    words = query_words(query)
    if not words:
        return None
    return reduce(or_, (SearchQuery(word, config=FTS_CONFIG) for word in words))


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _pending(*, owner: User, space: Space, view: View, now: datetime) -> tuple[int, int]:
    """(saves still processing, those that can still change this answer).

    A save still processing will be recorded after now, so it cannot change what the service knew
    at an earlier system time; it can change any world time (an imported conversation is about the past).
    """
    pending = pending_saves(owner=owner, space=space)
    return pending, (pending if view.known_at is None or view.known_at >= now else 0)


# --- the typed negative --------------------------------------------------------------------------


def _forgotten_match(
    *, owner: User, space: Space, query: str, vector: Sequence[float], view: View, now: datetime
) -> bool:
    """Whether a suppressed memory would have matched (by word or by meaning) under the same clocks."""
    suppressed = Memory.objects.filter(owner=owner, space=space, status=Memory.Status.SUPPRESSED).filter(
        held_q(view, now=now)
    )
    by_meaning = suppressed.filter(embedding__isnull=False).annotate(
        distance=CosineDistance("embedding", list(vector))
    )
    if by_meaning.filter(distance__lte=1 - MIN_SIMILARITY).exists():
        return True
    text_query = _text_query(query)
    return text_query is not None and suppressed.filter(search_vector=text_query).exists()


def _negative(
    *,
    owner: User,
    space: Space,
    view: View,
    now: datetime,
    pending: int,
    forgotten_match: bool,
    what: str = "fact",
) -> Negative:
    """Why nothing was found, checked in this order (the first that applies wins):

    1. nothing stored in the space (by `known_at`): `not_yet_processed` if saves are still processing,
       else `no_memories_in_space`;
    2. every memory is suppressed and no relation exists, or something suppressed would have matched:
       `all_suppressed`;
    3. saves still processing: `not_yet_processed`;
    4. `no_match`.
    `pending` counts only saves that can still change this answer (none for a view of the past).
    """
    memories = Memory.objects.filter(owner=owner, space=space)
    relations = Relation.objects.filter(owner=owner, space=space)
    if view.known_at is not None:
        memories = memories.filter(recorded_by_q(view.known_at))
        relations = relations.filter(recorded_by_q(view.known_at))
    has_relations = relations.exists()
    when = f" by {view.known_at.isoformat()}" if view.known_at is not None else ""
    if not has_relations and not memories.exists():
        if pending:
            return Negative(
                "not_yet_processed",
                f"Nothing in this space is searchable yet: {pending} save(s) are still being processed.",
                "retry in a moment, or poll the jobs that remember returned",
            )
        return Negative(
            "no_memories_in_space",
            f"This space held no memories{when}."
            if view.known_at is not None
            else "This space holds no memories yet.",
            "remember something first, or switch to the space that holds it",
        )
    if forgotten_match or (not has_relations and not memories.filter(active_q()).exists()):
        return Negative(
            "all_suppressed",
            f"Every {what} that would match was forgotten (suppressed) by the user.",
            "do not ask again; the user can restore forgotten memories from the dashboard",
        )
    if pending:
        return Negative(
            "not_yet_processed",
            f"No {what} matched yet, but {pending} save(s) are still being processed and may hold it.",
            "retry in a moment, or poll the jobs that remember returned",
        )
    return Negative(
        "no_match",
        f"No {what} in this space matches the query{when}.",
        "rephrase the query, name the person or thing directly, or try another `at`",
    )
