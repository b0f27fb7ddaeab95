"""The one place where text becomes a UUID, a datetime or a decoded JSON body at the edge of the service.

Two contracts of ids and times live here, side by side so they cannot drift apart:
- `parse_uuid` and `parse_datetime` are strict: the forms the MCP contracts and our JSON Schemas
  (`format: uuid`, `format: date-time`) promise, and nothing else. A lenient parser would accept
  `urn:uuid:...` or `20240508T140000+0200` from one client and refuse it from a stricter
  validator elsewhere; agents learn from what works, so what works must be the contract.
- `parse_rest_timestamp` is the REST list filters' documented, looser contract (docs/api.md):
  a date or a date-time, UTC when no offset is given, and a `+` that a URL query turned into a
  space.

And one rule of JSON bodies: `JSON_MAX_DEPTH`, checked by `json_decode` and `json_depth_checked`.

Each raises ValueError with a message safe to show a caller; the surfaces turn it into their
error shape.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

# A row's id as the service passes it around: the UUID itself, or its text as a request, a message
# or a form carried it (the ORM and Model._meta.pk.to_python take both).
RowId = uuid.UUID | str

# 8-4-4-4-12 hex digits, either case. [0-9a-fA-F], not \d or \w: those match non-ASCII digits.
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")

# RFC 3339 section 5.6 `date-time`: full-date "T" full-time, with the offset required.
_DATE_TIME = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})[Tt]"
    r"(?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})(?:\.(?P<fraction>[0-9]+))?"
    r"(?:(?P<utc>[Zz])|(?P<sign>[+-])(?P<offset_hour>[0-9]{2}):(?P<offset_minute>[0-9]{2}))"
)

# In a URL query an unencoded "+" arrives as a space: "...T10:00:00 02:00" meant "+02:00".
_SPACE_FOR_PLUS = re.compile(r" ([0-9]{2}(?::?[0-9]{2})?)$")

UUID_EXPECTED = "a UUID in its canonical form, e.g. 0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51"

DATE_TIME_EXPECTED = (
    "an RFC 3339 date-time with an offset, e.g. 2024-05-08T14:00:00+02:00 or 2024-05-08T12:00:00Z"
)


def parse_uuid(text: str) -> uuid.UUID:
    """A UUID written as 8-4-4-4-12 hex digits (either case); anything else raises ValueError."""
    if not _UUID.fullmatch(text):
        raise ValueError(f"expected {UUID_EXPECTED}")
    return uuid.UUID(text)


def parse_datetime(text: str) -> datetime:
    """An aware datetime from an RFC 3339 date-time; anything else raises ValueError.

    Fractions finer than a microsecond are truncated (Python keeps microseconds). A leap second
    (:60) cannot be represented and is refused rather than silently moved.
    """
    match = _DATE_TIME.fullmatch(text)
    if match is None:
        raise ValueError(f"expected {DATE_TIME_EXPECTED}")
    if match["utc"]:
        zone = UTC
    else:
        offset_hour, offset_minute = int(match["offset_hour"]), int(match["offset_minute"])
        if offset_hour > 23 or offset_minute > 59:
            raise ValueError(f"expected {DATE_TIME_EXPECTED}")
        offset = timedelta(hours=offset_hour, minutes=offset_minute)
        zone = timezone(-offset if match["sign"] == "-" else offset)
    fraction = (match["fraction"] or "")[:6].ljust(6, "0")
    # The constructor checks the ranges (month 13, February 30, hour 24, second 60).
    return datetime(
        int(match["year"]),
        int(match["month"]),
        int(match["day"]),
        int(match["hour"]),
        int(match["minute"]),
        int(match["second"]),
        int(fraction),
        tzinfo=zone,
    )


def parse_rest_timestamp(text: str) -> datetime:
    """An aware datetime from a REST filter: an ISO 8601 date or date-time; no offset means UTC.

    Looser than `parse_datetime` on purpose (docs/api.md): people type these into URLs.
    """
    for candidate in (text, _SPACE_FOR_PLUS.sub(r"+\1", text)):
        try:
            value = datetime.fromisoformat(candidate)
        except ValueError:
            continue
        return value if value.utcoffset() is not None else value.replace(tzinfo=UTC)
    raise ValueError("expected an ISO 8601 date or date-time, e.g. 2025-03-01 or 2025-03-01T09:30:00+01:00")


# How deep arrays and objects may nest in a JSON body (REST, OAuth client registration). No body
# this service takes nests more than four levels. Python's decoder overflows its stack near 1,000
# levels (a RecursionError, not a ValueError); a limit far below that also keeps every recursive
# walk over a decoded value (schema validation, the character gate, storage) from overflowing.
JSON_MAX_DEPTH = 100


class JsonTooDeep(ValueError):
    """JSON whose arrays and objects nest more than JSON_MAX_DEPTH levels deep."""

    def __init__(self) -> None:
        super().__init__(f"JSON nested more than {JSON_MAX_DEPTH} levels deep")


def json_depth_checked(value: object) -> Any:
    """`value`, a decoded JSON value, if it nests at most JSON_MAX_DEPTH levels; else JsonTooDeep.

    Level by level, without recursion: the value may be as deep as the decoder allowed.
    """
    level = [value] if isinstance(value, (dict, list)) else []
    for _ in range(JSON_MAX_DEPTH):
        level = [
            child
            for container in level
            for child in (container.values() if isinstance(container, dict) else container)
            if isinstance(child, (dict, list))
        ]
    if level:
        raise JsonTooDeep()
    return value


def json_decode(text: str | bytes) -> Any:
    """`json.loads`, refusing nesting deeper than JSON_MAX_DEPTH as JsonTooDeep (a ValueError)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonTooDeep() from None
    return json_depth_checked(value)
