"""Writes of entities: `entity_record` (the entity a name stands for in a space, created or found,
its type refined by the mention) and `entity_merge` (fold one entity into another).

The identity rule, in one place: a space holds ONE entity per key, `normalize_entity_name` (folded,
without end punctuation, a possessive, a leading "the" or a legal form: "Acme", "Acme Corp" and
"ACME, Inc." are one entity; "Bob" and "Bob Smith" stay two, since two Bobs exist). The type is
not part of the identity but a verdict that follows the evidence:

- each typed mention adds one vote to `attributes["type_votes"]` ({type: mentions});
- a specific type (anything but Concept) replaces Concept, whatever the counts;
- between specific types the one with more votes wins; a tie keeps the current type, so the type
  does not flip back and forth on alternate mentions.

A row made before the votes existed counts as one mention of its type.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable

from django.db import DEFAULT_DB_ALIAS, IntegrityError, transaction
from django.utils import timezone

from config.compiled import CompiledQuery, compile_once, compiled_rows, model_order
from memories.models import Entity, MemoryEntity, Relation
from memories.parsing import RowId
from memories.pipeline.entities import normalize_entity_name
from memories.pipeline.language import fold
from memories.services.rows import row_update, rows_update

TYPE_VOTES = "type_votes"


# Each spelling of a name is kept once as an alias; a cap keeps a much-mentioned entity's row small.
MAX_ALIASES = 20


def entity_type_votes(entity: Entity) -> dict[str, int]:
    """{type: mentions} of an entity; a row without votes counts as one mention of its type."""
    votes = entity.attributes.get(TYPE_VOTES)
    if not isinstance(votes, dict):
        return {entity.type: 1}
    return {str(t): n for t, n in votes.items() if isinstance(n, int) and not isinstance(n, bool)}


def entity_refined_type(current: str, votes: dict[str, int]) -> str:
    """The type the votes give: the specific type with most votes (the current one on a tie; else the
    first by name, to be deterministic), Concept only when no specific type has a vote."""
    specific = {t: n for t, n in votes.items() if t != Entity.Type.CONCEPT and n > 0}
    if not specific:
        return current
    best = max(specific.values())
    if specific.get(current) == best:
        return current
    return min(t for t, n in specific.items() if n == best)


def _add_alias(entity: Entity, spelling: str) -> None:
    folded = fold(spelling)
    if not folded or folded == fold(entity.name) or len(entity.aliases) >= MAX_ALIASES:
        return
    if any(fold(alias) == folded for alias in entity.aliases):
        return
    entity.aliases = [*entity.aliases, spelling[:200]]


def entity_record(*, owner_id: RowId, space_id: RowId, name: str, type_: str) -> tuple[Entity, bool]:
    """The entity of `space_id` that `name` stands for, created if new; (entity, created).

    The mention counts as one vote for `type_` and its spelling is kept as an alias when it differs
    from the entity's name ("Acme Corp" on "Acme"). Runs inside the caller's transaction (one of its
    own when there is none); the row stays locked until the caller commits. Raises ValueError for a
    name with no key or an unknown type: callers check both first.
    """
    spelling, key = _spelling_key(name, type_)
    # No savepoint of its own: a save names a few entities per memory, and two statements per name
    # (SAVEPOINT, RELEASE) were a fifth of a save's. The INSERT of a new name keeps one, since it is
    # the statement that can fail (a concurrent insert of the same key), as get_or_create does.
    with transaction.atomic(savepoint=False):
        # Row lock: two saves naming Acme at once must not both read the same votes and lose one.
        entity = _entity_locked(owner_id, space_id, key)
        if entity is None:
            entity, created = _entity_made(owner_id, space_id, key, spelling, type_)
            if created:
                return entity, True
        _mentioned(entity, spelling, type_)
        row_update(entity, _MENTION_FIELDS)
        return entity, False


class EntityBook:
    """entity_record for the many statements of one batch (an import's): the entities they name read
    and locked in one statement (in key order, as entity_record's callers take them), each mention
    counted in memory by entity_record's rule, and every entity changed written once, in one message
    (write). The same rows result as from one entity_record per mention, with two round trips a
    mention fewer; the caller writes before its transaction commits, and uses a book for one
    transaction only (a rolled back savepoint would leave the book's counts ahead of the rows)."""

    def __init__(self, *, owner_id: uuid.UUID, space_id: uuid.UUID, names: Iterable[str]) -> None:
        self._owner_id, self._space_id = owner_id, space_id
        keys = sorted({key for name in names if (key := normalize_entity_name(" ".join(name.split())[:200]))})
        rows = (
            Entity.objects.select_for_update()
            .filter(owner_id=owner_id, space_id=space_id, normalized_name__in=keys)
            .order_by("normalized_name")
            if keys
            else Entity.objects.none()
        )
        self._entities: dict[str, Entity] = {entity.normalized_name: entity for entity in rows}
        self._changed: dict[uuid.UUID, Entity] = {}

    def record(self, *, name: str, type_: str) -> Entity:
        """entity_record's entity for this mention (a new one inserted now), its row written later."""
        spelling, key = _spelling_key(name, type_)
        entity = self._entities.get(key)
        if entity is None:
            entity, created = _entity_made(self._owner_id, self._space_id, key, spelling, type_)
            self._entities[key] = entity
            if created:
                return entity
        _mentioned(entity, spelling, type_)
        self._changed[entity.id] = entity
        return entity

    def write(self) -> None:
        """The entities the mentions changed, each row once, in one message."""
        rows_update(list(self._changed.values()), _MENTION_FIELDS)
        self._changed.clear()


# What a mention changes of an entity's row.
_MENTION_FIELDS = ("type", "attributes", "aliases", "updated_at")


def _spelling_key(name: str, type_: str) -> tuple[str, str]:
    spelling = " ".join(name.split())[:200]
    key = normalize_entity_name(spelling)
    if not key or type_ not in Entity.Type.values:
        raise ValueError(f"no entity for name {spelling!r} of type {type_!r}")
    return spelling, key


def _entity_made(
    owner_id: RowId, space_id: RowId, key: str, spelling: str, type_: str
) -> tuple[Entity, bool]:
    """A new entity for `key` (its first mention counted), or, when a concurrent save made it first,
    that one's row, locked (the INSERT waited for its commit); (entity, created)."""
    try:
        with transaction.atomic():
            entity = Entity.objects.create(
                owner_id=owner_id,
                space_id=space_id,
                normalized_name=key,
                name=spelling,
                type=type_,
                attributes={TYPE_VOTES: {type_: 1}},
            )
        return entity, True
    except IntegrityError:
        found = _entity_locked(owner_id, space_id, key)
        if found is None:
            raise
        return found, False


def _mentioned(entity: Entity, spelling: str, type_: str) -> None:
    """One more mention of an existing entity, in memory: a vote for its type, its spelling."""
    votes = entity_type_votes(entity)
    votes[type_] = votes.get(type_, 0) + 1
    entity.type = entity_refined_type(entity.type, votes)
    entity.attributes = {**entity.attributes, TYPE_VOTES: votes}
    _add_alias(entity, spelling)
    entity.updated_at = timezone.now()


# Every column of an entity, in the model's order (Entity.from_db reads a row of them so).
_ENTITY_FIELDS = model_order(Entity, tuple(field.attname for field in Entity._meta.concrete_fields))


@functools.cache
def _entity_read() -> CompiledQuery:
    # The entity of a space with a key, locked until the caller commits: every name of every save
    # asks it, so it is compiled once (config.compiled).
    return compile_once(
        lambda owner_id, space_id, key: (
            Entity.objects.select_for_update()
            .filter(owner_id=owner_id, space_id=space_id, normalized_name=key)
            .values_list(*_ENTITY_FIELDS)
        ),
        owner_id=uuid.uuid4(),
        space_id=uuid.uuid4(),
        key=f"sample {uuid.uuid4()}",
    )


def _entity_locked(owner_id: RowId, space_id: RowId, key: str) -> Entity | None:
    rows = compiled_rows(_entity_read(), owner_id=owner_id, space_id=space_id, key=key)
    return Entity.from_db(DEFAULT_DB_ALIAS, _ENTITY_FIELDS, rows[0]) if rows else None


def entity_merge(*, duplicate: Entity, into: Entity) -> None:
    """Fold `duplicate` into `into`: memory links, relations, aliases (its name included), attributes
    (`into`'s win), type votes (summed, the type refined); then delete it. The caller holds both rows
    locked in its transaction."""
    links = MemoryEntity.objects.filter(owner_id=into.owner_id)
    already_linked = links.filter(entity_id=into.id).values("memory_id")
    # A memory linked to both would violate the (memory, entity) uniqueness once re-pointed.
    links.filter(entity_id=duplicate.id, memory_id__in=already_linked).delete()
    links.filter(entity_id=duplicate.id).update(entity_id=into.id)
    relations = Relation.objects.filter(owner_id=into.owner_id)
    relations.filter(subject_id=duplicate.id).update(subject_id=into.id)
    relations.filter(object_id=duplicate.id).update(object_id=into.id)
    votes = entity_type_votes(into)
    for type_, count in entity_type_votes(duplicate).items():
        votes[type_] = votes.get(type_, 0) + count
    for spelling in [*duplicate.aliases, duplicate.name]:
        _add_alias(into, spelling)
    into.type = entity_refined_type(into.type, votes)
    into.attributes = {**duplicate.attributes, **into.attributes, TYPE_VOTES: votes}
    into.updated_at = timezone.now()
    into.save(update_fields=["type", "aliases", "attributes", "updated_at"])
    duplicate.delete()
