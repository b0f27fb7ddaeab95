"""The data of Deep Recall (see ../shared/design/ARCHITECTURE.md, "The data").

Two clocks run through it. World time: `occurred_at` (episodes), `valid_from` /
`valid_until` (facts), `due_at` (foresight). System time: `recorded_at` (when
the service learned it) and `superseded_at` / `superseded_by` (when a newer row
replaced it). Every row carries its owner so that every query can be scoped by
owner without a join.

No business logic lives here: writes are in services.py, reads in selectors.py.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Q
from django.db.models.functions import Coalesce, Lower
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from memories import embeddings

# The text-search configuration of the full-text column and of every query on it.
FTS_CONFIG = "english"

OAUTH_APPLICATION_MODEL = settings.OAUTH2_PROVIDER_APPLICATION_MODEL


class HeldToOwner(models.Model):
    """A tenant row's `save()` updates it by owner and id, not by id alone: with the owner in the
    statement, a database sharded by owner sends it to the owner's shard only (docs/scale.md)."""

    owner_id: uuid.UUID

    class Meta:
        abstract = True

    # Django's private hook of save(), whose arguments differ between versions: passed on as they come.
    def _do_update(self, base_qs: models.QuerySet[Any], *args: Any, **kwargs: Any) -> Any:
        return super()._do_update(base_qs.filter(owner_id=self.owner_id), *args, **kwargs)


class Space(HeldToOwner):
    """A separate memory of one owner (work, personal, a project)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="spaces")
    name = models.CharField(max_length=100)
    is_default = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-is_default", "name"]
        constraints = [
            # Case-insensitive: "Work" and "work" would be two spaces a person cannot tell apart.
            models.UniqueConstraint("owner", Lower("name"), name="space_unique_name_per_owner_ci"),
            models.UniqueConstraint(
                fields=["owner"], condition=Q(is_default=True), name="space_one_default_per_owner"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Source(HeldToOwner):
    """Immutable testimony: exactly what was saved, by whom, when. Never edited.

    One write is allowed after creation: an uploaded document arrives as `raw` bytes with an empty
    `content`, and its job writes the text it reads from them into `content`, once, clearing `raw`
    (docs/decisions.md, "Documents are read by the worker").
    """

    class Origin(models.TextChoices):
        REMEMBER = "remember", "remember"
        DOCUMENT = "document", "document upload"
        REST = "rest", "REST save"
        IMPORT = "import", "import"
        RELATE = "relate", "graph relate"
        IMAGE = "image", "image upload"

    class VersioningMode(models.TextChoices):
        SNAPSHOT = "snapshot", "snapshot"
        LIVING = "living", "living"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="sources", db_constraint=False)
    agent = models.ForeignKey(
        OAUTH_APPLICATION_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    origin = models.CharField(max_length=20, choices=Origin.choices)
    content = models.TextField()
    # An image's hash is of its bytes as uploaded followed by its caption (images.image_ingest).
    content_hash = models.CharField(max_length=64, help_text="sha256 of the saved bytes")
    session_id = models.UUIDField(null=True, blank=True)
    # Documents that are re-sent over time: (source_kind, source_ref) names the
    # document, `version` counts its versions.
    source_kind = models.CharField(max_length=50, blank=True)
    source_ref = models.CharField(max_length=500, blank=True)
    version = models.PositiveIntegerField(default=1)
    versioning_mode = models.CharField(
        max_length=10, choices=VersioningMode.choices, default=VersioningMode.SNAPSHOT
    )
    source_modified_at = models.DateTimeField(null=True, blank=True)
    # The version's own name at its source (a commit, a revision id), as the importer gives it: shown
    # back, never interpreted (our `version` number is what orders versions).
    source_version_ref = models.CharField(max_length=500, blank=True)
    filename = models.CharField(max_length=255, blank=True)
    title = models.CharField(max_length=300, blank=True)
    # Who asserted it, as the evidence count sees it: "agent:<application id>" (an
    # OAuth agent), "token:<personal token id>", "user" (the dashboard or a session),
    # or "document:<kind>:<ref>" / "document:<sha256>" for documents. The same
    # claimant repeating itself is one piece of evidence, not several.
    claimant = models.CharField(max_length=600, blank=True)
    # REST save: the raw text the saved content was distilled from (a transcript
    # excerpt), kept as testimony beside it; purged with it.
    source_text = models.TextField(blank=True)
    media_type = models.CharField(max_length=100, blank=True)
    # A document upload's bytes until its job has read their text (then None); purged with the row.
    raw = models.BinaryField(null=True, editable=False)
    size_bytes = models.PositiveBigIntegerField(default=0)
    # An image upload: the storage name (STORAGES["images"]) of the picture as it is served, encoded
    # again without metadata by its job; "" until then, after a failure, and once purged.
    image_name = models.CharField(max_length=300, blank=True)
    image_width = models.PositiveIntegerField(null=True, blank=True)
    image_height = models.PositiveIntegerField(null=True, blank=True)
    # The time the content refers to: relative dates in it resolve against this.
    refers_to = models.DateTimeField(null=True, blank=True)
    recorded_at = models.DateTimeField(default=timezone.now)
    purged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-recorded_at"]
        indexes = [
            models.Index(fields=["owner", "content_hash"], name="source_owner_hash"),
            models.Index(fields=["owner", "source_kind", "source_ref"], name="source_owner_ref"),
            models.Index(fields=["owner", "recorded_at"], name="source_owner_recorded"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=(Q(source_kind="") & Q(source_ref="")) | (~Q(source_kind="") & ~Q(source_ref="")),
                name="source_kind_and_ref_together",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.origin} {self.id}"

    @property
    def document_id(self) -> uuid.UUID:
        """The document this is a version of, stable across versions: derived from what names the
        document (its owner, space and source_kind + source_ref), so no row has to hold it and a purged
        version does not change it. A source without a name is a document of one version: its own id."""
        if not (self.source_kind and self.source_ref):
            return self.id
        name = f"{self.owner_id}\n{self.space_id}\n{self.source_kind}\n{self.source_ref}"
        return uuid.uuid5(DOCUMENT_NAMESPACE, name)


# The namespace of derived document ids (Source.document_id); fixed, so the ids never change.
DOCUMENT_NAMESPACE = uuid.UUID("6f1d2a7c-3b0e-5c58-9a41-2d7e0c9b8f13")


class Entity(HeldToOwner):
    """Something the memories mention: a person, organisation, place, product, concept."""

    class Type(models.TextChoices):
        PERSON = "Person"
        ORGANIZATION = "Organization"
        PRODUCT = "Product"
        AMOUNT = "Amount"
        DATE = "Date"
        LOCATION = "Location"
        CONCEPT = "Concept"
        DECISION = "Decision"
        ACTION = "Action"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="entities", db_constraint=False)
    name = models.CharField(max_length=200)
    # `normalize_entity_name`: folded, without a possessive, a leading "the" or a legal form ("Acme
    # Corp" is "acme"). The key that links mentions: one entity per key in a space.
    normalized_name = models.CharField(max_length=200)
    # A verdict, not part of the identity: refined as typed mentions arrive (services.entities).
    type = models.CharField(max_length=20, choices=Type.choices)
    aliases = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    attributes = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "space", "normalized_name"], name="entity_unique_name_per_space"
            ),
        ]
        indexes = [models.Index(fields=["owner", "normalized_name"], name="entity_owner_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.type})"


class Job(HeldToOwner):
    """One unit of asynchronous work: queued -> running -> succeeded | failed."""

    class Kind(models.TextChoices):
        REMEMBER = "remember"
        INGEST = "ingest"
        REEMBED = "reembed"
        IMPORT = "import"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="jobs", db_constraint=False)
    agent = models.ForeignKey(
        OAUTH_APPLICATION_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source = models.ForeignKey(
        Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs", db_constraint=False
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    # A stable code from memories.errors; the message is safe to show its owner.
    error_code = models.CharField(max_length=64, blank=True)
    error_message = models.CharField(max_length=500, blank=True)
    # What the caller asked for beyond the content (REST save: kind, tags).
    options = models.JSONField(default=dict, blank=True)
    # "host:pid" of the worker process running it (who holds the lease; for operators and logs).
    claimed_by = models.CharField(max_length=200, blank=True)
    # The claim is a lease: the claimer's heartbeat pushes this forward while it works, in the
    # database's clock (valid across hosts); once it passes, any process may take the job over.
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # The outbox mark: when the job's message last reached the broker. Null for a job whose publish
    # failed after its commit (or never ran); the recovery sweep sends those from here.
    published_at = models.DateTimeField(null=True, blank=True)
    # What the worker last wrote of its work, for the job page: {"stage": reading | extracting |
    # embedding | storing | done, "done": segments embedded, "total": segments found}.
    progress = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["owner", "status"], name="job_owner_status"),
            models.Index(fields=["status", "created_at"], name="job_status_created"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.status} {self.id}"


class Import(HeldToOwner):
    """One import of a history (memories/services/imports.py): the file as uploaded until its job
    has read it all, and what became of its items. Each item is stored as a Source of origin
    `import` (source_kind "import:<format>", source_ref the item's own id, claimant "import:<this
    id>"), so importing the same items again adds nothing and an undo finds all it stored."""

    class Format(models.TextChoices):
        CHATGPT = "chatgpt"
        CLAUDE = "claude"
        MEM0 = "mem0"
        MARKDOWN = "markdown"
        DEEPRECALL = "deeprecall"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # The database's keys join on the owner (migration 0030, as 0029 for every tenant table).
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="imports", db_constraint=False)
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    format = models.CharField(max_length=20, choices=Format.choices)
    filename = models.CharField(max_length=255, blank=True)
    size_bytes = models.PositiveBigIntegerField(default=0)
    # The file, until the job has read every item (then cleared: the items are the testimony).
    data = models.BinaryField(null=True, editable=False)
    items_total = models.PositiveIntegerField(default=0)
    # Items the job has gone through, in order (a resumed job starts here); of them, stored, skipped
    # (with the count per reason) and failed (the first few with their reason).
    items_read = models.PositiveIntegerField(default=0)
    items_stored = models.PositiveIntegerField(default=0)
    items_skipped = models.PositiveIntegerField(default=0)
    items_failed = models.PositiveIntegerField(default=0)
    skipped_reasons = models.JSONField(default=dict, blank=True)
    failures = models.JSONField(default=list, blank=True)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    undone_at = models.DateTimeField(null=True, blank=True)
    undo_receipt = models.JSONField(null=True, blank=True)
    # Our own export: what the import applied beside its items, for its undo (the ids of the
    # spaces it created; its memories, relations and their states go with its sources).
    restored = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # One import per job; with the owner, as every tenant key (issue 43).
            models.UniqueConstraint(fields=["owner", "job"], name="import_one_per_job"),
        ]
        indexes = [models.Index(fields=["owner", "created_at"], name="import_owner_created")]

    def __str__(self) -> str:
        return f"import {self.format} {self.id}"


class Memory(HeldToOwner):
    """One retrievable unit derived from a Source."""

    class Kind(models.TextChoices):
        FACT = "fact"
        EPISODE = "episode"
        FORESIGHT = "foresight"

    class Status(models.TextChoices):
        ACTIVE = "active"
        SUPPRESSED = "suppressed"

    class Category(models.TextChoices):
        FACT = "fact"
        PREFERENCE = "preference"
        INTENT = "intent"
        DECISION = "decision"
        CONTEXT = "context"

    class SuppressReason(models.TextChoices):
        """Why a memory was suppressed or deleted. Every reason the code writes is here."""

        # The likeliest first: tools list them in this order and the dashboard offers them so.
        INCORRECT = "incorrect"
        OUTDATED = "outdated"
        DUPLICATE = "duplicate"
        PRIVATE = "private"
        OTHER = "other"
        # Written by the admin's bulk action only; people and agents give one of the others.
        OPERATOR = "operator"
        # Written by the graph profile's `invalidate` only: its contract gives a reason in words
        # (`suppressed_note`), not one of the codes above.
        INVALIDATED = "invalidated"

        @classmethod
        def for_callers(cls) -> list[str]:
            """The reasons `forget`, REST and the dashboard accept: all but those one writer sets."""
            return [reason.value for reason in cls if reason not in (cls.OPERATOR, cls.INVALIDATED)]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="memories", db_constraint=False)
    source = models.ForeignKey(
        Source, null=True, blank=True, on_delete=models.SET_NULL, related_name="memories", db_constraint=False
    )
    job = models.ForeignKey(
        Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="memories", db_constraint=False
    )
    agent = models.ForeignKey(
        OAUTH_APPLICATION_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    session_id = models.UUIDField(null=True, blank=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    # What the saver said it is (REST save `category`); blank when it did not say.
    category = models.CharField(max_length=20, choices=Category.choices, blank=True)
    content = models.TextField()
    # Normalised content hash: the same fact from another source adds evidence.
    fingerprint = models.CharField(max_length=64, blank=True)
    # A single-valued fact's key ("user:lives_in") and value ("berlin"): a newer
    # value of the same slot supersedes the older memory.
    slot = models.CharField(max_length=200, blank=True)
    slot_value = models.CharField(max_length=200, blank=True)
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    entities = models.ManyToManyField(Entity, blank=True, related_name="memories", through="MemoryEntity")
    embedding = VectorField(dimensions=embeddings.DIMENSIONS, null=True, blank=True)
    # Maintained by PostgreSQL itself, so a purge of `content` also purges it.
    search_vector = models.GeneratedField(
        expression=SearchVector("content", config=FTS_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    # The content places itself in time ("yesterday", "for four years", "last summer": the rule is
    # memories.pipeline.timeparse.mentions_time), whatever its kind: recall prefers such a memory when
    # the question asks "when?" or "how long?". Set when the memory is made; its content never changes.
    names_time = models.BooleanField(default=False)
    confidence = models.FloatField(default=0.9)
    pinned = models.BooleanField(default=False)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    suppressed_at = models.DateTimeField(null=True, blank=True)
    suppressed_reason = models.CharField(max_length=50, choices=SuppressReason.choices, blank=True)
    # Why, in the words of whoever suppressed it (graph `invalidate`'s `reason`); kept on the row,
    # not in the audit trail, because it may repeat what the memory says and goes with a hard delete.
    suppressed_note = models.CharField(max_length=500, blank=True)
    # World time.
    occurred_at = models.DateTimeField(null=True, blank=True)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)
    # When it was said, in world time: the time its source refers to (an imported 2024 conversation's
    # own date), not when the worker ran. The world start of a row that names no time of its own.
    stated_at = models.DateTimeField(null=True, blank=True)
    # The latest its world start can be, when the text named a period rather than a day ("last
    # month": the end of that month). Null when the start is exact. Supersession compares periods.
    starts_by = models.DateTimeField(null=True, blank=True)
    # Where in its Source's content the statement came from: [span_start, span_end) in characters.
    # Null for rows whose text is not a piece of the source (an LLM's rewording, a relation). A
    # document row's content may be a rendering of its span ("Piranesi: rating 5/5" for a table
    # row), so a purge redacts the span, not a search for the content.
    span_start = models.PositiveIntegerField(null=True, blank=True)
    span_end = models.PositiveIntegerField(null=True, blank=True)
    # System time.
    recorded_at = models.DateTimeField(default=timezone.now)
    superseded_at = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="supersedes",
        db_constraint=False,
    )

    class Meta:
        ordering = ["-recorded_at"]
        verbose_name_plural = "memories"
        indexes = [
            # ef_construction 128, not pgvector's default 64: in a space of 100,000 short notes, 64
            # left 5-14 % of a conversation's 600 memories unreachable by their own vector at
            # ef_search 400 (172-190 of 200 found themselves over three builds); 128 left 1-2 %
            # (196-198 of 200) for about 1.6 times the build and insert work (docs/retrieval.md).
            HnswIndex(
                name="memory_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=128,
                opclasses=["vector_cosine_ops"],
            ),
            GinIndex(fields=["search_vector"], name="memory_search_gin"),
            GinIndex(fields=["tags"], name="memory_tags_gin"),
            # With `id` last, recall's document-frequency sample of a big space is the first rows in
            # id order, read off this index: a uniform sample (ids are random UUIDs), where the first
            # rows in the table's order were mostly the oldest saves (memories.retrieval.recall).
            models.Index(fields=["owner", "space", "status", "id"], name="memory_owner_space_status_id"),
            models.Index(fields=["owner", "status", "kind"], name="memory_owner_status_kind"),
            models.Index(fields=["owner", "fingerprint"], name="memory_owner_fingerprint"),
            models.Index(
                fields=["owner", "space", "slot"],
                name="memory_current_slot",
                condition=Q(superseded_at__isnull=True) & ~Q(slot=""),
            ),
            models.Index(fields=["owner", "recorded_at"], name="memory_owner_recorded"),
            # recall's `session_id` filter keeps one conversation's memories: read through this and
            # ranked exactly (memories.retrieval.recall.EXACT_VECTOR_ROWS), where a walk of the HNSW
            # index would pass over thousands of other rows before finding them.
            models.Index(
                fields=["owner", "session_id"],
                name="memory_owner_session",
                condition=Q(session_id__isnull=False),
            ),
            # When a memory starts to hold in the world (memories.as_of.MEMORY_START, in
            # its order): a recall `at` a time when few memories had started reads those through
            # this and ranks them exactly instead of walking the HNSW index past all the later ones.
            models.Index(
                models.F("owner"),
                models.F("space"),
                Coalesce("valid_from", "occurred_at", "stated_at", "recorded_at"),
                name="memory_world_start",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="memory_confidence_0_1"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.content[:60]}"


class MemoryEntity(HeldToOwner):
    """A memory's link to an entity it mentions: the table of `Memory.entities`, with the owner in it,
    so that a link lives on its owner's shard beside the two rows it joins (docs/scale.md). Write
    links with their owner (`MemoryEntity(owner_id=..., ...)` or `add(..., through_defaults=...)`)."""

    # No index of its own: the primary key (owner_id, id) leads with it.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+", db_constraint=False)

    class Meta:
        # The table Django made for the field before it had a model (migration 0029).
        db_table = "memories_memory_entities"
        constraints = [
            models.UniqueConstraint(fields=["owner", "memory", "entity"], name="memory_entity_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} mentions {self.entity_id}"


class Relation(HeldToOwner):
    """A typed, directed link between two entities, with its clocks."""

    class Type(models.TextChoices):
        WORKS_AT = "works_at"
        WANTS = "wants"
        HAS = "has"
        IS_A = "is_a"
        RELATED_TO = "related_to"
        CAUSED = "caused"
        APPROVED = "approved"
        DECLINED = "declined"
        LIVES_IN = "lives_in"
        RESULTED_IN = "resulted_in"
        MENTIONED_WITH = "mentioned_with"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="relations", db_constraint=False)
    subject = models.ForeignKey(
        Entity, on_delete=models.CASCADE, related_name="outgoing", db_constraint=False
    )
    object = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="incoming", db_constraint=False)
    type = models.CharField(max_length=20, choices=Type.choices)
    # The embedding of its sentence ("Alice lives in Berlin"), so that the evidence tools rank it
    # against memories without running the model per request. Null for rows made before it existed.
    embedding = VectorField(dimensions=embeddings.DIMENSIONS, null=True, blank=True)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    recorded_at = models.DateTimeField(default=timezone.now)
    superseded_at = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="supersedes",
        db_constraint=False,
    )
    # Retired by an agent's `invalidate` (services.relations.relation_invalidate): it stopped holding
    # then (superseded_at, with no successor) and is kept as history with the reason in words;
    # relation_restore undoes it.
    invalidated_at = models.DateTimeField(null=True, blank=True)
    invalidated_note = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-recorded_at"]
        indexes = [
            models.Index(fields=["owner", "space", "type"], name="relation_owner_space_type"),
            models.Index(fields=["subject", "type"], name="relation_subject_type"),
        ]

    def __str__(self) -> str:
        return f"{self.subject_id} {self.type} {self.object_id}"

    def sentence(self) -> str:
        """The relation as a plain sentence: what is embedded and shown ("Alice lives in Berlin")."""
        return f"{self.subject.name} {self.type.replace('_', ' ')} {self.object.name}"


class Evidence(HeldToOwner):
    """A Source that supports or contradicts a Memory or a Relation."""

    class Stance(models.TextChoices):
        SUPPORTS = "supports"
        CONTRADICTS = "contradicts"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="evidence", db_constraint=False)
    memory = models.ForeignKey(
        Memory, null=True, blank=True, on_delete=models.CASCADE, related_name="evidence", db_constraint=False
    )
    relation = models.ForeignKey(
        Relation,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="evidence",
        db_constraint=False,
    )
    stance = models.CharField(max_length=20, choices=Stance.choices, default=Stance.SUPPORTS)
    recorded_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-recorded_at"]
        verbose_name_plural = "evidence"
        constraints = [
            models.CheckConstraint(
                condition=Q(memory__isnull=False, relation__isnull=True)
                | Q(memory__isnull=True, relation__isnull=False),
                name="evidence_for_memory_xor_relation",
            ),
            # One row per (claim, source, stance): the count is of distinct sources.
            models.UniqueConstraint(
                fields=["owner", "memory", "source", "stance"],
                condition=Q(memory__isnull=False),
                name="evidence_unique_memory_source",
            ),
            models.UniqueConstraint(
                fields=["owner", "relation", "source", "stance"],
                condition=Q(relation__isnull=False),
                name="evidence_unique_relation_source",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} {self.stance} {self.memory_id or self.relation_id}"


class GrantSpace(HeldToOwner):
    """The space one grant (an OAuth agent of a user, or a personal token) reads and writes.

    MCP is served statelessly, so graph `switch_agent` stores the choice here and every
    later call of the same grant finds it. Keyed by (user, application) rather than
    by access token, so the choice survives token refreshes.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    application = models.ForeignKey(
        OAUTH_APPLICATION_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    personal_token = models.ForeignKey(
        "accounts.PersonalAccessToken", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    # Deleting the space deletes the choice: the grant falls back to the default space.
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(application__isnull=False, personal_token__isnull=True)
                | Q(application__isnull=True, personal_token__isnull=False),
                name="grant_space_app_xor_token",
            ),
            models.UniqueConstraint(
                fields=["owner", "application"],
                condition=Q(application__isnull=False),
                name="grant_space_one_per_app",
            ),
            models.UniqueConstraint(
                fields=["owner", "personal_token"],
                condition=Q(personal_token__isnull=False),
                name="grant_space_one_per_token",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.application_id or self.personal_token_id} -> {self.space_id}"


class AuditEvent(models.Model):
    """Who did what to which memory. Never holds memory content."""

    class Action(models.TextChoices):
        CREATED = "created"
        UPDATED = "updated"
        PINNED = "pinned"
        UNPINNED = "unpinned"
        SUPPRESSED = "suppressed"
        RESTORED = "restored"
        HARD_DELETED = "hard_deleted"
        EXPORTED = "exported"
        SPACE_CREATED = "space_created"
        SPACE_DELETED = "space_deleted"
        ACCOUNT_CREATED = "account_created"
        ACCOUNT_DELETED = "account_deleted"
        PASSWORD_CHANGED = "password_changed"  # noqa: S105 - an audit action name, not a secret
        TOKEN_CREATED = "token_created"  # noqa: S105 - an audit action name, not a secret
        TOKEN_REVOKED = "token_revoked"  # noqa: S105 - an audit action name, not a secret
        APP_REVOKED = "app_revoked"
        RELATION_CREATED = "relation_created"
        SPACE_SWITCHED = "space_switched"
        IMPORTED = "imported"
        IMPORT_UNDONE = "import_undone"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Kept (as a bare id) after the account is deleted, for the purge receipt.
    owner_id_snapshot = models.UUIDField(db_index=True)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_agent = models.ForeignKey(
        OAUTH_APPLICATION_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=30, choices=Action.choices)
    # A bare UUID, not a foreign key: the row outlives a hard-deleted memory.
    target_id = models.UUIDField(null=True, blank=True)
    target_type = models.CharField(max_length=30, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["owner_id_snapshot", "created_at"], name="audit_owner_created"),
            models.Index(fields=["target_id"], name="audit_target"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.target_type} {self.target_id}"
