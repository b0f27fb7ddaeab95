"""JSON Schema pieces that several operations' input and output schemas share."""

from __future__ import annotations

from typing import Any

UUID: dict[str, Any] = {"type": "string", "format": "uuid"}
# A datetime (ISO 8601 with offset) or null, in output schemas.
NULLABLE_TIME: dict[str, Any] = {"type": ["string", "null"]}
# A memory's two clocks as every surface shows them (see memories.api.representations).
MEMORY_CLOCKS = (
    "occurred_at",
    "valid_from",
    "valid_until",
    "due_at",
    "recorded_at",
    "superseded_at",
    "superseded_by",
)


def clocks_schema(names: tuple[str, ...] = MEMORY_CLOCKS) -> dict[str, Any]:
    """The output schema of a `clocks` object: each named clock a datetime (or id) or null."""
    return {"type": "object", "properties": {name: NULLABLE_TIME for name in names}}
