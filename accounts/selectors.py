"""Reads of credentials: a user's personal access tokens. Nothing here writes."""

from __future__ import annotations

from django.db.models import QuerySet

from accounts.models import PersonalAccessToken, User


def pat_list(*, user: User) -> QuerySet[PersonalAccessToken]:
    """`user`'s tokens, newest first, revoked and expired ones included (a list shows their state)."""
    return PersonalAccessToken.objects.filter(user=user).order_by("-created_at", "-pk")
