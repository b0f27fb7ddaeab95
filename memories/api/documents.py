"""REST endpoint of document uploads (the upload's path is memories/api/uploads.py)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import Caller
from memories.api.query import WAIT
from memories.api.uploads import Upload, UploadView
from memories.errors import Code
from memories.limits import SOURCE_KIND_MAX_LENGTH, SOURCE_REF_MAX_LENGTH, SOURCE_VERSION_REF_MAX_LENGTH
from memories.models import Source
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


class DocumentUploadView(UploadView):
    fields_schema = UPLOAD_SCHEMA
    what = "document"
    too_large = Code.DOCUMENT_TOO_LARGE
    again = "These exact bytes were uploaded before; nothing new was stored."

    def post(self, request: Request) -> Response:
        """Upload a .txt, .md, .pdf or .html document (multipart field `file`)."""
        return self.upload(request)

    def max_bytes(self) -> int:
        return int(settings.DOCUMENT_MAX_BYTES)

    def ingest(self, *, caller: Caller, upload: UploadedFile, args: dict[str, Any]) -> Upload:
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
        return Upload(job=job, created=created, source={"id": str(source.id), "version": source.version})
