"""The graph profile (`/mcp/graph`): the context-graph contract's seven tools, in its order
(remember, recall, get_context, list_entities, invalidate, relate, switch_agent), and the graph://
resources. Each tool is one registry row; handlers resolve the caller's space, call one service or
selector, render. `remember` and `recall` are operations of their own (registry names
`graph_remember`, `graph_recall`), offered here under the contract's names: the contract's
parameters are not the core tools'. docs/mcp.md maps each tool onto the model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings

from accounts.caller import SCOPE_READ, SCOPE_WRITE, Caller
from accounts.throttles import user_throttle
from memories.errors import CATALOGUE, AppError, Code
from memories.limits import ENTITY_NAME_MAX_LENGTH, QUERY_MAX_LENGTH, SUPPRESS_NOTE_MAX_LENGTH
from memories.models import Entity, Job, Memory, Relation
from memories.operations.core import RECALL_OUTPUT, recall_rendered
from memories.operations.core import REMEMBER_INPUT as CORE_REMEMBER_INPUT
from memories.operations.registry import (
    WRITES,
    WRITES_IDEMPOTENT,
    ResourceDef,
    ResourceReader,
    operation,
    register_resource,
)
from memories.operations.schemas import ALL, NULLABLE_TIME, SAVE_ENTITIES, UUID, clocks_schema, obj
from memories.selectors.graph import (
    CONFIRMED,
    CONTEXT_MEMORIES,
    CREATED,
    RESOURCE_LIMIT,
    entities_payload,
    entity_context,
    entity_list,
    job_saved_memories,
    memories_payload,
    relation_get_with_evidence,
    relations_payload,
    space_health,
    stats_payload,
)
from memories.selectors.jobs import job_wait
from memories.selectors.spaces import space_list
from memories.services.memories import memory_suppress, remember
from memories.services.relations import relation_invalidate, relation_record
from memories.services.spaces import grant_space_switch, space_for_caller
from memories.wire import RELATION_CLOCKS, GraphMemory, entity_ref, iso, relation_dict, space_ref

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

SPACE_REF: dict[str, object] = obj({"id": UUID, "name": {"type": "string"}}, required=ALL)
ENTITY_REF: dict[str, Any] = obj(
    {"id": UUID, "name": {"type": "string"}, "type": {"type": "string", "enum": ENTITY_TYPES}},
    required=ALL,
)
ENTITY: dict[str, object] = obj(
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
        "category": {"type": ["string", "null"], "enum": [*Memory.Category.values, None]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "status": {"type": "string", "enum": Memory.Status.values},
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
    required="id content kind category confidence status clocks evidence_count contradiction_count",
)
RELATION: dict[str, object] = obj(
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
        "invalidation": obj(
            {"at": {"type": "string"}, "reason": {"type": ["string", "null"]}},
            required=ALL,
            nullable=True,
            description="Retired by invalidate: when, and the reason given; null when it was not.",
        ),
    },
    required="id type statement subject object current clocks evidence_count contradiction_count",
)
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}


# --- remember --------------------------------------------------------------------------------

CATEGORIES = list(Memory.Category.values)


REMEMBER_INPUT: dict[str, object] = obj(
    {
        "content": {
            # The core remember's limits: one content maximum for every save.
            **CORE_REMEMBER_INPUT["properties"]["content"],
            "description": (
                "The memory to store: a short, self-contained statement "
                f"(trimmed; 1-{settings.REMEMBER_MAX_CHARS:,} characters)."
            ),
        },
        "category": {
            "type": "string",
            "enum": CATEGORIES,
            "description": (
                "What sort of statement it is. preference is stored as a standing fact and intent as "
                "a plan; for fact, decision and context the words decide whether it holds, happened "
                "or is planned."
            ),
        },
        "entities": {
            **SAVE_ENTITIES,
            "description": (
                "The entities this memory is about (name + type), linked to it in addition to those "
                "found in the content; a name already in the graph is that entity."
            ),
        },
        "confidence": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "default": 0.9,
            "description": (
                "How sure you are, 0-1: 1.0 for what the user said explicitly, 0.5-0.8 for inferences."
            ),
        },
        "sourceText": {
            "type": "string",
            "minLength": 1,
            "maxLength": settings.REMEMBER_MAX_CHARS,
            "description": (
                "The original text this memory was extracted from (what the user said), kept as its "
                f"source; never searched itself (1-{settings.REMEMBER_MAX_CHARS:,} characters)."
            ),
        },
    },
    required=["content", "category"],
)


SAVED_MEMORY: dict[str, object] = {
    **MEMORY,
    "properties": {
        **MEMORY["properties"],
        "outcome": {
            "type": "string",
            "enum": [CREATED, CONFIRMED],
            "description": (
                "created: a new memory; confirmed: the same fact (or a rewording) was already stored "
                "and gained this save as evidence."
            ),
        },
    },
    "required": [*MEMORY["required"], "entities", "replaced", "outcome"],
}


STORED, PENDING = "stored", "pending"


REMEMBER_OUTPUT: dict[str, object] = obj(
    {
        "status": {
            "type": "string",
            "enum": [STORED, PENDING],
            "description": "stored: the memories are recallable now; pending: still being processed.",
        },
        "memory_id": {
            "type": ["string", "null"],
            "description": "The id of the (first) stored memory, for invalidate; null while pending.",
        },
        "memories": {
            "type": "array",
            "items": SAVED_MEMORY,
            "description": "Every memory the content gave (one per statement), oldest first.",
        },
        "job_id": UUID,
        "space": SPACE_REF,
        "note": {"type": "string"},
    },
    required=ALL,
)


def _save_failed(job: Job) -> AppError:
    # A job's failure code is not an error response of its own; the save's answer wraps it.
    try:
        code = Code(job.error_code)
    except ValueError:
        code = Code.INTERNAL_ERROR
    action = CATALOGUE[code].action
    return AppError(
        Code.SAVE_FAILED,
        f"Nothing was stored: {job.error_message or CATALOGUE[code].meaning}",
        details={
            "job_id": str(job.id),
            "job_error": {"code": code.value, "message": job.error_message, "agent_action": action},
        },
        agent_action=action,
    )


def _saved_note(memories: list[GraphMemory]) -> str:
    notes = ["Stored; pass memory_id to invalidate to retract it."]
    if any(m["outcome"] == CONFIRMED for m in memories):
        notes.append("Part of it was already known: that memory gained this save as evidence.")
    if any(m["replaced"] for m in memories):
        notes.append("It replaces an older memory, which is kept as history (see replaced).")
    return " ".join(notes)


@operation(
    "graph_remember",
    PROFILES,
    SCOPE_WRITE,
    WRITES,
    REMEMBER_INPUT,
    REMEMBER_OUTPUT,
    tool="remember",
    wait=settings.SAVE_MAX_WAIT_SECONDS,
)
def _remember(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Store a fact, preference, intent, decision or context in the user's memory, with the entities it is
    about (name + type). Waits until it is stored (usually under a second, at most {wait} s) and returns
    the memory with its id. A changed fact replaces the older memory, which is kept as history; the same
    fact again, or in other words, adds evidence to the memory already there instead of a copy.
    """
    user_throttle(limit="save", user=caller.user)
    job = remember(
        caller=caller,
        content=args["content"],
        category=args["category"],
        entities=args.get("entities"),
        confidence=args["confidence"],
        source_text=args.get("sourceText", ""),
    )
    job = job_wait(job, settings.SAVE_MAX_WAIT_SECONDS)
    if job.status == Job.Status.FAILED:
        raise _save_failed(job)
    if job.status != Job.Status.SUCCEEDED:
        return {
            "status": PENDING,
            "memory_id": None,
            "memories": [],
            "job_id": str(job.id),
            "space": space_ref(job.space),
            "note": "The save is accepted and still being processed; recall it in a moment. It is not lost.",
        }
    memories = job_saved_memories(owner=caller.user, job=job)
    return {
        "status": STORED,
        "memory_id": memories[0]["id"] if memories else None,
        "memories": memories,
        "job_id": str(job.id),
        "space": space_ref(job.space),
        "note": _saved_note(memories),
    }


# --- recall ----------------------------------------------------------------------------------


RECALL_INPUT: dict[str, object] = obj(
    {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": QUERY_MAX_LENGTH,
            "description": f"Search query: keywords or a topic (trimmed; 1-{QUERY_MAX_LENGTH:,} characters).",
        },
        # The contract's type is number: a whole one sent as 5.0 is 5 (multipleOf keeps 2.5 out).
        "limit": {
            "type": "number",
            "multipleOf": 1,
            "minimum": 1,
            "maximum": 50,
            "default": 10,
            "description": "Max results, a whole number (1-50).",
        },
    },
    required=["query"],
)


@operation("graph_recall", PROFILES, SCOPE_READ, READ_ONLY, RECALL_INPUT, RECALL_OUTPUT, tool="recall")
def _recall(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Search the user's memories by keyword or topic: the best matches first, active and current ones only
    (invalidated or replaced memories are left out), each with its id, category, confidence, entities and
    dates. `match` says whether anything really matches. Always search before answering fact-based
    questions.
    """
    return recall_rendered(caller, {"query": args["query"], "top_k": int(args["limit"])})


# --- get_context ---------------------------------------------------------------------------


CONTEXT_INPUT: dict[str, object] = obj(
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


CONTEXT_OUTPUT: dict[str, object] = obj(
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
def _get_context(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Everything the user's memory holds about one person, place, organisation or thing: the entity (type,
    aliases, attributes), the memories that mention it (newest first, up to {n}) and its
    relations in both directions, each with its clocks and evidence count. Current by default; `at` shows
    what held then. The name is matched ignoring case and accents, and against aliases.
    """
    space = space_for_caller(caller=caller)
    return entity_context(owner=caller.user, space=space, name=args["entity_name"], at=args.get("at"))


# --- list_entities -------------------------------------------------------------------------


LIST_INPUT: dict[str, object] = obj(
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


LIST_OUTPUT: dict[str, object] = obj(
    {
        "space": SPACE_REF,
        "entities": {"type": "array", "items": ENTITY},
        "next_cursor": {"type": ["string", "null"], "description": "null on the last page."},
    },
    required=ALL,
)


@operation("list_entities", PROFILES, SCOPE_READ, READ_ONLY, LIST_INPUT, LIST_OUTPUT)
def _list_entities(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
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


# --- invalidate ------------------------------------------------------------------------------


INVALIDATE_INPUT: dict[str, object] = obj(
    {
        "memory_id": {
            **UUID,
            "description": (
                "ID of the memory to invalidate (from remember or recall), or of a relation (from relate, "
                "get_context or graph://relations) to retire it."
            ),
        },
        "reason": {
            "type": "string",
            "minLength": 1,
            "maxLength": SUPPRESS_NOTE_MAX_LENGTH,
            "description": f"Why it is being invalidated (1-{SUPPRESS_NOTE_MAX_LENGTH} characters).",
        },
    },
    required=["memory_id"],
)


MEMORY_TARGET, RELATION_TARGET = "memory", "relation"
INVALIDATED = "invalidated"


INVALIDATE_OUTPUT: dict[str, object] = obj(
    {
        "memory_id": {**UUID, "description": "The id given: a memory's, or a relation's."},
        "target": {"type": "string", "enum": [MEMORY_TARGET, RELATION_TARGET]},
        "status": {
            "type": "string",
            "enum": [Memory.Status.SUPPRESSED.value, INVALIDATED],
            "description": (
                "suppressed: a memory, hidden everywhere; invalidated: a relation, ended and kept as history."
            ),
        },
        "reason": {"type": ["string", "null"], "description": "The reason given when it was invalidated."},
        "invalidated_at": {"type": "string"},
        "relation": {
            **RELATION,
            "type": ["object", "null"],
            "description": "The retired relation (null for a memory).",
        },
        "message": {"type": "string"},
    },
    required=ALL,
)


def _invalidate_relation(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    relation = relation_invalidate(
        actor=caller.actor(), relation_id=args["memory_id"], note=args.get("reason", "")
    )
    rendered = relation_dict(
        relation_get_with_evidence(owner=caller.user, space=relation.space, relation_id=relation.id)
    )
    return {
        "memory_id": str(relation.id),
        "target": RELATION_TARGET,
        "status": INVALIDATED,
        "reason": relation.invalidated_note or None,
        "invalidated_at": iso(relation.invalidated_at),
        "relation": rendered,
        "message": (
            "The relation no longer holds: it is kept for history (get_context with an earlier `at`) and "
            "left out of current answers; the user can restore it. relate again to record a new one."
        ),
    }


@operation("invalidate", PROFILES, SCOPE_WRITE, WRITES_IDEMPOTENT, INVALIDATE_INPUT, INVALIDATE_OUTPUT)
def _invalidate(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Mark one of the user's memories as outdated or incorrect. It is kept for history but no longer
    recalled or listed; the user can restore it from the dashboard. To correct a fact, invalidate the old
    memory and remember the new one. A relation's id retires that relation the same way (it stops holding,
    kept as history); relate the new link. Invalidating again changes nothing.
    """
    try:
        memory = memory_suppress(
            actor=caller.actor(),
            memory_id=args["memory_id"],
            reason=Memory.SuppressReason.INVALIDATED,
            note=args.get("reason", ""),
        )
    except AppError as missing:
        if missing.code != Code.MEMORY_NOT_FOUND:
            raise
        try:
            return _invalidate_relation(caller, args)
        except AppError as neither:
            if neither.code != Code.RELATION_NOT_FOUND:
                raise
            raise AppError(
                Code.MEMORY_NOT_FOUND,
                "No memory or relation with this id exists in your account.",
                agent_action="use an id from remember, recall, relate or get_context",
            ) from None
    return {
        "memory_id": str(memory.id),
        "target": MEMORY_TARGET,
        "status": memory.status,
        "reason": memory.suppressed_note or None,
        "invalidated_at": iso(memory.suppressed_at),
        "relation": None,
        "message": "The memory is kept for history but excluded from recall; the user can restore it.",
    }


# --- relate ----------------------------------------------------------------------------------


RELATE_INPUT: dict[str, object] = obj(
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


RELATE_OUTPUT: dict[str, object] = obj(
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
def _relate(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
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


# --- switch_agent ----------------------------------------------------------------------------

# An agent's context graph, in the contract's words, is a space here: `agent_id` is a space id.
SPACES_SHOWN = 50


SWITCH_INPUT: dict[str, object] = obj(
    {
        "agent_id": {
            **UUID,
            "description": (
                "The agent ID to switch to: the id of one of the user's spaces (each space is a "
                "separate context graph; graph://stats names the current one)."
            ),
        }
    },
    required=ALL,
)


SWITCH_OUTPUT: dict[str, object] = obj(
    {
        "previous_agent_id": {**UUID, "description": "The space this connection used before."},
        "agent_id": {**UUID, "description": "The space it uses now."},
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


def _no_such_agent(caller: Caller, agent_id: object) -> AppError:
    # The caller's own spaces are the agent ids it may use: naming them is no leak, and it saves
    # the agent a round trip to the user.
    spaces = list(space_list(owner=caller.user).order_by("-is_default", "name")[:SPACES_SHOWN])
    return AppError(
        Code.SPACE_NOT_FOUND,
        "No agent graph with this agent_id exists in your account: an agent_id is the id of one of "
        "your spaces.",
        details={"agent_id": str(agent_id), "spaces": [space_ref(space) for space in spaces]},
        agent_action="use the id of one of details.spaces, or ask the user which space to use",
    )


@operation("switch_agent", PROFILES, SCOPE_READ, WRITES_IDEMPOTENT, SWITCH_INPUT, SWITCH_OUTPUT)
def _switch_agent(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Switch to a different agent's context graph: here, another of the user's spaces (a separate memory:
    work, personal, a project). All later calls of this connection (this agent's OAuth authorization, or
    this personal token) use it, on every endpoint, until switched again; other agents keep theirs.
    Returns the previous and the new agent id and a health check of the new graph.
    """
    try:
        switched = grant_space_switch(caller=caller, space_id=args["agent_id"])
    except AppError as refused:
        if refused.code != Code.SPACE_NOT_FOUND:
            raise
        raise _no_such_agent(caller, args["agent_id"]) from None
    return {
        "previous_agent_id": str(switched.previous.id),
        "agent_id": str(switched.current.id),
        "previous": space_ref(switched.previous),
        "current": space_ref(switched.current),
        "changed": switched.previous.id != switched.current.id,
        "health": space_health(owner=caller.user, space=switched.current),
    }


# --- resources -------------------------------------------------------------------------------

PayloadSelector = Callable[..., dict[str, Any]]


def _in_current_space(selector: PayloadSelector) -> ResourceReader:
    # Resources read the caller's current space (switch_agent applies), owner-scoped.
    def read(caller: Caller) -> dict[str, object]:
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
