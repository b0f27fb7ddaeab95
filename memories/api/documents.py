"""REST endpoint of document uploads."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import QueryDict
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_WRITE
from accounts.throttles import user_throttle
from memories.api.base import ApiView
from memories.api.jobs import job_response
from memories.api.query import WAIT
from memories.errors import AppError, Code
from memories.limits import SOURCE_KIND_MAX_LENGTH, SOURCE_REF_MAX_LENGTH, SOURCE_VERSION_REF_MAX_LENGTH
from memories.models import Job, Source
from memories.operations.validation import validate_arguments
from memories.selectors.jobs import job_wait
from memories.services.documents import document_ingest

UPLOAD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "source_kind": {"type": "string", "minLength": 1, "maxLength": SOURCE_KIND_MAX_LENGTH},
        "source_ref": {"type": "string", "minLength": 1, "maxLength": SOURCE_REF_MAX_LENGTH},
        "versioning_mode": {
            "type": "string",
            "enum": Source.VersioningMode.values,
            "default": Source.VersioningMode.SNAPSHOT.value,
        },
        "source_modified_at": {"type": "string", "format": "date-time"},
        "source_version_ref": {"type": "string", "minLength": 1, "maxLength": SOURCE_VERSION_REF_MAX_LENGTH},
        "space": {"type": "string", "format": "uuid"},
        "wait": WAIT,
    },
}


def multipart_upload(
    request: Request, schema: dict[str, Any], *, what: str, max_bytes: int, too_large: Code
) -> tuple[dict[str, Any], Any]:
    """The validated form fields of a multipart upload (`wait` read as a number) and its `file`,
    refused with `too_large` when it is over `max_bytes` (before it is read into memory)."""
    data = request.data
    if not isinstance(data, QueryDict):
        raise AppError(Code.UNSUPPORTED_MEDIA_TYPE, "Upload with multipart/form-data.")
    fields: dict[str, Any] = {key: data.get(key) for key in data if key != "file"}
    if "wait" in fields:
        raw = str(fields["wait"])
        if not raw.isdigit():
            raise AppError(
                Code.WRONG_TYPE, "wait must be a whole number of seconds.", details={"field": "wait"}
            )
        fields["wait"] = int(raw)
    args = validate_arguments(schema, fields)
    upload = request.FILES.get("file")
    if upload is None:
        raise AppError(
            Code.MISSING_FIELD, f"Send the {what} in the multipart field 'file'.", details={"field": "file"}
        )
    if upload.size is not None and upload.size > max_bytes:
        raise AppError(
            too_large,
            f"The {what} is larger than {max_bytes // (1024 * 1024)} MB.",
            details={"max_bytes": max_bytes},
        )
    return args, upload


def upload_response(*, job: Job, created: bool, source: dict[str, Any], wait: int, again: str) -> Response:
    """The answer to an upload: its job (waited for up to `wait` seconds when it is new)."""
    if created:
        job = job_wait(job, wait)
    extra: dict[str, Any] = {"created": created, "source": source}
    if not created:
        extra["message"] = again
    return job_response(job, extra=extra)


class DocumentUploadView(ApiView):
    scopes = {"post": SCOPE_WRITE}

    def post(self, request: Request) -> Response:
        """Upload a .txt, .md, .pdf or .html document (multipart field `file`)."""
        caller = self.caller
        args, upload = multipart_upload(
            request,
            UPLOAD_SCHEMA,
            what="document",
            max_bytes=settings.DOCUMENT_MAX_BYTES,
            too_large=Code.DOCUMENT_TOO_LARGE,
        )
        user_throttle(limit="upload", user=caller.user)
        source, job, created = document_ingest(
            caller=caller,
            filename=upload.name or "document",
            data=upload.read(),
            declared_media_type=upload.content_type or "",
            source_kind=args.get("source_kind", ""),
            source_ref=args.get("source_ref", ""),
            versioning_mode=args["versioning_mode"],
            source_modified_at=args.get("source_modified_at"),
            source_version_ref=args.get("source_version_ref", ""),
            space_id=args.get("space"),
        )
        return upload_response(
            job=job,
            created=created,
            source={"id": str(source.id), "version": source.version},
            wait=args["wait"],
            again="These exact bytes were uploaded before; nothing new was stored.",
        )
