"""REST endpoints of images: the upload, and the picture behind a signed `image_url`."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.http import FileResponse, HttpRequest
from django.http.response import HttpResponseBase
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import Caller
from memories.api.base import json_error
from memories.api.query import WAIT
from memories.api.uploads import Upload, UploadView
from memories.errors import AppError, Code
from memories.limits import CAPTION_MAX_CHARS
from memories.selectors.images import image_source_for_link, image_storage
from memories.services.images import image_ingest

logger = logging.getLogger(__name__)

UPLOAD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "caption": {"type": "string", "maxLength": CAPTION_MAX_CHARS},
        "space": {"type": "string", "format": "uuid"},
        "wait": WAIT,
    },
}

# What every picture response says: never kept by a cache or a browser (the link is the access),
# never sniffed into something else, and nothing in it may run if a browser opens it as a page.
PICTURE_HEADERS = {
    "Cache-Control": "no-store, private",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Referrer-Policy": "no-referrer",
}


class ImageUploadView(UploadView):
    fields_schema = UPLOAD_SCHEMA
    what = "image"
    # The image budget first: it is the smaller, and a refused image then spends no upload.
    limits = ("image", "upload")
    too_large = Code.IMAGE_TOO_LARGE
    again = "This image was uploaded before with the same caption; nothing new was stored."

    def post(self, request: Request) -> Response:
        """Upload a PNG, JPEG or WebP image (multipart field `file`) with an optional `caption`."""
        return self.upload(request)

    def max_bytes(self) -> int:
        return int(settings.IMAGE_MAX_BYTES)

    def ingest(self, *, caller: Caller, upload: UploadedFile, args: dict[str, Any]) -> Upload:
        source, job, created = image_ingest(
            caller=caller,
            filename=upload.name or "image",
            data=upload.read(),
            declared_media_type=upload.content_type or "",
            caption=args.get("caption", ""),
            space_id=args.get("space"),
        )
        return Upload(job=job, created=created, source={"id": str(source.id)})


def image_content(request: HttpRequest, source_id: uuid.UUID) -> HttpResponseBase:
    """The picture a signed link names (no credentials: the link is the access, for an hour)."""
    try:
        if request.method not in ("GET", "HEAD"):
            raise AppError(Code.METHOD_NOT_ALLOWED, "Fetch an image link with GET.")
        source = image_source_for_link(source_id=source_id, signature=request.GET.get("sig", ""))
        try:
            picture = image_storage().open(source.image_name, "rb")
        except FileNotFoundError:
            # The row still names it but the purge has deleted it (its commit is on its way).
            raise AppError(Code.IMAGE_NOT_FOUND) from None
    except AppError as error:
        response: HttpResponseBase = json_error(request, error)
    else:
        response = FileResponse(picture, content_type=source.media_type)
    for name, value in PICTURE_HEADERS.items():
        response[name] = value
    return response
