"""Reads. Every function takes the owner explicitly; nothing here writes."""

from __future__ import annotations

from django.db.models import QuerySet

from accounts.models import User
from memories.models import Memory, Space


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
