"""Strict argument validation for operations, against their JSON Schemas.

Rules beyond JSON Schema's defaults, because agents send sloppy JSON:
- `true`/`false` are never integers or numbers (Python's bool is an int);
- strings are trimmed before length checks (and stored trimmed);
- unknown keys are rejected (`additionalProperties: false` on every schema);
- `uuid` and `date-time` formats are enforced strictly (memories.parsing: the canonical
  8-4-4-4-12 form; RFC 3339 with an offset);
- nothing is coerced: "5" is not 5.

What comes back is typed: every string validated as `uuid` is a `uuid.UUID` and every
`date-time` an aware `datetime` (inside arrays and objects too), so no handler parses a
string the validator has already read. Two spellings of one value (an id in upper and lower
case, one instant at two offsets) are the same value, so `uniqueItems` is checked again on
the typed values.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema import ValidationError as SchemaError
from jsonschema.validators import extend

from memories.errors import AppError, Code
from memories.parsing import DATE_TIME_EXPECTED, UUID_EXPECTED, parse_datetime, parse_uuid

# What a string of each format becomes once validated, and how a caller is told to write it.
PARSERS: dict[str, Callable[[str], Any]] = {"uuid": parse_uuid, "date-time": parse_datetime}
_EXPECTED = {"uuid": UUID_EXPECTED, "date-time": DATE_TIME_EXPECTED}

_format_checker = FormatChecker(formats=())


def _checks(parse: Callable[[str], Any]) -> Callable[[object], bool]:
    def check(value: object) -> bool:
        # A non-string is the type check's to report, not the format's.
        if isinstance(value, str):
            parse(value)
        return True

    return check


for _format, _parse in PARSERS.items():
    _format_checker.checks(_format, raises=ValueError)(_checks(_parse))


def _is_integer(checker: object, instance: object) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker: object, instance: object) -> bool:
    return isinstance(instance, (int, float)) and not isinstance(instance, bool)


_type_checker = Draft202012Validator.TYPE_CHECKER.redefine_many(
    {"integer": _is_integer, "number": _is_number}
)
StrictValidator = extend(Draft202012Validator, type_checker=_type_checker)


def bad_character(value: object) -> str | None:
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


def _trim(value: object) -> Any:
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


_RANGE_VALIDATORS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "maxItems", "minItems")


def _one_type_branches(error: SchemaError) -> SchemaError:
    """An `anyOf` of one-type branches (how `schemas.portable` spells a type union) refused as the
    union would be: a type error naming the types when the value has none of them, else the
    refusal of the branch of its type."""
    branches = error.validator_value
    if error.validator != "anyOf" or not all(
        isinstance(branch, dict) and isinstance(branch.get("type"), str) for branch in branches
    ):
        return error
    types = [branch["type"] for branch in branches]
    matching = [index for index, type_ in enumerate(types) if _type_checker.is_type(error.instance, type_)]
    if not matching:
        return SchemaError(
            f"{error.instance!r} is not of type {types}",
            validator="type",
            validator_value=types,
            instance=error.instance,
            schema=error.schema,
            path=error.absolute_path,
        )
    own = [sub for sub in error.context or () if sub.relative_schema_path[0] in matching]
    return _one_type_branches(min(own, key=lambda sub: list(map(str, sub.relative_path)))) if own else error


def _as_app_error(error: SchemaError) -> AppError:
    error = _one_type_branches(error)
    field = _field(error)
    validator = "range" if error.validator in _RANGE_VALIDATORS else str(error.validator)
    limit = error.validator_value
    if validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return AppError(
            Code.UNKNOWN_FIELD, f"Unknown field(s): {', '.join(extra)}.", details={"fields": extra}
        )
    if validator == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else ""
        message = f"The field {missing!r} is required."
        return AppError(
            Code.MISSING_FIELD, message, details={"field": missing}, agent_action=f"send {missing}"
        )
    if validator == "uniqueItems":
        return _duplicates(field)
    expected = _EXPECTED.get(str(limit), str(limit))
    allowed = list(limit) if validator == "enum" else []
    # validator: (code, message, more details, what to do)
    described: dict[str, tuple[Code, str, dict[str, Any], str]] = {
        "type": (
            Code.WRONG_TYPE,
            f"{field} must be of type {limit}.",
            {"expected": limit},
            f"send {field} as {limit}",
        ),
        "maxLength": (
            Code.VALUE_TOO_LONG,
            f"{field} is longer than {limit} characters.",
            {"max_length": limit},
            f"shorten {field} (or split it into several saves)",
        ),
        "minLength": (
            Code.VALUE_TOO_SHORT,
            f"{field} must have at least {limit} character(s) after trimming.",
            {"min_length": limit},
            f"send a non-empty {field}",
        ),
        "range": (
            Code.VALUE_OUT_OF_RANGE,
            f"{field}: {error.message}.",
            {},
            f"send {field} within its limits",
        ),
        "format": (
            Code.INVALID_FORMAT,
            f"{field} is not a valid {limit}: expected {expected}.",
            {"format": limit},
            f"send {field} as {expected}",
        ),
        "multipleOf": (
            Code.INVALID_VALUE,
            f"{field} must be a whole number." if limit == 1 else f"{field} must be a multiple of {limit}.",
            {"multiple_of": limit},
            f"send {field} as a whole number" if limit == 1 else f"send {field} as a multiple of {limit}",
        ),
        "enum": (
            Code.INVALID_VALUE,
            f"{field} must be one of: {', '.join(map(str, allowed))}.",
            {"allowed": allowed},
            "send one of details.allowed",
        ),
    }
    code, message, details, action = described.get(
        validator, (Code.INVALID_ARGUMENTS, f"{field} is not valid.", {}, "")
    )
    return AppError(code, message, details={"field": field, **details}, agent_action=action)


def _apply_defaults(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, object]:
    for name, spec in schema.get("properties", {}).items():
        if name not in arguments and "default" in spec:
            arguments[name] = copy.deepcopy(spec["default"])
    return arguments


def _duplicates(path: str) -> AppError:
    return AppError(Code.DUPLICATE_ITEMS, f"{path} has duplicate values.", details={"field": path})


def _typed(schema: dict[str, Any], value: object, path: str) -> Any:
    """`value` (already valid against `schema`) with its uuid and date-time strings parsed."""
    if isinstance(value, str):
        parse = PARSERS.get(schema.get("format", ""))
        return parse(value) if parse is not None else value
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        return {
            key: _typed(properties.get(key, {}), item, f"{path}.{key}" if path else key)
            for key, item in value.items()
        }
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        typed = [_typed(items, item, f"{path}.{index}") for index, item in enumerate(value)]
        # The schema compared the strings; "ABC..." and "abc..." are still one id.
        if schema.get("uniqueItems") and items.get("format") in PARSERS and len(set(typed)) != len(typed):
            raise _duplicates(path)
        return typed
    return value


def validate_arguments(schema: dict[str, Any], arguments: object) -> dict[str, Any]:
    """Trimmed, validated, typed arguments with schema defaults filled in, or an AppError.

    Strings of `format: uuid` come back as `uuid.UUID`, of `format: date-time` as aware
    `datetime`; everything else as sent (trimmed).
    """
    if not isinstance(arguments, dict):
        raise AppError(Code.INVALID_ARGUMENTS, "The arguments must be a JSON object.")
    bad = bad_character(arguments)
    if bad is not None:
        raise AppError(
            Code.INVALID_CHARACTERS,
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
    typed: dict[str, object] = _typed(schema, _apply_defaults(schema, trimmed), "")
    return typed


def _typed_formats(schema: object) -> int:
    # The formats `_typed` reaches: through `properties` and `items`, nothing else.
    if not isinstance(schema, dict):
        return 0
    here = 1 if schema.get("format") in PARSERS else 0
    below = sum(_typed_formats(spec) for spec in schema.get("properties", {}).values())
    return here + below + _typed_formats(schema.get("items"))


def _all_formats(node: object) -> int:
    if isinstance(node, dict):
        here = 1 if isinstance(node.get("format"), str) and node["format"] in PARSERS else 0
        return here + sum(_all_formats(value) for value in node.values())
    if isinstance(node, list):
        return sum(_all_formats(value) for value in node)
    return 0


def check_schema(schema: dict[str, Any]) -> None:
    """Fail at import time on a malformed schema, one that admits unknown keys, or one with a
    uuid / date-time that validation would hand on untyped (under anyOf, $defs ...)."""
    StrictValidator.check_schema(schema)
    if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
        raise ValueError("operation input schemas must be objects with additionalProperties: false")
    if _all_formats(schema) != _typed_formats(schema):
        raise ValueError("uuid and date-time formats must sit under properties or items to be typed")
