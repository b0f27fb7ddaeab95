"""REST read endpoints (memories, jobs), spaces, and the account export.

Views are thin: authenticate the caller for one scope, read the query strictly
(an unknown or malformed parameter is an error, never silently ignored), call
one selector or service, render with `representations`.

Lists page with an opaque cursor over (time, id), so a row added or removed
while someone pages never causes a duplicate or a gap.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import AsyncIterator, Collection, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.db.models import Model, Q, QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status as http
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from accounts.caller import SCOPE_READ, SCOPE_WRITE
from memories import export, read_selectors, services, space_services
from memories.api.base import ApiView, request_id_of
from memories.api.representations import job_dict, memory_dict, space_dict
from memories.errors import AppError
from memories.models import Job, Memory

UNKNOWN_PARAMETER = "unknown_parameter"
INVALID_PARAMETER = "invalid_parameter"
INVALID_ARGUMENTS = "invalid_arguments"

PAGE_SIZE_DEFAULT = 20
PAGE_SIZE_MAX = 100
TAG_MAX_LENGTH = 100
TAGS_MAX = 20
# Stream the export in chunks of about this many characters, not one write per record.
EXPORT_CHUNK_CHARS = 64 * 1024

M = TypeVar("M", bound=Model)


# --- errors -----------------------------------------------------------------------------


def unknown_parameter(name: str, allowed: Collection[str]) -> AppError:
    shown = name[:100]
    return AppError(
        UNKNOWN_PARAMETER,
        f"Unknown parameter {shown!r}."
        + (f" Allowed: {', '.join(sorted(allowed))}." if allowed else " This endpoint takes none."),
        details={"parameter": shown, "allowed": sorted(allowed)},
        agent_action="remove the parameter; the allowed ones are in details.allowed",
    )


def invalid_parameter(name: str, message: str, **details: Any) -> AppError:
    return AppError(
        INVALID_PARAMETER,
        message,
        details={"parameter": name, **details},
        agent_action=f"fix the {name} parameter and retry",
    )


# --- strict query parameters ----------------------------------------------------------

_DIGITS = re.compile(r"[0-9]{1,4}")
# In a URL query an unencoded "+" arrives as a space: "...T10:00:00 02:00" meant "+02:00".
_SPACE_FOR_PLUS = re.compile(r" ([0-9]{2}(?::?[0-9]{2})?)$")


def parse_timestamp(name: str, raw: str) -> datetime:
    """ISO 8601 date or date-time; without an offset it is taken as UTC."""
    value = None
    for candidate in (raw, _SPACE_FOR_PLUS.sub(r"+\1", raw)):
        try:
            value = datetime.fromisoformat(candidate)
            break
        except ValueError:
            continue
    if value is None:
        raise invalid_parameter(
            name,
            f"{name} is not an ISO 8601 date or date-time (e.g. 2025-03-01 or 2025-03-01T09:30:00+01:00).",
        )
    return value if timezone.is_aware(value) else value.replace(tzinfo=UTC)


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
            return uuid.UUID(value)
        except ValueError:
            raise invalid_parameter(name, f"{name} is not an id (a UUID).") from None

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


def _time_range(query: StrictQuery, start: str, end: str) -> tuple[datetime | None, datetime | None]:
    low, high = query.timestamp(start), query.timestamp(end)
    if low is not None and high is not None and low > high:
        raise invalid_parameter(end, f"{end} is before {start}.")
    return low, high


def _body(request: Request, allowed: Collection[str]) -> Mapping[str, Any]:
    data = request.data
    if not isinstance(data, Mapping):
        raise AppError(INVALID_ARGUMENTS, "The request body must be a JSON object.")
    for name in data:
        if name not in allowed:
            raise unknown_parameter(str(name), allowed)
    return data


# --- cursor pagination ------------------------------------------------------------------


@dataclass(frozen=True)
class _Position:
    """A row's place in the (time, id) order and which side of it the page lies."""

    after: bool
    at: datetime
    id: uuid.UUID

    def encode(self) -> str:
        raw = json.dumps(["n" if self.after else "p", self.at.isoformat(), str(self.id)])
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> _Position:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            side, at, row_id = json.loads(raw)
            if side not in ("n", "p"):
                raise ValueError(side)
            when = datetime.fromisoformat(at)
            if not timezone.is_aware(when):
                raise ValueError(at)
            return cls(after=side == "n", at=when, id=uuid.UUID(row_id))
        except (binascii.Error, AttributeError, TypeError, ValueError):
            raise invalid_parameter(
                "cursor", "cursor is not one this API gave out; use the next or previous link as it is."
            ) from None


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


def _page_params() -> list[OpenApiParameter]:
    return [
        OpenApiParameter("cursor", str, description="Opaque; take it from a `next` or `previous` link."),
        OpenApiParameter("page_size", int, description=f"1 to {PAGE_SIZE_MAX}, default {PAGE_SIZE_DEFAULT}."),
    ]


def _ts_param(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(
        name, OpenApiTypes.DATETIME, description=description + " ISO 8601; UTC if no offset."
    )


PAGE = ("cursor", "page_size")
OBJECT_RESPONSE = {200: OpenApiTypes.OBJECT}


# --- memories ---------------------------------------------------------------------------


MEMORY_LIST_PARAMS = frozenset(
    {
        "kind",
        "tag",
        "status",
        "pinned",
        "space",
        "recorded_from",
        "recorded_to",
        "occurred_from",
        "occurred_to",
        "at",
        "include_superseded",
        *PAGE,
    }
)


class MemoryListView(ApiView):
    @extend_schema(
        operation_id="memories_list",
        summary="List memories, newest first, with filters and cursor pagination",
        parameters=[
            OpenApiParameter("kind", str, enum=Memory.Kind.values),
            OpenApiParameter(
                "tag", str, many=True, description="Repeatable; the memory must carry every tag."
            ),
            OpenApiParameter(
                "status", str, enum=read_selectors.STATUS_CHOICES, description="Default active."
            ),
            OpenApiParameter("pinned", bool),
            OpenApiParameter("space", OpenApiTypes.UUID),
            _ts_param("recorded_from", "Recorded at or after (system time)."),
            _ts_param("recorded_to", "Recorded before (system time)."),
            _ts_param("occurred_from", "occurred_at, valid_from or due_at at or after (world time)."),
            _ts_param("occurred_to", "occurred_at, valid_from or due_at before (world time)."),
            _ts_param("at", "What was known at this time: recorded by then and not yet superseded."),
            OpenApiParameter("include_superseded", bool, description="Also list superseded memories."),
            *_page_params(),
        ],
        responses=OBJECT_RESPONSE,
    )
    def get(self, request: Request) -> Response:
        caller = self.caller(request, SCOPE_READ)
        query = StrictQuery(request, MEMORY_LIST_PARAMS, repeatable={"tag"})
        tags = query.texts("tag")
        if len(tags) > TAGS_MAX or any(len(tag) > TAG_MAX_LENGTH for tag in tags):
            raise invalid_parameter(
                "tag", f"Give at most {TAGS_MAX} tags of up to {TAG_MAX_LENGTH} characters."
            )
        recorded_from, recorded_to = _time_range(query, "recorded_from", "recorded_to")
        occurred_from, occurred_to = _time_range(query, "occurred_from", "occurred_to")
        status = query.choice("status", read_selectors.STATUS_CHOICES) or Memory.Status.ACTIVE
        page_size = query.integer("page_size", default=PAGE_SIZE_DEFAULT, minimum=1, maximum=PAGE_SIZE_MAX)
        memories = read_selectors.memory_search_list(
            owner=caller.user,
            kind=query.choice("kind", Memory.Kind.values),
            tags=tags,
            status=status,
            pinned=query.boolean("pinned"),
            space_id=query.uuid("space"),
            recorded_from=recorded_from,
            recorded_to=recorded_to,
            occurred_from=occurred_from,
            occurred_to=occurred_to,
            at=query.timestamp("at"),
            include_superseded=bool(query.boolean("include_superseded")),
        )
        page = paginate(
            request, memories, time_field="recorded_at", page_size=page_size, cursor=query.text("cursor")
        )
        return Response(
            {"results": [memory_dict(m) for m in page.rows], "next": page.next, "previous": page.previous}
        )


class MemoryDetailView(ApiView):
    @extend_schema(
        operation_id="memories_retrieve",
        summary="One memory with its history and evidence",
        responses=OBJECT_RESPONSE,
    )
    def get(self, request: Request, memory_id: uuid.UUID) -> Response:
        caller = self.caller(request, SCOPE_READ)
        StrictQuery(request, ())
        memory = read_selectors.memory_get(owner=caller.user, memory_id=memory_id)
        return Response(memory_dict(memory, detail=True))


# --- jobs -------------------------------------------------------------------------------


class JobListView(ApiView):
    @extend_schema(
        operation_id="jobs_list",
        summary="List jobs, newest first",
        parameters=[OpenApiParameter("status", str, enum=Job.Status.values), *_page_params()],
        responses=OBJECT_RESPONSE,
    )
    def get(self, request: Request) -> Response:
        caller = self.caller(request, SCOPE_READ)
        query = StrictQuery(request, {"status", *PAGE})
        page_size = query.integer("page_size", default=PAGE_SIZE_DEFAULT, minimum=1, maximum=PAGE_SIZE_MAX)
        jobs = read_selectors.job_list(owner=caller.user, status=query.choice("status", Job.Status.values))
        page = paginate(
            request, jobs, time_field="created_at", page_size=page_size, cursor=query.text("cursor")
        )
        return Response(
            {"results": [job_dict(j) for j in page.rows], "next": page.next, "previous": page.previous}
        )


class JobDetailView(ApiView):
    @extend_schema(
        operation_id="jobs_retrieve",
        summary="One job with the memories it produced",
        responses=OBJECT_RESPONSE,
    )
    def get(self, request: Request, job_id: uuid.UUID) -> Response:
        caller = self.caller(request, SCOPE_READ)
        StrictQuery(request, ())
        job = read_selectors.job_get(owner=caller.user, job_id=job_id)
        memories = list(read_selectors.job_memory_list(owner=caller.user, job=job))
        return Response(job_dict(job, memories=memories))


# --- spaces -----------------------------------------------------------------------------


class SpaceCollectionView(ApiView):
    @extend_schema(
        operation_id="spaces_list", summary="List spaces, default first", responses=OBJECT_RESPONSE
    )
    def get(self, request: Request) -> Response:
        caller = self.caller(request, SCOPE_READ)
        StrictQuery(request, ())
        spaces = read_selectors.space_list_with_counts(owner=caller.user)
        return Response({"results": [space_dict(space) for space in spaces]})

    @extend_schema(
        operation_id="spaces_create",
        summary="Create a space",
        request=OpenApiTypes.OBJECT,
        responses={201: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request) -> Response:
        caller = self.caller(request, SCOPE_WRITE)
        StrictQuery(request, ())
        name = _body(request, {"name"}).get("name")
        if not isinstance(name, str):
            raise invalid_parameter("name", "name is required: a string of 1 to 100 characters.")
        space = services.space_create(owner=caller.user, name=name)
        created = read_selectors.space_get(owner=caller.user, space_id=space.id)
        return Response(space_dict(created), status=http.HTTP_201_CREATED)


class SpaceItemView(ApiView):
    @extend_schema(operation_id="spaces_retrieve", summary="One space", responses=OBJECT_RESPONSE)
    def get(self, request: Request, space_id: uuid.UUID) -> Response:
        caller = self.caller(request, SCOPE_READ)
        StrictQuery(request, ())
        return Response(space_dict(read_selectors.space_get(owner=caller.user, space_id=space_id)))

    @extend_schema(
        operation_id="spaces_partial_update",
        summary="Rename a space and/or make it the default",
        description='Body: {"name"?: string, "is_default"?: true}. A space stops being the default only '
        "when another one becomes it.",
        request=OpenApiTypes.OBJECT,
        responses=OBJECT_RESPONSE,
    )
    def patch(self, request: Request, space_id: uuid.UUID) -> Response:
        caller = self.caller(request, SCOPE_WRITE)
        StrictQuery(request, ())
        body = _body(request, {"name", "is_default"})
        if not body:
            raise AppError(INVALID_ARGUMENTS, "Nothing to change: send name and/or is_default.")
        name = body.get("name")
        if "name" in body and not isinstance(name, str):
            raise invalid_parameter("name", "name must be a string of 1 to 100 characters.")
        if "is_default" in body and body["is_default"] is not True:
            raise invalid_parameter(
                "is_default",
                "is_default can only be set to true; to change the default, make another space the default.",
            )
        space_services.space_update(
            owner=caller.user,
            space_id=space_id,
            name=name,
            make_default="is_default" in body,
            actor_user=caller.user,
            actor_agent_id=caller.agent_id,
            request_id=request_id_of(request),
        )
        return Response(space_dict(read_selectors.space_get(owner=caller.user, space_id=space_id)))

    @extend_schema(
        operation_id="spaces_destroy",
        summary="Delete a space, moving or deleting its memories",
        parameters=[
            OpenApiParameter(
                "memories",
                str,
                enum=[space_services.MEMORIES_MOVE, space_services.MEMORIES_DELETE],
                required=True,
                description="move: into the default space (entities merged); "
                "delete: permanently, with a receipt.",
            )
        ],
        responses=OBJECT_RESPONSE,
    )
    def delete(self, request: Request, space_id: uuid.UUID) -> Response:
        caller = self.caller(request, SCOPE_WRITE)
        query = StrictQuery(request, {"memories"})
        result = space_services.space_delete(
            owner=caller.user,
            space_id=space_id,
            memories=query.text("memories") or "",
            actor_user=caller.user,
            actor_agent_id=caller.agent_id,
            request_id=request_id_of(request),
        )
        return Response(result)


# --- export -----------------------------------------------------------------------------


def _chunks(lines: Iterator[str]) -> Iterator[str]:
    buffer: list[str] = []
    size = 0
    for line in lines:
        buffer.append(line)
        size += len(line)
        if size >= EXPORT_CHUNK_CHARS:
            yield "".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer)


def _next_chunk(chunks: Iterator[str]) -> str | None:
    return next(chunks, None)


async def _async_chunks(chunks: Iterator[str]) -> AsyncIterator[str]:
    # Under ASGI, Django drains a *sync* streaming iterator into a list before
    # sending (StreamingHttpResponse.__aiter__), which would hold the whole export
    # in memory. Pulling one chunk at a time, on the thread that owns the database
    # connection, keeps it streaming.
    pull = sync_to_async(_next_chunk, thread_sensitive=True)
    while (chunk := await pull(chunks)) is not None:
        yield chunk


class ExportView(ApiView):
    @extend_schema(
        operation_id="export",
        summary="Everything in your account as JSON Lines",
        responses={(200, "application/x-ndjson"): OpenApiTypes.STR},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        caller = self.caller(request, SCOPE_READ)
        StrictQuery(request, ())
        lines = export.export_begin(
            owner=caller.user,
            actor_user=caller.user,
            actor_agent_id=caller.agent_id,
            request_id=request_id_of(request),
        )
        chunks = _chunks(lines)
        content = _async_chunks(chunks) if isinstance(request._request, ASGIRequest) else chunks
        response = StreamingHttpResponse(content, content_type="application/x-ndjson")
        filename = f"deeprecall-export-{timezone.now().date().isoformat()}.jsonl"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        response["Cache-Control"] = "no-store"
        return response
