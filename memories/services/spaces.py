"""Writes for spaces: create (and the default), rename, switch the default, delete (moving or
destroying the contents), and which space a caller's write lands in (`space_for_caller`), including
the per-grant choice of `switch_agent`.

Every function is keyword-only, takes the owner explicitly, runs in one transaction and leaves an
audit row.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.caller import Actor, Caller
from accounts.models import User
from memories import errors
from memories.errors import AppError, Code, name_checked
from memories.limits import SPACE_NAME_MAX_LENGTH, SPACES_MAX
from memories.models import AuditEvent, Entity, GrantSpace, Job, Memory, MemoryEntity, Relation, Source, Space
from memories.parsing import RowId
from memories.selectors.spaces import grant_space_id, space_default, space_granted_or_default
from memories.services.audit import audit_record
from memories.services.entities import entity_merge, entity_record
from memories.services.purge import memories_hard_delete_in_space

DEFAULT_SPACE_NAME = "Personal"


def space_create_default(*, owner: User) -> Space:
    """Return the owner's default space, creating it if they have none."""
    existing = Space.objects.filter(owner=owner, is_default=True).first()
    if existing is not None:
        return existing
    try:
        # A savepoint: a concurrent sign-in creating the same default must not
        # break the caller's transaction.
        with transaction.atomic():
            return Space.objects.create(owner=owner, name=DEFAULT_SPACE_NAME, is_default=True)
    except IntegrityError:
        return Space.objects.get(owner=owner, is_default=True)


def space_room_check(*, owner: User, adding: int) -> None:
    """Refuse `adding` more spaces where the owner would then hold more than SPACES_MAX. Inside the
    caller's transaction, after a lock that orders the owner's space writes (the owner's row, or an
    import's write lock)."""
    held = Space.objects.filter(owner=owner).count()
    if adding > 0 and held + adding > SPACES_MAX:
        raise AppError(
            Code.SPACE_LIMIT_REACHED,
            f"Your account can hold at most {SPACES_MAX} spaces; it holds {held}.",
            details={"max_spaces": SPACES_MAX, "held": held, "adding": adding},
        )


def spaces_missing(*, owner: User, names: Iterable[str]) -> int:
    """How many spaces `space_named` would make for these names: those a space can have, told apart
    without case, that none of the owner's spaces has."""
    wanted: set[str] = set()
    for name in names:
        try:
            wanted.add(_clean_name(name).lower())
        except AppError:
            continue  # a name no space can have: its items go to the import's space
    held = {name.lower() for name in Space.objects.filter(owner=owner).values_list("name", flat=True)}
    return len(wanted - held)


def space_create(*, actor: Actor, name: str) -> Space:
    """Create another space for the actor's owner; names are unique per owner, and an owner holds at
    most SPACES_MAX."""
    cleaned = _clean_name(name)
    try:
        with transaction.atomic():
            # The owner's row lock: two creates at once are counted one after the other.
            User.objects.select_for_update().filter(id=actor.owner.id).first()
            space_room_check(owner=actor.owner, adding=1)
            space = Space.objects.create(owner=actor.owner, name=cleaned)
            _audit(actor, space, AuditEvent.Action.SPACE_CREATED)
    except IntegrityError:
        raise _name_taken(cleaned) from None
    return space


def space_named(*, owner: User, name: str) -> tuple[Space, bool]:
    """The owner's space of this name (names are told apart without case, as the constraint does),
    created if there is none; (space, created). Inside the caller's transaction, under the owner's
    write lock (an import's). Raises AppError for a name a space cannot have."""
    cleaned = _clean_name(name)
    existing = Space.objects.filter(owner=owner, name__iexact=cleaned).first()
    if existing is not None:
        return existing, False
    space_room_check(owner=owner, adding=1)
    return Space.objects.create(owner=owner, name=cleaned), True


def space_for_caller(*, caller: Caller, space_id: RowId | None = None) -> Space:
    """Which space a caller's read or write lands in: the one rule every surface uses.

    1. the space the request names (REST `space`); it must be one of the caller's, else
       `space_not_found` (404);
    2. else the space the caller's grant chose with `switch_agent` (per OAuth application or
       personal access token, kept across token refreshes; on every endpoint, MCP and REST);
    3. else the user's default space, created if the account has none yet.
    The dashboard (a session) has no grant: it uses the default unless a page names a space.
    """
    if space_id is None:
        # The grant's space or the default, in one read; the default is created when there is none.
        space = space_granted_or_default(user=caller.user, **(_grant_of(caller) or {}))
        return space if space is not None else space_create_default(owner=caller.user)
    space = Space.objects.filter(owner=caller.user, id=space_id).first()
    if space is None:
        raise errors.AppError(
            Code.SPACE_NOT_FOUND,
            "No space with this id exists in your account.",
            agent_action="list your spaces and use one of their ids",
        )
    return space


MEMORIES_MOVE = "move"


MEMORIES_DELETE = "delete"


def _lock_spaces(*, owner: User) -> list[Space]:
    """Lock all of the owner's spaces, in a fixed order.

    Switching the default and deleting a space both read "which space is the
    default" and then act on it; holding every space row of the owner makes two
    such requests run one after the other instead of both acting on a stale
    answer (and the fixed order keeps them from deadlocking each other).
    """
    return list(Space.objects.select_for_update().filter(owner=owner).order_by("id"))


def _find(spaces: list[Space], space_id: RowId) -> Space:
    for space in spaces:
        if str(space.id) == str(space_id):
            return space
    raise AppError(Code.SPACE_NOT_FOUND)


def _clean_name(name: object) -> str:
    # Names a person cannot tell apart are one name: compatibility forms (the full-width letters
    # U+FF37 U+FF4F U+FF52 U+FF4B are "Work") and invisible format characters (a zero-width space
    # inside "Wo\u200brk") are folded away before the case-insensitive comparison of the constraint.
    if isinstance(name, str):
        name = "".join(ch for ch in unicodedata.normalize("NFKC", name) if unicodedata.category(ch) != "Cf")
    return name_checked(
        name, max_length=SPACE_NAME_MAX_LENGTH, code=Code.INVALID_SPACE_NAME, what="A space name"
    )


def _name_taken(name: str) -> AppError:
    return AppError(
        Code.SPACE_NAME_TAKEN,
        f"You already have a space named {name!r}.",
        agent_action="choose another name",
    )


def _audit(actor: Actor, space: Space, action: str, **detail: object) -> None:
    audit_record(actor=actor, action=action, target_type="space", target_id=space.id, detail=detail)


@transaction.atomic
def space_rename(*, actor: Actor, space_id: RowId, name: str) -> Space:
    """Rename one of the owner's spaces. Names are unique per owner (`space_name_taken`, 409)."""
    cleaned = _clean_name(name)
    space = _find(_lock_spaces(owner=actor.owner), space_id)
    if space.name == cleaned:
        return space
    space.name = cleaned
    try:
        # A savepoint, so a name clash leaves the caller's transaction usable.
        with transaction.atomic():
            space.save(update_fields=["name"])
    except IntegrityError:
        raise _name_taken(cleaned) from None
    _audit(actor, space, AuditEvent.Action.UPDATED, changed="name")
    return space


@transaction.atomic
def space_set_default(*, actor: Actor, space_id: RowId) -> Space:
    """Make one of the owner's spaces the default (where writes without a space go).

    Exactly one space is the default at any time: the old default is cleared and
    the new one set in the same transaction. Idempotent.
    """
    space = _find(_lock_spaces(owner=actor.owner), space_id)
    if space.is_default:
        return space
    # Clear first: the one-default-per-owner constraint is checked per statement.
    Space.objects.filter(owner=actor.owner, is_default=True).update(is_default=False)
    space.is_default = True
    space.save(update_fields=["is_default"])
    _audit(actor, space, AuditEvent.Action.UPDATED, changed="is_default")
    return space


@transaction.atomic
def space_update(
    *, actor: Actor, space_id: RowId, name: str | None = None, make_default: bool = False
) -> Space:
    """Rename and/or make default in one transaction: both happen or neither does."""
    space = _find(_lock_spaces(owner=actor.owner), space_id)
    if name is not None:
        space = space_rename(actor=actor, space_id=space.id, name=name)
    if make_default:
        space = space_set_default(actor=actor, space_id=space.id)
    return space


def _move_contents(*, owner: User, space: Space, into: Space) -> dict[str, int]:
    # One entity per name in a space (services.entities): one of the same name there absorbs it.
    targets = {
        entity.normalized_name: entity
        for entity in Entity.objects.select_for_update().filter(owner=owner, space=into)
    }
    merged = 0
    for entity in Entity.objects.select_for_update().filter(owner=owner, space=space).order_by("id"):
        target = targets.get(entity.normalized_name)
        if target is not None:
            entity_merge(duplicate=entity, into=target)
            merged += 1
    moved = {
        "memories": Memory.objects.filter(owner=owner, space=space).update(space=into),
        "sources": Source.objects.filter(owner=owner, space=space).update(space=into),
        "jobs": Job.objects.filter(owner=owner, space=space).update(space=into),
        "entities": Entity.objects.filter(owner=owner, space=space).update(space=into),
        "relations": Relation.objects.filter(owner=owner, space=space).update(space=into),
    }
    return {**moved, "entities_merged": merged}


@transaction.atomic
def space_delete(*, actor: Actor, space_id: RowId, memories: str) -> dict[str, Any]:
    """Delete one of the owner's spaces, saying what happens to what it holds.

    `memories="move"`: its memories, sources, jobs, entities and relations go to
    the default space; an entity that already exists there (same normalized name,
    whatever its type) is merged into that one (`entity_merge`). `memories="delete"`: its memories are
    hard-deleted (`memories_hard_delete_in_space`, whose receipt is
    returned) and everything else in it goes with the space.

    Returns {deleted_space_id, memories, count, receipt?, into_space_id?}.
    Raises `space_not_found` (404), `cannot_delete_default_space` (409) and
    `invalid_parameter` (400) for any other `memories` value.
    """
    owner = actor.owner
    spaces = _lock_spaces(owner=owner)
    space = _find(spaces, space_id)
    if space.is_default:
        raise AppError(
            Code.CANNOT_DELETE_DEFAULT_SPACE,
            "This is your default space; make another space the default before deleting it.",
            agent_action="make another space the default first, then delete this one",
        )
    if memories not in (MEMORIES_MOVE, MEMORIES_DELETE):
        raise AppError(
            Code.INVALID_PARAMETER,
            "Say what happens to the space's memories: memories=move moves them (with their sources, "
            "jobs and entities) into your default space; memories=delete deletes them permanently.",
            details={"parameter": "memories", "allowed": [MEMORIES_MOVE, MEMORIES_DELETE]},
            agent_action="ask the user whether to move or delete the memories, then retry with memories=...",
        )
    result: dict[str, object] = {"deleted_space_id": str(space.id), "memories": ""}
    detail: dict[str, Any]
    if memories == MEMORIES_MOVE:
        # Every account has a default from sign-up on; recreate it rather than lose the memories.
        into = next((s for s in spaces if s.is_default), None) or space_create_default(owner=owner)
        moved = _move_contents(owner=owner, space=space, into=into)
        result.update(memories="moved", count=moved["memories"], into_space_id=str(into.id))
        detail = {"memories": "moved", "into_space_id": str(into.id), "moved": moved}
    else:
        count = Memory.objects.filter(owner=owner, space=space).count()
        receipt = memories_hard_delete_in_space(actor=actor, space=space)
        result.update(memories="deleted", count=count, receipt=receipt)
        detail = {"memories": "deleted", "count": count}
    # What is left (entities, relations, jobs of a deleted space) cascades with it.
    deleted_id = space.id
    space.delete()
    audit_record(
        actor=actor,
        action=AuditEvent.Action.SPACE_DELETED,
        target_type="space",
        target_id=deleted_id,
        detail=detail,
    )
    return result


@dataclass(frozen=True)
class SpaceSwitch:
    previous: Space
    current: Space


def _grant_of(caller: Caller) -> dict[str, Any] | None:
    """The GrantSpace key of the caller's grant (its OAuth application, or its personal token), or
    None for a caller without one (the dashboard's session)."""
    if caller.via == "oauth" and caller.agent_id is not None:
        return {"application_id": caller.agent_id}
    if caller.via == "pat" and caller.token_id:
        return {"personal_token_id": caller.token_id}
    return None


def _grant_key(caller: Caller) -> dict[str, object]:
    grant = _grant_of(caller)
    if grant is not None:
        return grant
    raise AppError(
        Code.SWITCH_SPACE_UNAVAILABLE,
        "Switching spaces (switch_agent) stores the choice per OAuth grant or personal access token; this "
        "caller has neither.",
        agent_action="connect with an OAuth grant or a personal access token, or choose the space in the "
        "dashboard",
    )


@transaction.atomic
def grant_space_switch(*, caller: Caller, space_id: RowId, request_id: str = "") -> SpaceSwitch:
    """Make `space_id` the space every later call of the caller's grant reads and writes.

    MCP is served statelessly, so the choice is stored per grant (GrantSpace), not per session;
    another grant of the same user keeps its own space. Nothing changes when the space is not
    one of the caller's.
    """
    key = _grant_key(caller)
    previous = space_for_caller(caller=caller)
    space = _grant_space_set(owner=caller.user, key=key, space_id=space_id)
    switched = {"from": str(previous.id), "to": str(space.id), "grant": caller.via}
    _audit(caller.actor(request_id), space, AuditEvent.Action.SPACE_SWITCHED, **switched)
    return SpaceSwitch(previous=previous, current=space)


@transaction.atomic
def grant_space_choose(*, actor: Actor, application_id: int, space_id: RowId) -> Space:
    """The person chose, on the consent page, the space an OAuth app reads and writes."""
    current = grant_space_id(user=actor.owner, application_id=application_id)
    if current is None:
        default = space_default(owner=actor.owner)
        current = default.id if default is not None else None
    if current is not None and str(current) == str(space_id):
        # Left as it was: an app that follows the default space keeps following it.
        return Space.objects.get(owner=actor.owner, id=current)
    space = _grant_space_set(owner=actor.owner, key={"application_id": application_id}, space_id=space_id)
    chosen = {"to": str(space.id), "grant": "oauth", "application_id": application_id, "on": "consent"}
    _audit(actor, space, AuditEvent.Action.SPACE_SWITCHED, **chosen)
    return space


def _grant_space_set(*, owner: User, key: dict[str, Any], space_id: RowId) -> Space:
    """Store that the grant `key` of `owner` uses the space `space_id` (one of the owner's)."""
    space = Space.objects.filter(owner=owner, id=space_id).first()
    if space is None:
        raise AppError(
            Code.SPACE_NOT_FOUND,
            "No space with this id exists in your account.",
            agent_action="list your spaces and use one of their ids",
        )
    # update_or_create locks the grant's row (or retries its read after a concurrent insert),
    # so two switches at once leave exactly one choice.
    GrantSpace.objects.update_or_create(
        owner=owner, **key, defaults={"space": space, "updated_at": timezone.now()}
    )
    return space


@transaction.atomic
def memories_move(*, actor: Actor, memory_ids: list[Any], space_id: RowId) -> int:
    """Move some of the owner's memories into another of their spaces; return how many moved.

    Each memory's entities are re-linked to the entities of the same name in the target space (made
    there if new), since an entity belongs to one space. A source and its job follow when every
    memory they produced moves; a source that also supports memories staying behind stays where it
    is. Unknown ids (and another account's) are `memory_not_found`, and nothing moves.
    """
    owner = actor.owner
    into = _find(_lock_spaces(owner=owner), space_id)
    memories = list(
        Memory.objects.select_for_update().filter(owner=owner, id__in=memory_ids).defer("embedding")
    )
    if len({str(i) for i in memory_ids}) != len(memories):
        raise AppError(Code.MEMORY_NOT_FOUND)
    moving = [m for m in memories if m.space_id != into.id]
    moved_ids = {m.id for m in moving}
    links = MemoryEntity.objects.filter(owner=owner)
    for memory in moving:
        linked = Entity.objects.filter(
            owner=owner, id__in=links.filter(memory_id=memory.id).values("entity_id")
        )
        for entity in linked:
            target, _ = entity_record(
                owner_id=owner.id, space_id=into.id, name=entity.name, type_=entity.type
            )
            links.filter(memory_id=memory.id, entity_id=entity.id).delete()
            MemoryEntity.objects.bulk_create(
                [MemoryEntity(owner=owner, memory_id=memory.id, entity_id=target.id)], ignore_conflicts=True
            )
    Memory.objects.filter(owner=owner, id__in=moved_ids).update(space=into)
    source_ids = {m.source_id for m in moving if m.source_id}
    staying = set(
        Memory.objects.filter(owner=owner, source_id__in=source_ids)
        .exclude(id__in=moved_ids)
        .values_list("source_id", flat=True)
    )
    whole = source_ids - staying
    Source.objects.filter(owner=owner, id__in=whole).update(space=into)
    Job.objects.filter(owner=owner, source_id__in=whole).update(space=into)
    for memory in moving:
        audit_record(
            actor=actor,
            action=AuditEvent.Action.UPDATED,
            target_type="memory",
            target_id=memory.id,
            detail={"changed": "space", "from_space_id": str(memory.space_id), "into_space_id": str(into.id)},
        )
    return len(moving)
