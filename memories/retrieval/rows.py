"""The rows of recall's hits, returned by the retrieval statement itself.

A read: nothing here writes. Loading the hits through the ORM afterwards took two more queries
(the rows with their annotations, then their entities) and a queryset built for each; here the
retrieval statement's final SELECT reads the columns the hits render from, and each row becomes a
Memory shaped as the memory selectors shape it (`memories.selectors.memories._memories`: no
vectors; space, agent and entities loaded; `evidence_count` and `image_source_id` set), and its
source's metadata with it, so `hit_dict` renders it without a query.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from typing import Any, cast

from django.db import connection
from django.db.models import QuerySet

from memories.models import Entity, Evidence, Memory, MemoryEntity, Source, Space

# Every stored column but the two vectors, as the memory selectors load a memory. Built once: the
# model does not change while the process runs.
_FIELDS = [f for f in Memory._meta.concrete_fields if f.attname not in ("embedding", "search_vector")]


_NAMES = [f.attname for f in _FIELDS]


_Application = Memory._meta.get_field("agent").related_model

# The source's metadata a hit or a fact names (`memories.wire.source_ref`), its id first: never
# its text.
# In the model's field order, which `Model.from_db` reads a partial row in.
SOURCE_REF_FIELDS = tuple(
    f.attname
    for f in Source._meta.concrete_fields
    if f.attname in ("id", "origin", "title", "source_kind", "source_ref", "version")
)


@functools.cache
def hit_columns_sql(alias: str) -> str:
    """The select list that makes a row of memories_memory `alias` a hit row: its stored columns,
    agent name, entities and two annotations. Goes with `hit_joins_sql(alias)` in the FROM clause.

    Spliced into the retrieval statement's final SELECT rather than wrapped around it: one join of
    memories_memory fewer for the planner (planning the wrapper cost more than 2 ms a recall), and
    PostgreSQL evaluates these sub-selects after the sort and LIMIT, for the returned rows only.
    The evidence count and the image source are the SQL twins of the memory selectors'
    annotations (`_memories`, `memories.selectors.images.image_source_of_memory`); the test that
    recall renders a memory exactly as the selectors do keeps them in step. Parameters: `%(owner)s`.
    Cached: the model does not change while the process runs.
    """
    columns = ", ".join(f"{alias}.{connection.ops.quote_name(cast(str, f.column))}" for f in _FIELDS)
    evidence, source = Evidence._meta.db_table, Source._meta.db_table
    supports = Evidence.Stance.SUPPORTS.value
    source_columns = ", ".join(f"hit_source.{name}" for name in SOURCE_REF_FIELDS[1:])
    return f"""{columns},
       hit_agent.name,
       {source_columns},
       (SELECT coalesce(json_agg(json_build_array(e.id, e.name, e.type) ORDER BY e.name), '[]'::json)
        FROM {MemoryEntity._meta.db_table} me
        JOIN {Entity._meta.db_table} e ON e.owner_id = %(owner)s AND e.id = me.entity_id
        WHERE me.owner_id = %(owner)s AND me.memory_id = {alias}.id),
       (SELECT count(DISTINCT s.claimant) FROM {evidence} ev
        JOIN {source} s ON s.owner_id = %(owner)s AND s.id = ev.source_id
        WHERE ev.owner_id = %(owner)s AND ev.memory_id = {alias}.id AND ev.stance = '{supports}'),
       (SELECT ev.source_id FROM {evidence} ev
        JOIN {source} s ON s.owner_id = %(owner)s AND s.id = ev.source_id
        WHERE ev.owner_id = %(owner)s AND ev.memory_id = {alias}.id AND ev.stance = '{supports}'
          AND s.origin = '{Source.Origin.IMAGE.value}' AND s.image_name <> ''
        ORDER BY s.recorded_at DESC LIMIT 1)"""  # noqa: S608 - table and column names and model constants only


def hit_joins_sql(alias: str) -> str:
    """The joins `hit_columns_sql(alias)` reads the agent's name and the source's metadata through."""
    return (
        f"LEFT JOIN {_Application._meta.db_table} hit_agent ON hit_agent.id = {alias}.agent_id "
        f"LEFT JOIN {Source._meta.db_table} hit_source"
        f" ON hit_source.owner_id = %(owner)s AND hit_source.id = {alias}.source_id"
    )


def memory_from_row(row: Sequence[Any], *, space: Space) -> Memory:
    """The Memory of the `hit_columns_sql` part of a row (the columns after the statement's own),
    with no query."""
    memory = Memory.from_db(connection.alias, _NAMES, row[: len(_NAMES)])
    agent_name, *source_values = row[len(_NAMES) : len(_NAMES) + len(SOURCE_REF_FIELDS)]
    entity_rows, evidence_count, image_source_id = row[len(_NAMES) + len(SOURCE_REF_FIELDS) :]
    memory._state.fields_cache["space"] = space
    # What `memories.wire.source_ref` names (the rest of the row is deferred: never its text).
    memory._state.fields_cache["source"] = (
        Source.from_db(connection.alias, list(SOURCE_REF_FIELDS), [memory.source_id, *source_values])
        if memory.source_id is not None
        else None
    )
    memory._state.fields_cache["agent"] = (
        _Application.from_db(connection.alias, ["id", "name"], [memory.agent_id, agent_name])
        if memory.agent_id is not None
        else None
    )
    # What prefetch_related stores (django.db.models.query.prefetch_one_level): a queryset whose
    # results are known, so `memory.entities.all()` reads them without a query. A bare queryset, not
    # `memory.entities.get_queryset()`: building the relation's filter for each of 20 hits cost
    # more than the rest of this function, and a queryset with its results set never runs it.
    entities: QuerySet[Entity] = QuerySet(model=Entity)
    entities._result_cache = [
        Entity.from_db(connection.alias, ["id", "name", "type"], [uuid.UUID(entity_id), name, kind])
        for entity_id, name, kind in entity_rows
    ]
    entities._prefetch_done = True  # type: ignore[attr-defined]
    memory._prefetched_objects_cache = {"entities": entities}  # type: ignore[attr-defined]
    memory.evidence_count = evidence_count  # type: ignore[attr-defined]
    memory.image_source_id = image_source_id  # type: ignore[attr-defined]
    return memory
