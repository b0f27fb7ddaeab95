"""The one registry of operations. MCP tools, REST and the CLI all render it.

An operation is defined once: name, description, input and output JSON Schema,
the scope it needs, and its handler. `run()` is the only way to execute one:
validate strictly, check the scope, call the handler.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from accounts.authentication import require_scope
from accounts.caller import ALL_SCOPES, SCOPE_READ, Caller
from config import replicas
from memories.errors import AppError, Code
from memories.operations.schemas import portable, result_or_error
from memories.operations.validation import check_schema, validate_arguments

Handler = Callable[[Caller, dict[str, Any]], dict[str, Any]]
# An operation's own name for a refusal of its arguments, when a contract gives one (the evidence
# contract's `ingest`: a blank body is `empty_body`, not `value_too_short`).
ErrorNamer = Callable[[AppError], AppError]
ResourceReader = Callable[[Caller], dict[str, Any]]


@dataclass(frozen=True)
class Profile:
    """A set of tools offered at one MCP URL; the dashboard's Connect page lists them."""

    name: str
    path: str
    title: str
    description: str
    # The registry names of the tools this URL offers, in its tools/list order, when a contract
    # fixes both (a closed namespace); empty: every operation naming the profile, in
    # registration order.
    tools: tuple[str, ...] = ()
    # The evidence contract: every error object also says its `http_status` (and the same below an
    # `error` key). A tool this URL does not offer is an `isError` result on every profile.
    errors_as_results: bool = False
    # The evidence contract's transport lists these apart from GET /operations: the write tools
    # (GET /api/v1/ingest) and the open-query tools (GET /api/v1/query/space).
    write_tools: tuple[str, ...] = ()
    open_query_tools: tuple[str, ...] = ()
    # What an agent is told at `initialize` on this URL (and by the stdio proxy serving it): only
    # this URL's tools, in backticks, and its contract's workflow.
    instructions: str = ""

    def describe(self) -> dict[str, Any]:
        """The profile as `GET /api/v1/operations` lists it: its URL, its tools in tools/list order,
        its resources and its instructions."""
        return {
            "name": self.name,
            "path": self.path,
            "title": self.title,
            "description": self.description,
            "tools": [op.tool_name for op in operations(self.name)],
            "resources": [resource.uri for resource in resources(self.name)],
            "instructions": self.instructions,
        }


# contracts/evidence-mcp.txt: write tools, then the assured operations, then the open query.
EVIDENCE_WRITE_TOOLS: tuple[str, ...] = ("ingest", "pipeline_readiness")
EVIDENCE_OPERATIONS: tuple[str, ...] = (
    "resolve_entity",
    "claims_and_sources_context",
    "facts_context",
    "combined_context",
)
# The open-query facade (memories/operations/open_query.py); the contract leaves their names to us.
EVIDENCE_OPEN_QUERY: tuple[str, ...] = (
    "query_space",
    "describe_view",
    "validate_query",
    "query",
    "list_saved_queries",
    "describe_saved_query",
    "run_saved_query",
)
EVIDENCE_TOOLS: tuple[str, ...] = (*EVIDENCE_WRITE_TOOLS, *EVIDENCE_OPERATIONS, *EVIDENCE_OPEN_QUERY)

CORE_INSTRUCTIONS = (
    "Deep Recall is the user's long-term memory. Call `recall` before answering questions about the "
    "user, their people, plans and past (`answer` gives a short cited answer instead); call `remember` "
    "for durable facts, preferences, plans and events worth keeping (not chit-chat, never secrets "
    "unless asked); `forget` hides a memory the user wants gone, and with hard=true deletes it, only "
    "when the user explicitly asks for permanent deletion."
)

# Order is the Connect page's order. Each is its own MCP URL (and OAuth resource).
PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "core",
            "/mcp",
            "Core memory",
            "recall, answer, remember, forget: what most assistants need.",
            instructions=CORE_INSTRUCTIONS,
        ),
        Profile(
            "graph",
            "/mcp/graph",
            "Memory graph",
            "The context-graph contract's seven tools (remember with a category and entities, recall, "
            "get_context, list_entities, invalidate, relate, switch_agent) and graph:// resources, for "
            "agents that keep a context graph.",
            # The contract's closed namespace, in its order (memories.operations.graph).
            tools=(
                "graph_remember",
                "graph_recall",
                "get_context",
                "list_entities",
                "invalidate",
                "relate",
                "switch_agent",
            ),
            # The contract's system prompt and typical workflow, in our words.
            instructions=(
                "Deep Recall is the user's persistent context graph. ALWAYS `recall` before answering "
                "fact-based questions. ALWAYS `remember` decisions, preferences and key facts the user "
                "mentions, with a category and the entities they are about (confidence 1.0 for what the "
                "user said, 0.5-0.8 for inferences); `relate` entities to build the graph (Client -> "
                "wants -> premium support). `get_context` gives everything about one entity, and "
                "`list_entities` finds the names. To correct stale information, `invalidate` the old "
                "memory and the relations it no longer holds for (by their ids), then `remember` and "
                "`relate` the new. `switch_agent` changes the graph (a space) this connection uses, only "
                "when the user asks."
            ),
        ),
        Profile(
            "evidence",
            "/mcp/evidence",
            "Evidence",
            "Facts versus claims: what the service holds true (then or now) and which sources assert "
            "or contradict it, for agents that must say why they believe something; ingest with "
            "pipeline readiness, and a read-only SQL query surface over the space.",
            # The evidence contract's closed namespace, in its order: the write tools, the four
            # assured operations, then the open-query tools.
            tools=EVIDENCE_TOOLS,
            errors_as_results=True,
            write_tools=EVIDENCE_WRITE_TOOLS,
            open_query_tools=EVIDENCE_OPEN_QUERY,
            # The contract's agent poll algorithm, then its assured operations and the open query.
            instructions=(
                "Deep Recall keeps claims (what sources asserted, by whom, when) apart from facts (what "
                "it holds true now or held then, with evidence and contradiction counts). To add a "
                "document: `ingest` it, then poll `pipeline_readiness` with the poll_with it returns "
                "until ready is true (wait as it says; stop and report a failed or dead_letter stage; "
                "escalate after 20-30 minutes). Then use the assured operations: `combined_context` for "
                "both layers, `facts_context` for what holds (or held: at), `claims_and_sources_context` "
                "for who asserted what, `resolve_entity` to find which entity a name means. Cite the "
                "evidence and contradiction counts; when a result carries a negative, say what it means "
                "instead of guessing. For a question they do not cover, `query_space`, then "
                "`run_saved_query` (examples.*, see `list_saved_queries`) or a read-only `query`; its "
                "rows are exploratory, not an assured result."
            ),
        ),
        Profile(
            "ingest",
            "/mcp/ingest",
            "Ingest",
            "Bulk and document ingestion with versioning, and pipeline readiness, for importers and "
            "sync jobs.",
            instructions=(
                CORE_INSTRUCTIONS
                + " For whole documents, `ingest` (name a re-sent document with source_kind + "
                "source_ref), then poll `pipeline_readiness` as its poll_after_ms says until stop_polling "
                "before you `recall` what it says; report a failed stage instead of retrying blindly."
            ),
        ),
    )
}


@dataclass(frozen=True)
class Operation:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    scope: str
    handler: Handler
    # Which MCP endpoints offer it ("core" is the default /mcp).
    profiles: tuple[str, ...] = ("core",)
    annotations: dict[str, Any] = field(default_factory=dict)
    # The MCP tool name, when a contract gives this operation a name another operation also
    # has on another URL (the graph profile's `remember` is not the core `remember`); the
    # registry name stays unique, for REST and the CLI.
    tool: str = ""
    name_error: ErrorNamer | None = None
    # Read-only, yet read on the primary (config/replicas.py): it shows a caller their own recent
    # writes (a job's progress), or runs the open query, whose scope lives on the primary's session.
    primary_reads: bool = False

    @property
    def tool_name(self) -> str:
        return self.tool or self.name

    def describe(self) -> dict[str, Any]:
        """The public description (REST GET /api/v1/operations, MCP tools/list)."""
        return {
            "name": self.name,
            "tool": self.tool_name,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            # What MCP clients are shown: the result, or the error object of an isError result.
            "mcp_output_schema": result_or_error(self.output_schema),
            "scope": self.scope,
            "profiles": list(self.profiles),
            "annotations": self.annotations,
        }


# The core tools are on every endpoint whose tools no contract fixes, so one URL is all an agent
# needs; a profile with its own closed namespace (Profile.tools) offers exactly its contract's.
EVERY_PROFILE: tuple[str, ...] = tuple(name for name, profile in PROFILES.items() if not profile.tools)

# MCP tool annotations (hints to clients: what a call may change).
READ_ONLY: dict[str, Any] = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}
WRITES: dict[str, Any] = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}
WRITES_IDEMPOTENT: dict[str, Any] = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}
DELETES: dict[str, Any] = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}


def operation(
    name: str,
    profiles: tuple[str, ...],
    scope: str,
    annotations: dict[str, Any],
    input_schema: dict[str, Any],
    output_schema: dict[str, Any],
    tool: str = "",
    name_error: ErrorNamer | None = None,
    primary_reads: bool = False,
    **doc_values: object,
) -> Callable[[Handler], Handler]:
    """Register the decorated handler as the operation `name` (offered to MCP as `tool`, when
    given); its docstring is the description agents read (whitespace folded; `{placeholders}`
    filled from `doc_values`); `name_error` renames refusals of its arguments its contract names."""

    def register_handler(handler: Handler) -> Handler:
        description = " ".join(inspect.cleandoc(handler.__doc__ or "").split())
        described = description.format(**doc_values) if doc_values else description
        schemas = (input_schema, output_schema)
        register(
            Operation(
                name, described, *schemas, scope, handler, profiles, annotations,
                tool=tool, name_error=name_error, primary_reads=primary_reads,
            )
        )  # fmt: skip
        return handler

    return register_handler


@dataclass(frozen=True)
class ResourceDef:
    """A read-only MCP resource of the caller's space (JSON), offered by some profiles."""

    uri: str
    name: str
    description: str
    reader: ResourceReader
    profiles: tuple[str, ...] = ("graph",)
    scope: str = SCOPE_READ
    mime_type: str = "application/json"


_REGISTRY: dict[str, Operation] = {}
_RESOURCES: dict[str, ResourceDef] = {}


def register(operation: Operation) -> Operation:
    # Every schema a client is shown, and the validator uses, in the form strict clients accept.
    operation = replace(
        operation,
        input_schema=portable(operation.input_schema),
        output_schema=portable(operation.output_schema),
    )
    if operation.name in _REGISTRY:
        raise ValueError(f"operation {operation.name!r} is registered twice")
    unknown = set(operation.profiles) - set(PROFILES)
    if unknown:
        raise ValueError(f"operation {operation.name!r} names unknown profiles {sorted(unknown)}")
    _check_scope(f"operation {operation.name!r}", operation.scope)
    check_schema(operation.input_schema)
    for profile in operation.profiles:
        if any(op.tool_name == operation.tool_name for op in operations(profile)):
            raise ValueError(f"profile {profile!r} offers two tools named {operation.tool_name!r}")
    _REGISTRY[operation.name] = operation
    return operation


def _check_scope(what: str, scope: str) -> None:
    # A scope no credential can hold would make the operation unusable; a typo of a real
    # one must not be discovered by a user's 403.
    if scope not in ALL_SCOPES:
        raise ValueError(f"{what} needs the unknown scope {scope!r}; use one of {sorted(ALL_SCOPES)}")


def operations(profile: str | None = None) -> list[Operation]:
    """Registered operations in a stable order: a profile's own order when it fixes one
    (Profile.tools), else registration order."""
    offered = [op for op in _REGISTRY.values() if profile is None or profile in op.profiles]
    order = PROFILES[profile].tools if profile is not None else ()
    if not order:
        return offered
    rank = {name: index for index, name in enumerate(order)}
    return sorted(offered, key=lambda op: rank.get(op.name, len(rank)))


def profile_problems() -> list[str]:
    """Where a profile that fixes its tools and the operations that name it disagree (manage.py
    check refuses to serve them)."""
    problems = []
    for profile in PROFILES.values():
        if not profile.tools:
            continue
        offered = {op.name for op in operations(profile.name)}
        if missing := [name for name in profile.tools if name not in offered]:
            problems.append(f"profile {profile.name!r} lists tools no operation offers it: {missing}")
        if extra := sorted(offered - set(profile.tools)):
            problems.append(f"profile {profile.name!r} is offered operations it does not list: {extra}")
    return problems


def assured_operations(profile: str) -> list[Operation]:
    """A profile's operations without the ones its contract lists on their own routes (write and
    open-query tools): what `GET /api/v1/operations?profile=` answers."""
    own = {*PROFILES[profile].write_tools, *PROFILES[profile].open_query_tools}
    return [op for op in operations(profile) if op.name not in own]


def operation_for_tool(tool: str, profile: str) -> Operation | None:
    """The operation behind the MCP tool `tool` of `profile`, or None when it offers none."""
    return next((op for op in operations(profile) if op.tool_name == tool), None)


def get_operation(name: str) -> Operation:
    operation = _REGISTRY.get(name)
    if operation is None:
        raise AppError(
            Code.UNKNOWN_OPERATION,
            f"There is no operation named {name!r}.",
            agent_action="list the operations and use one of their names",
        )
    return operation


def register_resource(resource: ResourceDef) -> ResourceDef:
    if resource.uri in _RESOURCES:
        raise ValueError(f"resource {resource.uri!r} is registered twice")
    _check_scope(f"resource {resource.uri!r}", resource.scope)
    _RESOURCES[resource.uri] = resource
    return resource


def resources(profile: str | None = None) -> list[ResourceDef]:
    """Registered resources in a stable order (registration order)."""
    return [r for r in _RESOURCES.values() if profile is None or profile in r.profiles]


def read_resource(uri: str, caller: Caller, profile: str | None = None) -> dict[str, object]:
    """Read one resource for `caller` (its scope is checked here too)."""
    resource = next((r for r in resources(profile) if r.uri == uri), None)
    if resource is None:
        raise AppError(
            Code.UNKNOWN_RESOURCE,
            "There is no resource with this URI here.",
            agent_action="list the resources and use one of their URIs",
        )
    require_scope(caller, resource.scope)
    return resource.reader(caller)


def run(name: str, caller: Caller, arguments: object) -> dict[str, Any]:
    """Validate, authorise and execute one operation for `caller`."""
    operation = get_operation(name)
    require_scope(caller, operation.scope)
    try:
        validated = validate_arguments(operation.input_schema, arguments)
    except AppError as refused:
        if operation.name_error is None:
            raise
        raise operation.name_error(refused) from None
    if operation.annotations.get("readOnlyHint") and not operation.primary_reads:
        return replicas.replica_reads(caller.user.pk, lambda: operation.handler(caller, validated))
    result = operation.handler(caller, validated)
    # A write, or a read on the primary that showed the caller their own writes: their next reads
    # see at least this much (no-op without replicas).
    replicas.writes_seen(caller.user.pk)
    return result
