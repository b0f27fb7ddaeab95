"""The one path of a REST upload (a document, an image): a multipart form whose `file` is checked
for size before it is read, the form's fields validated by the upload's schema, the caller's rate
budgets spent, the bytes handed to the upload's ingest service, and the answer its job (waited for
when it is new). Each upload view declares only what differs (memories/api/documents.py, images.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from django.core.files.uploadedfile import UploadedFile
from django.http import QueryDict
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.caller import SCOPE_WRITE, Caller
from accounts.throttles import user_throttle
from memories.api.base import ApiView
from memories.api.jobs import job_response
from memories.errors import AppError, Code
from memories.models import Job
from memories.operations.validation import validate_arguments
from memories.selectors.jobs import job_wait


@dataclass(frozen=True)
class Upload:
    """What an ingest service made of an upload: its job, whether it is new, and its source as shown."""

    job: Job
    created: bool
    source: dict[str, Any]


class UploadView(ApiView):
    scopes = {"post": SCOPE_WRITE}
    # The form fields, checked by the one validator (memories.operations.validation).
    fields_schema: ClassVar[dict[str, Any]]
    # What the file is, in the answers' words ("Send the document in the multipart field 'file'.").
    what: ClassVar[str]
    # The rate budgets an upload spends, in order: one refused leaves those after it unspent.
    limits: ClassVar[tuple[str, ...]] = ("upload",)
    too_large: ClassVar[Code]
    # What the answer says when the same upload was stored before.
    again: ClassVar[str]

    def max_bytes(self) -> int:
        """The largest file accepted (a setting: read per request)."""
        raise NotImplementedError

    def ingest(self, *, caller: Caller, upload: UploadedFile, args: dict[str, Any]) -> Upload:
        """Hand the file and the validated fields to the upload's ingest service."""
        raise NotImplementedError

    def upload(self, request: Request) -> Response:
        """The upload's one path, from the form to the job's answer."""
        caller = self.caller
        args, upload = multipart_upload(
            request, self.fields_schema, what=self.what, max_bytes=self.max_bytes(), too_large=self.too_large
        )
        for limit in self.limits:
            user_throttle(limit=limit, user=caller.user)
        made = self.ingest(caller=caller, upload=upload, args=args)
        return upload_response(
            job=made.job, created=made.created, source=made.source, wait=args["wait"], again=self.again
        )


def multipart_upload(
    request: Request, schema: dict[str, Any], *, what: str, max_bytes: int, too_large: Code
) -> tuple[dict[str, Any], UploadedFile]:
    """The validated form fields of a multipart upload (`wait` read as a number) and its `file`,
    refused with `too_large` when it is over `max_bytes` (before it is read into memory)."""
    data = request.data
    if not isinstance(data, QueryDict):
        raise AppError(Code.UNSUPPORTED_MEDIA_TYPE, "Upload with multipart/form-data.")
    fields: dict[str, object] = {key: data.get(key) for key in data if key != "file"}
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
    extra: dict[str, object] = {"created": created, "source": source}
    if not created:
        extra["message"] = again
    return job_response(job, extra=extra)
