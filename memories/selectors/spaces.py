"""Reads of spaces: lists (with counts), one space, the default, and a grant's switched space.
Nothing here writes.
"""

from __future__ import annotations

import functools
import secrets
import uuid
from typing import Any
from uuid import UUID

from django.db import connection
from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from accounts.models import User
from config.compiled import CompiledQuery, compile_once, compiled_rows
from memories.errors import AppError, Code
from memories.models import GrantSpace, Memory, Space


def space_list(*, owner: User) -> QuerySet[Space]:
    """The owner's spaces, default first."""
    return Space.objects.filter(owner=owner)


def space_default(*, owner: User) -> Space | None:
    """The owner's default space, if they have one."""
    return Space.objects.filter(owner=owner, is_default=True).first()


def grant_space_id(*, user: User, application_id: Any = None, personal_token_id: Any = None) -> UUID | None:
    """The space a grant switched to (graph `switch_agent`), or None for the user's default space."""
    if application_id is None and personal_token_id is None:
        return None
    choice = GrantSpace.objects.filter(owner=user, space__owner=user)
    if application_id is not None:
        choice = choice.filter(application_id=application_id)
    else:
        choice = choice.filter(personal_token_id=personal_token_id)
    return choice.values_list("space_id", flat=True).first()


def space_granted_or_default(
    *, user: User, application_id: object = None, personal_token_id: object = None
) -> Space | None:
    """The space a grant switched to, else the user's default space (None when they have neither):
    grant_space_id and space_default in one read, since every save and read of an agent asks it.

    Compiled once (config.compiled): every REST and MCP request asks it, and building
    and compiling the queryset each time cost about 0.7 ms of CPU, ten times the read itself.
    """
    if application_id is not None:
        grant: dict[str, object] = {"application_id": application_id}
    elif personal_token_id is not None:
        grant = {"personal_token_id": personal_token_id}
    else:
        grant = {}
    rows = compiled_rows(_granted_or_default(*grant), owner=user.pk, **grant)
    if not rows:
        return None
    space = Space.from_db(connection.alias, _SPACE_COLUMNS, rows[0])
    space._state.fields_cache["owner"] = user
    return space


_SPACE_COLUMNS = [f.attname for f in Space._meta.concrete_fields]


@functools.cache
def _granted_or_default(*grant_columns: str) -> CompiledQuery:
    """space_granted_or_default's read for a grant by `grant_columns` (one or none)."""

    def build(owner: UUID, **grant: object) -> QuerySet[Space, Any]:
        spaces = Space.objects.filter(owner_id=owner)
        if not grant:
            return spaces.filter(is_default=True).values_list(*_SPACE_COLUMNS)[:1]
        choice = GrantSpace.objects.filter(owner_id=owner, space_id=OuterRef("pk"), **grant)
        return (
            spaces.annotate(granted=Exists(choice))
            .filter(Q(granted=True) | Q(is_default=True))
            .order_by("-granted")
            .values_list(*_SPACE_COLUMNS)[:1]
        )

    # Samples of each key's type (an application's id is a bigint, a token's a UUID).
    samples = {"application_id": secrets.randbits(62), "personal_token_id": uuid.uuid4()}
    return compile_once(build, owner=uuid.uuid4(), **{column: samples[column] for column in grant_columns})


def _spaces_with_counts(*, owner: User) -> QuerySet[Space]:
    # Every memory stored in the space, whatever its status: the number a delete
    # of the space would move or destroy.
    count = (
        Memory.objects.filter(owner=owner, space_id=OuterRef("pk"))
        .order_by()
        .values("space_id")
        .annotate(n=Count("id"))
        .values("n")[:1]
    )
    return Space.objects.filter(owner=owner).annotate(
        memory_count=Coalesce(Subquery(count, output_field=IntegerField()), Value(0))
    )


def space_list_with_counts(*, owner: User) -> QuerySet[Space]:
    """The owner's spaces, default first then by name, each with `memory_count`."""
    return _spaces_with_counts(owner=owner).order_by("-is_default", "name")


def space_get(*, owner: User, space_id: uuid.UUID) -> Space:
    """One of the owner's spaces with `memory_count`. Raises `space_not_found` otherwise."""
    space = _spaces_with_counts(owner=owner).filter(id=space_id).first()
    if space is None:
        raise AppError(Code.SPACE_NOT_FOUND)
    return space
