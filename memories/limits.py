"""Limits that several surfaces check (operation schemas, REST schemas, dashboard forms, services).

Each is defined once here and imported everywhere else, so a schema can never promise more than
the column stores or the form allows. Lengths that protect a column are read from the model
field itself. The content maximum is a setting (settings.REMEMBER_MAX_CHARS) and is read from
there; a token's name length belongs to the accounts app (accounts.services.NAME_MAX_LENGTH).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import models

from memories.models import Entity, Memory, Source, Space


def _max_length(model: type[models.Model], name: str) -> int:
    field = model._meta.get_field(name)
    # An ArrayField's limit is its items' (a tag's length, not the list's).
    field = getattr(field, "base_field", field)
    max_length = getattr(field, "max_length", None)
    if not isinstance(max_length, int):
        raise TypeError(f"{model.__name__}.{name} has no max_length")
    return max_length


TAG_MAX_LENGTH = _max_length(Memory, "tags")
SPACE_NAME_MAX_LENGTH = _max_length(Space, "name")
ENTITY_NAME_MAX_LENGTH = _max_length(Entity, "name")
SOURCE_KIND_MAX_LENGTH = _max_length(Source, "source_kind")
SOURCE_REF_MAX_LENGTH = _max_length(Source, "source_ref")
SOURCE_VERSION_REF_MAX_LENGTH = _max_length(Source, "source_version_ref")
TITLE_MAX_LENGTH = _max_length(Source, "title")
# The reason in words a suppression may carry (graph `invalidate`).
SUPPRESS_NOTE_MAX_LENGTH = _max_length(Memory, "suppressed_note")

# How many tags one save or one search may carry (recall, REST save, the dashboard).
TAGS_MAX = 50
# How many spaces one account may hold (its default included): each is a separate memory with its
# own entities and indexes, and an edited import file could otherwise name ten thousand.
SPACES_MAX = 200
# The longest question or search text (recall, the evidence tools, the dashboard's search box).
QUERY_MAX_LENGTH = 2000
# An image's caption: what its uploader says it shows (a sentence or a paragraph, not a document).
CAPTION_MAX_CHARS = 4_000


# Any request body elsewhere (REST: DATA_UPLOAD_MAX_MEMORY_SIZE; MCP: mcp_gateway.app.MAX_BODY_BYTES).
_JSON_ROOM_BYTES = 64 * 1024


def document_request_max_bytes() -> int:
    """The largest request body that carries one whole document as JSON (the `ingest` tool, over MCP
    or REST): base64 is 4/3 of the bytes, plus room for the other arguments."""
    return settings.DOCUMENT_MAX_BYTES * 4 // 3 + _JSON_ROOM_BYTES


def tags_cleaned(tags: Iterable[object]) -> list[str]:
    """A memory's tags as every writer stores them: strings only, trimmed, none empty, each at most
    TAG_MAX_LENGTH characters, no repeats (the first kept), at most TAGS_MAX."""
    cleaned = (tag.strip()[:TAG_MAX_LENGTH].strip() for tag in tags if isinstance(tag, str))
    return list(dict.fromkeys(tag for tag in cleaned if tag))[:TAGS_MAX]
