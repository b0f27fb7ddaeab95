"""Reads. Every function takes the owner explicitly; nothing here writes."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db.models import QuerySet

from accounts.models import User
from memories.models import GrantSpace, Memory, Space


def space_list(*, owner: User) -> QuerySet[Space]:
    """The owner's spaces, default first."""
    return Space.objects.filter(owner=owner)


def space_default(*, owner: User) -> Space | None:
    """The owner's default space, if they have one."""
    return Space.objects.filter(owner=owner, is_default=True).first()


def memory_list(*, owner: User, status: str | None = Memory.Status.ACTIVE) -> QuerySet[Memory]:
    """The owner's memories, newest first, without their embeddings."""
    qs = Memory.objects.filter(owner=owner).defer("embedding")
    if status is not None:
        qs = qs.filter(status=status)
    return qs


def grant_space_id(*, user: User, application_id: Any = None, personal_token_id: Any = None) -> UUID | None:
    """The space a grant switched to (switch_space), or None for the user's default space."""
    if application_id is None and personal_token_id is None:
        return None
    choice = GrantSpace.objects.filter(owner=user, space__owner=user)
    if application_id is not None:
        choice = choice.filter(application_id=application_id)
    else:
        choice = choice.filter(personal_token_id=personal_token_id)
    return choice.values_list("space_id", flat=True).first()
