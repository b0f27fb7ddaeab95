"""Image links: the signed, hour-long `image_url` of a picture, and the picture behind a link.

A link is `/api/v1/images/<source id>?sig=...`: `sig` is a `django.core.signing` timestamped
signature over the source id and a digest of its owner's id (so the link is bound to both, and
shows neither the owner's id nor anything else), keyed by SECRET_KEY. It is access-bearing, as the
core contract says: whoever holds it may fetch the picture until it expires, which is what lets an
agent's chat window show it without the person's credentials; it expires after LINK_SECONDS, and
recall hands out a fresh one each time. Altered or forged links are refused before any row is read.
"""

from __future__ import annotations

import hashlib
import uuid
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing
from django.core.files.storage import Storage, storages
from django.db.models import OuterRef, Subquery
from django.urls import reverse

from memories.errors import AppError, Code
from memories.models import Evidence, Source
from memories.parsing import RowId

# The alias in settings.STORAGES: a folder under var/ by default, an S3-compatible bucket in production.
IMAGE_STORAGE = "images"
# The contract's hour: not a setting, since agents are told links last one hour.
LINK_SECONDS = 3600
_SALT = "deeprecall.image-link"


def image_storage() -> Storage:
    """The storage that holds the cleaned pictures (settings.STORAGES["images"])."""
    return storages[IMAGE_STORAGE]


def _owner_digest(owner_id: RowId) -> str:
    return hashlib.sha256(f"image-owner:{owner_id}".encode()).hexdigest()[:32]


def image_link_path(*, owner_id: RowId, source_id: RowId) -> str:
    """The path (with its signature) of the picture of `source_id`, valid for LINK_SECONDS from now."""
    signature = signing.TimestampSigner(salt=_SALT).sign_object(
        {"s": str(source_id), "o": _owner_digest(owner_id)}
    )
    path = reverse("api-image", kwargs={"source_id": source_id})
    return f"{path}?{urlencode({'sig': signature})}"


def image_url(*, owner_id: RowId, source_id: RowId) -> str:
    """`image_link_path` as an absolute URL on this deployment's PUBLIC_URL: what agents are given."""
    return settings.PUBLIC_URL.rstrip("/") + image_link_path(owner_id=owner_id, source_id=source_id)


def image_source_for_link(*, source_id: uuid.UUID, signature: str) -> Source:
    """The Source whose picture a link names, if the link is genuine, unexpired and the picture exists.

    Raises image_link_invalid (403) for a signature that does not verify or names another source,
    image_link_expired (410) for a genuine link older than LINK_SECONDS, and image_not_found (404)
    for a genuine link whose picture was deleted since.
    """
    try:
        payload = signing.TimestampSigner(salt=_SALT).unsign_object(signature, max_age=LINK_SECONDS)
    except signing.SignatureExpired:
        # Only raised once the signature itself has verified.
        raise AppError(Code.IMAGE_LINK_EXPIRED) from None
    except (signing.BadSignature, ValueError, TypeError):
        raise AppError(Code.IMAGE_LINK_INVALID) from None
    if not isinstance(payload, dict) or payload.get("s") != str(source_id):
        raise AppError(Code.IMAGE_LINK_INVALID)
    source = (
        Source.objects.filter(id=source_id, origin=Source.Origin.IMAGE)
        .exclude(image_name="")
        .only("id", "owner_id", "image_name", "media_type")
        .first()
    )
    if source is None or _owner_digest(source.owner_id) != payload.get("o"):
        raise AppError(Code.IMAGE_NOT_FOUND)
    return source


def image_source_of_memory() -> Subquery:
    """For a Memory queryset's annotate: the newest image Source with a stored picture among those
    that support the memory (its own source, or an image that said it again), else None."""
    return Subquery(
        Evidence.objects.filter(
            owner_id=OuterRef("owner_id"),
            memory_id=OuterRef("pk"),
            source__owner_id=OuterRef("owner_id"),
            stance=Evidence.Stance.SUPPORTS,
            source__origin=Source.Origin.IMAGE,
        )
        .exclude(source__image_name="")
        .order_by("-source__recorded_at")
        .values("source_id")[:1]
    )
