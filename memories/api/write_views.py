"""REST endpoints that write, plus the operations registry over HTTP.

Thin: validate (strictly, with the registry's validator), call one service,
render. Reads come from read_views; the combined collection/item views add
the write methods to them.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from django.conf import settings
from django.http import QueryDict
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_READ, SCOPE_WRITE
from memories import graph_services, read_selectors, services
from memories.api import read_views
from memories.api.base import ApiView, request_id_of
from memories.api.representations import job_dict, memory_dict
from memories.errors import AppError
from memories.models import Entity, Job, Memory, Source
from memories.operations import registry
from memories.operations.validation import validate_arguments

KINDS = ["fact", "episode", "foresight"]
TAGS = {
    "type": "array",
    "maxItems": 50,
    "uniqueItems": True,
    "items": {"type": "string", "minLength": 1, "maxLength": 100},
}
WAIT = {"type": "integer", "minimum": 0, "maximum": 30, "default": 0}

SAVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["content"],
    "properties": {
        "content": {"type": "string", "minLength": 1, "maxLength": 100_000},
        "occurred_at": {"type": "string", "format": "date-time"},
        "tags": TAGS,
        "kind": {"type": "string", "enum": KINDS},
        "space": {"type": "string", "format": "uuid"},
        "session_id": {"type": "string", "format": "uuid"},
        "wait": WAIT,
        "category": {"type": "string", "enum": [c.value for c in Memory.Category]},
        "entities": {
            "type": "array",
            "maxItems": 50,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "type"],
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 200},
                    "type": {"type": "string", "enum": [t.value for t in Entity.Type]},
                },
            },
        },
        "confidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.9},
        "source_text": {"type": "string", "minLength": 1, "maxLength": 100_000},
    },
}

UPLOAD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "source_kind": {"type": "string", "minLength": 1, "maxLength": 50},
        "source_ref": {"type": "string", "minLength": 1, "maxLength": 500},
        "versioning_mode": {"type": "string", "enum": ["snapshot", "living"], "default": "snapshot"},
        "source_modified_at": {"type": "string", "format": "date-time"},
        "space": {"type": "string", "format": "uuid"},
        "wait": WAIT,
    },
}

SUPPRESS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "reason_code": {
            "type": "string",
            "enum": ["duplicate", "incorrect", "private", "outdated", "other"],
            "default": "other",
        }
    },
}
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": {}}


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _body(request: Request) -> Any:
    # An empty body is an empty object; anything else must be a JSON object.
    return request.data if request.data not in (None, "") else {}


def _wait_for(job: Job, seconds: int) -> Job:
    """Poll the job until it finishes or `seconds` pass (read-your-write in one call)."""
    deadline = time.monotonic() + min(seconds, settings.SAVE_MAX_WAIT_SECONDS)
    while job.status in (Job.Status.QUEUED, Job.Status.RUNNING) and time.monotonic() < deadline:
        time.sleep(0.05)
        job.refresh_from_db(
            fields=["status", "attempts", "error_code", "error_message", "started_at", "finished_at"]
        )
    return job


def _job_response(job: Job, *, extra: dict[str, Any] | None = None) -> Response:
    done = job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED)
    memories = list(read_selectors.job_memory_list(owner=job.owner, job=job)) if done else None
    body = {"job": job_dict(job, memories=memories), **(extra or {})}
    return Response(body, status=201 if done else 202)


class OperationListView(ApiView):
    def get(self, request: Request) -> Response:
        caller = self.caller(request, SCOPE_READ)
        del caller  # any authenticated caller may see what exists
        return Response({"operations": [op.describe() for op in registry.operations()]})


class OperationRunView(ApiView):
    def post(self, request: Request, name: str) -> Response:
        operation = registry.get_operation(name)
        caller = self.caller(request, operation.scope)
        return Response(registry.run(name, caller, _body(request)))


class MemoryCollectionView(read_views.MemoryListView):
    def post(self, request: Request) -> Response:
        """REST save: content plus optional occurred_at, tags, kind, category, entities, confidence,
        source_text, space; `wait` to verify in one call."""
        caller = self.caller(request, SCOPE_WRITE)
        args = validate_arguments(SAVE_SCHEMA, _body(request))
        job = services.remember(
            caller=caller,
            content=args["content"],
            origin=Source.Origin.REST,
            occurred_at=_when(args.get("occurred_at")),
            tags=args.get("tags"),
            kind=args.get("kind"),
            space_id=args.get("space"),
            session_id=args.get("session_id"),
            category=args.get("category"),
            entities=args.get("entities"),
            confidence=args["confidence"],
            source_text=args.get("source_text", ""),
        )
        return _job_response(_wait_for(job, args["wait"]))


class MemoryItemView(read_views.MemoryDetailView):
    def delete(self, request: Request, memory_id: Any) -> Response:
        """Hard delete: permanent, with a purge receipt."""
        caller = self.caller(request, SCOPE_WRITE)
        reason = request.query_params.get("reason_code", "other")
        validate_arguments(SUPPRESS_SCHEMA, {"reason_code": reason})
        receipt = services.memory_hard_delete(
            owner=caller.user,
            memory_id=memory_id,
            reason=reason,
            actor_user=caller.user,
            actor_agent_id=caller.agent_id,
            request_id=request_id_of(request),
        )
        return Response({"action": "hard_deleted", "receipt": receipt})


class RelationItemView(ApiView):
    def delete(self, request: Request, relation_id: Any) -> Response:
        """Hard delete of a relation (and the claims that asserted it), with a purge receipt."""
        caller = self.caller(request, SCOPE_WRITE)
        reason = request.query_params.get("reason_code", "other")
        validate_arguments(SUPPRESS_SCHEMA, {"reason_code": reason})
        receipt = graph_services.relation_hard_delete(
            owner=caller.user,
            relation_id=relation_id,
            reason=reason,
            actor_user=caller.user,
            actor_agent_id=caller.agent_id,
            request_id=request_id_of(request),
        )
        return Response({"action": "hard_deleted", "receipt": receipt})


class _MemoryActionView(ApiView):
    schema_of_body: dict[str, Any] = EMPTY_SCHEMA

    def post(self, request: Request, memory_id: Any) -> Response:
        caller = self.caller(request, SCOPE_WRITE)
        args = validate_arguments(self.schema_of_body, _body(request))
        common = {
            "owner": caller.user,
            "memory_id": memory_id,
            "actor_user": caller.user,
            "actor_agent_id": caller.agent_id,
            "request_id": request_id_of(request),
        }
        memory = self.act(common, args)
        return Response(memory_dict(read_selectors.memory_get(owner=caller.user, memory_id=memory.id)))

    def act(self, common: dict[str, Any], args: dict[str, Any]) -> Any:
        raise NotImplementedError


class MemoryPinView(_MemoryActionView):
    def act(self, common: dict[str, Any], args: dict[str, Any]) -> Any:
        return services.memory_set_pinned(pinned=True, **common)


class MemoryUnpinView(_MemoryActionView):
    def act(self, common: dict[str, Any], args: dict[str, Any]) -> Any:
        return services.memory_set_pinned(pinned=False, **common)


class MemorySuppressView(_MemoryActionView):
    schema_of_body = SUPPRESS_SCHEMA

    def act(self, common: dict[str, Any], args: dict[str, Any]) -> Any:
        return services.memory_suppress(reason=args["reason_code"], **common)


class MemoryRestoreView(_MemoryActionView):
    def act(self, common: dict[str, Any], args: dict[str, Any]) -> Any:
        return services.memory_restore(**common)


class DocumentUploadView(ApiView):
    def post(self, request: Request) -> Response:
        """Upload a .txt, .md, .pdf or .html document (multipart field `file`)."""
        caller = self.caller(request, SCOPE_WRITE)
        upload = request.FILES.get("file")
        data = request.data
        if not isinstance(data, QueryDict):
            raise AppError("unsupported_media_type", "Upload with multipart/form-data.", http_status=415)
        fields: dict[str, Any] = {key: data.get(key) for key in data if key != "file"}
        if "wait" in fields:
            raw = str(fields["wait"])
            if not raw.isdigit():
                raise AppError(
                    "wrong_type", "wait must be a whole number of seconds.", details={"field": "wait"}
                )
            fields["wait"] = int(raw)
        args = validate_arguments(UPLOAD_SCHEMA, fields)
        if upload is None:
            raise AppError(
                "missing_field", "Send the document in the multipart field 'file'.", details={"field": "file"}
            )
        if upload.size is not None and upload.size > settings.DOCUMENT_MAX_BYTES:
            # Refuse before reading it into memory.
            raise AppError(
                "document_too_large",
                f"The document is larger than {settings.DOCUMENT_MAX_BYTES // (1024 * 1024)} MB.",
                http_status=413,
                details={"max_bytes": settings.DOCUMENT_MAX_BYTES},
            )
        source, job, created = services.document_ingest(
            caller=caller,
            filename=upload.name or "document",
            data=upload.read(),
            declared_media_type=upload.content_type or "",
            source_kind=args.get("source_kind", ""),
            source_ref=args.get("source_ref", ""),
            versioning_mode=args["versioning_mode"],
            source_modified_at=_when(args.get("source_modified_at")),
            space_id=args.get("space"),
        )
        if created:
            job = _wait_for(job, args["wait"])
        extra = {"created": created, "source": {"id": str(source.id), "version": source.version}}
        if not created:
            extra["message"] = "These exact bytes were uploaded before; nothing new was stored."
        return _job_response(job, extra=extra)
