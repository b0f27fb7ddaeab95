"""What held at a time T: the one definition of "current" and "as of T" for memories and relations."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q
from django.utils import timezone

from memories.models import Memory, Relation


def _valid_at(moment: datetime, prefix: str = "") -> Q:
    return Q(**{f"{prefix}valid_until__isnull": True}) | Q(**{f"{prefix}valid_until__gt": moment})


def memory_visible(at: datetime | None = None, *, prefix: str = "", now: datetime | None = None) -> Q:
    """Memories an agent may be shown: active, and current (or as of `at`)."""
    condition = Q(**{f"{prefix}status": Memory.Status.ACTIVE})
    return condition & _held(at, prefix=prefix, now=now)


def relation_visible(at: datetime | None = None, *, prefix: str = "", now: datetime | None = None) -> Q:
    """Relations that are current (or held as of `at`)."""
    return _held(at, prefix=prefix, now=now)


def _held(at: datetime | None, *, prefix: str, now: datetime | None) -> Q:
    if at is None:
        # Current: a future valid_from does not hide it (a stated plan is still the current
        # statement), as recall treats facts.
        return Q(**{f"{prefix}superseded_at__isnull": True}) & _valid_at(now or timezone.now(), prefix)
    return (
        Q(**{f"{prefix}recorded_at__lte": at})
        & (Q(**{f"{prefix}superseded_at__isnull": True}) | Q(**{f"{prefix}superseded_at__gt": at}))
        & (Q(**{f"{prefix}valid_from__isnull": True}) | Q(**{f"{prefix}valid_from__lte": at}))
        & _valid_at(at, prefix)
    )


def is_current(row: Memory | Relation, now: datetime) -> bool:
    return row.superseded_at is None and (row.valid_until is None or row.valid_until > now)
