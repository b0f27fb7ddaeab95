"""What the Overview page draws: memories and saves over time, by kind and by agent. Reads only."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone

from accounts.models import User
from memories.as_of import active_q
from memories.models import Memory, Source

OVERVIEW_DAYS = 30


def overview_stats(*, owner: User, days: int = OVERVIEW_DAYS) -> dict[str, object]:
    """The owner's counts for the Overview's charts and tables, as plain JSON-ready values.

    `days` lists the last `days` days (the site's time zone), oldest first, with the memories
    recorded and the saves (sources) received each day and the active memories at the end of each
    day (today's active count minus what was recorded after it: a suppression is not dated here,
    so the line counts today's active memories by the day they were recorded).
    """
    tz = timezone.get_current_timezone()
    today = timezone.localdate()
    first = today - timedelta(days=days - 1)
    active = Memory.objects.filter(active_q(), owner=owner)
    total = active.count()

    def per_day(rows: Any, field: str) -> dict[Any, int]:
        return dict(
            rows.filter(**{f"{field}__date__gte": first})
            .annotate(day=TruncDate(field, tzinfo=tz))
            .values("day")
            .annotate(n=Count("pk"))
            .order_by()
            .values_list("day", "n")
        )

    recorded = per_day(Memory.objects.filter(owner=owner), "recorded_at")
    saves = per_day(Source.objects.filter(owner=owner), "recorded_at")
    active_by_day = per_day(active, "recorded_at")
    # Work back from today's total: the active count at the end of day d is the total minus the
    # active memories recorded after d.
    series = []
    after = 0
    for offset in range(days):
        day = today - timedelta(days=offset)
        series.append(
            {
                "day": day.isoformat(),
                "memories": recorded.get(day, 0),
                "saves": saves.get(day, 0),
                "active": total - after,
            }
        )
        after += active_by_day.get(day, 0)
    series.reverse()
    kinds = dict(active.values("kind").annotate(n=Count("pk")).order_by().values_list("kind", "n"))
    by_agent = [
        {"agent": name or "You (no agent)", "memories": n}
        for name, n in active.values("agent__name")
        .annotate(n=Count("pk"))
        .order_by("-n", "agent__name")
        .values_list("agent__name", "n")
    ]
    return {
        "total": total,
        "days": series,
        "kinds": [
            {"kind": kind.value, "label": kind.label, "memories": kinds.get(kind.value, 0)}
            for kind in Memory.Kind
        ],
        "agents": by_agent,
    }
