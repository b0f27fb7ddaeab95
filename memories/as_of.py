"""What held at a time: the one definition of "current" and "as of T", for memories and relations.

Every reader asks through this module: the ORM readers with `held_q`, recall's SQL with `held_sql`,
rendering with `row_status`; the supersede rule uses `world_start` for the same start of a row.

Two clocks run through every row (../shared/design/ARCHITECTURE.md, "The clocks"):

- world time: a row holds from its start to its end. The start is `valid_from` (facts, relations),
  else `occurred_at` (episodes), else, when the text named no time, `stated_at` (it held when it was
  said: the time its source refers to, so an imported 2024 conversation starts in 2024), else
  `recorded_at` (relations, and memories stored before `stated_at` existed). The end is
  `valid_until`, else `superseded_at` (a row replaced without a stated end stopped holding when it
  was replaced), else open.
- system time: `recorded_at` (when the service learned it) and `superseded_at` (when it learned of
  the replacement).

The views:

- **current** (no T): not past its end. A row with a `valid_until` to come holds until then, even
  when its replacement is already known ("Starting in March I'll be at Acme": the current employer
  is superseded now, in system time, and holds until March); one without holds until it is
  superseded. A future `valid_from` does not hide a row: a stated plan is the current statement.
- **as of T** (`at=T`): what held at T in the world, as the service knows it now: start <= T < end.
  So a conversation imported today with its real dates can be asked about its own past, and a fact
  replaced later is seen as it was.
- **known by S** (`known_at=S`, asked explicitly, never implied by `at`): only what the service had
  recorded by S, and not what it learned later, superseded_at included (the evidence profile's
  "as the service knew it then").

Forgotten memories (issue 40): a suppressed memory (forgotten, invalidated) takes no part in any
judgement of the update engine (no prior, no rival, no fingerprint to merge into, never closed by a
newer memory) and is in no answer, history, `replaced` list, context, evidence or graph output an
agent is given, whatever the clocks say; only the owner's own views of forgotten memories list it.
`active_q` is "not forgotten" (`active_sql` in SQL), `memory_visible` is active and held in a view,
and `entity_visible` leaves out an entity known only from forgotten memories. A purged memory is
simply gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from memories.models import Memory, MemoryEntity, Relation

CURRENT = "current"
SUPERSEDED = "superseded"
EXPIRED = "expired"


@dataclass(frozen=True)
class View:
    """Which rows a reader sees: `at` (world time; None is the current view) and `known_at`
    (system time; None is everything the service knows now)."""

    at: datetime | None = None
    known_at: datetime | None = None

    def __post_init__(self) -> None:
        # "Current, as known at S" would be a third rule; no reader needs it, so none exists.
        if self.known_at is not None and self.at is None:
            raise ValueError("known_at needs at: a system-time view is always of a world time")


CURRENT_VIEW = View()


def _f(prefix: str, name: str) -> str:
    return f"{prefix}{name}"


# The columns whose first known value is a row's world start, in order. Memories: a stated validity,
# else when the episode happened, else when it was said, else (rows older than `stated_at`) when it
# was recorded. Relations have only the first and the last.
MEMORY_START = ("valid_from", "occurred_at", "stated_at", "recorded_at")
RELATION_START = ("valid_from", "recorded_at")


def _start_fields(with_occurred: bool) -> tuple[str, ...]:
    return MEMORY_START if with_occurred else RELATION_START


def started_q(moment: datetime, *, prefix: str = "", with_occurred: bool = True) -> Q:
    """Rows whose world time had started by `moment`, whether or not they still held then."""
    # start = coalesce(valid_from, occurred_at, stated_at, recorded_at) <= moment, spelled out for the ORM.
    fields = _start_fields(with_occurred)
    starts = Q()
    unknown = Q()
    for index, name in enumerate(fields):
        here = Q(**{_f(prefix, f"{name}__lte"): moment})
        starts = here if index == 0 else starts | (unknown & here)
        unknown &= Q(**{_f(prefix, f"{name}__isnull"): True})
    return starts


def _ends_after(moment: datetime, prefix: str) -> Q:
    # end = coalesce(valid_until, superseded_at) > moment, an open end counting as after.
    return Q(**{_f(prefix, "valid_until__gt"): moment}) | (
        Q(**{_f(prefix, "valid_until__isnull"): True})
        & (Q(**{_f(prefix, "superseded_at__isnull"): True}) | Q(**{_f(prefix, "superseded_at__gt"): moment}))
    )


def current_q(*, now: datetime | None = None, prefix: str = "") -> Q:
    """Rows that hold now: before their `valid_until`, or without one and not superseded."""
    return Q(**{_f(prefix, "valid_until__gt"): now or timezone.now()}) | (
        Q(**{_f(prefix, "valid_until__isnull"): True}) & Q(**{_f(prefix, "superseded_at__isnull"): True})
    )


def known_by_q(moment: datetime, *, prefix: str = "") -> Q:
    """Rows the service had recorded by `moment` and not yet superseded then (system time)."""
    return Q(**{_f(prefix, "recorded_at__lte"): moment}) & (
        Q(**{_f(prefix, "superseded_at__isnull"): True}) | Q(**{_f(prefix, "superseded_at__gt"): moment})
    )


def recorded_by_q(moment: datetime, *, prefix: str = "") -> Q:
    """Rows (memories, relations, sources, evidence) recorded by `moment`, whatever happened since."""
    return Q(**{_f(prefix, "recorded_at__lte"): moment})


def held_q(
    view: View = CURRENT_VIEW, *, now: datetime | None = None, prefix: str = "", with_occurred: bool = True
) -> Q:
    """The rows `view` sees. `with_occurred=False` for relations, which have no `occurred_at`."""
    if view.at is None:
        condition = current_q(now=now, prefix=prefix)
    else:
        started = started_q(view.at, prefix=prefix, with_occurred=with_occurred)
        condition = started & _ends_after(view.at, prefix)
    if view.known_at is not None:
        condition &= known_by_q(view.known_at, prefix=prefix)
    return condition


def active_q(*, prefix: str = "") -> Q:
    """Memories that are not forgotten: the only ones that take part in a judgement or are shown to
    an agent, whatever their clocks (a replaced one is history, a forgotten one is nothing)."""
    return Q(**{_f(prefix, "status"): Memory.Status.ACTIVE})


def active_sql(alias: str) -> str:
    """`active_q` as a SQL condition on table alias `alias` (constant text only)."""
    return f"{alias}.status = '{Memory.Status.ACTIVE.value}'"


def memory_visible(view: View = CURRENT_VIEW, *, prefix: str = "", now: datetime | None = None) -> Q:
    """Memories an agent may be shown: active, and held in `view`."""
    return active_q(prefix=prefix) & held_q(view, now=now, prefix=prefix)


def entity_visible() -> Q:
    """Entities an agent may be shown: all but those known only from forgotten memories (every
    memory that mentions it is suppressed and no relation links it), whose name would repeat what
    the person asked to forget. The open query's `entities` view and the evidence profile's
    `resolve_entity` hide them too."""
    # Each with the entity's owner: a statement held to one owner stays so (docs/scale.md).
    links = MemoryEntity.objects.filter(
        owner_id=OuterRef("owner_id"), entity_id=OuterRef("pk"), memory__owner_id=OuterRef("owner_id")
    )
    related = Relation.objects.filter(owner_id=OuterRef("owner_id")).filter(
        Q(subject_id=OuterRef("pk")) | Q(object_id=OuterRef("pk"))
    )
    active = active_q(prefix="memory__")
    # ~active, not exclude(active): exclude() reads the memories again in a subquery of its own,
    # which would hold them to no owner.
    return Q(~Exists(links.filter(~active))) | Q(Exists(links.filter(active))) | Q(Exists(related))


def relation_visible(view: View = CURRENT_VIEW, *, prefix: str = "", now: datetime | None = None) -> Q:
    """Relations held in `view`."""
    return held_q(view, now=now, prefix=prefix, with_occurred=False)


def superseded_q(*, prefix: str = "") -> Q:
    """Rows a newer one has replaced (history)."""
    return Q(**{_f(prefix, "superseded_at__isnull"): False})


def expired_q(*, now: datetime, prefix: str = "") -> Q:
    """Rows not replaced but past their `valid_until`."""
    return Q(**{_f(prefix, "superseded_at__isnull"): True}) & Q(**{_f(prefix, "valid_until__lte"): now})


def held_sql(view: View, *, alias: str, with_occurred: bool = True) -> str:
    """The same rule as `held_q`, as a SQL condition on table alias `alias`.

    Values travel as the parameters `%(as_of_now)s`, `%(as_of_at)s` and `%(as_of_known_at)s`
    (see `held_sql_params`); only constant text is spliced in.
    """
    a = alias
    if view.at is None:
        condition = (
            f"{a}.valid_until > %(as_of_now)s OR ({a}.valid_until IS NULL AND {a}.superseded_at IS NULL)"
        )
    else:
        start = f"coalesce({', '.join(f'{a}.{name}' for name in _start_fields(with_occurred))})"
        condition = (
            f"{start} <= %(as_of_at)s"
            f" AND coalesce({a}.valid_until, {a}.superseded_at, 'infinity'::timestamptz) > %(as_of_at)s"
        )
    if view.known_at is not None:
        condition += (
            f" AND {a}.recorded_at <= %(as_of_known_at)s"
            f" AND ({a}.superseded_at IS NULL OR {a}.superseded_at > %(as_of_known_at)s)"
        )
    return f"({condition})"


def started_sql(view: View, *, alias: str, with_occurred: bool = True) -> str:
    """Rows whose world time had started by `view.at` (or now), held or not: a view with its history.

    Parameters as `held_sql`; `known_at` still limits it to what had been recorded by then."""
    a = alias
    start = f"coalesce({', '.join(f'{a}.{name}' for name in _start_fields(with_occurred))})"
    condition = f"{start} <= coalesce(%(as_of_at)s, %(as_of_now)s)"
    if view.known_at is not None:
        condition += f" AND {a}.recorded_at <= %(as_of_known_at)s"
    return f"({condition})"


def held_sql_params(view: View, *, now: datetime) -> dict[str, Any]:
    """The parameters `held_sql` refers to."""
    return {"as_of_now": now, "as_of_at": view.at, "as_of_known_at": view.known_at}


def world_start(row: object) -> datetime:
    """When a row starts to hold in the world: the first of `MEMORY_START` (or `RELATION_START`) it has."""
    for name in MEMORY_START:
        value = getattr(row, name, None)
        if value is not None:
            return value
    raise ValueError("a row without recorded_at has no world start")


def world_start_latest(row: object) -> datetime:
    """The latest the row's world start can be: `starts_by` when the text named a period, else the start."""
    return getattr(row, "starts_by", None) or world_start(row)


def status_of(*, superseded_at: datetime | None, valid_until: datetime | None, now: datetime) -> str:
    """Whether a row holds now (the Python side of `current_q`): `current`, `superseded` (a newer
    one replaced it) or `expired` (past its `valid_until`). A row with a `valid_until` to come is
    current until then, replaced or not (a change that starts later)."""
    if valid_until is not None and valid_until > now:
        return CURRENT
    if superseded_at is not None:
        return SUPERSEDED
    if valid_until is not None:
        return EXPIRED
    return CURRENT


def is_current(row: Any, now: datetime) -> bool:
    """Whether a memory or relation holds now."""
    return status_of(superseded_at=row.superseded_at, valid_until=row.valid_until, now=now) == CURRENT
