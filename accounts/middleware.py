"""The signed-in person's time zone, active for the request (templates' dates, form days)."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone


def zone_of(name: str) -> zoneinfo.ZoneInfo | None:
    """The zone a stored name stands for, or None (UTC) for an empty or no longer known name."""
    if not name:
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None


class TimeZoneMiddleware:
    """Activates `user.time_zone` for a signed-in person; everyone else (and the API) stays UTC."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        zone = None
        # Pages only: what the API and MCP return is UTC whoever asks.
        if user is not None and user.is_authenticated and not request.path.startswith(("/api/", "/mcp")):
            zone = zone_of(getattr(user, "time_zone", ""))
        if zone is not None:
            timezone.activate(zone)
        else:
            timezone.deactivate()
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
