"""JSON Schema pieces that several operations' input and output schemas share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memories.limits import ENTITY_NAME_MAX_LENGTH
from memories.models import Entity
from memories.wire import MEMORY_CLOCKS

# `obj(..., required=ALL)`: every property is required (most outputs always carry every field).
ALL = ("*",)


def obj(
    properties: dict[str, Any],
    *,
    required: Sequence[str] | str = (),
    closed: bool = True,
    nullable: bool = False,
    **extra: object,
) -> dict[str, object]:
    """An object schema with these properties; `required` ones (names, or one space-separated
    string of them; ALL: every one); `closed`: no other
    keys allowed (every input schema is closed, so unknown fields are refused rather than ignored);
    `nullable`: null is allowed too."""
    schema: dict[str, object] = {"type": ["object", "null"] if nullable else "object"}
    if closed:
        schema["additionalProperties"] = False
    if required:
        names = required.split() if isinstance(required, str) else required
        schema["required"] = list(properties) if names == ALL else list(names)
    schema["properties"] = properties
    return {**schema, **extra}


UUID: dict[str, object] = {"type": "string", "format": "uuid"}
# A space, and a source named (memories.wire.space_ref, source_ref), in output schemas.
SPACE_REF: dict[str, object] = obj({"id": UUID, "name": {"type": "string"}}, required=ALL)
SOURCE_REF: dict[str, object] = obj(
    {
        "id": UUID,
        "origin": {"type": "string", "description": "remember, document, relate, image, api ..."},
        "title": {"type": ["string", "null"]},
        "document": obj(
            {"kind": {"type": "string"}, "ref": {"type": "string"}, "version": {"type": "integer"}},
            required=ALL,
            nullable=True,
            description="A document's home (source_kind), its id there (source_ref) and version number.",
        ),
    },
    required=ALL,
    nullable=True,
    description="Which source it came from (null: none is known).",
)
# A datetime (ISO 8601 with offset) or null, in output schemas.
NULLABLE_TIME: dict[str, object] = {"type": ["string", "null"]}


# The entities a saver names (REST save, graph `remember`): linked in addition to the extracted ones.
SAVE_ENTITIES_MAX = 50


SAVE_ENTITIES: dict[str, object] = {
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


def clocks_schema(names: tuple[str, ...] = MEMORY_CLOCKS) -> dict[str, object]:
    """The output schema of a `clocks` object: each named clock a datetime (or id) or null."""
    return {"type": "object", "properties": {name: NULLABLE_TIME for name in names}}


# The error object every failure carries (memories.errors.AppError.as_dict).
ERROR_SCHEMA: dict[str, object] = {
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


# Keywords whose value is a subschema, a list of them, or a map of names to them: where `portable`
# looks for more. (`enum`, `default` and the like hold data, never schemas.)
_SUBSCHEMA = ("items", "additionalProperties", "not", "contains")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "$defs", "patternProperties")
# What describes a value rather than constrains it: stays on the outer schema.
_ANNOTATIONS = ("description", "title", "default", "examples", "$comment", "deprecated")


def portable(schema: object) -> Any:
    """`schema` with every type union (`"type": ["string", "null"]`) spelled as `anyOf` of one-type
    branches, the form strict clients accept (the MCP Inspector's `--strict` lint, single-`type`
    dialects such as Gemini's function declarations). It validates exactly the same values: the
    keywords that constrain move into the branch of their type (they apply to no other type), an
    `enum` or `const` keeps its values of that type there, and the null branch takes null."""
    if isinstance(schema, list):
        return [portable(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    spelled: dict[str, object] = {}
    for key, value in schema.items():
        if key in _SUBSCHEMA or key in _SUBSCHEMA_LISTS:
            spelled[key] = portable(value)
        elif key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            spelled[key] = {name: portable(sub) for name, sub in value.items()}
        else:
            spelled[key] = value
    types = spelled.get("type")
    if not isinstance(types, list):
        return spelled
    outer = {key: value for key, value in spelled.items() if key in _ANNOTATIONS}
    inner = {key: value for key, value in spelled.items() if key not in _ANNOTATIONS and key != "type"}
    branches = []
    for type_ in types:
        if type_ == "null":
            branches.append({"type": "null"})
            continue
        branch = {"type": type_, **inner}
        if "enum" in branch:
            branch["enum"] = [value for value in branch["enum"] if value is not None]
        if "const" in branch and branch["const"] is None:
            continue  # only null matches it: the null branch
        branches.append(branch)
    return {**outer, "anyOf": branches}


def result_or_error(output_schema: dict[str, Any]) -> dict[str, object]:
    """An MCP tool's output schema: its result, or the error object of an `isError` result.

    The MCP TypeScript SDK (1.x, typescript-sdk#1943) validates `structuredContent` against the
    output schema even on `isError` results and throws, so an agent built on it would see a
    schema complaint instead of our error and its `agent_action`. Declaring both keeps every
    client's view of a failure the one error shape.
    """
    return {"type": "object", "anyOf": [output_schema, ERROR_SCHEMA]}
