"""JSON Schema pieces that several operations' input and output schemas share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memories.limits import ENTITY_NAME_MAX_LENGTH
from memories.models import Entity
from memories.representations import MEMORY_CLOCKS

# `obj(..., required=ALL)`: every property is required (most outputs always carry every field).
ALL = ("*",)


def obj(
    properties: dict[str, Any],
    *,
    required: Sequence[str] | str = (),
    closed: bool = True,
    nullable: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """An object schema with these properties; `required` ones (names, or one space-separated
    string of them; ALL: every one); `closed`: no other
    keys allowed (every input schema is closed, so unknown fields are refused rather than ignored);
    `nullable`: null is allowed too."""
    schema: dict[str, Any] = {"type": ["object", "null"] if nullable else "object"}
    if closed:
        schema["additionalProperties"] = False
    if required:
        names = required.split() if isinstance(required, str) else required
        schema["required"] = list(properties) if names == ALL else list(names)
    schema["properties"] = properties
    return {**schema, **extra}


UUID: dict[str, Any] = {"type": "string", "format": "uuid"}
# A datetime (ISO 8601 with offset) or null, in output schemas.
NULLABLE_TIME: dict[str, Any] = {"type": ["string", "null"]}


# The entities a saver names (REST save, graph `remember`): linked in addition to the extracted ones.
SAVE_ENTITIES_MAX = 50


SAVE_ENTITIES: dict[str, Any] = {
    "type": "array",
    "maxItems": SAVE_ENTITIES_MAX,
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "type"],
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": ENTITY_NAME_MAX_LENGTH},
            "type": {"type": "string", "enum": list(Entity.Type.values)},
        },
    },
}


def clocks_schema(names: tuple[str, ...] = MEMORY_CLOCKS) -> dict[str, Any]:
    """The output schema of a `clocks` object: each named clock a datetime (or id) or null."""
    return {"type": "object", "properties": {name: NULLABLE_TIME for name in names}}


# The error object every failure carries (memories.errors.AppError.as_dict).
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string"},
        "message": {"type": "string"},
        "retryable": {"type": "boolean"},
        "agent_action": {"type": "string"},
        # The HTTP status REST would answer (on profiles whose contract asks for it).
        "http_status": {"type": "integer"},
        # The same, as the evidence contract's remote read tools report a failure.
        "error": {
            "type": "object",
            "properties": {
                "status_code": {"type": "integer"},
                "detail": {"type": "string"},
                "code": {"type": "string"},
            },
        },
        "request_id": {"type": "string"},
        "details": {"type": "object"},
    },
    "required": ["code", "message", "retryable", "agent_action"],
}


def result_or_error(output_schema: dict[str, Any]) -> dict[str, Any]:
    """An MCP tool's output schema: its result, or the error object of an `isError` result.

    The MCP TypeScript SDK (1.x, typescript-sdk#1943) validates `structuredContent` against the
    output schema even on `isError` results and throws, so an agent built on it would see a
    schema complaint instead of our error and its `agent_action`. Declaring both keeps every
    client's view of a failure the one error shape.
    """
    return {"type": "object", "anyOf": [output_schema, ERROR_SCHEMA]}
