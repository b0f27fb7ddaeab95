"""The graph profile (`/mcp/graph`): entities, typed relations, the per-grant space, and the
graph:// resources. Each tool is one registry row; handlers resolve the caller's space, call
one service or selector, render.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from accounts.caller import SCOPE_READ, SCOPE_WRITE, Caller
from memories.limits import ENTITY_NAME_MAX_LENGTH
from memories.models import Entity, Memory, Relation
from memories.operations.registry import (
    WRITES,
    WRITES_IDEMPOTENT,
    ResourceDef,
    ResourceReader,
    operation,
    register_resource,
)
from memories.operations.schemas import ALL, NULLABLE_TIME, UUID, clocks_schema, obj
from memories.representations import RELATION_CLOCKS, entity_ref, relation_dict, space_ref
from memories.selectors.graph import (
    CONTEXT_MEMORIES,
    RESOURCE_LIMIT,
    entities_payload,
    entity_context,
    entity_list,
    memories_payload,
    relation_get_with_evidence,
    relations_payload,
    space_health,
    stats_payload,
)
from memories.services.relations import relation_record
from memories.services.spaces import grant_space_switch, space_for_caller

PROFILES = ("graph",)
ENTITY_TYPES = list(Entity.Type.values)
RELATION_TYPES = list(Relation.Type.values)

ENTITY_NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": ENTITY_NAME_MAX_LENGTH,
    "description": (
        f"An entity's name as people write it (trimmed; 1-{ENTITY_NAME_MAX_LENGTH} characters); case and "
        "accents are ignored."
    ),
}

SPACE_REF: dict[str, Any] = obj({"id": UUID, "name": {"type": "string"}}, required=ALL)
ENTITY_REF: dict[str, Any] = obj(
    {"id": UUID, "name": {"type": "string"}, "type": {"type": "string", "enum": ENTITY_TYPES}},
    required=ALL,
)
ENTITY: dict[str, Any] = obj(
    {
        **ENTITY_REF["properties"],
        "aliases": {"type": "array", "items": {"type": "string"}},
        "attributes": {"type": "object"},
        "memory_count": {
            "type": "integer",
            "minimum": 0,
            "description": "Active, current memories linked to it.",
        },
        "relation_count": {
            "type": "integer",
            "minimum": 0,
            "description": "Current relations, either direction.",
        },
    },
    required=["id", "name", "type", "aliases", "attributes", "memory_count", "relation_count"],
)
MEMORY: dict[str, Any] = obj(
    {
        "id": UUID,
        "content": {"type": "string"},
        "kind": {"type": "string", "enum": Memory.Kind.values},
        "category": {"type": ["string", "null"]},
        "status": {"type": "string"},
        "clocks": clocks_schema(),
        "evidence_count": {"type": "integer", "minimum": 0},
        "contradiction_count": {"type": "integer", "minimum": 0},
        "entities": {"type": "array", "items": ENTITY_REF},
        "replaced": {
            "type": "array",
            "description": "What this memory replaced (a change or correction), latest first: its history.",
            "items": obj(
                {
                    "id": UUID,
                    "content": {"type": "string"},
                    "valid_from": NULLABLE_TIME,
                    "valid_until": NULLABLE_TIME,
                    "superseded_at": NULLABLE_TIME,
                    "superseded_by": {"type": ["string", "null"]},
                    "source_id": {"type": ["string", "null"]},
                },
                required=ALL,
            ),
        },
    },
    required=["id", "content", "kind", "status", "clocks", "evidence_count", "contradiction_count"],
)
RELATION: dict[str, Any] = obj(
    {
        "id": UUID,
        "type": {"type": "string", "enum": RELATION_TYPES},
        "statement": {"type": "string", "description": "subject relation_type object, for reading."},
        "subject": ENTITY_REF,
        "object": ENTITY_REF,
        "direction": {"type": "string", "enum": ["outgoing", "incoming"]},
        "other": ENTITY_REF,
        "current": {"type": "boolean", "description": "Holds now: not superseded, not past valid_until."},
        "clocks": clocks_schema(RELATION_CLOCKS),
        "evidence_count": {
            "type": "integer",
            "minimum": 0,
            "description": "Distinct claimants (agents, tokens, the user, documents) asserting it.",
        },
        "contradiction_count": {"type": "integer", "minimum": 0},
    },
    required="id type statement subject object current clocks evidence_count contradiction_count",
)
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}


# --- get_context ---------------------------------------------------------------------------


CONTEXT_INPUT: dict[str, Any] = obj(
    {
        "entity_name": ENTITY_NAME,
        "at": {
            "type": "string",
            "format": "date-time",
            "description": (
                "Evaluation time, RFC 3339 with an offset: the memories and relations that "
                "held then in the world, as the service knows it now. Default: now (current "
                "only)."
            ),
        },
    },
    required=["entity_name"],
)


CONTEXT_OUTPUT: dict[str, Any] = obj(
    {
        "entity": ENTITY,
        "also_named": {
            "type": "array",
            "items": ENTITY,
            "description": "Other entities that carry this name as an alias.",
        },
        "at": {"type": ["string", "null"]},
        "space": SPACE_REF,
        "memories": {"type": "array", "items": MEMORY},
        "memory_total": {"type": "integer", "minimum": 0},
        "relations": {"type": "array", "items": RELATION},
        "relation_total": {"type": "integer", "minimum": 0},
    },
    required=ALL,
)


@operation("get_context", PROFILES, SCOPE_READ, READ_ONLY, CONTEXT_INPUT, CONTEXT_OUTPUT, n=CONTEXT_MEMORIES)
def _get_context(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """Everything the user's memory holds about one person, place, organisation or thing: the entity (type,
    aliases, attributes), the memories that mention it (newest first, up to {n}) and its
    relations in both directions, each with its clocks and evidence count. Current by default; `at` shows
    what held then. The name is matched ignoring case and accents, and against aliases.
    """
    space = space_for_caller(caller=caller)
    return entity_context(owner=caller.user, space=space, name=args["entity_name"], at=args.get("at"))


# --- list_entities -------------------------------------------------------------------------


LIST_INPUT: dict[str, Any] = obj(
    {
        "type": {
            "type": "string",
            "enum": ENTITY_TYPES,
            "description": "Only entities of this type.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 200,
            "default": 50,
            "description": "Entities per page (1-200).",
        },
        "cursor": {
            "type": "string",
            "minLength": 1,
            "maxLength": 600,
            "description": "The next_cursor of the previous page.",
        },
    }
)


LIST_OUTPUT: dict[str, Any] = obj(
    {
        "space": SPACE_REF,
        "entities": {"type": "array", "items": ENTITY},
        "next_cursor": {"type": ["string", "null"], "description": "null on the last page."},
    },
    required=ALL,
)


@operation("list_entities", PROFILES, SCOPE_READ, READ_ONLY, LIST_INPUT, LIST_OUTPUT)
def _list_entities(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """List the people, places, organisations and other entities of the user's current space, by name, with
    how many current memories and relations each has. Page with `cursor`.
    """
    space = space_for_caller(caller=caller)
    return entity_list(
        owner=caller.user,
        space=space,
        entity_type=args.get("type"),
        limit=args["limit"],
        cursor=args.get("cursor"),
    )


# --- relate ----------------------------------------------------------------------------------


RELATE_INPUT: dict[str, Any] = obj(
    {
        "source": {
            **ENTITY_NAME,
            "description": f"The subject's name (1-{ENTITY_NAME_MAX_LENGTH} characters).",
        },
        "target": {
            **ENTITY_NAME,
            "description": f"The object's name (1-{ENTITY_NAME_MAX_LENGTH} characters).",
        },
        "relation_type": {"type": "string", "enum": RELATION_TYPES},
        "source_type": {
            "type": "string",
            "enum": ENTITY_TYPES,
            "description": "The subject's type: of a new entity, and evidence for an existing one's type.",
        },
        "target_type": {
            "type": "string",
            "enum": ENTITY_TYPES,
            "description": "The object's type: of a new entity, and evidence for an existing one's type.",
        },
        "valid_from": {
            "type": "string",
            "format": "date-time",
            "description": "Since when it holds in the world (RFC 3339 with an offset), if known.",
        },
    },
    required=["source", "target", "relation_type"],
)


RELATE_OUTPUT: dict[str, Any] = obj(
    {
        "relation": RELATION,
        "created": {"type": "boolean", "description": "false: an existing relation gained evidence."},
        "superseded": {"type": "array", "items": UUID, "description": "Relations this one replaced."},
        "evidence_count": {"type": "integer", "minimum": 1},
        "source_id": {**UUID, "description": "The stored claim (immutable Source)."},
        "entities_created": {"type": "array", "items": ENTITY_REF},
        "space": SPACE_REF,
    },
    required=ALL,
)


@operation("relate", PROFILES, SCOPE_WRITE, WRITES, RELATE_INPUT, RELATE_OUTPUT)
def _relate(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """Record that `source` relates to `target` (e.g. Alice lives_in Paris), creating either entity if it is
    new. Saying an existing current relation again adds evidence, not a copy. A new lives_in or works_at
    of the same source replaces the current one, which is kept as history (superseded, with this claim as
    contradicting evidence). Entity types default by relation (lives_in: Person -> Location, works_at:
    Person -> Organization, else Concept) when an entity is new; a given source_type/target_type also
    counts as evidence for an existing entity's type (a space holds one entity per name).
    """
    result = relation_record(
        caller=caller,
        source_name=args["source"],
        target_name=args["target"],
        relation_type=args["relation_type"],
        source_type=args.get("source_type"),
        target_type=args.get("target_type"),
        valid_from=args.get("valid_from"),
    )
    relation = relation_get_with_evidence(
        owner=caller.user, space=result.relation.space, relation_id=result.relation.id
    )
    rendered = relation_dict(relation)
    return {
        "relation": rendered,
        "created": result.created,
        "superseded": [str(older.id) for older in result.superseded],
        "evidence_count": rendered["evidence_count"],
        "source_id": str(result.source.id),
        "entities_created": [entity_ref(entity) for entity in result.entities_created],
        "space": space_ref(result.relation.space),
    }


# --- switch_space ----------------------------------------------------------------------------


SWITCH_INPUT: dict[str, Any] = obj(
    {"space_id": {**UUID, "description": "The id of one of the user's spaces."}}, required=ALL
)


SWITCH_OUTPUT: dict[str, Any] = obj(
    {
        "previous": SPACE_REF,
        "current": SPACE_REF,
        "changed": {"type": "boolean"},
        "health": obj(
            {
                "database": obj(
                    {
                        "reachable": {"type": "boolean"},
                        "latency_ms": {"type": "number"},
                    },
                    closed=False,
                ),
                "active_memories": {"type": "integer", "minimum": 0},
                "entities": {"type": "integer", "minimum": 0},
                "pending_saves": {"type": "integer", "minimum": 0},
                "failed_jobs": {"type": "integer", "minimum": 0},
                "checked_at": {"type": "string"},
            },
            required=["database", "active_memories", "entities", "pending_saves", "failed_jobs"],
        ),
    },
    required=ALL,
)


@operation("switch_space", PROFILES, SCOPE_READ, WRITES_IDEMPOTENT, SWITCH_INPUT, SWITCH_OUTPUT)
def _switch_space(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """Switch the space (a separate memory: work, personal, a project) this connection reads and writes.
    Every later call of this grant (this agent's OAuth authorization, or this personal token) uses the new
    space, on every endpoint, until switched again; other agents keep theirs. Returns the previous and the
    new space and a health check of the new one.
    """
    switched = grant_space_switch(caller=caller, space_id=args["space_id"])
    return {
        "previous": space_ref(switched.previous),
        "current": space_ref(switched.current),
        "changed": switched.previous.id != switched.current.id,
        "health": space_health(owner=caller.user, space=switched.current),
    }


# --- resources -------------------------------------------------------------------------------

PayloadSelector = Callable[..., dict[str, Any]]


def _in_current_space(selector: PayloadSelector) -> ResourceReader:
    # Resources read the caller's current space (switch_space applies), owner-scoped.
    def read(caller: Caller) -> dict[str, Any]:
        return selector(owner=caller.user, space=space_for_caller(caller=caller))

    return read


RESOURCES: tuple[tuple[str, str, str, PayloadSelector], ...] = (
    (
        "graph://entities",
        "Entities",
        f"The current space's entities by name, with memory and relation counts (up to "
        f"{RESOURCE_LIMIT}; `truncated` says when there are more).",
        entities_payload,
    ),
    (
        "graph://memories",
        "Memories",
        f"The current space's active, current memories, newest first, with clocks, entities and "
        f"evidence counts (up to {RESOURCE_LIMIT}).",
        memories_payload,
    ),
    (
        "graph://relations",
        "Relations",
        f"The current space's current relations, newest first (up to {RESOURCE_LIMIT}).",
        relations_payload,
    ),
    (
        "graph://stats",
        "Statistics",
        "Counts of the current space: entities by type, memories (active, suppressed, superseded, "
        "expired), relations (current, total), sources, saves pending.",
        stats_payload,
    ),
)

for _uri, _name, _description, _selector in RESOURCES:
    register_resource(
        ResourceDef(
            uri=_uri,
            name=_name,
            description=_description,
            reader=_in_current_space(_selector),
            profiles=PROFILES,
        )
    )
