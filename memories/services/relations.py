"""Writes of the memory graph: `relate` (a claimed relation between two entities), retiring one
(`invalidate`) and bringing it back.

Keyword-only, owner taken from the caller, attribution from the token. A relation is
a fact like a memory: what was asserted is kept as an immutable Source (the claim),
the Relation row is what the service holds true, and Evidence links the two.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.caller import Actor, Caller
from memories import embeddings
from memories.as_of import relation_visible
from memories.errors import AppError, Code
from memories.models import AuditEvent, Entity, Evidence, Relation, Source, Space
from memories.parsing import RowId
from memories.pipeline.entities import normalize_entity_name
from memories.pipeline.supersede import relation_retire, relation_retire_undo, relation_rivals, supersede
from memories.selectors.graph import entity_matches
from memories.services.audit import audit_record
from memories.services.entities import entity_record
from memories.services.purge import purge_record, relation_purge
from memories.services.sources import source_record
from memories.services.spaces import space_for_caller
from memories.wire import PurgeReceipt

# A person lives somewhere and works somewhere; only one at a time. A newer one of these
# supersedes the current one, as a newer value of a fact's slot does.
SINGLE_VALUED: frozenset[str] = frozenset({Relation.Type.LIVES_IN, Relation.Type.WORKS_AT})


# The type of an entity `relate` has to create when the caller did not say.
_SUBJECT_TYPES: dict[str, str] = {
    Relation.Type.LIVES_IN: Entity.Type.PERSON,
    Relation.Type.WORKS_AT: Entity.Type.PERSON,
    Relation.Type.WANTS: Entity.Type.PERSON,
    Relation.Type.HAS: Entity.Type.PERSON,
}


_OBJECT_TYPES: dict[str, str] = {
    Relation.Type.LIVES_IN: Entity.Type.LOCATION,
    Relation.Type.WORKS_AT: Entity.Type.ORGANIZATION,
}


def default_entity_types(relation_type: str) -> tuple[str, str]:
    """(subject type, object type) used when `relate` creates an entity of unstated type."""
    return (
        _SUBJECT_TYPES.get(relation_type, Entity.Type.CONCEPT),
        _OBJECT_TYPES.get(relation_type, Entity.Type.CONCEPT),
    )


@dataclass
class RelateResult:
    relation: Relation
    created: bool
    source: Source
    superseded: list[Relation] = field(default_factory=list)
    entities_created: list[Entity] = field(default_factory=list)


def _entity_for(
    *, caller: Caller, space: Space, name: str, stated_type: str | None, default_type: str
) -> tuple[Entity, bool]:
    """The entity `name` (or an alias of it) stands for, or a new one of the stated or default type.

    A space holds one entity per name (`entity_record`), so a stated type does not pick between
    entities: it is one mention of that type and refines the entity's type. An unstated type is
    only a guess from the relation's role: it types a new entity but is no evidence about one that
    exists.
    """
    clean = " ".join(name.split())[:200]
    key = normalize_entity_name(clean)
    if not key:
        raise AppError(
            Code.INVALID_ENTITY_NAME,
            "An entity name needs at least one letter or digit.",
            details={"name": clean},
            agent_action="send the entity's name as it is written",
        )
    matches = entity_matches(owner=caller.user, space=space, name=clean)
    if matches and stated_type is None:
        return matches[0], False
    # A name matched by alias ("Jordi Lopez") is that entity: resolve it by its own name.
    resolved_name = matches[0].name if matches else clean
    return entity_record(
        owner_id=caller.user.id, space_id=space.id, name=resolved_name, type_=stated_type or default_type
    )


@transaction.atomic
def relation_record(
    *,
    caller: Caller,
    source_name: str,
    target_name: str,
    relation_type: str,
    source_type: str | None = None,
    target_type: str | None = None,
    valid_from: datetime | None = None,
    request_id: str = "",
) -> RelateResult:
    """Record the claim "source relation_type target" in the caller's current space.

    The claim is stored as an immutable Source (origin `relate`) and supports the relation.
    The same relation, still current, gains evidence (a new Source) instead of a new row. A new
    object of a single-valued type (lives_in, works_at) supersedes the current one. One
    transaction; the subject's row lock serialises concurrent relates of the same subject.
    """
    if relation_type not in Relation.Type.values:
        raise AppError(
            Code.INVALID_VALUE, "relation_type is not a relation type.", details={"field": "relation_type"}
        )
    space = space_for_caller(caller=caller)
    default_subject, default_object = default_entity_types(relation_type)
    subject, subject_created = _entity_for(
        caller=caller, space=space, name=source_name, stated_type=source_type, default_type=default_subject
    )
    obj, object_created = _entity_for(
        caller=caller, space=space, name=target_name, stated_type=target_type, default_type=default_object
    )
    if subject.id == obj.id:
        raise AppError(
            Code.SAME_ENTITY,
            "source and target are the same entity; a relation links two different entities.",
            details={"entity_id": str(subject.id)},
            agent_action="relate two different entities (a space holds one entity per name: "
            '"Acme" and "Acme Corp" are one)',
        )
    # Row lock on the subject before the claim's time is taken: relates of one subject are then
    # recorded in the order they hold the lock, so a later one never gets an earlier time and is
    # left beside the current one rather than replacing it (relation_claim locks it again, a no-op).
    subject = Entity.objects.select_for_update().get(owner_id=subject.owner_id, id=subject.id)
    now = timezone.now()
    content = f"{subject.name} {relation_type} {obj.name}"
    when: dict[str, object] = {"refers_to": valid_from, "recorded_at": now}
    source = source_record(caller=caller, space=space, origin=Source.Origin.RELATE, content=content, **when)
    relation, created, superseded = relation_claim(
        subject=subject, obj=obj, relation_type=relation_type, valid_from=valid_from, source=source
    )
    # Ids and the type only: entity names are the user's content.
    detail = {
        "relation_type": relation_type,
        "created": created,
        "source_id": str(source.id),
        "superseded": [str(older.id) for older in superseded],
        "space_id": str(space.id),
    }
    action = AuditEvent.Action.RELATION_CREATED
    audit_record(
        actor=caller.actor(request_id),
        action=action,
        target_type="relation",
        target_id=relation.id,
        detail=detail,
    )
    return RelateResult(
        relation=relation,
        created=created,
        source=source,
        superseded=superseded,
        entities_created=[e for e, made in ((subject, subject_created), (obj, object_created)) if made],
    )


def relation_claim(
    *, subject: Entity, obj: Entity, relation_type: str, valid_from: datetime | None, source: Source
) -> tuple[Relation, bool, list[Relation]]:
    """The one rule of a claimed relation, at the time its claim (`source`, stored) was recorded:
    the same relation, still current then, gains the claim as evidence; otherwise a new relation,
    which supersedes the current one of a single-valued type. (relation, created, superseded).

    Used by `relation_record` and by an import of our own export, which replays each claim at the
    time it was first made so that the relations and their history come back as they were."""
    # Row lock on the subject: two relates of the same subject (Paris and Berlin at once) must
    # not both find "no current lives_in" and both become current.
    subject = Entity.objects.select_for_update().get(owner_id=source.owner_id, id=subject.id)
    now = source.recorded_at
    same = {
        "owner_id": source.owner_id,
        "space_id": source.space_id,
        "subject": subject,
        "object": obj,
        "type": relation_type,
    }
    existing = (
        Relation.objects.filter(**same)
        .filter(relation_visible(now=now))
        .order_by("-recorded_at", "-id")
        .first()
    )
    superseded: list[Relation] = []
    if existing is not None:
        relation, created = existing, False
    else:
        relation = Relation(**same, valid_from=valid_from, recorded_at=now)
        relation.embedding = embeddings.embed([relation.sentence()])[0]
        relation.save(force_insert=True)
        created = True
        if relation_type in SINGLE_VALUED:
            superseded = supersede(new=relation, rivals=relation_rivals(relation), source=source, now=now)
    Evidence.objects.create(
        owner_id=source.owner_id, relation=relation, source=source, stance=Evidence.Stance.SUPPORTS
    )
    return relation, created, superseded


def _relation_for_update(*, owner: Any, relation_id: RowId) -> Relation:
    relation = Relation.objects.select_for_update().filter(owner=owner, id=relation_id).first()
    if relation is None:
        raise AppError(
            Code.RELATION_NOT_FOUND,
            "No relation with this id exists in your account.",
            agent_action="look the relation up again (get_context) and use its id",
        )
    return relation


_INVALIDATION_FIELDS = ["superseded_at", "invalidated_at", "invalidated_note"]


@transaction.atomic
def relation_invalidate(*, actor: Actor, relation_id: RowId, note: str = "") -> Relation:
    """Retire a relation the agent says is outdated or wrong, restorably, with the reason in words.

    It stops holding now, as a replaced relation does (`superseded_at`, with no successor): current
    readers leave it out, a view of a time before now still shows it (kept for history, with its
    reason), and a new `relate` of the same link makes a new relation. One that a newer relation
    already replaced keeps its end and gains the reason. Idempotent: the first reason stays.
    """
    relation = _relation_for_update(owner=actor.owner, relation_id=relation_id)
    if relation.invalidated_at is None:
        now = timezone.now()
        relation.invalidated_at = now
        relation.invalidated_note = note.strip()
        relation_retire(relation=relation, now=now)
        relation.save(update_fields=_INVALIDATION_FIELDS)
        # The note stays on the row: an audit row never holds words that may repeat what was said.
        audit_record(
            actor=actor,
            action=AuditEvent.Action.SUPPRESSED,
            target_type="relation",
            target_id=relation.id,
            detail={"reason": "invalidated"},
        )
    return relation


@transaction.atomic
def relation_restore(*, actor: Actor, relation_id: RowId) -> Relation:
    """Undo `relation_invalidate`: the relation holds again, unless another now holds in its place
    (the same link said again, or a newer value of a single-valued type): `relation_not_restorable`.
    Idempotent."""
    relation = _relation_for_update(owner=actor.owner, relation_id=relation_id)
    if relation.invalidated_at is None:
        return relation
    if relation_retire_undo(relation=relation, retired_at=relation.invalidated_at):
        # The subject's lock, as `relation_record` takes it: a relate of the same subject waits.
        Entity.objects.select_for_update().get(id=relation.subject_id)
        same_place = Relation.objects.filter(
            owner_id=relation.owner_id,
            space_id=relation.space_id,
            subject_id=relation.subject_id,
            type=relation.type,
        ).filter(relation_visible(now=timezone.now()))
        if relation.type not in SINGLE_VALUED:
            same_place = same_place.filter(object_id=relation.object_id)
        holding = [
            str(other.id) for other in same_place.exclude(id=relation.id).order_by("recorded_at", "id")
        ]
        if holding:
            raise AppError(
                Code.RELATION_NOT_RESTORABLE,
                details={"relation_id": str(relation.id), "holding": holding},
            )
    relation.invalidated_at = None
    relation.invalidated_note = ""
    relation.save(update_fields=_INVALIDATION_FIELDS)
    audit_record(
        actor=actor,
        action=AuditEvent.Action.RESTORED,
        target_type="relation",
        target_id=relation.id,
        detail={},
    )
    return relation


@transaction.atomic
def relation_hard_delete(*, actor: Actor, relation_id: RowId, reason: str = "other") -> PurgeReceipt:
    """Permanently remove a relation and the claims that asserted it (`purge.relation_purge`);
    return the purge receipt."""
    owner = actor.owner
    relation = _relation_for_update(owner=owner, relation_id=relation_id)
    deleted_id = relation.id  # delete() clears it
    purged = relation_purge(owner=owner, relation=relation)
    return purge_record(
        actor=actor, target_type="relation", target_id=deleted_id, purged=purged, reason=reason
    )
