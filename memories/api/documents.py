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
from memories.limits import SOURCE_KIND_MAX_LENGTH, SOURCE_REF_MAX_LENGTH
from memories.models import Source
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
        "space": {"type": "string", "format": "uuid"},
        "wait": WAIT,
    },
}


class DocumentUploadView(ApiView):
    scopes = {"post": SCOPE_WRITE}

    def post(self, request: Request) -> Response:
        """Upload a .txt, .md, .pdf or .html document (multipart field `file`)."""
        caller = self.caller
        upload = request.FILES.get("file")
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
        args = validate_arguments(UPLOAD_SCHEMA, fields)
        if upload is None:
            raise AppError(
                Code.MISSING_FIELD,
                "Send the document in the multipart field 'file'.",
                details={"field": "file"},
            )
        if upload.size is not None and upload.size > settings.DOCUMENT_MAX_BYTES:
            # Refuse before reading it into memory.
            raise AppError(
                Code.DOCUMENT_TOO_LARGE,
                f"The document is larger than {settings.DOCUMENT_MAX_BYTES // (1024 * 1024)} MB.",
                details={"max_bytes": settings.DOCUMENT_MAX_BYTES},
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
            space_id=args.get("space"),
        )
        if created:
            job = job_wait(job, args["wait"])
        extra = {"created": created, "source": {"id": str(source.id), "version": source.version}}
        if not created:
            extra["message"] = "These exact bytes were uploaded before; nothing new was stored."
        return job_response(job, extra=extra)
