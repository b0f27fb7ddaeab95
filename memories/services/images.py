"""Image uploads: store the upload as a Source and queue its job (`image_ingest`); the job decodes,
cleans and reads it in a child process and stores the clean picture (`image_store`); a purge deletes
the stored pictures (`memories.services.purge.image_blobs_delete`).

The upload's bytes wait in `Source.raw`, as a document's do, and are never stored or served as they
came: the picture kept is the one the child encoded again without metadata. The memories come from
the caption (the uploader's words, the Source's content from the start) and from the text the child
read in the picture (appended to the content by the job, the one write a Source allows).
"""

from __future__ import annotations

import logging
import re

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction

from accounts.caller import Caller
from memories import errors
from memories.errors import Code
from memories.models import Job, Source
from memories.parsing import RowId
from memories.selectors.images import image_storage
from memories.services.jobs import job_queue
from memories.services.sources import content_hash, source_new
from memories.services.spaces import space_for_caller

logger = logging.getLogger(__name__)

_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}
_WORD = re.compile(r"\w")


def image_ingest(
    *,
    caller: Caller,
    filename: str,
    data: bytes,
    declared_media_type: str = "",
    caption: str = "",
    space_id: RowId | None = None,
) -> tuple[Source, Job, bool]:
    """Store an uploaded image (with its caption) as a Source and queue its job.

    Returns (source, job, created). The same bytes with the same caption again (same owner and
    space) create nothing and return the earlier source and job with created=False. The cheap
    checks (size, format, pixels) run here; the pixels are decoded by the job, never here.
    """
    from memories.pipeline.images import image_check

    caption = caption.strip()
    if not caption and not settings.IMAGE_OCR:
        raise errors.AppError(
            Code.MISSING_FIELD,
            "Send a caption: this deployment does not read the text in images, so the caption is "
            "what the memory is made of.",
            details={"field": "caption"},
            agent_action="describe the image in the caption field",
        )
    info = image_check(
        filename=filename,
        data=data,
        declared_media_type=declared_media_type,
        max_bytes=settings.IMAGE_MAX_BYTES,
        max_pixels=settings.IMAGE_MAX_PIXELS,
    )
    # The picture and what its uploader says about it are one statement: new words, new source.
    digest = content_hash(data + b"\x00" + caption.encode())
    filename = "".join(ch for ch in filename if ch.isprintable()).strip() or "image"
    space = space_for_caller(caller=caller, space_id=space_id)
    earlier = Source.objects.filter(
        owner=caller.user, space=space, origin=Source.Origin.IMAGE, content_hash=digest
    ).first()
    if earlier is not None:
        job = Job.objects.filter(owner=caller.user, source=earlier).order_by("-created_at").first()
        if job is not None:
            return earlier, job, False
    with transaction.atomic():
        source = source_new(
            caller=caller,
            space=space,
            origin=Source.Origin.IMAGE,
            # The text read in the picture is added by the job (image_store).
            content=caption,
            raw=data,
            content_hash=digest,
            filename=filename[:255],
            media_type=info.media_type,
            size_bytes=len(data),
            image_width=info.width,
            image_height=info.height,
        )
        job = job_queue(caller=caller, space=space, source=source, kind=Job.Kind.INGEST, options={})
    return source, job, True


def image_store(*, source: Source) -> Source:
    """Decode an uploaded image's `raw` bytes in a child process, store the clean picture, and add
    the text read in it to the Source's content.

    The bytes are cleared whatever the outcome. Raises `DocumentRefused` (a permanent job failure)
    for a picture that cannot be read, or when neither the caption nor the picture has a word in
    it. Storing is idempotent: the storage name is the source's, so a second attempt replaces the
    first attempt's file, and the first attempt to commit wins the row.
    """
    from memories.pipeline.parse_sandbox import DocumentRefused, image_read_isolated

    if source.raw is None:
        return source
    try:
        read = image_read_isolated(data=bytes(source.raw), media_type=source.media_type)
        content = "\n\n".join(part for part in (source.content, read.text) if part)
        if not _WORD.search(content):
            raise DocumentRefused(
                Code.NOTHING_TO_REMEMBER,
                "This image has no caption and no text that could be read in it.",
            )
    except DocumentRefused:
        Source.objects.filter(id=source.id).update(raw=None)
        raise
    storage = image_storage()
    name = f"{source.owner_id}/{source.id}{_EXTENSIONS[source.media_type]}"
    storage.delete(name)  # what an interrupted attempt may have left
    stored = storage.save(name, ContentFile(read.data))
    with transaction.atomic():
        locked = Source.objects.select_for_update().get(id=source.id)
        if locked.raw is not None:
            locked.content = content
            locked.image_name = stored
            locked.image_width = read.width
            locked.image_height = read.height
            locked.size_bytes = len(read.data)
            locked.raw = None
            locked.save(
                update_fields=["content", "image_name", "image_width", "image_height", "size_bytes", "raw"]
            )
        elif locked.image_name != stored:
            storage.delete(stored)
    return locked
