"""The open query of the evidence profile: seven static tools over the open_query views.

The contract fixes what they return (QueryResult/v1 with grade `exploratory_tabular`, caps, drops
and the PostgreSQL snapshot time, or content-free discovery payloads) and leaves their names to us:

- `query_space`: discovery; the views and their columns, the caps, the allowed functions, the
  saved queries' names. No row of data.
- `describe_view`: one view's columns, types and meanings.
- `validate_query`: would this SELECT be accepted, and which columns would it return? Nothing runs
  beyond PostgreSQL planning it.
- `query`: run one SELECT (with `$1 ...` parameters).
- `list_saved_queries`, `describe_saved_query`, `run_saved_query`: the `examples.*` queries.

Everything reads the caller's current space, as the caller's own user, through
`memories.selectors.open_query` (the database enforces it); handlers only validate and render.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from accounts.caller import SCOPE_READ, Caller
from accounts.throttles import user_throttle
from memories.errors import AppError, Code
from memories.open_query import guard
from memories.open_query.catalogue import SCHEMA, VIEWS
from memories.open_query.saved import SAVED, SavedQuery
from memories.operations.registry import operation
from memories.operations.schemas import ALL, obj
from memories.operations.validation import validate_arguments
from memories.selectors.open_query import QueryResult, caps, query_run
from memories.services.spaces import space_for_caller
from memories.wire import iso

PROFILES = ("evidence",)
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
CONTRACT = "QueryResult/v1"
GRADE = "exploratory_tabular"

SQL = {
    "type": "string",
    "minLength": 1,
    "maxLength": guard.MAX_SQL_CHARS,
    "description": (
        "One PostgreSQL select statement over the views query_space lists (unqualified names: memories, "
        "entities, memory_entities, relations, sources, evidence), with $1, $2 ... for parameters."
    ),
}
PARAM_VALUE = {"type": ["string", "number", "boolean", "null"]}
PARAMS = {
    "type": "array",
    "maxItems": 100,
    "items": PARAM_VALUE,
    "description": "Values for $1, $2 ... in order (cast them in the SQL: $1::uuid, $2::timestamptz).",
}
LIMIT = {
    "type": "integer",
    "minimum": 1,
    "maximum": settings.OPEN_QUERY_MAX_ROWS,
    "description": f"At most this many rows (1-{settings.OPEN_QUERY_MAX_ROWS}; default the cap).",
}
SAVED_NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": 100,
    "description": "A saved query's name, e.g. examples.memories_by_month (list_saved_queries lists them).",
}

COLUMN = obj({"name": {"type": "string"}, "type": {"type": "string"}}, required=ALL, closed=False)
CAPS = obj(
    {
        "max_rows": {"type": "integer"},
        "max_bytes": {"type": "integer"},
        "statement_timeout_ms": {"type": "integer"},
        "lock_timeout_ms": {"type": "integer"},
    },
    required=ALL,
    closed=False,
)
DROP = obj(
    {
        "what": {"type": "string"},
        "reason": {"type": "string", "enum": ["row_cap", "byte_cap"]},
        "cap": {"type": "integer"},
        "message": {"type": "string"},
    },
    required=ALL,
    closed=False,
)
SNAPSHOT = obj(
    {
        "taken_at": {"type": "string", "format": "date-time"},
        "isolation": {"type": "string"},
        "read_only": {"type": "boolean"},
    },
    required=ALL,
    closed=False,
    description="The PostgreSQL snapshot every row was read from.",
)
QUERY_RESULT: dict[str, object] = obj(
    {
        "contract": {"type": "string", "enum": [CONTRACT]},
        "grade": {"type": "string", "enum": [GRADE]},
        "columns": {"type": "array", "items": COLUMN},
        "rows": {"type": "array", "items": {"type": "array"}},
        "row_count": {"type": "integer", "minimum": 0},
        "truncated": {"type": "boolean"},
        "caps": CAPS,
        "drops": {"type": "array", "items": DROP},
        "snapshot": SNAPSHOT,
        "elapsed_ms": {"type": "integer"},
        "space_id": {"type": "string", "format": "uuid"},
        "views": {"type": "array", "items": {"type": "string"}},
        "saved_query": {"type": ["string", "null"]},
    },
    required=ALL,
    description=(
        "Exploratory rows, not an assured answer: no grain, no typed negative. Use the assured operations "
        "for what holds and why."
    ),
)


def _space_ref(caller: Caller) -> dict[str, object]:
    space = space_for_caller(caller=caller)
    return {"id": str(space.id), "name": space.name}


def _result(
    result: QueryResult, *, space_id: str, checked: guard.CheckedQuery, saved: str | None
) -> dict[str, object]:
    return {
        "contract": CONTRACT,
        "grade": GRADE,
        "columns": result.columns,
        "rows": result.rows,
        "row_count": len(result.rows),
        "truncated": bool(result.drops),
        "caps": result.caps,
        "drops": result.drops,
        "snapshot": {"taken_at": iso(result.snapshot_at), "isolation": "repeatable read", "read_only": True},
        "elapsed_ms": result.elapsed_ms,
        "space_id": space_id,
        "views": list(checked.views),
        "saved_query": saved,
    }


def _run(
    caller: Caller, checked: guard.CheckedQuery, params: list[Any], limit: int | None, saved: str | None
) -> dict[str, object]:
    space = space_for_caller(caller=caller)
    # Each run holds a database connection for up to the statement timeout: counted per user.
    user_throttle(limit="query", user=caller.user)
    result = query_run(owner=caller.user, space=space, query=checked, params=params, limit=limit)
    return _result(result, space_id=str(space.id), checked=checked, saved=saved)


def saved_query_get(name: str) -> SavedQuery:
    saved = SAVED.get(name)
    if saved is None:
        raise AppError(
            Code.SAVED_QUERY_NOT_FOUND,
            f"There is no saved query named {name[:100]!r}.",
            details={"name": name[:100], "available": list(SAVED)},
        )
    return saved


SPACE_OUTPUT: dict[str, object] = obj(
    {
        "contract": {"type": "string"},
        "schema": {"type": "string"},
        "space": obj({"id": {"type": "string"}, "name": {"type": "string"}}, required=ALL, closed=False),
        "views": {"type": "array", "items": {"type": "object"}},
        "caps": CAPS,
        "allowed_functions": {"type": "array", "items": {"type": "string"}},
        "allowed_types": {"type": "array", "items": {"type": "string"}},
        "saved_queries": {"type": "array", "items": {"type": "string"}},
        "rules": {"type": "array", "items": {"type": "string"}},
    },
    required=ALL,
)

RULES = [
    "One select statement (WITH, UNION, joins, subqueries, window functions and aggregates are fine); "
    "nothing that writes, locks or creates.",
    "Only the views listed here, by their plain names; no other schema, no system catalog.",
    "Only the listed functions and casts.",
    "Every view shows the current space of your connection only; forgotten memories are never in it.",
    "Rows past caps.max_rows or caps.max_bytes are dropped and reported in drops; the query is stopped "
    "after caps.statement_timeout_ms (query_timeout).",
    "Parameters as $1, $2 ... with values in params; cast them in the SQL ($1::uuid).",
]


@operation("query_space", PROFILES, SCOPE_READ, READ_ONLY, obj({}), SPACE_OUTPUT, primary_reads=True)
def _query_space(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Discover the open query: the read-only views of the current space (memories, entities, memory_entities,
    relations, sources, evidence) with their columns, the caps on rows, bytes and time, the SQL functions
    allowed, and the saved queries' names. Returns no data. Start here before query or run_saved_query.
    """
    return {
        "contract": "QuerySpace/v1",
        "schema": SCHEMA,
        "space": _space_ref(caller),
        "views": [view.describe() for view in VIEWS.values()],
        "caps": caps(),
        "allowed_functions": sorted(guard.ALLOWED_FUNCTIONS),
        "allowed_types": sorted(guard.ALLOWED_TYPES),
        "saved_queries": list(SAVED),
        "rules": RULES,
    }


VIEW_INPUT = obj(
    {"view": {"type": "string", "enum": list(VIEWS), "description": "The view's name."}}, required=ALL
)
VIEW_OUTPUT = obj(
    {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "columns": {"type": "array", "items": obj({}, closed=False)},
        "example": {"type": "string"},
    },
    required=ALL,
)


@operation("describe_view", PROFILES, SCOPE_READ, READ_ONLY, VIEW_INPUT, VIEW_OUTPUT, primary_reads=True)
def _describe_view(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Describe one view of the open query: what a row is, and each column's name, PostgreSQL type and meaning
    (the clocks included). Returns no data.
    """
    view = VIEWS[args["view"]]
    # The name is one of ours (the schema's enum), not the caller's text.
    return {**view.describe(), "example": f"SELECT * FROM {view.name} LIMIT 10"}  # noqa: S608


VALIDATE_INPUT = obj({"sql": SQL}, required=ALL)
VALIDATE_OUTPUT = obj(
    {
        "accepted": {"type": "boolean", "enum": [True]},
        "columns": {"type": "array", "items": COLUMN},
        "parameter_count": {"type": "integer"},
        "views": {"type": "array", "items": {"type": "string"}},
        "caps": CAPS,
    },
    required=ALL,
)


@operation(
    "validate_query", PROFILES, SCOPE_READ, READ_ONLY, VALIDATE_INPUT, VALIDATE_OUTPUT, primary_reads=True
)
def _validate_query(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Check a select statement without running it: whether the open query accepts it (else a query_rejected
    error with details.reason) and PostgreSQL can plan it (else query_failed), the columns it would return
    and how many $n parameters it takes. Returns no rows.
    """
    checked = guard.query_check(args["sql"])
    space = space_for_caller(caller=caller)
    user_throttle(limit="query", user=caller.user)
    # Parameters only need a type to be planned: NULLs, cast by the statement itself.
    result = query_run(
        owner=caller.user,
        space=space,
        query=checked,
        params=[None] * checked.parameter_count,
        describe_only=True,
    )
    return {
        "accepted": True,
        "columns": result.columns,
        "parameter_count": checked.parameter_count,
        "views": list(checked.views),
        "caps": result.caps,
    }


QUERY_INPUT = obj({"sql": SQL, "params": PARAMS, "limit": LIMIT}, required=["sql"])


@operation("query", PROFILES, SCOPE_READ, READ_ONLY, QUERY_INPUT, QUERY_RESULT, primary_reads=True)
def _query(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Run one read-only select statement over the open query's views of the current space and get
    QueryResult/v1 rows: grade exploratory_tabular, the columns, the rows, the caps, what was dropped and
    why, and the PostgreSQL snapshot time. For exploration and counting; use facts_context and
    claims_and_sources_context for assured answers.
    """
    checked = guard.query_check(args["sql"])
    return _run(caller, checked, list(args.get("params", [])), args.get("limit"), None)


LIST_OUTPUT = obj({"saved_queries": {"type": "array", "items": obj({}, closed=False)}}, required=ALL)


@operation("list_saved_queries", PROFILES, SCOPE_READ, READ_ONLY, obj({}), LIST_OUTPUT, primary_reads=True)
def _list_saved_queries(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """List the saved queries (examples.*): each one's name, title, what it answers and its parameters'
    schema. Run one with run_saved_query; they are not tools of their own. Returns no data.
    """
    return {"saved_queries": [saved.summary() for saved in SAVED.values()]}


NAME_INPUT = obj({"name": SAVED_NAME}, required=ALL)
DESCRIBE_OUTPUT = obj(
    {
        "name": {"type": "string"},
        "title": {"type": "string"},
        "description": {"type": "string"},
        "parameters": {"type": "object"},
        "sql": {"type": "string"},
        "views": {"type": "array", "items": {"type": "string"}},
    },
    required=ALL,
)


@operation(
    "describe_saved_query", PROFILES, SCOPE_READ, READ_ONLY, NAME_INPUT, DESCRIBE_OUTPUT, primary_reads=True
)
def _describe_saved_query(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Show one saved query: what it answers, the schema of its parameters, and its SQL (a starting point for
    a query of your own). Returns no data.
    """
    saved = saved_query_get(args["name"])
    checked = guard.query_check(saved.sql)
    return {**saved.summary(), "sql": saved.sql, "views": list(checked.views)}


RUN_INPUT = obj(
    {
        "name": SAVED_NAME,
        "params": {
            "type": "object",
            "description": "The saved query's parameters by name (describe_saved_query gives their schema).",
        },
        "limit": LIMIT,
    },
    required=["name"],
)


@operation("run_saved_query", PROFILES, SCOPE_READ, READ_ONLY, RUN_INPUT, QUERY_RESULT, primary_reads=True)
def _run_saved_query(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Run a saved query (examples.*, see list_saved_queries) with its parameters by name, over the current
    space, and get QueryResult/v1 rows with caps, drops and the snapshot time.
    """
    saved = saved_query_get(args["name"])
    validated = validate_arguments(saved.input_schema, args.get("params", {}))
    checked = guard.query_check(saved.sql)
    return _run(caller, checked, saved.positional(validated), args.get("limit"), saved.name)
