"""The one registry of operations. MCP tools, REST and the CLI all render it.

An operation is defined once: name, description, input and output JSON Schema,
the scope it needs, and its handler. `run()` is the only way to execute one:
validate strictly, check the scope, call the handler.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from accounts.authentication import require_scope
from accounts.caller import Caller
from memories.errors import AppError
from memories.operations.validation import check_schema, validate_arguments

Handler = Callable[[Caller, dict[str, Any]], dict[str, Any]]


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

    def describe(self) -> dict[str, Any]:
        """The public description (REST GET /api/v1/operations, MCP tools/list)."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "scope": self.scope,
            "profiles": list(self.profiles),
            "annotations": self.annotations,
        }


_REGISTRY: dict[str, Operation] = {}


def register(operation: Operation) -> Operation:
    if operation.name in _REGISTRY:
        raise ValueError(f"operation {operation.name!r} is registered twice")
    check_schema(operation.input_schema)
    _REGISTRY[operation.name] = operation
    return operation


def operations(profile: str | None = None) -> list[Operation]:
    """Registered operations in a stable order (registration order)."""
    _load()
    return [op for op in _REGISTRY.values() if profile is None or profile in op.profiles]


def get_operation(name: str) -> Operation:
    _load()
    operation = _REGISTRY.get(name)
    if operation is None:
        raise AppError(
            "unknown_operation",
            f"There is no operation named {name!r}.",
            http_status=404,
            agent_action="list the operations and use one of their names",
        )
    return operation


def run(name: str, caller: Caller, arguments: object) -> dict[str, Any]:
    """Validate, authorise and execute one operation for `caller`."""
    operation = get_operation(name)
    require_scope(caller, operation.scope)
    validated = validate_arguments(operation.input_schema, arguments)
    return operation.handler(caller, validated)


def _load() -> None:
    # Operation modules register themselves on import; import them lazily so
    # that importing the registry never pulls in Django models too early.
    # Import order is tools/list order: reads first, as agents use them most.
    from memories.operations import recall_ops  # noqa: F401, I001
    from memories.operations import definitions  # noqa: F401
