"""Document uploads: store a document version as a Source and queue its ingest job; the job reads
its text (`document_text_store`), in the worker, never in the upload request."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import transaction

from accounts.caller import Caller
from memories import errors
from memories.errors import Code
from memories.models import Job, Source
from memories.parsing import RowId
from memories.services.jobs import job_queue
from memories.services.sources import content_hash, document_claimant, source_new
from memories.services.spaces import space_for_caller


def document_ingest(
    *,
    caller: Caller,
    filename: str,
    data: bytes,
    declared_media_type: str = "",
    source_kind: str = "",
    source_ref: str = "",
    versioning_mode: str = Source.VersioningMode.SNAPSHOT,
    source_modified_at: datetime | None = None,
    source_version_ref: str = "",
    space_id: RowId | None = None,
    title: str = "",
) -> tuple[Source, Job, bool]:
    """Store an uploaded document version as a Source and queue its ingest job.

    Returns (source, job, created). The same bytes again (same owner and space)
    create nothing and return the earlier source and job with created=False.
    A new version of a `living` document (same source_kind + source_ref) gets the
    next version number; its job supersedes what only the old version said.
    """
    from memories.pipeline.parse import upload_check

    if bool(source_kind) != bool(source_ref):
        raise errors.AppError(
            Code.SOURCE_REF_INCOMPLETE,
            "source_kind and source_ref must be given together.",
            details={"fields": ["source_kind", "source_ref"]},
            agent_action="send both source_kind and source_ref, or neither",
        )
    # The lineage of a version (the evidence contract's rule, the same on every surface): what names
    # the document across versions must be there, or "living", "modified at" and "version ref" would
    # describe a document nothing identifies.
    lineage = [
        name
        for name, given in (
            ("versioning_mode", versioning_mode == Source.VersioningMode.LIVING),
            ("source_modified_at", source_modified_at is not None),
            ("source_version_ref", bool(source_version_ref)),
        )
        if given
    ]
    if lineage and not source_ref:
        raise errors.AppError(
            Code.SOURCE_REF_REQUIRED,
            f"{' and '.join(lineage)} describe a version of a named document: send source_kind and "
            "source_ref too (they name it across versions).",
            details={"fields": ["source_kind", "source_ref"], "lineage": lineage},
            agent_action="send source_kind and source_ref (e.g. 'gdrive' and the file id), or leave out "
            "the lineage fields for an anonymous one-shot ingest",
        )
    digest = content_hash(data)
    # A filename is the client's text: keep it printable (PostgreSQL refuses NUL).
    filename = "".join(ch for ch in filename if ch.isprintable()).strip() or "document"
    space = space_for_caller(caller=caller, space_id=space_id)
    earlier = (
        Source.objects.filter(
            owner=caller.user, space=space, origin=Source.Origin.DOCUMENT, content_hash=digest
        )
        .filter(source_kind=source_kind, source_ref=source_ref)
        .first()
    )
    if earlier is not None:
        job = Job.objects.filter(owner=caller.user, source=earlier).order_by("-created_at").first()
        if job is not None:
            return earlier, job, False
    # Only the cheap checks here, so a wrong file is refused at once; reading the text can be made
    # to cost anything by a crafted file, so the worker does it (document_text_store).
    media_type = upload_check(
        filename=filename,
        data=data,
        declared_media_type=declared_media_type,
        max_bytes=settings.DOCUMENT_MAX_BYTES,
    )
    with transaction.atomic():
        version = 1
        if source_ref:
            # Lock the document's versions so two uploads cannot take the same number.
            previous = (
                Source.objects.select_for_update()
                .filter(owner=caller.user, space=space, source_kind=source_kind, source_ref=source_ref)
                .order_by("-version")
                .first()
            )
            if previous is not None:
                version = previous.version + 1
        source = source_new(
            caller=caller,
            space=space,
            origin=Source.Origin.DOCUMENT,
            # Written once, by the job, from the bytes (document_text_store).
            content="",
            raw=data,
            content_hash=digest,
            claimant=document_claimant(source_kind=source_kind, source_ref=source_ref, digest=digest),
            # The caller's title; without one, the job takes the document's own.
            title=title.strip()[:300],
            filename=filename[:255],
            media_type=media_type,
            size_bytes=len(data),
            source_kind=source_kind,
            source_ref=source_ref,
            version=version,
            versioning_mode=versioning_mode,
            source_modified_at=source_modified_at,
            source_version_ref=source_version_ref,
            refers_to=source_modified_at,
        )
        job = job_queue(caller=caller, space=space, source=source, kind=Job.Kind.INGEST, options={})
    return source, job, True


def document_text_store(*, source: Source) -> Source:
    """Read the text of an uploaded document's `raw` bytes and store it as the Source's content.

    This is the one write of a Source's content after its creation (docs/decisions.md): the text
    the upload request no longer extracts. It runs in the worker, and the reading in a child
    process under the DOCUMENT_PARSE_* limits. The bytes are cleared whatever the outcome: a
    document without readable text raises `DocumentRefused` (a permanent job failure), and nothing
    reads the bytes again. The title is the document's own (PDF metadata, HTML <title>, a Markdown
    H1) unless the uploader gave one.
    """
    from memories.pipeline.parse_sandbox import DocumentRefused, extract_isolated

    if source.raw is None:
        return source
    try:
        document = extract_isolated(data=bytes(source.raw), media_type=source.media_type)
    except DocumentRefused:
        Source.objects.filter(id=source.id).update(raw=None)
        raise
    with transaction.atomic():
        # Two attempts at one job (a takeover) may both read it; the first to store wins.
        locked = Source.objects.select_for_update().get(id=source.id)
        if locked.raw is not None:
            locked.content = document.text
            locked.title = locked.title or document.title[:300]
            locked.raw = None
            locked.save(update_fields=["content", "title", "raw"])
    return locked
