"""The ingest profile (`/mcp/ingest`): `ingest` a text or a document, then `pipeline_readiness`.

For importers and sync jobs. `ingest` is a thin layer over `document_ingest`, the
same path as the REST upload (POST /api/v1/documents): identical bytes are stored once
(`created: false`), and a `living` document named by `source_kind` + `source_ref` gets
numbered versions whose newest supersedes what the older ones no longer say.

Decisions (docs/mcp.md):
- exactly one of `content` (text) or `document_base64` (any supported document, PDF
  included); both or neither is an error before anything is stored;
- `mime` defaults to text/plain for `content` (a PDF cannot be text); for
  `document_base64` it is optional and sniffed: bytes starting with `%PDF-` are a PDF,
  anything else is text/plain, so HTML and Markdown bodies must say so. A declared mime
  that the bytes contradict (a PDF sent as text, or "PDF" bytes that are not one) is refused;
- base64 is checked strictly: the standard alphabet with its padding, canonical, no line
  breaks or URL-safe characters, since a lenient decoder would store bytes the caller
  did not mean;
- `content_hash` is the sha256 of the stored bytes: the UTF-8 of the (trimmed) content, or
  the decoded document;
- `living` needs `source_kind` + `source_ref`: they are what names the document across
  versions, and without them there is no "next version" to supersede anything;
- the document goes to the caller's current space (`switch_agent` honoured), like every write.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from django.conf import settings

from accounts.caller import SCOPE_READ, SCOPE_WRITE, Caller
from accounts.throttles import user_throttle
from memories.errors import CATALOGUE, AppError, Code
from memories.limits import SOURCE_KIND_MAX_LENGTH, SOURCE_REF_MAX_LENGTH, TITLE_MAX_LENGTH
from memories.models import Job, Source, Space
from memories.operations.registry import READ_ONLY, WRITES_IDEMPOTENT, operation
from memories.operations.schemas import ALL, NULLABLE_TIME, UUID, obj
from memories.representations import iso
from memories.selectors.jobs import FAILED_STAGES, STAGE_STATUSES, STAGES, JobReadiness, job_readiness_list
from memories.services.documents import document_ingest
from memories.services.spaces import space_for_caller

# The evidence contract offers the write tools on its URL too.
PROFILES = ("ingest", "evidence")
NULLABLE_UUID = {"type": ["string", "null"], "format": "uuid"}
TEXT_MIMES = ["text/plain", "text/markdown", "text/html"]
PDF = "application/pdf"
MIMES = [*TEXT_MIMES, PDF]
# The name handed to the document reader: its extension is what decides the type there,
# so it is always ours, never a caller's text that may contain dots.
_EXTENSIONS = {"text/plain": ".txt", "text/markdown": ".md", "text/html": ".html", PDF: ".pdf"}
_PDF_MAGIC = b"%PDF-"
# How soon a fresh job is worth asking about: most finish within a second.
POLL_AFTER_MS = 500
# A job on its second or later attempt is being retried with backoff: ask less often.
RETRY_POLL_AFTER_MS = 2000
MAX_JOB_IDS = 50
JOB_STATUSES = [*Job.Status.values, "not_found"]


def _base64_length(size: int) -> int:
    return 4 * ((size + 2) // 3)


def _too_large(field: str) -> AppError:
    limit = settings.DOCUMENT_MAX_BYTES
    return AppError(
        Code.DOCUMENT_TOO_LARGE,
        f"{field} is larger than the {limit:,}-byte document limit.",
        agent_action="split the document into smaller parts and ingest them separately",
        details={"field": field, "max_bytes": limit},
    )


def _decode_base64(text: str) -> bytes:
    """Strict standard base64 (RFC 4648 section 4, padded, canonical), or an AppError."""
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        data = None
    # Re-encoding catches what the decoder lets through: missing padding bits set, or
    # padding in the middle of the text.
    if data is None or base64.b64encode(data).decode("ascii") != text:
        raise AppError(
            Code.INVALID_BASE64,
            "document_base64 is not valid base64: use the standard alphabet (A-Z a-z 0-9 + /) with "
            "'=' padding and no line breaks.",
            details={"field": "document_base64"},
            agent_action="encode the document bytes with standard, padded base64 and send it again",
        )
    return data


def _mime_mismatch(mime: str, actual: str) -> AppError:
    return AppError(
        Code.UNSUPPORTED_MEDIA_TYPE,
        f"mime says {mime} but the document is {actual}.",
        details={"field": "mime"},
        agent_action="send the mime that matches the bytes (or leave mime out to have it sniffed)",
    )


def _document(args: dict[str, Any]) -> tuple[bytes, str]:
    """The bytes to store and their declared type, from exactly one of content / document_base64."""
    has_content = "content" in args
    has_document = "document_base64" in args
    if has_content and has_document:
        raise AppError(
            Code.CONFLICTING_FIELDS,
            "Send either content or document_base64, not both.",
            details={"fields": ["content", "document_base64"]},
            agent_action="send text as content, or a document's bytes as document_base64",
        )
    if not has_content and not has_document:
        raise AppError(
            Code.MISSING_FIELD,
            "Send the text as content, or the document's bytes as document_base64.",
            details={"field": "content", "one_of": ["content", "document_base64"]},
            agent_action="send content (text) or document_base64 (a document, e.g. a PDF)",
        )
    limit = settings.DOCUMENT_MAX_BYTES
    mime = args.get("mime")
    if has_content:
        mime = mime or "text/plain"
        if mime not in TEXT_MIMES:
            raise AppError(
                Code.INVALID_VALUE,
                f"content is text; mime must be one of: {', '.join(TEXT_MIMES)}. "
                "Send a PDF as document_base64.",
                details={"field": "mime", "allowed": TEXT_MIMES},
                agent_action="send the PDF's bytes as document_base64, or a text mime with content",
            )
        data = str(args["content"]).encode("utf-8")
        if len(data) > limit:
            raise _too_large("content")
        return data, mime
    text = str(args["document_base64"])
    if len(text) > _base64_length(limit):
        raise _too_large("document_base64")
    data = _decode_base64(text)
    if len(data) > limit:
        raise _too_large("document_base64")
    is_pdf = data.startswith(_PDF_MAGIC)
    if mime is None:
        return data, PDF if is_pdf else "text/plain"
    if is_pdf and mime != PDF:
        raise _mime_mismatch(mime, "a PDF")
    if mime == PDF and not is_pdf:
        raise _mime_mismatch(mime, "not a PDF (it does not start with %PDF-)")
    return data, mime


def _filename(*, title: str, source_ref: str, mime: str) -> str:
    base = (title or source_ref or "ingested document").replace("/", " ").replace("\\", " ")
    return base.strip()[:200] + _EXTENSIONS[mime]


def _polling(job: Job, *, created: bool) -> dict[str, Any]:
    finished = job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED)
    arguments = {"job_ids": [str(job.id)]}
    if finished:
        message = (
            f"The job has already {job.status}. Call pipeline_readiness once to see its stages and "
            "whether its memories are searchable; there is no need to poll."
        )
        return {"tool": "pipeline_readiness", "arguments": arguments, "poll_after_ms": 0, "message": message}
    message = (
        "Call pipeline_readiness with this job id after poll_after_ms, and again at that pace until it "
        "says stop_polling; once the job is searchable, recall finds what was ingested."
    )
    if not created:
        message = "The earlier job is still being processed. " + message
    return {
        "tool": "pipeline_readiness",
        "arguments": arguments,
        "poll_after_ms": POLL_AFTER_MS if job.attempts <= 1 else RETRY_POLL_AFTER_MS,
        "message": message,
    }


INGEST_INPUT: dict[str, Any] = obj(
    {
        "content": {
            "type": "string",
            "minLength": 1,
            "maxLength": settings.DOCUMENT_MAX_BYTES,
            "description": (
                "The text to ingest (trimmed; at most the document size limit in UTF-8 bytes). "
                "Exclusive with document_base64."
            ),
        },
        "document_base64": {
            "type": "string",
            "minLength": 1,
            "maxLength": _base64_length(settings.DOCUMENT_MAX_BYTES),
            "description": (
                "A document's bytes in standard, padded base64 without line breaks (at most the "
                "document size limit once decoded). Exclusive with content."
            ),
        },
        "mime": {
            "type": "string",
            "enum": MIMES,
            "description": (
                "What the bytes are. With content: a text type, default text/plain. With "
                "document_base64: optional; when left out, a PDF is recognised by its first bytes "
                "and anything else is read as text/plain (declare text/html or text/markdown)."
            ),
        },
        "title": {
            "type": "string",
            "minLength": 1,
            "maxLength": TITLE_MAX_LENGTH,
            "description": "A title.",
        },
        "source_kind": {
            "type": "string",
            "minLength": 1,
            "maxLength": SOURCE_KIND_MAX_LENGTH,
            "description": "Where the document lives (gdrive, notion, url, ...); needs source_ref.",
        },
        "source_ref": {
            "type": "string",
            "minLength": 1,
            "maxLength": SOURCE_REF_MAX_LENGTH,
            "description": "The document's id or URL there; needs source_kind.",
        },
        "versioning_mode": {
            "type": "string",
            "enum": Source.VersioningMode.values,
            "default": Source.VersioningMode.SNAPSHOT.value,
            "description": (
                "snapshot (default): each version stands on its own. living: the newest version "
                "is the document, and what only older versions said is superseded (needs "
                "source_kind + source_ref)."
            ),
        },
        "source_modified_at": {
            "type": "string",
            "format": "date-time",
            "description": (
                "When the document was last changed at its source (RFC 3339 with an offset); "
                "relative dates in it resolve against this."
            ),
        },
    }
)


INGEST_OUTPUT: dict[str, Any] = obj(
    {
        "job_id": UUID,
        "status": {"type": "string", "enum": list(Job.Status.values)},
        "created": {"type": "boolean"},
        "version": obj(
            {"source_id": UUID, "number": {"type": "integer", "minimum": 1}},
            required=ALL,
            closed=False,
        ),
        "content_hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "document": obj(
            {
                "source_kind": {"type": ["string", "null"]},
                "source_ref": {"type": ["string", "null"]},
                "versioning_mode": {"type": "string"},
                "title": {"type": ["string", "null"]},
                "mime": {"type": "string"},
                "size_bytes": {"type": "integer"},
                "source_modified_at": NULLABLE_TIME,
            },
            closed=False,
        ),
        "space_id": UUID,
        "message": {"type": "string"},
        "polling": obj(
            {
                "tool": {"type": "string"},
                "arguments": {"type": "object"},
                "poll_after_ms": {"type": "integer", "minimum": 0},
                "message": {"type": "string"},
            },
            required=ALL,
            closed=False,
        ),
    },
    required=ALL,
)


@operation("ingest", PROFILES, SCOPE_WRITE, WRITES_IDEMPOTENT, INGEST_INPUT, INGEST_OUTPUT)
def _ingest(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """Ingest a text or a document (PDF, HTML, Markdown, plain text) into the user's memory, as an importer
    or sync job would. Send exactly one of `content` (text) or `document_base64` (the document's bytes).
    Name a document that is re-sent over time with `source_kind` + `source_ref`; with `versioning_mode:
    living` each new version supersedes what the older ones no longer say. Sending the same bytes again
    stores nothing (`created: false`). Returns the job id at once: poll `pipeline_readiness` until it says
    `stop_polling`. A request to this endpoint may carry a whole document up to the deployment's document
    size limit.
    """
    data, mime = _document(args)
    user_throttle(limit="upload", user=caller.user)
    source_kind = args.get("source_kind", "")
    source_ref = args.get("source_ref", "")
    title = args.get("title", "")
    source, job, created = document_ingest(
        caller=caller,
        filename=_filename(title=title, source_ref=source_ref, mime=mime),
        data=data,
        declared_media_type=mime,
        source_kind=source_kind,
        source_ref=source_ref,
        versioning_mode=args["versioning_mode"],
        source_modified_at=args.get("source_modified_at"),
        title=title,
    )
    if created:
        message = f"Stored as version {source.version}; its memories are being derived."
    else:
        message = (
            "These exact bytes were ingested before (same document name and space): nothing new was "
            "stored. The job, version and hash are the earlier ones."
        )
    return {
        "job_id": str(job.id),
        "status": job.status,
        "created": created,
        "version": {"source_id": str(source.id), "number": source.version},
        "content_hash": source.content_hash,
        "document": {
            "source_kind": source.source_kind or None,
            "source_ref": source.source_ref or None,
            "versioning_mode": source.versioning_mode,
            "title": source.title or None,
            "mime": source.media_type,
            "size_bytes": source.size_bytes,
            "source_modified_at": iso(source.source_modified_at),
        },
        "space_id": str(source.space_id),
        "message": message,
        "polling": _polling(job, created=created),
    }


# --- pipeline_readiness ------------------------------------------------------------------


def _next_step(item: JobReadiness, *, in_current_space: bool) -> str:
    job = item.job
    if job is None:
        return (
            "No job with this id exists in your account. Check the id (ingest and remember return it); "
            "asking again will not change this."
        )
    if job.status == Job.Status.QUEUED:
        return "Waiting for a worker. Poll again after poll_after_ms."
    if job.status == Job.Status.RUNNING:
        retry = f" (attempt {job.attempts}, after a transient failure)" if job.attempts > 1 else ""
        return (
            f"Being processed{retry}: extract, embed and store run as one unit, so which of them is "
            "under way is not recorded. Poll again after poll_after_ms."
        )
    if job.status == Job.Status.FAILED:
        return f"Failed for good ({job.error_code}): polling will not change it. " + (
            "Nothing in it could be remembered: send content that states something in words."
            if job.error_code == Code.NOTHING_TO_REMEMBER
            else "Saving it again may help."
        )
    counts = item.counts
    if not item.searchable:
        return (
            "Processed, but none of its memories is searchable now: since then they were "
            f"suppressed ({counts.suppressed}), superseded ({counts.superseded}) or deleted."
        )
    where = (
        "recall on this endpoint finds them."
        if in_current_space
        else "they are in another space than the one this connection uses now; switch to it to recall them."
    )
    return f"Searchable: {counts.searchable} of its {counts.total} memories are; {where}"


def _readiness_dict(item: JobReadiness, *, current_space: Space) -> dict[str, Any]:
    job = item.job
    error: dict[str, Any] | None = None
    if job is None:
        error = {
            "code": Code.JOB_NOT_FOUND.value,
            "message": CATALOGUE[Code.JOB_NOT_FOUND].message,
            "failed_stage": None,
        }
    elif job.status == Job.Status.FAILED:
        error = {"code": job.error_code, "message": job.error_message, "failed_stage": item.failed_stage}
    in_current_space = job is not None and job.space_id == current_space.id
    return {
        "job_id": str(item.job_id),
        "status": item.status,
        "kind": job.kind if job is not None else None,
        "attempts": job.attempts if job is not None else None,
        "stages": [{"name": s.name, "status": s.status, "at": iso(s.at)} for s in item.stages],
        "searchable": item.searchable,
        "memory_count": item.counts.total if job is not None else None,
        "searchable_count": item.counts.searchable if job is not None else None,
        "space_id": str(job.space_id) if job is not None else None,
        "in_current_space": in_current_space,
        "version": (
            {"source_id": str(job.source_id), "number": job.source.version}
            if job is not None and job.source is not None
            else None
        ),
        "created_at": iso(job.created_at) if job is not None else None,
        "started_at": iso(job.started_at) if job is not None else None,
        "finished_at": iso(job.finished_at) if job is not None else None,
        "error": error,
        "done": item.done,
        "stop_polling": item.stop_polling,
        "next": _next_step(item, in_current_space=in_current_space),
    }


_STAGE = obj(
    {
        "name": {"type": "string", "enum": list(STAGES)},
        "status": {"type": "string", "enum": list(STAGE_STATUSES)},
        "at": NULLABLE_TIME,
    },
    required=ALL,
    closed=False,
)
_JOB_READINESS = obj(
    {
        "job_id": UUID,
        "status": {"type": "string", "enum": JOB_STATUSES},
        "kind": {"type": ["string", "null"]},
        "attempts": {"type": ["integer", "null"]},
        "stages": {"type": "array", "items": _STAGE},
        "searchable": {"type": "boolean"},
        "memory_count": {"type": ["integer", "null"]},
        "searchable_count": {"type": ["integer", "null"]},
        "space_id": NULLABLE_UUID,
        "in_current_space": {"type": "boolean"},
        "version": obj({"source_id": UUID, "number": {"type": "integer"}}, closed=False, nullable=True),
        "created_at": NULLABLE_TIME,
        "started_at": NULLABLE_TIME,
        "finished_at": NULLABLE_TIME,
        "error": obj(
            {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "failed_stage": {"type": ["string", "null"], "enum": [*FAILED_STAGES, None]},
            },
            closed=False,
            nullable=True,
        ),
        "done": {"type": "boolean"},
        "stop_polling": {"type": "boolean"},
        "next": {"type": "string"},
    },
    required="job_id status stages searchable memory_count error done stop_polling next",
    closed=False,
)

READINESS_INPUT: dict[str, Any] = obj(
    {
        "job_ids": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_JOB_IDS,
            "uniqueItems": True,
            "items": UUID,
            "description": f"Job ids returned by ingest or remember (1-{MAX_JOB_IDS}, unique).",
        }
    },
    required=ALL,
)


READINESS_OUTPUT: dict[str, Any] = obj(
    {
        "jobs": {"type": "array", "items": _JOB_READINESS},
        "summary": obj(
            {name: {"type": "integer", "minimum": 0} for name in [*JOB_STATUSES, "searchable"]}, closed=False
        ),
        "done": {"type": "boolean", "description": "Every job has finished (succeeded or failed)."},
        "stop_polling": {
            "type": "boolean",
            "description": "Asking again cannot change any answer (finished, or not found).",
        },
        "poll_after_ms": {"type": ["integer", "null"], "minimum": 0},
    },
    required=ALL,
)


@operation("pipeline_readiness", PROFILES, SCOPE_READ, READ_ONLY, READINESS_INPUT, READINESS_OUTPUT)
def _pipeline_readiness(caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """Where ingested or remembered content is in the pipeline (queued -> extract -> embed -> store ->
    searchable), for up to 50 job ids: each job's status, attempts and stages, whether its memories are
    searchable now, and on failure the error and the stage that failed. Poll it after poll_after_ms until
    stop_polling is true; a failed job has failed for good. An id that is not one of the user's jobs is
    reported as not_found.
    """
    # Typed and unique by the validator: the same id in another letter case is a duplicate there.
    items = job_readiness_list(owner=caller.user, job_ids=args["job_ids"])
    current_space = space_for_caller(caller=caller)
    jobs = [_readiness_dict(item, current_space=current_space) for item in items]
    waiting = [item for item in items if not item.stop_polling]
    poll_after_ms = None
    if waiting:
        retried = any(item.job is not None and item.job.attempts > 1 for item in waiting)
        poll_after_ms = RETRY_POLL_AFTER_MS if retried else POLL_AFTER_MS
    summary = {status: 0 for status in JOB_STATUSES}
    for item in items:
        summary[item.status] += 1
    summary["searchable"] = sum(1 for item in items if item.searchable)
    return {
        "jobs": jobs,
        "summary": summary,
        "done": all(item.done for item in items),
        "stop_polling": not waiting,
        "poll_after_ms": poll_after_ms,
    }
