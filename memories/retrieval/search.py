"""The dashboard's search box: recall over the person's spaces, and suppressed memories by their words.

A read: nothing here writes. It composes recall (the search agents use) with the memory list's
filters (`memories.selectors.memories.memory_filtered_list`).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from memories.models import Memory
from memories.retrieval.recall import NONE, WEAK, Hit, RecallRequest, RecallResult, memory_recall
from memories.selectors.memories import STATUS_ALL, MemoryFilters, memory_filtered_list
from memories.selectors.spaces import space_list

# How many results a search shows: recall's own ceiling, and more than a person reads.
SEARCH_LIMIT = 50


RECALL = "recall"


TEXT = "text"


@dataclass(frozen=True)
class SearchResult:
    memories: list[Memory]
    # "recall" (hybrid search, ranked) or "text" (every word in the content, newest first).
    method: str
    # Recall's verdict on the hits: "strong", "weak" or "none" (memories.retrieval.recall).
    match: str = NONE
    # Per memory id, the words of its content that matched the query: why it is listed.
    matched: dict[uuid.UUID, list[str]] = field(default_factory=dict)


def highlight_parts(content: str, words: list[str]) -> list[tuple[str, bool]]:
    """`content` cut into (text, matched) runs, the matched runs being `words` (whole words, any case)."""
    if not words:
        return [(content, False)]
    pattern = re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, words)) + r")(?![^\W_])")
    parts: list[tuple[str, bool]] = []
    cursor = 0
    for found in pattern.finditer(content):
        if found.start() > cursor:
            parts.append((content[cursor : found.start()], False))
        parts.append((found.group(), True))
        cursor = found.end()
    if cursor < len(content):
        parts.append((content[cursor:], False))
    return parts


def _text_match(query: str) -> Q:
    # Every word, anywhere in the content: "ana lisbon" finds "Ana moved to Lisbon".
    condition = Q()
    for word in query.split():
        condition &= Q(content__icontains=word)
    return condition


def _recalled(*, owner: User, query: str, filters: MemoryFilters) -> list[Hit]:
    """The hits recall ranks for `query`, best first, over the chosen space or all of them.

    Recall searches one space per call; with no space chosen each space is asked
    and the hits are merged by score (the same scoring runs on every call).
    """
    spaces = space_list(owner=owner)
    if filters.space_id is not None:
        spaces = spaces.filter(id=filters.space_id)
    request = RecallRequest(
        query=query, top_k=SEARCH_LIMIT, kinds=[filters.kind] if filters.kind else [], tags=list(filters.tags)
    )
    hits = [hit for space in spaces for hit in memory_recall(owner=owner, space=space, request=request).hits]
    hits.sort(key=lambda hit: -hit.score)
    return hits


def memory_search(*, owner: User, query: str, filters: MemoryFilters) -> SearchResult:
    """The owner's memories for a search box query, with the page's filters applied.

    Active memories are ranked by recall (the hybrid search agents use) and then narrowed by the
    filters recall does not know (pinned, dates). Recall never returns suppressed memories, by
    design; when the status filter asks for them they are matched by the words of their content
    and listed after the recalled ones.
    """
    base = memory_filtered_list(owner=owner, filters=filters)
    memories: list[Memory] = []
    hits: list[Hit] = []
    if filters.status != Memory.Status.SUPPRESSED:
        hits = _recalled(owner=owner, query=query, filters=filters)
        ranked = list(dict.fromkeys(hit.memory.id for hit in hits))
        by_id = {memory.id: memory for memory in base.filter(id__in=ranked)}
        memories = [by_id[memory_id] for memory_id in ranked if memory_id in by_id]
    if filters.status in (Memory.Status.SUPPRESSED, STATUS_ALL):
        suppressed = base.filter(_text_match(query), status=Memory.Status.SUPPRESSED)
        memories += list(suppressed[: SEARCH_LIMIT - len(memories)])
    method = TEXT if filters.status == Memory.Status.SUPPRESSED else RECALL
    shown = memories[:SEARCH_LIMIT]
    listed = {memory.id for memory in shown}
    kept = [hit for hit in hits if hit.memory.id in listed]
    return SearchResult(
        memories=shown,
        method=method,
        match=RecallResult(at=timezone.now(), hits=kept).match if kept else (WEAK if shown else NONE),
        matched={hit.memory.id: hit.matched_words for hit in kept},
    )
