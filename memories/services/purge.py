"""What a hard delete removes: the purge behind every permanent delete, its receipt, and the
clean-up of entities nothing mentions any more.

A hard delete of a memory (`memories.services.memories.memory_hard_delete`), of a relation
(`memories.services.relations.relation_hard_delete`), of every memory of a space
(`memories_hard_delete_in_space`, behind deleting a space with its memories) and of an account
(`memories.services.account.account_delete`) all purge through this module, inside the caller's
transaction, and all answer with one receipt (`memories.wire.purge_receipt`), built from
the audit row `purge_record` writes. The audit row never holds content, only what was removed.

The words go from every copy, not only from the memory row: the source text (redacted or deleted),
what the save stated beside it in its job's options (tags, entity names), and the names Django
admin's log gives the purged rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import models, transaction
from django.db.models import F, Q

from accounts.caller import Actor
from accounts.models import User
from memories import errors
from memories.errors import Code
from memories.models import AuditEvent, Entity, Evidence, Job, Memory, MemoryEntity, Relation, Source, Space
from memories.pipeline.entities import normalize_entity_name
from memories.pipeline.supersede import supersession_undo
from memories.selectors.images import image_storage
from memories.services.audit import audit_record
from memories.services.rows import row_update, rows_delete
from memories.services.sources import content_hash
from memories.wire import PurgeReceipt, purge_receipt

# What every receipt's `purged` counts, in this order; an account receipt adds what the account
# itself held (spaces, jobs, tokens).
PURGE_COUNTS = (
    "memories",
    "relations",
    "evidence",
    "sources_deleted",
    "sources_redacted",
    "entities_deleted",
    "images_deleted",
)
# What a purged memory's words become in a source that must stay (it supports other memories).
REDACTED = "[deleted]"


def purge_counts(**counts: int) -> dict[str, int]:
    """A `purged` dict: every one of PURGE_COUNTS (zero where nothing of that kind went), then extras."""
    return {**{name: int(counts.pop(name, 0)) for name in PURGE_COUNTS}, **counts}


def image_blobs_delete(*, names: Iterable[str]) -> int:
    """Delete these stored pictures; return how many names there were.

    Called inside the purge's transaction, before it commits: if the commit then fails, the picture
    is gone while its rows stay (the link answers image_not_found, a retried delete finishes), which
    is the failure the person asked for; the other order could leave a deleted image on disk.
    """
    storage = image_storage()
    count = 0
    for name in names:
        if name:
            storage.delete(name)
            count += 1
    return count


def entities_delete_orphaned(*, owner: User, entity_ids: Iterable[Any]) -> int:
    """Delete those of `entity_ids` that no memory and no relation mentions any more; return how many."""
    orphaned = list(
        Entity.objects.filter(owner=owner, id__in=list(entity_ids))
        .exclude(
            id__in=MemoryEntity.objects.filter(owner=owner, entity_id__in=list(entity_ids)).values(
                "entity_id"
            )
        )
        .exclude(id__in=Relation.objects.filter(owner=owner).values("subject_id"))
        .exclude(id__in=Relation.objects.filter(owner=owner).values("object_id"))
        .values_list("id", flat=True)
    )
    rows_delete(Entity, owner_id=owner.id, ids=orphaned)
    _admin_log_redact(Entity, orphaned)
    return len(orphaned)


def _admin_log_redact(model: type[models.Model], ids: Iterable[Any]) -> None:
    # Django admin's log names each row it touched by str(row): a memory's words, an entity's name.
    # The entries stay (an operator did act), without the name.
    LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(model), object_id__in=[str(i) for i in ids]
    ).update(object_repr=REDACTED)


# The keys of a job's options that hold the saver's words; the others are choices and numbers.
_STATED = ("tags", "entities")


def _jobs_redact(*, owner: User, job_ids: Iterable[Any]) -> None:
    """Drop from each job's options the tags and entities that no memory of the job still holds.

    A save states its tags and entities once, in its job, for every memory it derives (and its
    entities for a memory it only repeated). A finished job never reads them again; what stays is
    what a memory it made or supports still carries, so the job keeps its record of the survivors
    and holds nothing of the purged memories.
    """
    stated = Q(options__has_key="tags") | Q(options__has_key="entities")
    for job in Job.objects.filter(stated, owner=owner, id__in=list(job_ids)):
        made = Q(job_id=job.id)
        if job.source_id:  # None once its source went: then nothing it repeated is left either
            made |= Q(evidence__source_id=job.source_id)
        kept = Memory.objects.filter(made, owner=owner)
        tags = {tag for row in kept.values_list("tags", flat=True) for tag in row}
        names: set[str] = set()
        for name, aliases in Entity.objects.filter(owner=owner, memories__in=kept.values("id")).values_list(
            "normalized_name", "aliases"
        ):
            names |= {name, *(normalize_entity_name(alias) for alias in aliases)}
        options = {key: value for key, value in job.options.items() if key not in _STATED}
        kept_tags = [tag for tag in job.options.get("tags") or [] if tag in tags]
        kept_entities = [
            entity
            for entity in job.options.get("entities") or []
            if normalize_entity_name(str(entity.get("name", ""))) in names
        ]
        if kept_tags:
            options["tags"] = kept_tags
        if kept_entities:
            options["entities"] = kept_entities
        if options != job.options:
            Job.objects.filter(owner=owner, id=job.id).update(options=options)


def _redact(source: Source, *, spans: list[tuple[int, int]], texts: list[str]) -> str:
    """`source.content` with each span, and every other occurrence of each text, cut out.

    A memory's span says exactly where it came from, even when its content is a rendering of it (a
    document's table row); a content that occurs elsewhere in the text is cut there too. The spans of
    the memories the source still supports move with the text, so they keep pointing at their words.
    """
    content = source.content
    cuts = [(a, b) for a, b in spans if 0 <= a < b <= len(content)]
    for text in texts:
        start = content.find(text) if text else -1
        while start >= 0:
            cuts.append((start, start + len(text)))
            start = content.find(text, start + len(text))
    merged: list[tuple[int, int]] = []
    for a, b in sorted(cuts):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    for a, b in reversed(merged):
        content = content[:a] + REDACTED + content[b:]
        # A span that held the cut (a turn quoting the purged words) loses its place rather than lie;
        # the spans after the cut move with the text.
        rows = Memory.objects.filter(owner_id=source.owner_id, source_id=source.id)
        rows.filter(span_start__lt=b, span_end__gt=a).update(span_start=None, span_end=None)
        delta = len(REDACTED) - (b - a)
        rows.filter(span_start__gte=b).update(
            span_start=F("span_start") + delta, span_end=F("span_end") + delta
        )
    return content


def memories_purge(*, owner: User, memories: list[Memory]) -> dict[str, int]:
    """Delete `memories` and everything derived from them; redact their text from sources.

    Runs inside the caller's transaction. A Source that supported only purged
    memories is deleted; one that still supports others keeps its text with
    every purged memory's content cut out, so the words are gone everywhere.
    """
    memory_ids = [m.id for m in memories]
    source_ids = set(
        Evidence.objects.filter(owner=owner, memory_id__in=memory_ids).values_list("source_id", flat=True)
    ) | {m.source_id for m in memories if m.source_id}
    entity_ids = set(
        MemoryEntity.objects.filter(owner=owner, memory_id__in=memory_ids).values_list("entity_id", flat=True)
    )
    evidence_count = Evidence.objects.filter(owner=owner, memory_id__in=memory_ids).count()
    contents = [m.content for m in memories if m.content]
    # The jobs that made or repeated them, read before a deleted source unlinks its jobs.
    job_ids = {m.job_id for m in memories if m.job_id} | set(
        Job.objects.filter(owner=owner, source_id__in=source_ids).values_list("id", flat=True)
    )
    rows_delete(Memory, owner_id=owner.id, ids=memory_ids)  # cascades evidence and entity links

    sources_deleted = sources_redacted = 0
    # Pictures of these sources: a picture that shows a deleted statement cannot be redacted (the
    # words are pixels), so it goes even when its source stays for the other memories read from it.
    images: list[str] = []
    for source in Source.objects.select_for_update().filter(owner=owner, id__in=source_ids):
        still_needed = (
            Memory.objects.filter(owner=owner, source_id=source.id).exists()
            or Evidence.objects.filter(owner=owner, source_id=source.id).exists()
        )
        images.append(source.image_name)
        if not still_needed:
            rows_delete(Source, owner_id=owner.id, ids=[source.id])
            sources_deleted += 1
            continue
        if source.image_name:
            source.image_name = ""
            row_update(source, ("image_name",))
        own = [(m.span_start, m.span_end) for m in memories if m.source_id == source.id]
        redacted = _redact(
            source, spans=[(a, b) for a, b in own if a is not None and b is not None], texts=contents
        )
        # The raw text a save was distilled from may say the purged fact in other
        # words, so it cannot be redacted by matching: it goes entirely.
        if redacted != source.content or source.source_text:
            source.content = redacted
            source.content_hash = content_hash(redacted.encode())
            source.source_text = ""
            row_update(source, ("content", "content_hash", "source_text"))
            sources_redacted += 1
    _jobs_redact(owner=owner, job_ids=job_ids)
    _admin_log_redact(Memory, memory_ids)
    return purge_counts(
        memories=len(memory_ids),
        evidence=evidence_count,
        sources_deleted=sources_deleted,
        sources_redacted=sources_redacted,
        entities_deleted=entities_delete_orphaned(owner=owner, entity_ids=entity_ids),
        images_deleted=image_blobs_delete(names=images),
    )


def relation_purge(*, owner: User, relation: Relation) -> dict[str, int]:
    """Delete `relation`, its evidence and the `relate` claims that asserted it.

    The claims go entirely, even when they also contradicted an older relation: their text is the
    deleted statement, so keeping them would keep its words. When the deleted relation was the
    current one, the relations it had superseded become current again: the statement that replaced
    them is gone, and leaving them "replaced" by nothing would leave no current relation at all. A
    predecessor's end (`valid_until`) set by that supersession (the deleted relation's start) is
    cleared with it; an end it had of its own stays. Deleting a relation that was itself replaced
    changes no other row (its successor stays current).
    """
    if relation.superseded_at is None:
        supersession_undo(successor=relation)
    evidence = Evidence.objects.filter(owner=owner, relation=relation)
    evidence_count = evidence.count()
    # Read now: deleting the relation cascades the evidence this is found through.
    claim_ids = list(evidence.filter(stance=Evidence.Stance.SUPPORTS).values_list("source_id", flat=True))
    claims = Source.objects.filter(owner=owner, origin=Source.Origin.RELATE, id__in=claim_ids)
    entity_ids = {relation.subject_id, relation.object_id}
    rows_delete(Relation, owner_id=owner.id, ids=[relation.id])  # cascades its evidence
    # The per-model count is the sources'.
    deleted = rows_delete(Source, owner_id=owner.id, ids=list(claims.values_list("id", flat=True)))
    return purge_counts(
        relations=1,
        evidence=evidence_count,
        sources_deleted=deleted.get(Source._meta.label, 0),
        entities_deleted=entities_delete_orphaned(owner=owner, entity_ids=entity_ids),
    )


def purge_record(
    *,
    actor: Actor,
    target_type: str,
    target_id: object,
    purged: dict[str, int],
    action: str = AuditEvent.Action.HARD_DELETED,
    reason: str = "",
) -> PurgeReceipt:
    """Write the audit row of a purge (what went, never what it said) and return its receipt."""
    detail: dict[str, object] = {"purged": purged}
    if reason:
        detail["reason"] = reason[:50]
    event = audit_record(
        actor=actor, action=action, target_type=target_type, target_id=target_id, detail=detail
    )
    return purge_receipt(event)


@transaction.atomic
def memories_hard_delete_in_space(*, actor: Actor, space: Space) -> PurgeReceipt:
    """Hard-delete every memory of one of the owner's spaces; return the receipt."""
    owner = actor.owner
    if space.owner_id != owner.id:
        raise errors.AppError(Code.SPACE_NOT_FOUND, "No space with this id exists in your account.")
    memories = list(Memory.objects.select_for_update().filter(owner=owner, space=space).defer("embedding"))
    purged = memories_purge(owner=owner, memories=memories)
    # Sources of the space that never produced a memory (failed jobs) go too.
    leftover = Source.objects.filter(owner=owner, space=space)
    purged["sources_deleted"] += leftover.count()
    purged["images_deleted"] += image_blobs_delete(
        names=leftover.exclude(image_name="").values_list("image_name", flat=True)
    )
    rows_delete(Source, owner_id=owner.id, ids=list(leftover.values_list("id", flat=True)))
    return purge_record(actor=actor, target_type="space", target_id=space.id, purged=purged)
