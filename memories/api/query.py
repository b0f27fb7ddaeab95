"""Strict query parameters and cursor pagination, shared by the REST endpoints.

An unknown or malformed parameter is an error, never silently ignored. Lists page with an
opaque cursor over (time, id), so a row added or removed while someone pages never causes a
duplicate or a gap.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from django.db.models import Model, Q, QuerySet
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from memories.errors import AppError, Code
from memories.models import Memory
from memories.operations.validation import validate_arguments
from memories.parsing import UUID_EXPECTED, parse_rest_timestamp, parse_uuid
from memories.selectors.cursor import cursor_decode, cursor_encode
from memories.wire import PurgeReceipt

PAGE_SIZE_DEFAULT = 20


PAGE_SIZE_MAX = 100


TAGS_MAX = 20


M = TypeVar("M", bound=Model)


def unknown_parameter(name: str, allowed: Collection[str]) -> AppError:
    shown = name[:100]
    return AppError(
        Code.UNKNOWN_PARAMETER,
        f"Unknown parameter {shown!r}."
        + (f" Allowed: {', '.join(sorted(allowed))}." if allowed else " This endpoint takes none."),
        details={"parameter": shown, "allowed": sorted(allowed)},
        agent_action="remove the parameter; the allowed ones are in details.allowed",
    )


def invalid_parameter(name: str, message: str, **details: object) -> AppError:
    return AppError(
        Code.INVALID_PARAMETER,
        message,
        details={"parameter": name, **details},
        agent_action=f"fix the {name} parameter and retry",
    )


_DIGITS = re.compile(r"[0-9]{1,4}")


def parse_timestamp(name: str, raw: str) -> datetime:
    """ISO 8601 date or date-time; without an offset it is taken as UTC (memories.parsing)."""
    try:
        return parse_rest_timestamp(raw)
    except ValueError:
        raise invalid_parameter(
            name,
            f"{name} is not an ISO 8601 date or date-time (e.g. 2025-03-01 or 2025-03-01T09:30:00+01:00).",
        ) from None


class StrictQuery:
    """The query parameters of one request, read strictly.

    Unknown names are `unknown_parameter`; a parameter given twice (unless
    repeatable), given empty, or with a malformed value is `invalid_parameter`
    with its name in `details.parameter`.
    """

    def __init__(self, request: Request, allowed: Collection[str], repeatable: Collection[str] = ()) -> None:
        self._params = request.query_params
        for name in self._params:
            if name not in allowed:
                raise unknown_parameter(name, allowed)
            values = self._params.getlist(name)
            if len(values) > 1 and name not in repeatable:
                raise invalid_parameter(name, f"Give {name} at most once.")
            if any(value == "" for value in values):
                raise invalid_parameter(name, f"{name} is empty; leave it out instead.")

    def text(self, name: str) -> str | None:
        return self._params.get(name)

    def texts(self, name: str) -> list[str]:
        return self._params.getlist(name)

    def choice(self, name: str, choices: Collection[str]) -> str | None:
        value = self.text(name)
        if value is not None and value not in choices:
            raise invalid_parameter(
                name, f"{name} must be one of: {', '.join(choices)}.", allowed=list(choices)
            )
        return value

    def boolean(self, name: str) -> bool | None:
        value = self.choice(name, ("true", "false"))
        return None if value is None else value == "true"

    def timestamp(self, name: str) -> datetime | None:
        value = self.text(name)
        return None if value is None else parse_timestamp(name, value)

    def uuid(self, name: str) -> uuid.UUID | None:
        value = self.text(name)
        if value is None:
            return None
        try:
            return parse_uuid(value)
        except ValueError:
            raise invalid_parameter(name, f"{name} is not an id: expected {UUID_EXPECTED}.") from None

    def integer(self, name: str, *, default: int, minimum: int, maximum: int) -> int:
        value = self.text(name)
        if value is None:
            return default
        if not _DIGITS.fullmatch(value) or not minimum <= int(value) <= maximum:
            raise invalid_parameter(
                name,
                f"{name} must be a whole number from {minimum} to {maximum}.",
                minimum=minimum,
                maximum=maximum,
            )
        return int(value)


def time_range(query: StrictQuery, start: str, end: str) -> tuple[datetime | None, datetime | None]:
    low, high = query.timestamp(start), query.timestamp(end)
    if low is not None and high is not None and low > high:
        raise invalid_parameter(end, f"{end} is before {start}.")
    return low, high


def body_with_keys(request: Request, allowed: Collection[str]) -> Mapping[str, Any]:
    data = request.data
    if not isinstance(data, Mapping):
        raise AppError(Code.INVALID_ARGUMENTS, "The request body must be a JSON object.")
    for name in data:
        if name not in allowed:
            raise unknown_parameter(str(name), allowed)
    return data


@dataclass(frozen=True)
class _Position:
    """A row's place in the (time, id) order and which side of it the page lies."""

    after: bool
    at: datetime
    id: uuid.UUID

    def encode(self) -> str:
        side = "n" if self.after else "p"
        return cursor_encode({"side": side, "at": self.at.isoformat(), "id": str(self.id)})

    @classmethod
    def decode(cls, token: str) -> _Position:
        try:
            return cursor_decode(token, parse=cls._from_payload)
        except AppError:
            # REST names every bad query value the same way (docs/api.md): invalid_parameter.
            raise invalid_parameter(
                "cursor", "cursor is not one this API gave out; use the next or previous link as it is."
            ) from None

    @classmethod
    def _from_payload(cls, data: dict[str, Any]) -> _Position:
        side = data["side"]
        if side not in ("n", "p"):
            raise ValueError(side)
        when = datetime.fromisoformat(data["at"])
        if not timezone.is_aware(when):
            raise ValueError(data["at"])
        return cls(after=side == "n", at=when, id=uuid.UUID(data["id"]))


@dataclass(frozen=True)
class Page(Generic[M]):
    rows: list[M]
    next: str | None
    previous: str | None


def paginate(
    request: Request, qs: QuerySet[M], *, time_field: str, page_size: int, cursor: str | None
) -> Page[M]:
    """One page of `qs` in (time_field, id) descending order, with next/previous links.

    Keyset pagination: each link names the boundary row, not an offset, so it is
    as fast on page 1000 as on page 1 and stable while rows are added.
    """
    position = _Position.decode(cursor) if cursor is not None else None
    newest_first = qs.order_by(f"-{time_field}", "-id")
    previous = next_ = None
    if position is None or position.after:
        if position is not None:
            newest_first = newest_first.filter(
                Q(**{f"{time_field}__lt": position.at})
                | Q(**{time_field: position.at, "id__lt": position.id})
            )
        rows = list(newest_first[: page_size + 1])
        more, rows = len(rows) > page_size, rows[:page_size]
        if more:
            next_ = _Position(after=True, at=getattr(rows[-1], time_field), id=rows[-1].pk)
        if position is not None and rows:
            previous = _Position(after=False, at=getattr(rows[0], time_field), id=rows[0].pk)
    else:
        oldest_first = qs.order_by(time_field, "id").filter(
            Q(**{f"{time_field}__gt": position.at}) | Q(**{time_field: position.at, "id__gt": position.id})
        )
        rows = list(oldest_first[: page_size + 1])
        more, rows = len(rows) > page_size, rows[:page_size][::-1]
        if more:
            previous = _Position(after=False, at=getattr(rows[0], time_field), id=rows[0].pk)
        if rows:
            next_ = _Position(after=True, at=getattr(rows[-1], time_field), id=rows[-1].pk)
    url = request.build_absolute_uri()
    return Page(
        rows=rows,
        next=replace_query_param(url, "cursor", next_.encode()) if next_ else None,
        previous=replace_query_param(url, "cursor", previous.encode()) if previous else None,
    )


def page_params() -> list[OpenApiParameter]:
    return [
        OpenApiParameter("cursor", str, description="Opaque; take it from a `next` or `previous` link."),
        OpenApiParameter("page_size", int, description=f"1 to {PAGE_SIZE_MAX}, default {PAGE_SIZE_DEFAULT}."),
    ]


def ts_param(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(
        name, OpenApiTypes.DATETIME, description=description + " ISO 8601; UTC if no offset."
    )


PAGE = ("cursor", "page_size")


OBJECT_RESPONSE = {200: OpenApiTypes.OBJECT}


WAIT = {"type": "integer", "minimum": 0, "maximum": 30, "default": 0}


def json_body(request: Request) -> Any:
    # An empty body is an empty object; anything else must be a JSON object.
    return request.data if request.data not in (None, "") else {}


# --- hard deletes ------------------------------------------------------------------------

REASON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "reason_code": {
            "type": "string",
            "enum": Memory.SuppressReason.for_callers(),
            "default": Memory.SuppressReason.OTHER.value,
        }
    },
}


def reason_of(request: Request) -> str:
    """The `reason_code` of a suppress or hard delete sent in the query string (validated like a body)."""
    raw = request.query_params.get("reason_code", Memory.SuppressReason.OTHER.value)
    return str(validate_arguments(REASON_SCHEMA, {"reason_code": raw})["reason_code"])


def hard_deleted(receipt: PurgeReceipt) -> Response:
    """The answer to every REST hard delete: the action and its purge receipt."""
    return Response({"action": "hard_deleted", "receipt": receipt})
