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
import dataclasses
import uuid
from typing import Any

from django.conf import settings

from accounts.caller import SCOPE_READ, SCOPE_WRITE, Caller
from accounts.throttles import user_throttle
from memories.errors import CATALOGUE, AppError, Code
from memories.limits import (
    SOURCE_KIND_MAX_LENGTH,
    SOURCE_REF_MAX_LENGTH,
    SOURCE_VERSION_REF_MAX_LENGTH,
    TITLE_MAX_LENGTH,
)
from memories.models import Job, Source, Space
from memories.operations.registry import READ_ONLY, WRITES_IDEMPOTENT, operation
from memories.operations.schemas import ALL, NULLABLE_TIME, UUID, obj
from memories.selectors.jobs import (
    DONE,
    FAILED,
    FAILED_STAGES,
    IN_PROGRESS,
    MERGED_STATES,
    NOT_REACHED,
    NOT_SEARCHABLE,
    PENDING,
    STAGE_STATUSES,
    STAGES,
    SUPPRESSED,
    UNKNOWN,
    JobReadiness,
    MergedMemory,
    job_readiness_list,
    version_job_ids,
)
from memories.services.documents import document_ingest
from memories.services.spaces import space_for_caller
from memories.wire import iso

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
# The contract's readiness requirements. pipeline: the job finished; p1: its memories are stored and
# found by search; live_graph: its entities and relations are linked (the same commit as p1 here);
# p3: a published corpus tree, which this service does not build: reported `not_offered`, never waited on.
REQUIREMENTS = ("pipeline", "p1", "live_graph", "p3")
NOT_OFFERED = frozenset({"p3"})
DEFAULT_REQUIRE = {"pipeline": True, "p1": True, "live_graph": True, "p3": False}
REQUIREMENT_STATUSES = [
    "done",
    "pending",
    "in_progress",
    "failed",
    "not_searchable",
    "not_found",
    "not_offered",
]
REQUIRE_OUTPUT = obj({name: {"type": "boolean"} for name in REQUIREMENTS}, required=ALL, closed=False)


def _base64_length(size: int) -> int:
    return 4 * ((size + 2) // 3)


def _too_large(field: str) -> AppError:
    limit = settings.DOCUMENT_MAX_BYTES
    return AppError(
        Code.BODY_TOO_LARGE,
        f"{field} is larger than the {limit:,}-byte document limit.",
        agent_action="split the document into smaller parts and ingest them separately",
        details={"field": field, "max_bytes": limit},
    )


def _empty(field: str) -> AppError:
    return AppError(
        Code.EMPTY_BODY,
        f"{field} is empty (or only whitespace): there is nothing to ingest.",
        details={"field": field},
        agent_action="send content that states something in words",
    )


_BODIES = ("content", "document_base64")


def contract_error(error: AppError) -> AppError:
    """The evidence contract's name for a refusal of the body (`ingest` maps body_too_large /
    empty_body): a body over the limit or blank, however it was found; anything else as it is."""
    field = error.details.get("field")
    if error.code == Code.VALUE_TOO_LONG and field in _BODIES:
        return _too_large(str(field))
    if error.code in (Code.VALUE_TOO_SHORT, Code.DOCUMENT_EMPTY) and field in (*_BODIES, None):
        return _empty(str(field or "the document"))
    return error


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


def _pipeline(job: Job, source: Source, *, created: bool) -> dict[str, object]:
    """The contract's async guidance: where the version is, and the exact pipeline_readiness call to make."""
    finished = job.status in (Job.Status.SUCCEEDED, Job.Status.FAILED)
    if job.status == Job.Status.SUCCEEDED:
        status = "processed"
    elif job.status == Job.Status.FAILED:
        status = "failed"
    else:
        status = "accepted_not_ready"
    if finished:
        outcome = "processed" if status == "processed" else "refused by the pipeline"
        guidance = (
            f"The version has already been {outcome}. "
            "Call pipeline_readiness once with poll_with to see its stages and whether it is ready; there is "
            "no need to poll."
        )
    else:
        guidance = (
            "Ingest accepted. Wait until pipeline_readiness.ready is true before relying on what was "
            "ingested: call it with poll_with after poll_after_ms, and again at that pace while ready "
            "is false and stop_polling is false; on a failed stage stop and report it."
        )
        if not created:
            guidance = "The earlier version is still being processed. " + guidance
    poll_after_ms = 0 if finished else POLL_AFTER_MS if job.attempts <= 1 else RETRY_POLL_AFTER_MS
    return {
        "status": status,
        "next_tool": "pipeline_readiness",
        "poll_with": {"version_ids": [str(source.id)], "require": dict(DEFAULT_REQUIRE)},
        "poll_after_ms": poll_after_ms,
        "guidance": guidance,
    }


INGEST_INPUT: dict[str, object] = obj(
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
                "relative dates in it resolve against this. Needs source_kind + source_ref."
            ),
        },
        "source_version_ref": {
            "type": "string",
            "minLength": 1,
            "maxLength": SOURCE_VERSION_REF_MAX_LENGTH,
            "description": (
                "This version's own name at its source (a commit, a revision id), kept and shown back. "
                "Needs source_kind + source_ref."
            ),
        },
    }
)


INGEST_OUTPUT: dict[str, object] = obj(
    {
        # The contract's IngestedVersion.
        "deployment_id": UUID,
        "doc_id": UUID,
        "version_id": UUID,
        "content_hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "created": {"type": "boolean"},
        "pipeline": obj(
            {
                "status": {"type": "string", "enum": ["accepted_not_ready", "processed", "failed"]},
                "next_tool": {"type": "string", "enum": ["pipeline_readiness"]},
                "poll_with": obj(
                    {"version_ids": {"type": "array", "items": UUID}, "require": REQUIRE_OUTPUT},
                    required=ALL,
                    closed=False,
                ),
                "poll_after_ms": {"type": "integer", "minimum": 0},
                "guidance": {"type": "string"},
            },
            required=ALL,
            closed=False,
        ),
        # Ours beside it: the job (what remember also returns), the version's number and document.
        "job_id": UUID,
        "status": {"type": "string", "enum": list(Job.Status.values)},
        "version": obj(
            {"source_id": UUID, "number": {"type": "integer", "minimum": 1}},
            required=ALL,
            closed=False,
        ),
        "document": obj(
            {
                "source_kind": {"type": ["string", "null"]},
                "source_ref": {"type": ["string", "null"]},
                "versioning_mode": {"type": "string"},
                "title": {"type": ["string", "null"]},
                "mime": {"type": "string"},
                "size_bytes": {"type": "integer"},
                "source_modified_at": NULLABLE_TIME,
                "source_version_ref": {"type": ["string", "null"]},
            },
            closed=False,
        ),
        "space_id": UUID,
        "message": {"type": "string"},
    },
    required=ALL,
)


@operation(
    "ingest", PROFILES, SCOPE_WRITE, WRITES_IDEMPOTENT, INGEST_INPUT, INGEST_OUTPUT, name_error=contract_error
)
def _ingest(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
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
    try:
        source, job, created = document_ingest(
            caller=caller,
            filename=_filename(title=title, source_ref=source_ref, mime=mime),
            data=data,
            declared_media_type=mime,
            source_kind=source_kind,
            source_ref=source_ref,
            versioning_mode=args["versioning_mode"],
            source_modified_at=args.get("source_modified_at"),
            source_version_ref=args.get("source_version_ref", ""),
            title=title,
        )
    except AppError as refused:
        raise contract_error(refused) from None
    if created:
        message = f"Stored as version {source.version}; its memories are being derived."
    else:
        message = (
            "These exact bytes were ingested before (same document name and space): nothing new was "
            "stored. The job, version and hash are the earlier ones."
        )
    return {
        "deployment_id": settings.DEPLOYMENT_ID,
        "doc_id": str(source.document_id),
        "version_id": str(source.id),
        "content_hash": source.content_hash,
        "created": created,
        "pipeline": _pipeline(job, source, created=created),
        "job_id": str(job.id),
        "status": job.status,
        "version": {"source_id": str(source.id), "number": source.version},
        "document": {
            "source_kind": source.source_kind or None,
            "source_ref": source.source_ref or None,
            "versioning_mode": source.versioning_mode,
            "title": source.title or None,
            "mime": source.media_type,
            "size_bytes": source.size_bytes,
            "source_modified_at": iso(source.source_modified_at),
            "source_version_ref": source.source_version_ref or None,
        },
        "space_id": str(source.space_id),
        "message": message,
    }


# --- pipeline_readiness ------------------------------------------------------------------


def _next_step(item: JobReadiness, *, in_current_space: bool, version_id: uuid.UUID | None) -> str:
    job = item.job
    if job is None:
        what = "version" if version_id is not None else "job"
        return (
            f"No {what} with this id exists in your account. Check the id (ingest returns it); "
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
    hidden = [m for m in counts.merged if not m.searchable]
    if not item.searchable and hidden and len(hidden) == counts.total:
        # Nothing of its own: its content was already held by memories recall does not find (a
        # forgotten one stays forgotten when the same words are saved again).
        return (
            "Processed: its content was already stored, so it added evidence, not a new memory, to "
            + ("; ".join(_merged_words(m) for m in hidden))
            + ". Polling will not change this."
        )
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


def _merged_words(memory: MergedMemory) -> str:
    if memory.state == SUPPRESSED:
        return (
            f"memory {memory.memory_id}, which is forgotten (suppressed); restore it "
            f"(POST /api/v1/memories/{memory.memory_id}/restore) to recall it"
        )
    return f"memory {memory.memory_id}, which recall does not find: it is {memory.state}"


def _requirements(item: JobReadiness) -> dict[str, str]:
    """Each contract requirement's status for one job."""
    job = item.job
    if job is None:
        pipeline = "not_found"
    else:
        pipeline = {
            Job.Status.QUEUED: "pending",
            Job.Status.RUNNING: "in_progress",
            Job.Status.SUCCEEDED: "done",
            Job.Status.FAILED: "failed",
        }[Job.Status(job.status)]
    # Searchable is a further step only once the job has finished; before that it shares its status.
    p1 = ("done" if item.searchable else "not_searchable") if pipeline == "done" else pipeline
    # Entities and relations are linked in the job's own commit: live with it.
    return {"pipeline": pipeline, "p1": p1, "live_graph": pipeline, "p3": "not_offered"}


def _ready(requirements: dict[str, str], require: dict[str, bool]) -> bool:
    return all(
        requirements[name] == "done" for name, wanted in require.items() if wanted and name not in NOT_OFFERED
    )


def _readiness_dict(
    item: JobReadiness, *, current_space: Space, require: dict[str, bool], version_id: uuid.UUID | None
) -> dict[str, object]:
    job = item.job
    error: dict[str, Any] | None = None
    if job is None:
        missing = Code.VERSION_NOT_FOUND if version_id is not None else Code.JOB_NOT_FOUND
        error = {"code": missing.value, "message": CATALOGUE[missing].message, "failed_stage": None}
    elif job.status == Job.Status.FAILED:
        error = {"code": job.error_code, "message": job.error_message, "failed_stage": item.failed_stage}
    in_current_space = job is not None and job.space_id == current_space.id
    source = job.source if job is not None else None
    requirements = _requirements(item)
    return {
        "job_id": str(item.job_id) if job is not None or version_id is None else None,
        "version_id": str(source.id) if source is not None else str(version_id) if version_id else None,
        "doc_id": str(source.document_id) if source is not None else None,
        "status": item.status,
        "ready": _ready(requirements, require),
        "requirements": requirements,
        "kind": job.kind if job is not None else None,
        "attempts": job.attempts if job is not None else None,
        "stages": [{"name": s.name, "status": s.status, "at": iso(s.at)} for s in item.stages],
        "searchable": item.searchable,
        "memory_count": item.counts.total if job is not None else None,
        "searchable_count": item.counts.searchable if job is not None else None,
        # The memories that already held its content: their state is its searchability.
        "merged_into": [
            {"memory_id": str(m.memory_id), "searchable": m.searchable, "state": m.state}
            for m in item.counts.merged
        ],
        "space_id": str(job.space_id) if job is not None else None,
        "in_current_space": in_current_space,
        "version": ({"source_id": str(source.id), "number": source.version} if source is not None else None),
        "created_at": iso(job.created_at) if job is not None else None,
        "started_at": iso(job.started_at) if job is not None else None,
        "finished_at": iso(job.finished_at) if job is not None else None,
        "error": error,
        "done": item.done,
        "stop_polling": item.stop_polling,
        "next": _next_step(item, in_current_space=in_current_space, version_id=version_id),
    }


# How far a stage has got, least first: a report's stage is its least advanced across the jobs, so
# `done` there means done for every one (and one failure shows, whatever the others did).
_STAGE_ORDER = {
    s: i for i, s in enumerate([FAILED, UNKNOWN, NOT_REACHED, PENDING, IN_PROGRESS, NOT_SEARCHABLE, DONE])
}


def _report_stages(items: list[JobReadiness]) -> list[dict[str, Any]]:
    stages = []
    for position, name in enumerate(STAGES):
        of_jobs = [item.stages[position] for item in items if item.job is not None]
        if not of_jobs:
            stages.append({"name": name, "status": UNKNOWN, "at": None})
            continue
        least = min(of_jobs, key=lambda stage: _STAGE_ORDER[stage.status])
        times = [stage.at for stage in of_jobs if stage.status == least.status and stage.at is not None]
        stages.append({"name": name, "status": least.status, "at": iso(max(times)) if times else None})
    return stages


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
        "job_id": NULLABLE_UUID,
        "version_id": NULLABLE_UUID,
        "doc_id": NULLABLE_UUID,
        "status": {"type": "string", "enum": JOB_STATUSES},
        "ready": {"type": "boolean"},
        "requirements": obj(
            {name: {"type": "string", "enum": REQUIREMENT_STATUSES} for name in REQUIREMENTS},
            required=ALL,
            closed=False,
        ),
        "kind": {"type": ["string", "null"]},
        "attempts": {"type": ["integer", "null"]},
        "stages": {"type": "array", "items": _STAGE},
        "searchable": {"type": "boolean"},
        "memory_count": {"type": ["integer", "null"]},
        "searchable_count": {"type": ["integer", "null"]},
        "merged_into": {
            "type": "array",
            "description": (
                "Memories that already held this content when it was processed (the same fact again is "
                "evidence for them, not a new memory), with whether recall finds each now and why not."
            ),
            "items": obj(
                {
                    "memory_id": UUID,
                    "searchable": {"type": "boolean"},
                    "state": {"type": "string", "enum": list(MERGED_STATES)},
                },
                required=ALL,
                closed=False,
            ),
        },
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
    required="job_id version_id status ready requirements stages searchable memory_count error done "
    "stop_polling next",
    closed=False,
)

_IDS = {"type": "array", "minItems": 1, "maxItems": MAX_JOB_IDS, "uniqueItems": True, "items": UUID}
READINESS_INPUT: dict[str, object] = obj(
    {
        "version_ids": {
            **_IDS,
            "description": (
                f"Version ids returned by ingest (1-{MAX_JOB_IDS}, unique): pipeline.poll_with.version_ids. "
                "Exclusive with job_ids."
            ),
        },
        "job_ids": {
            **_IDS,
            "description": (
                f"Job ids returned by ingest or remember (1-{MAX_JOB_IDS}, unique). "
                "Exclusive with version_ids."
            ),
        },
        "require": obj(
            {
                "pipeline": {"type": "boolean", "description": "The job has finished (default true)."},
                "p1": {
                    "type": "boolean",
                    "description": "Its memories are stored and found by search (default true).",
                },
                "live_graph": {
                    "type": "boolean",
                    "description": "Its entities and relations are linked (default true).",
                },
                "p3": {
                    "type": "boolean",
                    "description": (
                        "A published corpus tree: not built by this service, so always reported "
                        "not_offered and never waited on (default false)."
                    ),
                },
            },
            description="Which stages `ready` requires; left-out ones take their defaults.",
        ),
    },
)


READINESS_OUTPUT: dict[str, object] = obj(
    {
        "ready": {
            "type": "boolean",
            "description": "Every requested version or job meets every required stage this service offers.",
        },
        "require": REQUIRE_OUTPUT,
        "not_offered": {"type": "array", "items": {"type": "string", "enum": sorted(NOT_OFFERED)}},
        "stages": {"type": "array", "items": _STAGE},
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


def _requested(caller: Caller, args: dict[str, Any]) -> tuple[list[JobReadiness], list[uuid.UUID | None]]:
    """The readiness of each requested id, in order, and the version id each was asked by (if any)."""
    if "job_ids" in args and "version_ids" in args:
        raise AppError(
            Code.CONFLICTING_FIELDS,
            "Send either version_ids (from ingest's pipeline.poll_with) or job_ids, not both.",
            details={"fields": ["version_ids", "job_ids"]},
            agent_action="send the version_ids ingest returned in pipeline.poll_with",
        )
    if "job_ids" not in args and "version_ids" not in args:
        raise AppError(
            Code.MISSING_FIELD,
            "Send version_ids (from ingest's pipeline.poll_with) or job_ids.",
            details={"field": "version_ids", "one_of": ["version_ids", "job_ids"]},
            agent_action="send the version_ids ingest returned in pipeline.poll_with",
        )
    if "job_ids" in args:
        return job_readiness_list(owner=caller.user, job_ids=args["job_ids"]), [None] * len(args["job_ids"])
    versions: list[uuid.UUID] = args["version_ids"]
    jobs = version_job_ids(owner=caller.user, version_ids=versions)
    # A version with no job of the caller's is reported not found under an id that matches nothing.
    known = [job_id for job_id in jobs.values() if job_id is not None]
    found = {item.job_id: item for item in job_readiness_list(owner=caller.user, job_ids=known)}
    items = [
        found[job_id] if job_id is not None else JobReadiness(job_id=version, job=None)
        for version, job_id in jobs.items()
    ]
    return items, list(versions)


def _without_forgotten(item: JobReadiness) -> JobReadiness:
    """The readiness an app is told: a memory the owner forgot is named to them only (issue 40), so
    a save merged into one lists nothing there, not even its id."""
    merged = tuple(m for m in item.counts.merged if m.state != SUPPRESSED)
    return dataclasses.replace(item, counts=dataclasses.replace(item.counts, merged=merged))


@operation(
    "pipeline_readiness",
    PROFILES,
    SCOPE_READ,
    READ_ONLY,
    READINESS_INPUT,
    READINESS_OUTPUT,
    primary_reads=True,
)
def _pipeline_readiness(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Whether ingested (or remembered) content is ready, for up to 50 version ids (from ingest's
    `pipeline.poll_with`) or job ids: `ready` when every one meets the required stages (`require`:
    pipeline, p1 = searchable, live_graph; p3 is not offered here), the stages (queued -> extract -> embed
    -> store -> searchable), and per version or job its status, attempts, stages and, on failure, the error
    and the stage that failed. Poll after poll_after_ms while ready and stop_polling are false; a failed
    stage has failed for good. An id that is not one of the user's is reported as not_found.
    """
    require = {**DEFAULT_REQUIRE, **args.get("require", {})}
    # Typed and unique by the validator: the same id in another letter case is a duplicate there.
    items, versions = _requested(caller, args)
    if not caller.in_person:
        items = [_without_forgotten(item) for item in items]
    current_space = space_for_caller(caller=caller)
    jobs = [
        _readiness_dict(item, current_space=current_space, require=require, version_id=version)
        for item, version in zip(items, versions, strict=True)
    ]
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
        "ready": all(job["ready"] for job in jobs),
        "require": require,
        "not_offered": sorted(name for name in NOT_OFFERED if require[name]),
        "stages": _report_stages(items),
        "jobs": jobs,
        "summary": summary,
        "done": all(item.done for item in items),
        "stop_polling": not waiting,
        "poll_after_ms": poll_after_ms,
    }
