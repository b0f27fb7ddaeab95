"""Reads of the memory graph: entities, their memories and relations, the graph:// resources.

Every function is keyword-only and takes the owner AND the space explicitly: a row of
another account (or of another of the owner's spaces) is indistinguishable from a row
that does not exist. Results are plain dicts in the shape the graph profile puts on the
wire, so the MCP tools, the resources and any later REST view render them the same way.

"Current" means what the service holds true now: a memory that is active, not
superseded and not past its `valid_until`; a relation not superseded and not past its
`valid_until`. "As of `at`" follows the clocks: recorded by `at`, not superseded by
`at`, and valid at `at` (`valid_from` <= at < `valid_until`, an open end counting as
valid), so a fact replaced later is seen as it was.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Count, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import User
from memories import errors
from memories.as_of import (
    View,
    active_q,
    entity_visible,
    expired_q,
    memory_visible,
    relation_visible,
    superseded_q,
)
from memories.errors import AppError, Code
from memories.models import Entity, Evidence, Job, Memory, MemoryEntity, Relation, Source, Space
from memories.parsing import RowId
from memories.pipeline.entities import normalize_entity_name
from memories.selectors.cursor import cursor_decode, cursor_encode
from memories.selectors.jobs import job_memory_list, pending_saves
from memories.selectors.memories import memory_replaced_list
from memories.wire import (
    GraphMemory,
    ReplacedRef,
    entity_dict,
    iso,
    memory_compact,
    relation_dict,
    replaced_ref,
    space_ref,
)

# get_context: how many linked memories and relations one answer carries at most.
CONTEXT_MEMORIES = 20


CONTEXT_RELATIONS = 100


# graph:// resources: a payload stays a readable size; `truncated` says when there is more.
RESOURCE_LIMIT = 1000


# Entities with aliases scanned for an alias match (aliases are folded in Python, since
# PostgreSQL cannot fold accents without the unaccent extension).
ALIAS_SCAN_LIMIT = 5000


def entity_not_found(name: str) -> AppError:
    return AppError(
        Code.ENTITY_NOT_FOUND,
        "No entity with this name or alias exists in the current space.",
        agent_action="call list_entities to see the entities of this space, then use one of their names",
        details={"entity_name": name[:200]},
    )


class _SubqueryCount(Subquery):
    # COUNT(*) over a correlated subquery: evaluated only for the rows returned, and free of
    # the GROUP BY tricks an OR-correlated count (subject OR object) would otherwise need.
    template = "(SELECT count(*) FROM (%(subquery)s) _count)"
    output_field = IntegerField()


def _claimants(field: str, stance: str) -> Coalesce:
    # Distinct claimants, not rows: one agent saying a thing twice is one piece of evidence.
    distinct = (
        Evidence.objects.filter(
            **{field: OuterRef("pk")},
            owner_id=OuterRef("owner_id"),
            source__owner_id=OuterRef("owner_id"),
            stance=stance,
        )
        .order_by()
        .values(field)
        .annotate(n=Count("source__claimant", distinct=True))
        .values("n")[:1]
    )
    return Coalesce(Subquery(distinct, output_field=IntegerField()), Value(0))


def _entities(*, owner: User, space: Space) -> QuerySet[Entity]:
    """The space's entities an agent may be shown (not one known only from forgotten memories), with
    `memory_count` (current memories) and `relation_count` (current relations, either direction)."""
    links = MemoryEntity.objects.filter(owner=owner, entity_id=OuterRef("pk")).filter(
        memory_visible(prefix="memory__"), memory__owner=owner, memory__space=space
    )
    relations = Relation.objects.filter(owner=owner, space=space).filter(
        Q(subject_id=OuterRef("pk")) | Q(object_id=OuterRef("pk")), relation_visible()
    )
    return Entity.objects.filter(entity_visible(), owner=owner, space=space).annotate(
        memory_count=_SubqueryCount(links.values("id")),
        relation_count=_SubqueryCount(relations.values("id")),
    )


def _counted(field: str) -> dict[str, Coalesce]:
    """`evidence_count` and `contradiction_count` of the rows Evidence reaches through `field`."""
    return {
        "evidence_count": _claimants(field, Evidence.Stance.SUPPORTS),
        "contradiction_count": _claimants(field, Evidence.Stance.CONTRADICTS),
    }


def _relations(*, owner: User, space: Space) -> QuerySet[Relation]:
    # The entities joined on the owner too: one owner's rows, one shard (docs/scale.md).
    relations = Relation.objects.filter(
        owner=owner, space=space, subject__owner=owner, object__owner=owner
    ).select_related("subject", "object")
    return relations.annotate(**_counted("relation_id"))


def _memories(*, owner: User, space: Space) -> QuerySet[Memory]:
    memories = Memory.objects.filter(owner=owner, space=space).defer("embedding", "search_vector")
    return memories.annotate(**_counted("memory_id"))


def relation_get_with_evidence(*, owner: User, space: Space, relation_id: RowId) -> Relation:
    """One relation of the owner's space, annotated with its evidence counts."""
    return _relations(owner=owner, space=space).get(id=relation_id)


def entity_matches(*, owner: User, space: Space, name: str, prefer_type: str | None = None) -> list[Entity]:
    """Entities of the space called `name` (normalized) or carrying it as an alias, best first:
    a name match before an alias match, `prefer_type` first, then the most linked."""
    key = normalize_entity_name(name)
    if not key:
        return []
    entities = _entities(owner=owner, space=space)
    found = list(entities.filter(normalized_name=key))
    by_name = {entity.id for entity in found}
    with_aliases = (
        Entity.objects.filter(owner=owner, space=space, aliases__len__gt=0)
        .exclude(id__in=by_name)
        .only("id", "aliases")[:ALIAS_SCAN_LIMIT]
    )
    alias_ids = [
        entity.id
        for entity in with_aliases
        if any(normalize_entity_name(alias) == key for alias in entity.aliases)
    ]
    if alias_ids:
        found.extend(entities.filter(id__in=alias_ids))

    def rank(entity: Entity) -> tuple[int, int, int, datetime, str]:
        links = int(getattr(entity, "memory_count", 0)) + int(getattr(entity, "relation_count", 0))
        return (
            0 if entity.id in by_name else 1,
            0 if prefer_type is not None and entity.type == prefer_type else 1,
            -links,
            entity.created_at,
            str(entity.id),
        )

    return sorted(found, key=rank)


def entity_names_known(*, owner: User, space_id: RowId, names: Iterable[str]) -> set[str]:
    """Which of `names` are already entities of the space, as normalized names (one query): the
    `known` that `extract_entities` takes, so a known name starting a sentence is kept."""
    return entity_names_known_each(owner=owner, space_id=space_id, names={None: names})[None]


def entity_names_known_each(
    *, owner: User, space_id: RowId, names: Mapping[Any, Iterable[str]]
) -> dict[Any, set[str]]:
    """entity_names_known for several texts of one space (a batch's saves), in one query: for each
    key of `names`, which of its names the space already knows."""
    keys = {text: {key for key in map(normalize_entity_name, words) if key} for text, words in names.items()}
    wanted = set().union(*keys.values())
    rows = Entity.objects.filter(owner=owner, space_id=space_id, normalized_name__in=wanted)
    found = set(rows.values_list("normalized_name", flat=True)) if wanted else set()
    return {text: mine & found for text, mine in keys.items()}


def entity_context(*, owner: User, space: Space, name: str, at: datetime | None = None) -> dict[str, object]:
    """get_context: the entity called `name`, its memories and its relations (current, or as
    of `at`). A space holds one entity per name; others that carry the name as an alias are in
    `also_named`."""
    matches = entity_matches(owner=owner, space=space, name=name)
    if not matches:
        raise entity_not_found(name)
    entity, others = matches[0], matches[1:]
    now = timezone.now()

    memories = (
        _memories(owner=owner, space=space)
        .filter(id__in=MemoryEntity.objects.filter(owner=owner, entity=entity).values("memory_id"))
        .filter(memory_visible(View(at=at), now=now))
        .order_by("-recorded_at", "-id")
    )
    memory_total = memories.count()
    relations = (
        _relations(owner=owner, space=space)
        .filter(Q(subject=entity) | Q(object=entity))
        .filter(relation_visible(View(at=at), now=now))
        .order_by("-recorded_at", "-id")
    )
    relation_total = relations.count()
    return {
        "entity": entity_dict(entity),
        "also_named": [entity_dict(other) for other in others],
        "at": iso(at),
        "space": space_ref(space),
        "memories": _with_replaced(owner=owner, memories=list(memories[:CONTEXT_MEMORIES])),
        "memory_total": memory_total,
        "relations": [relation_dict(r, now=now, perspective=entity) for r in relations[:CONTEXT_RELATIONS]],
        "relation_total": relation_total,
    }


def _with_replaced(*, owner: User, memories: list[Memory], with_entities: bool = False) -> list[GraphMemory]:
    """Each memory with what it replaced (its history, never a forgotten memory), in one query for
    the page."""
    replaced: dict[uuid.UUID | None, list[ReplacedRef]] = {}
    for older in memory_replaced_list(owner_id=owner.id, memory_ids=[m.id for m in memories]):
        replaced.setdefault(older.superseded_by_id, []).append(replaced_ref(older))
    shown = [memory_compact(m, with_entities=with_entities) for m in memories]
    return [{**row, "replaced": replaced.get(m.id, [])} for m, row in zip(memories, shown, strict=True)]


# How a save met each memory it is about (graph `remember`).
CREATED = "created"


CONFIRMED = "confirmed"


def job_saved_memories(*, owner: User, job: Job) -> list[GraphMemory]:
    """What one save stored, as the graph shows memories, oldest first: each memory its job
    created (`outcome` created) or confirmed (the same fact or a rewording of it: evidence for
    a memory that was there, `outcome` confirmed), with its entities and what it replaced."""
    produced = job_memory_list(owner=owner, job=job).values("id")
    memories = list(
        _memories(owner=owner, space=job.space)
        .filter(id__in=produced)
        .prefetch_related(
            Prefetch("entities", queryset=Entity.objects.filter(owner=owner).only("id", "name", "type"))
        )
        .order_by("recorded_at", "id")
    )
    rendered = _with_replaced(owner=owner, memories=memories, with_entities=True)
    for memory, row in zip(memories, rendered, strict=True):
        row["outcome"] = CREATED if memory.job_id == job.id else CONFIRMED
    return rendered


@dataclass(frozen=True)
class _Cursor:
    name: str
    id: uuid.UUID


def _encode_cursor(entity: Entity) -> str:
    return cursor_encode({"n": entity.name, "i": str(entity.id)})


def _decode_cursor(cursor: str) -> _Cursor:
    return cursor_decode(cursor, parse=lambda data: _Cursor(name=str(data["n"]), id=uuid.UUID(data["i"])))


def entity_list(
    *, owner: User, space: Space, entity_type: str | None = None, limit: int = 50, cursor: str | None = None
) -> dict[str, object]:
    """One page of the space's entities by name (then id), with their counts and `next_cursor`."""
    entities = _entities(owner=owner, space=space)
    if entity_type is not None:
        entities = entities.filter(type=entity_type)
    if cursor:
        after = _decode_cursor(cursor)
        # Keyset pagination: stable under inserts, unlike an offset.
        entities = entities.filter(Q(name__gt=after.name) | Q(name=after.name, id__gt=after.id))
    page = list(entities.order_by("name", "id")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return {
        "space": space_ref(space),
        "entities": [entity_dict(entity) for entity in page],
        "next_cursor": _encode_cursor(page[-1]) if more else None,
    }


def _listing(
    space: Space, key: str, rows: QuerySet[Any], render: Callable[[Any], Mapping[str, object]]
) -> dict[str, object]:
    """A graph:// resource: up to RESOURCE_LIMIT rows of the space; `truncated` says when there are more."""
    page = list(rows[: RESOURCE_LIMIT + 1])
    shown = page[:RESOURCE_LIMIT]
    return {
        "space": space_ref(space),
        key: [render(row) for row in shown],
        "count": len(shown),
        "truncated": len(page) > RESOURCE_LIMIT,
        "limit": RESOURCE_LIMIT,
    }


def entities_payload(*, owner: User, space: Space) -> dict[str, object]:
    """graph://entities: the space's entities by name, with their counts."""
    return _listing(
        space, "entities", _entities(owner=owner, space=space).order_by("name", "id"), entity_dict
    )


def memories_payload(*, owner: User, space: Space) -> dict[str, object]:
    """graph://memories: the space's active, current memories, newest first, with their entities."""
    memories = (
        _memories(owner=owner, space=space)
        .filter(memory_visible())
        .prefetch_related(
            Prefetch("entities", queryset=Entity.objects.filter(owner=owner).only("id", "name", "type"))
        )
        .order_by("-recorded_at", "-id")
    )
    return _listing(space, "memories", memories, lambda memory: memory_compact(memory, with_entities=True))


def relations_payload(*, owner: User, space: Space) -> dict[str, object]:
    """graph://relations: the space's current relations, newest first."""
    relations = (
        _relations(owner=owner, space=space).filter(relation_visible()).order_by("-recorded_at", "-id")
    )
    now = timezone.now()
    return _listing(space, "relations", relations, lambda relation: relation_dict(relation, now=now))


def stats_payload(*, owner: User, space: Space) -> dict[str, object]:
    """graph://stats: counts of the space. The memory counts are disjoint and sum to `total`:
    superseded (replaced by a newer memory), suppressed (forgotten, restorable), expired (active
    but past its valid_until), active (the rest: what graph://memories lists)."""
    now = timezone.now()
    by_type = dict.fromkeys(Entity.Type.values, 0)
    entities = Entity.objects.filter(entity_visible(), owner=owner, space=space)
    for row in entities.values("type").annotate(n=Count("id")):
        by_type[row["type"]] = row["n"]
    memories = Memory.objects.filter(owner=owner, space=space)
    memory_counts = memories.aggregate(
        total=Count("id"),
        superseded=Count("id", filter=superseded_q()),
        suppressed=Count("id", filter=~superseded_q() & Q(status=Memory.Status.SUPPRESSED)),
        active=Count("id", filter=memory_visible(now=now)),
        expired=Count("id", filter=expired_q(now=now) & active_q()),
    )
    relation_counts = Relation.objects.filter(owner=owner, space=space).aggregate(
        total=Count("id"), current=Count("id", filter=relation_visible(now=now))
    )
    return {
        "space": space_ref(space),
        "entities": {"total": sum(by_type.values()), "by_type": by_type},
        "memories": {key: int(value) for key, value in memory_counts.items()},
        "relations": {key: int(value) for key, value in relation_counts.items()},
        "sources": Source.objects.filter(owner=owner, space=space).count(),
        "pending_saves": pending_saves(owner=owner, space=space),
        "computed_at": iso(now),
    }


def relation_list(*, owner: User) -> QuerySet[Relation]:
    """The owner's relations in every space, newest first, with both ends and the space loaded."""
    return (
        Relation.objects.filter(owner=owner)
        .select_related("subject", "object", "space")
        .order_by("-recorded_at", "id")
    )


def relation_filtered_list(
    *, owner: User, name: str = "", type_: str = "", space_id: RowId | None = None, state: str = ""
) -> QuerySet[Relation]:
    """The owner's relations (relation_list) narrowed: `name` in either end's name (any case),
    one `type_`, one of the owner's spaces, `state` "current" or "replaced" (else both)."""
    rows = relation_list(owner=owner)
    if name:
        rows = rows.filter(Q(subject__name__icontains=name) | Q(object__name__icontains=name))
    if type_:
        rows = rows.filter(type=type_)
    if space_id:
        rows = rows.filter(space_id=space_id)
    if state == "current":
        rows = rows.exclude(superseded_q())
    elif state == "replaced":
        rows = rows.filter(superseded_q())
    return rows


def relation_get(*, owner: User, relation_id: RowId) -> Relation:
    """One of the owner's relations; `relation_not_found` (404) for an unknown or another's id."""
    relation = relation_list(owner=owner).filter(id=relation_id).first()
    if relation is None:
        raise errors.AppError(Code.RELATION_NOT_FOUND, "No such relation in your account.")
    return relation


def space_health(*, owner: User, space: Space) -> dict[str, object]:
    """A quick health check of one space: the database answers, and what the space holds."""
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    latency_ms = round((time.perf_counter() - started) * 1000, 3)
    active = Memory.objects.filter(owner=owner, space=space).filter(memory_visible()).count()
    pending = pending_saves(owner=owner, space=space)
    failed = Job.objects.filter(owner=owner, space=space, status=Job.Status.FAILED).count()
    return {
        "database": {"reachable": True, "latency_ms": latency_ms},
        "active_memories": active,
        "entities": Entity.objects.filter(entity_visible(), owner=owner, space=space).count(),
        "pending_saves": pending,
        "failed_jobs": failed,
        "checked_at": iso(timezone.now()),
    }
