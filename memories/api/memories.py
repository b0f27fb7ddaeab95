"""REST endpoints of memories: list and save, one memory and its hard delete, pin, unpin,
suppress, restore. Thin: validate strictly, call one service or selector, render.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_READ, SCOPE_WRITE
from accounts.throttles import user_throttle
from memories.api.base import ApiView
from memories.api.jobs import job_response
from memories.api.query import (
    OBJECT_RESPONSE,
    PAGE,
    PAGE_SIZE_DEFAULT,
    PAGE_SIZE_MAX,
    REASON_SCHEMA,
    TAGS_MAX,
    WAIT,
    StrictQuery,
    hard_deleted,
    invalid_parameter,
    json_body,
    page_params,
    paginate,
    reason_of,
    time_range,
    ts_param,
)
from memories.errors import AppError, Code
from memories.limits import QUERY_MAX_LENGTH, TAG_MAX_LENGTH
from memories.limits import TAGS_MAX as SAVE_TAGS_MAX
from memories.models import Memory, Source
from memories.operations.core import MATCH_NOTES
from memories.operations.schemas import SAVE_ENTITIES
from memories.operations.validation import validate_arguments
from memories.parsing import RowId
from memories.representations import hit_dict, memory_dict
from memories.retrieval.recall import RecallRequest, memory_recall
from memories.selectors.jobs import job_wait
from memories.selectors.memories import STATUS_CHOICES, memory_get, memory_search_list
from memories.services.memories import (
    memory_hard_delete,
    memory_restore,
    memory_set_pinned,
    memory_suppress,
    remember,
)
from memories.services.spaces import space_for_caller
from memories.wire import iso

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
        "known_at",
        "include_superseded",
        *PAGE,
    }
)


def _tags(query: StrictQuery) -> list[str]:
    """The repeatable `tag` filter, within the limits."""
    tags = query.texts("tag")
    if len(tags) > TAGS_MAX or any(len(tag) > TAG_MAX_LENGTH for tag in tags):
        raise invalid_parameter("tag", f"Give at most {TAGS_MAX} tags of up to {TAG_MAX_LENGTH} characters.")
    return tags


class MemoryListView(ApiView):
    scopes = {"get": SCOPE_READ}

    @extend_schema(
        operation_id="memories_list",
        summary="List memories, newest first, with filters and cursor pagination",
        parameters=[
            OpenApiParameter("kind", str, enum=Memory.Kind.values),
            OpenApiParameter(
                "tag", str, many=True, description="Repeatable; the memory must carry every tag."
            ),
            OpenApiParameter("status", str, enum=STATUS_CHOICES, description="Default active."),
            OpenApiParameter("pinned", bool),
            OpenApiParameter("space", OpenApiTypes.UUID),
            ts_param("recorded_from", "Recorded at or after (system time)."),
            ts_param("recorded_to", "Recorded before (system time)."),
            ts_param("occurred_from", "occurred_at, valid_from or due_at at or after (world time)."),
            ts_param("occurred_to", "occurred_at, valid_from or due_at before (world time)."),
            ts_param(
                "at",
                "World time: what held at this time, as the service knows it now (valid from, or "
                "happened, or said, by then and not yet over).",
            ),
            ts_param(
                "known_at",
                "System time, with `at`: only what the service had recorded by then and not yet "
                "superseded then. Alone, it also sets `at` (what the service believed then about then).",
            ),
            OpenApiParameter("include_superseded", bool, description="Also list superseded memories."),
            *page_params(),
        ],
        responses=OBJECT_RESPONSE,
    )
    def get(self, request: Request) -> Response:
        caller = self.caller
        query = StrictQuery(request, MEMORY_LIST_PARAMS, repeatable={"tag"})
        tags = _tags(query)
        recorded_from, recorded_to = time_range(query, "recorded_from", "recorded_to")
        occurred_from, occurred_to = time_range(query, "occurred_from", "occurred_to")
        status = query.choice("status", STATUS_CHOICES) or Memory.Status.ACTIVE
        if status == Memory.Status.SUPPRESSED and not caller.in_person:
            raise AppError(Code.FORBIDDEN, FORGOTTEN_OWNER_ONLY, agent_action=FORGOTTEN_AGENT_ACTION)
        page_size = query.integer("page_size", default=PAGE_SIZE_DEFAULT, minimum=1, maximum=PAGE_SIZE_MAX)
        memories = memory_search_list(
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
            known_at=query.timestamp("known_at"),
            include_superseded=bool(query.boolean("include_superseded")),
        )
        page = paginate(
            request, memories, time_field="recorded_at", page_size=page_size, cursor=query.text("cursor")
        )
        return Response(
            {"results": [memory_dict(m) for m in page.rows], "next": page.next, "previous": page.previous}
        )


MEMORY_SEARCH_PARAMS = frozenset(
    {"q", "top_k", "kind", "tag", "space", "at", "known_at", "include_history", "expand_entities"}
)


class MemorySearchView(ApiView):
    scopes = {"get": SCOPE_READ}

    @extend_schema(
        operation_id="memories_search",
        summary="Recall over one space, best first; history only when asked for",
        parameters=[
            OpenApiParameter(
                "q", str, required=True, description=f"What to look for (1-{QUERY_MAX_LENGTH:,} characters)."
            ),
            OpenApiParameter("top_k", int, description="How many memories at most (1-50, default 20)."),
            OpenApiParameter("kind", str, enum=Memory.Kind.values, many=True, description="Repeatable."),
            OpenApiParameter("tag", str, many=True, description="Repeatable; every tag must be carried."),
            OpenApiParameter("space", OpenApiTypes.UUID, description="Default: the caller's current space."),
            ts_param("at", "World time: what held at this time."),
            ts_param("known_at", "System time: only what the service had recorded by then."),
            OpenApiParameter(
                "include_history",
                bool,
                description="Also memories that no longer hold (superseded, ended), ranked below what holds.",
            ),
            OpenApiParameter("expand_entities", bool),
        ],
        responses=OBJECT_RESPONSE,
    )
    def get(self, request: Request) -> Response:
        query = StrictQuery(request, MEMORY_SEARCH_PARAMS, repeatable={"kind", "tag"})
        text = (query.text("q") or "").strip()
        if not text or len(text) > QUERY_MAX_LENGTH:
            raise invalid_parameter("q", f"Give a query of 1-{QUERY_MAX_LENGTH:,} characters.")
        kinds = query.texts("kind")
        if any(kind not in Memory.Kind.values for kind in kinds):
            raise invalid_parameter("kind", f"Use one of {', '.join(Memory.Kind.values)}.")
        tags = _tags(query)
        space = space_for_caller(caller=self.caller, space_id=query.uuid("space"))
        known_at = query.timestamp("known_at")
        recall = RecallRequest(
            query=text,
            top_k=query.integer("top_k", default=20, minimum=1, maximum=50),
            kinds=kinds,
            tags=tags,
            expand_entities=bool(query.boolean("expand_entities")),
            at=query.timestamp("at") or known_at,
            known_at=known_at,
            include_history=bool(query.boolean("include_history")),
        )
        result = memory_recall(owner=self.caller.user, space=space, request=recall)
        return Response(
            {
                "at": iso(result.at),
                "results": [{**hit_dict(hit), "holds": hit.held} for hit in result.hits],
                "total": len(result.hits),
                "match": result.match,
                "match_note": MATCH_NOTES[result.match],
            }
        )


class MemoryDetailView(ApiView):
    scopes = {"get": SCOPE_READ}

    @extend_schema(
        operation_id="memories_retrieve",
        summary="One memory with its history and evidence",
        responses=OBJECT_RESPONSE,
    )
    def get(self, request: Request, memory_id: uuid.UUID) -> Response:
        caller = self.caller
        StrictQuery(request, ())
        memory = memory_get(owner=caller.user, memory_id=memory_id)
        if memory.status == Memory.Status.SUPPRESSED and not caller.in_person:
            # To an app a forgotten memory is not there at all (issue 40), not even as "forbidden".
            raise AppError(Code.MEMORY_NOT_FOUND)
        return Response(memory_dict(memory, detail=True))


# Section 1 of issue 40: what the owner forgot is theirs alone to see, in the dashboard or with their
# own personal access token; an app's token (OAuth) never lists it.
FORGOTTEN_OWNER_ONLY = "Forgotten memories are shown to their owner only, not to an app acting for them."
FORGOTTEN_AGENT_ACTION = "do not ask for forgotten memories; the owner sees them in the dashboard"


TAGS = {
    "type": "array",
    "maxItems": SAVE_TAGS_MAX,
    "uniqueItems": True,
    "items": {"type": "string", "minLength": 1, "maxLength": TAG_MAX_LENGTH},
}


SAVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["content"],
    "properties": {
        "content": {"type": "string", "minLength": 1, "maxLength": settings.REMEMBER_MAX_CHARS},
        "occurred_at": {"type": "string", "format": "date-time"},
        "tags": TAGS,
        "kind": {"type": "string", "enum": Memory.Kind.values},
        "space": {"type": "string", "format": "uuid"},
        "session_id": {"type": "string", "format": "uuid"},
        "wait": WAIT,
        "category": {"type": "string", "enum": [c.value for c in Memory.Category]},
        "entities": SAVE_ENTITIES,
        "confidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.9},
        "source_text": {"type": "string", "minLength": 1, "maxLength": settings.REMEMBER_MAX_CHARS},
    },
}


EMPTY_SCHEMA: dict[str, object] = {"type": "object", "additionalProperties": False, "properties": {}}


class MemoryCollectionView(MemoryListView):
    scopes = {**MemoryListView.scopes, "post": SCOPE_WRITE}

    def post(self, request: Request) -> Response:
        """REST save: content plus optional occurred_at, tags, kind, category, entities, confidence,
        source_text, space; `wait` to verify in one call."""
        caller = self.caller
        args = validate_arguments(SAVE_SCHEMA, json_body(request))
        user_throttle(limit="save", user=caller.user)
        job = remember(
            caller=caller,
            content=args["content"],
            origin=Source.Origin.REST,
            occurred_at=args.get("occurred_at"),
            tags=args.get("tags"),
            kind=args.get("kind"),
            space_id=args.get("space"),
            session_id=args.get("session_id"),
            category=args.get("category"),
            entities=args.get("entities"),
            confidence=args["confidence"],
            source_text=args.get("source_text", ""),
        )
        return job_response(job_wait(job, args["wait"]))


class MemoryItemView(MemoryDetailView):
    scopes = {**MemoryDetailView.scopes, "delete": SCOPE_WRITE}

    def delete(self, request: Request, memory_id: RowId) -> Response:
        """Hard delete: permanent, with a purge receipt."""
        return hard_deleted(
            memory_hard_delete(actor=self.actor, memory_id=memory_id, reason=reason_of(request))
        )


class _MemoryActionView(ApiView):
    scopes = {"post": SCOPE_WRITE}
    schema_of_body: dict[str, object] = EMPTY_SCHEMA

    def post(self, request: Request, memory_id: RowId) -> Response:
        args = validate_arguments(self.schema_of_body, json_body(request))
        memory = self.act({"actor": self.actor, "memory_id": memory_id}, args)
        return Response(memory_dict(memory_get(owner=self.caller.user, memory_id=memory.id)))

    def act(self, common: dict[str, Any], args: dict[str, Any]) -> Memory:
        raise NotImplementedError


class MemoryPinView(_MemoryActionView):
    def act(self, common: dict[str, Any], args: dict[str, Any]) -> Memory:
        return memory_set_pinned(pinned=True, **common)


class MemoryUnpinView(_MemoryActionView):
    def act(self, common: dict[str, Any], args: dict[str, Any]) -> Memory:
        return memory_set_pinned(pinned=False, **common)


class MemorySuppressView(_MemoryActionView):
    schema_of_body = REASON_SCHEMA

    def act(self, common: dict[str, Any], args: dict[str, Any]) -> Memory:
        return memory_suppress(reason=args["reason_code"], **common)


class MemoryRestoreView(_MemoryActionView):
    def act(self, common: dict[str, Any], args: dict[str, Any]) -> Memory:
        return memory_restore(**common)
