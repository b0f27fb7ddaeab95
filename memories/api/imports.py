"""REST endpoints of imports: start one (a file upload, or the export itself as a JSON body), read its
progress, cancel it, undo it. The work is memories/services/imports.py and memories/worker/imports.py.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from django.http import QueryDict
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_READ, SCOPE_WRITE
from accounts.throttles import user_throttle
from memories.api.base import ApiView, body_read
from memories.api.parsers import FileBodyParser, MultiPartParser
from memories.api.query import OBJECT_RESPONSE, StrictQuery
from memories.errors import AppError, Code
from memories.operations.validation import validate_arguments
from memories.selectors.imports import import_get, import_list
from memories.services.imports import import_cancel, import_create, import_undo
from memories.wire import import_dict

# A multipart body is the file plus its part headers and a few fields.
MULTIPART_SLACK = 64 * 1024
# The newest imports the list shows (a person imports a handful of files, not thousands).
LIST_MAX = 100

FIELDS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"space": {"type": "string", "format": "uuid"}},
}


def _too_large() -> AppError:
    limit = settings.IMPORT_MAX_BYTES
    return AppError(
        Code.IMPORT_TOO_LARGE,
        f"The file is larger than {limit // (1024 * 1024)} MB.",
        details={"max_bytes": limit},
    )


class _CappedUpload(FileUploadHandler):
    """Refuses a multipart upload as soon as its file passes the limit, while it streams in: a body
    sent without a Content-Length (chunked) is not written to disk to the end before it is refused."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__()
        self.max_bytes = max_bytes
        self.seen = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.seen += len(raw_data)
        if self.seen > self.max_bytes:
            raise _too_large()
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


def _media_type(request: Request) -> str:
    return str(request.content_type or "").split(";")[0].strip().lower()


class ImportCollectionView(ApiView):
    scopes = {"get": SCOPE_READ, "post": SCOPE_WRITE}
    parser_classes = [FileBodyParser, MultiPartParser]

    @extend_schema(
        operation_id="imports_list", summary="Your imports, newest first", responses=OBJECT_RESPONSE
    )
    def get(self, request: Request) -> Response:
        StrictQuery(request, ())
        return Response({"results": [import_dict(m) for m in import_list(owner=self.caller.user)[:LIST_MAX]]})

    @extend_schema(
        operation_id="imports_create",
        summary="Import a history (ChatGPT, Claude, mem0, Markdown notes, a Deep Recall export)",
        request={"multipart/form-data": OBJECT_RESPONSE, "application/json": OBJECT_RESPONSE},
        responses={202: OBJECT_RESPONSE},
    )
    def initial(self, request: Request, *args: object, **kwargs: object) -> None:
        # Before authentication, which reads the body too (an OAuth token may travel in it): the
        # body is read under the import's limit, not the global one, and no further than it.
        if request.method == "POST":
            limit = settings.IMPORT_MAX_BYTES
            declared = request.META.get("CONTENT_LENGTH") or ""
            # Refused before a byte of the body is read: a 2 GB upload costs its first packet.
            if declared.isdigit() and int(declared) > limit + MULTIPART_SLACK:
                raise _too_large()
            if _media_type(request) == "multipart/form-data":
                request._request.upload_handlers.insert(0, _CappedUpload(limit))
            elif _media_type(request) == "application/json":
                body_read(request._request, max_bytes=limit, refusal=_too_large())
        super().initial(request, *args, **kwargs)

    def post(self, request: Request) -> Response:
        caller = self.caller
        limit = settings.IMPORT_MAX_BYTES
        content_type = _media_type(request)
        space: str | None = None
        if content_type == "multipart/form-data":
            data = request.data
            if not isinstance(data, QueryDict):
                raise AppError(Code.UNSUPPORTED_MEDIA_TYPE, "Upload with multipart/form-data.")
            args = validate_arguments(FIELDS_SCHEMA, {k: data.get(k) for k in data if k != "file"})
            space = args.get("space")
            if len(request.FILES.getlist("file")) > 1 or set(request.FILES) - {"file"}:
                # One import is one file: which of two was meant is not ours to guess.
                raise AppError(
                    Code.TOO_MANY_FIELDS,
                    "Send one file per import, in the multipart field 'file'.",
                    details={"fields": sorted(request.FILES)},
                )
            upload = request.FILES.get("file")
            if upload is None:
                raise AppError(
                    Code.MISSING_FIELD,
                    "Send the export in the multipart field 'file'.",
                    details={"field": "file"},
                )
            if upload.size is not None and upload.size > limit:
                raise _too_large()
            body, filename = upload.read(), upload.name or "import"
        elif content_type == "application/json":
            StrictQuery(request, ("space",))
            space = request.query_params.get("space") or None
            if space is not None:
                space = validate_arguments(FIELDS_SCHEMA, {"space": space})["space"]
            body, filename = body_read(request._request, max_bytes=limit, refusal=_too_large()), "import.json"
        else:
            raise AppError(
                Code.UNSUPPORTED_MEDIA_TYPE,
                "Send the export as multipart/form-data (field 'file') or as an application/json body.",
            )
        # One operation against the caller's budget, however many items the file holds.
        user_throttle(limit="upload", user=caller.user)
        made = import_create(caller=caller, actor=self.actor, filename=filename, data=body, space_id=space)
        return Response({"import": import_dict(made)}, status=202)


class ImportItemView(ApiView):
    scopes = {"get": SCOPE_READ}

    @extend_schema(
        operation_id="imports_retrieve", summary="An import and its progress", responses=OBJECT_RESPONSE
    )
    def get(self, request: Request, import_id: uuid.UUID) -> Response:
        StrictQuery(request, ())
        return Response({"import": import_dict(import_get(owner=self.caller.user, import_id=import_id))})


class ImportCancelView(ApiView):
    scopes = {"post": SCOPE_WRITE}

    @extend_schema(
        operation_id="imports_cancel",
        summary="Stop an import; what it stored stays until it is undone",
        request=None,
        responses=OBJECT_RESPONSE,
    )
    def post(self, request: Request, import_id: uuid.UUID) -> Response:
        StrictQuery(request, ())
        import_cancel(actor=self.actor, import_id=import_id)
        return Response({"import": import_dict(import_get(owner=self.caller.user, import_id=import_id))})


class ImportUndoView(ApiView):
    scopes = {"post": SCOPE_WRITE}

    @extend_schema(
        operation_id="imports_undo",
        summary="Remove everything an import stored (a hard delete, with its receipt)",
        request=None,
        responses=OBJECT_RESPONSE,
    )
    def post(self, request: Request, import_id: uuid.UUID) -> Response:
        StrictQuery(request, ())
        receipt = import_undo(actor=self.actor, import_id=import_id)
        return Response({"receipt": receipt})
