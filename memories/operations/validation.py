"""Strict argument validation for operations, against their JSON Schemas.

Rules beyond JSON Schema's defaults, because agents send sloppy JSON:
- `true`/`false` are never integers or numbers (Python's bool is an int);
- strings are trimmed before length checks (and stored trimmed);
- unknown keys are rejected (`additionalProperties: false` on every schema);
- `uuid` and `date-time` formats are enforced (a date-time needs an offset);
- nothing is coerced: "5" is not 5.
"""

from __future__ import annotations

import copy
import uuid
from datetime import datetime
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema import ValidationError as SchemaError
from jsonschema.validators import extend

from memories.errors import AppError

_format_checker = FormatChecker(formats=())


@_format_checker.checks("uuid", raises=ValueError)
def _is_uuid(value: object) -> bool:
    if not isinstance(value, str):
        return True
    uuid.UUID(value)
    return True


@_format_checker.checks("date-time", raises=ValueError)
def _is_datetime(value: object) -> bool:
    if not isinstance(value, str):
        return True
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError("a date-time needs a timezone offset, e.g. 2024-05-08T14:00:00+02:00")
    return True


def _is_integer(checker: Any, instance: object) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker: Any, instance: object) -> bool:
    return isinstance(instance, (int, float)) and not isinstance(instance, bool)


_type_checker = Draft202012Validator.TYPE_CHECKER.redefine_many(
    {"integer": _is_integer, "number": _is_number}
)
StrictValidator = extend(Draft202012Validator, type_checker=_type_checker)


def bad_character(value: Any) -> str | None:
    """The path of the first string (or key) holding a NUL or a lone surrogate, else None.

    PostgreSQL cannot store NUL in text and UTF-8 cannot encode a lone surrogate:
    both would fail deep in the database as an internal error, so they are
    refused here as the caller's mistake, before anything is stored.
    """
    if isinstance(value, str):
        if "\x00" in value or any("\ud800" <= ch <= "\udfff" for ch in value):
            return "(value)"
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            if bad_character(item) is not None:
                return str(index)
    if isinstance(value, dict):
        for key, item in value.items():
            if bad_character(key) is not None or bad_character(item) is not None:
                return str(key)[:100] if bad_character(key) is None else "(key)"
    return None


def _trim(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return [_trim(item) for item in value]
    if isinstance(value, dict):
        return {key: _trim(item) for key, item in value.items()}
    return value


def _field(error: SchemaError) -> str:
    path = ".".join(str(part) for part in error.absolute_path)
    return path or "(arguments)"


def _as_app_error(error: SchemaError) -> AppError:
    field = _field(error)
    validator = error.validator
    if validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        names = ", ".join(extra)
        return AppError(
            "unknown_field",
            f"Unknown field(s): {names}.",
            details={"fields": extra},
            agent_action="remove the unknown fields; see the operation's input schema",
        )
    if validator == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else ""
        return AppError(
            "missing_field",
            f"The field {missing!r} is required.",
            details={"field": missing},
            agent_action=f"send {missing}",
        )
    if validator == "type":
        expected = error.validator_value
        return AppError(
            "wrong_type",
            f"{field} must be of type {expected}.",
            details={"field": field, "expected": expected},
            agent_action=f"send {field} as {expected}",
        )
    if validator == "maxLength":
        return AppError(
            "value_too_long",
            f"{field} is longer than {error.validator_value} characters.",
            details={"field": field, "max_length": error.validator_value},
            agent_action=f"shorten {field} (or split it into several saves)",
        )
    if validator == "minLength":
        return AppError(
            "value_too_short",
            f"{field} must have at least {error.validator_value} character(s) after trimming.",
            details={"field": field, "min_length": error.validator_value},
            agent_action=f"send a non-empty {field}",
        )
    if validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "maxItems", "minItems"):
        return AppError(
            "value_out_of_range",
            f"{field}: {error.message}.",
            details={"field": field},
            agent_action=f"send {field} within its limits",
        )
    if validator == "uniqueItems":
        return AppError("duplicate_items", f"{field} has duplicate values.", details={"field": field})
    if validator == "format":
        return AppError(
            "invalid_format",
            f"{field} is not a valid {error.validator_value}.",
            details={"field": field, "format": error.validator_value},
            agent_action=f"send {field} as {error.validator_value}",
        )
    if validator == "enum":
        allowed = list(error.validator_value)
        return AppError(
            "invalid_value",
            f"{field} must be one of: {', '.join(map(str, allowed))}.",
            details={"field": field, "allowed": allowed},
        )
    return AppError("invalid_arguments", f"{field} is not valid.", details={"field": field})


def _apply_defaults(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    for name, spec in schema.get("properties", {}).items():
        if name not in arguments and "default" in spec:
            arguments[name] = copy.deepcopy(spec["default"])
    return arguments


def validate_arguments(schema: dict[str, Any], arguments: object) -> dict[str, Any]:
    """Trimmed, validated arguments with schema defaults filled in, or an AppError."""
    if not isinstance(arguments, dict):
        raise AppError("invalid_arguments", "The arguments must be a JSON object.")
    bad = bad_character(arguments)
    if bad is not None:
        raise AppError(
            "invalid_characters",
            f"{bad} contains a NUL character or an unpaired surrogate, which cannot be stored.",
            details={"field": bad},
            agent_action="remove control characters and send valid Unicode text",
        )
    trimmed = _trim(arguments)
    validator = StrictValidator(schema, format_checker=_format_checker)
    # The most useful error first: unknown fields, then missing, then per-field problems.
    order = {"additionalProperties": 0, "required": 1, "type": 2}
    found = sorted(
        validator.iter_errors(trimmed),
        key=lambda e: (order.get(str(e.validator), 3), list(map(str, e.absolute_path))),
    )
    if found:
        raise _as_app_error(found[0])
    return _apply_defaults(schema, trimmed)


def check_schema(schema: dict[str, Any]) -> None:
    """Fail at import time on a malformed schema or one that admits unknown keys."""
    StrictValidator.check_schema(schema)
    if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
        raise ValueError("operation input schemas must be objects with additionalProperties: false")
