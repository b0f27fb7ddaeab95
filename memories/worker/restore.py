"""Our own export, imported: what it carries beside its sources, applied to what the import made.

The engine makes the memories again from the export's sources (memories/worker/imports.py); what the
words alone cannot give back is applied here, after the last batch, in one transaction under the
owner's write lock (the same as a batch's): the spaces the items were said in (made before the first
batch), the relations made with `relate` (each claim replayed at the time it was made, by the rule
`relate` follows, and each retirement by an agent at its time), and each memory's labels, states and
history as the export has them (docs/decisions.md, "Our own export, round trip").

Only rows this import made are touched: a memory or a relation the person already had, which an
imported item merely confirmed, keeps its own states. So importing the same file again changes
nothing, and the import's undo, which removes what its sources made, removes all of it.
"""

from __future__ import annotations

import bisect
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Model
from django.utils import timezone

from memories.as_of import active_q
from memories.errors import AppError
from memories.models import Entity, Import, Job, Memory, Relation, Source
from memories.pipeline.import_formats import (
    ExportedClaim,
    ExportedEntity,
    ExportedMemory,
    ExportedRelation,
    ExportState,
    ImportItem,
)
from memories.pipeline.supersede import relation_retire
from memories.services.entities import entity_record
from memories.services.imports import import_claimant, import_source_kind, own_sources
from memories.services.relations import default_entity_types, relation_claim
from memories.services.rows import rows_update
from memories.services.sources import content_hash
from memories.services.spaces import space_named
from memories.wire import MEMORY_CLOCKS, RELATION_CLOCKS
from memories.worker import store

DEEPRECALL = "deeprecall"
_NEVER = datetime.max.replace(tzinfo=UTC)
_FORGOTTEN_FIELDS = ("status", "suppressed_at", "suppressed_reason", "suppressed_note")
# What a memory's restored fields are: the person's labels and states, then its history's clocks.
_MEMORY_FIELDS = ("tags", "category", "confidence", "pinned", *_FORGOTTEN_FIELDS, *MEMORY_CLOCKS)


def spaces_made(*, job: Job, made: Import, state: ExportState) -> dict[str, uuid.UUID]:
    """The space of each of the export's space names: the owner's of that name, made if missing (the
    ids made are kept on the import for its undo); the export's default space ("") is the import's.
    A name no space can have (an edited file) leaves its items in the import's space."""
    spaces = {"": job.space_id}
    with transaction.atomic():
        # The owner's write lock, as a batch takes it: two imports of one owner naming the same new
        # space make it once.
        lock, keys = store.owner_write_lock([job.owner_id])
        with connection.cursor() as cursor:
            cursor.execute(lock, keys)
        locked = Import.objects.select_for_update().get(owner_id=job.owner_id, id=made.id)
        created = list(locked.restored.get("spaces", []))
        for name in state.spaces:
            try:
                space, new = space_named(owner=job.owner, name=name)
            except AppError:
                continue  # a name no space can have, or no room for one more space
            spaces[name] = space.id
            if new:
                created.append(str(space.id))
        # Every space chosen, made here or found (another import may have made it): an undo of that
        # one while this runs hands it to this import rather than deleting it under its items.
        used = sorted({str(space_id) for name, space_id in spaces.items() if name})
        changed = {"spaces": created, "spaces_used": used}
        if any(locked.restored.get(key) != value for key, value in changed.items()):
            locked.restored = {**locked.restored, **changed}
            locked.save(update_fields=["restored"])
    made.restored = locked.restored
    return spaces


def state_apply(
    *, job: Job, made: Import, state: ExportState, spaces: dict[str, uuid.UUID]
) -> dict[str, int]:
    """Inside the caller's transaction, under the owner's write lock: the export's relations and the
    memories' states and history applied to what this import made. Returns what was applied."""
    relations = _relations_replayed(job=job, made=made, state=state, spaces=spaces)
    return {"relations": relations, **_memories_restored(job=job, made=made, state=state)}


# --- forgetting in its time ----------------------------------------------------------------------


def forgetting_cuts(*, items: list[ImportItem], state: ExportState) -> set[str]:
    """The items a batch must start at so that each memory is forgotten when it was: the first item
    of a space recorded after a memory of that space was forgotten. What is said after a memory was
    forgotten takes no part with it (a forgotten memory is never judged): the same words said again
    made a new memory, and must again (forgotten_apply, at the start of that batch)."""
    space_of = {item.source_id: item.space for item in items}
    times: dict[str, list[datetime]] = {}
    for memory in state.memories:
        if memory.suppressed and memory.suppressed_at is not None and memory.source_id in space_of:
            times.setdefault(space_of[memory.source_id], []).append(memory.suppressed_at)
    for listed in times.values():
        listed.sort()
    cuts: set[str] = set()
    previous: dict[str, datetime] = {}
    for item in items:
        moments = times.get(item.space)
        if item.recorded_at is None or not moments:
            continue
        before = previous.get(item.space)
        # A moment of forgetting between the item before and this one.
        if before is not None and bisect.bisect_right(moments, before) < bisect.bisect_right(
            moments, item.recorded_at
        ):
            cuts.add(item.source_id)
        previous[item.space] = item.recorded_at
    return cuts


class Forgetting:
    """The exported memories each batch must forget before its reads (forgotten_apply): those of the
    batch's space forgotten before its first item was recorded, each handed once per attempt. The
    first batch of an attempt gets every one before it (an attempt may start half-way); a later one
    only those forgotten since the batch before in its space, so a file of N forgettings costs N,
    not N x batches (each batch handed every memory forgotten before it: quadratic, and an export
    with a moment of forgetting between every two items has as many batches as items)."""

    def __init__(self, *, items: list[ImportItem], state: ExportState) -> None:
        space_of = {item.source_id: item.space for item in items}
        due: dict[str, list[tuple[datetime, int, ExportedMemory]]] = {}
        for position, memory in enumerate(state.memories):
            if memory.suppressed and memory.suppressed_at is not None and memory.source_id in space_of:
                due.setdefault(space_of[memory.source_id], []).append(
                    (memory.suppressed_at, position, memory)
                )
        self._due = {space: sorted(listed, key=lambda e: (e[0], e[1])) for space, listed in due.items()}
        self._times = {space: [e[0] for e in listed] for space, listed in self._due.items()}
        self._handed: dict[str, int] = {}

    def due(self, batch: list[ImportItem]) -> list[ExportedMemory]:
        first = batch[0].recorded_at if batch else None
        if first is None:
            return []
        space = batch[0].space
        start = self._handed.get(space, 0)
        end = max(start, bisect.bisect_left(self._times.get(space, []), first))
        self._handed[space] = end
        return [memory for _, _, memory in self._due.get(space, [])[start:end]]


def _rebuilt(job: Job, made: Import, refs: Iterable[str] | None) -> dict[uuid.UUID, str]:
    """This import's item sources (id -> the exported source's id), those of `refs` (all: None)."""
    sources = Source.objects.filter(
        owner_id=job.owner_id, claimant=import_claimant(made.id), source_kind=import_source_kind(DEEPRECALL)
    )
    if refs is not None:
        sources = sources.filter(source_ref__in=list(refs))
    return dict(sources.values_list("id", "source_ref"))


def _forgotten_as(memory: Memory, exported: ExportedMemory) -> None:
    memory.status = Memory.Status.SUPPRESSED
    # Forgotten with no moment that could be (none, or one in the future): forgotten from now.
    memory.suppressed_at = exported.suppressed_at or memory.suppressed_at or timezone.now()
    reason = exported.suppressed_reason
    memory.suppressed_reason = reason if reason in Memory.SuppressReason.values else "other"
    memory.suppressed_note = exported.suppressed_note


def forgotten_apply(*, job: Job, made: Import, memories: list[ExportedMemory]) -> None:
    """Inside a batch's transaction, before its items: these exported memories forgotten on the
    memories made again from their sources (already stored by an earlier batch), as they were by then.
    Idempotent: a memory already forgotten is left as it is."""
    if not memories:
        return
    sources = _rebuilt(job, made, {memory.source_id for memory in memories})
    wanted = {(memory.source_id, memory.content): memory for memory in memories}
    rows = (
        Memory.objects.select_for_update()
        .filter(active_q(), owner_id=job.owner_id, source_id__in=list(sources))
        .defer("embedding", "search_vector")
    )
    changed: list[Model] = []
    for memory in rows:
        exported = wanted.get((sources[memory.source_id], memory.content)) if memory.source_id else None
        if exported is not None:
            _forgotten_as(memory, exported)
            changed.append(memory)
    rows_update(changed, _FORGOTTEN_FIELDS)


# --- relations ----------------------------------------------------------------------------------


def _entity(job: Job, space_id: uuid.UUID, entity: ExportedEntity, default_type: str) -> Entity | None:
    type_ = entity.type if entity.type in Entity.Type.values else default_type
    try:
        return entity_record(owner_id=job.owner_id, space_id=space_id, name=entity.name, type_=type_)[0]
    except ValueError:
        return None  # a name without a letter or digit: no entity, as `relate` refuses it


def _relations_replayed(*, job: Job, made: Import, state: ExportState, spaces: dict[str, uuid.UUID]) -> int:
    """Each `relate` claim replayed at the time it was made, and each retirement at its own, in time
    order: a claim after a retirement makes a new relation, as it did. Then the export's clocks on the
    relations this import made. A claim already imported (its key in its space) is not made again."""
    kind = import_source_kind(DEEPRECALL)
    refs = [claim.source_id for claim in state.claims]
    taken = set(
        Source.objects.filter(owner_id=job.owner_id, source_kind=kind, source_ref__in=refs).values_list(
            "space_id", "source_ref"
        )
    )
    # The owner's own claims (the file is an export of this account): here already, in any space.
    own = own_sources(owner_id=job.owner_id, refs=refs)
    exported = {relation.id: relation for relation in state.relations}
    events: list[tuple[datetime, int, ExportedClaim | ExportedRelation]] = [
        (claim.recorded_at, 0, claim) for claim in state.claims
    ]
    events += [(r.invalidated_at, 1, r) for r in state.relations if r.invalidated_at is not None]
    made_here: dict[str, Relation] = {}
    for at, _, event in sorted(events, key=lambda e: (e[0], e[1])):
        if isinstance(event, ExportedRelation):
            relation = made_here.get(event.id)
            if relation is not None and relation.invalidated_at is None:
                relation.invalidated_at = event.invalidated_at
                relation.invalidated_note = event.invalidated_note
                relation_retire(relation=relation, now=at)
                relation.save(update_fields=["superseded_at", "invalidated_at", "invalidated_note"])
            continue
        space_id = spaces.get(event.space, job.space_id)
        if (space_id, event.source_id) in taken or event.source_id in own:
            continue
        if event.relation_type not in Relation.Type.values:
            continue
        taken.add((space_id, event.source_id))
        subject_type, object_type = default_entity_types(event.relation_type)
        subject = _entity(job, space_id, event.subject, subject_type)
        obj = _entity(job, space_id, event.object, object_type)
        if subject is None or obj is None or subject.id == obj.id:
            continue
        content = event.content
        if not content.strip() or len(content) > settings.REMEMBER_MAX_CHARS:
            # What `relate` itself records; a claim's words no save could hold are an edited file's.
            content = f"{subject.name} {event.relation_type} {obj.name}"
        source = Source(
            owner_id=job.owner_id,
            space_id=space_id,
            origin=Source.Origin.RELATE,
            content=content,
            content_hash=content_hash(content.encode()),
            claimant=import_claimant(made.id),
            source_kind=kind,
            source_ref=event.source_id[:500],
            refers_to=event.refers_to,
            recorded_at=event.recorded_at,
        )
        source.save(force_insert=True)
        relation, created, _ = relation_claim(
            subject=subject,
            obj=obj,
            relation_type=event.relation_type,
            valid_from=event.refers_to,
            source=source,
        )
        if created:
            made_here.setdefault(event.relation_id, relation)
    for relation_id, relation in made_here.items():
        record = exported[relation_id]
        successor = made_here.get(record.superseded_by) if record.superseded_by else None
        replaced = _replacement_taken(record, relation, successor)
        _clocks_set(relation, record.clocks, replaced)
        if replaced:
            relation.superseded_by = successor
    rows_update(list(made_here.values()), RELATION_CLOCKS)
    return len(made_here)


def _replacement_taken(
    exported: ExportedMemory | ExportedRelation, row: Memory | Relation, successor: Memory | Relation | None
) -> bool:
    """Whether the export's replacement of a row is applied: one that could be (the parser's check),
    by a row this import made again too (`successor`), in the same space (the engine judges within
    a space), or by none with a moment of its own. Otherwise the row keeps what the engine (or the
    replayed claim) made: never replaced by nothing, nor by a row of before, nor across spaces."""
    if not exported.replaced_as_exported:
        return False
    if exported.superseded_by is None:
        return True
    return (
        successor is not None
        and successor.space_id == row.space_id
        and exported.clocks.get("superseded_at") is not None
    )


def _clocks_set(row: Memory | Relation, clocks: dict[str, datetime | None], replaced: bool) -> None:
    for name, value in clocks.items():
        # A row is always recorded at some time: the engine's stays where the file has none; and
        # its replacement's moment goes with the replacement.
        if (name == "recorded_at" and value is None) or (name == "superseded_at" and not replaced):
            continue
        setattr(row, name, value)


# --- memories -----------------------------------------------------------------------------------


def _matched(
    exported: Iterable[ExportedMemory], rebuilt: dict[tuple[str, str], list[Memory]]
) -> dict[str, tuple[ExportedMemory, Memory]]:
    """Each exported memory paired with the memory made again from its source with the same words
    (of the same kind first), each made memory paired once."""
    pairs: dict[str, tuple[ExportedMemory, Memory]] = {}
    for memory in exported:
        candidates = rebuilt.get((memory.source_id, memory.content))
        if not candidates:
            continue
        chosen = next((m for m in candidates if m.kind == memory.kind), candidates[0])
        candidates.remove(chosen)
        pairs[memory.id] = (memory, chosen)
    return pairs


def _memories_restored(*, job: Job, made: Import, state: ExportState) -> dict[str, int]:
    """The export's labels, states and history on the memories this import made again: tags,
    category, confidence, pinned, forgotten, every clock, and what replaced each (where that was
    made again too). A memory of the file whose source this import stored but which the engine did
    not make again from it keeps nothing: the import counts it (`not_rebuilt`)."""
    sources = _rebuilt(job, made, None)
    rebuilt: dict[tuple[str, str], list[Memory]] = {}
    rows = (
        Memory.objects.select_for_update()
        .filter(owner_id=job.owner_id, source_id__in=list(sources))
        .defer("embedding", "search_vector")
        .order_by("recorded_at", "id")
    )
    for memory in rows:
        if memory.source_id is not None:
            rebuilt.setdefault((sources[memory.source_id], memory.content), []).append(memory)
    # In the order they were made: of two exported memories with the same words from one source, the
    # first made is paired with the first made again.
    ordered = sorted(state.memories, key=lambda m: (m.clocks.get("recorded_at") or _NEVER, m.id))
    pairs = _matched(ordered, rebuilt)
    for exported, memory in pairs.values():
        memory.tags = list(exported.tags)
        memory.category = exported.category if exported.category in Memory.Category.values else ""
        memory.confidence = exported.confidence
        memory.pinned = exported.pinned
        if exported.suppressed:
            _forgotten_as(memory, exported)
        else:
            memory.status, memory.suppressed_at = Memory.Status.ACTIVE, None
            memory.suppressed_reason = memory.suppressed_note = ""
        pair = pairs.get(exported.superseded_by) if exported.superseded_by else None
        replaced = _replacement_taken(exported, memory, pair[1] if pair else None)
        _clocks_set(memory, exported.clocks, replaced)
        if replaced:
            memory.superseded_by = pair[1] if pair else None
    rows_update([memory for _, memory in pairs.values()], _MEMORY_FIELDS)
    # Of the memories whose words this import stored (not those an earlier import of the file had).
    stored = set(sources.values())
    expected = sum(1 for memory in state.memories if memory.source_id in stored)
    return {"memories": len(pairs), "not_rebuilt": expected - len(pairs)}
