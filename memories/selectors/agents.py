"""The agents (OAuth applications) connected to a user's memory. Nothing here writes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Max, Min
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model

from accounts.models import User
from memories.models import Source, Space
from memories.selectors.spaces import space_default


@dataclass(frozen=True)
class ConnectedApp:
    id: int
    name: str
    scopes: list[str]
    # Where the app reads and writes: OAuth callers use the default space.
    space: Space | None
    connected_at: datetime | None
    # The later of its newest token (issued at sign-in or refresh, so while it is in
    # use) and its newest save; reads leave no other trace.
    last_used_at: datetime | None


def connected_app_list(*, user: User) -> list[ConnectedApp]:
    """The OAuth applications holding a live access or refresh token of `user`, by name.

    An app whose access token expired but whose refresh token is live is still
    connected: it can get a new access token without asking the user.
    """
    now = timezone.now()
    access = get_access_token_model().objects.filter(user=user, application__isnull=False)
    live = set(access.filter(expires__gt=now).values_list("application_id", flat=True)) | set(
        get_refresh_token_model()
        .objects.filter(user=user, revoked__isnull=True)
        .values_list("application_id", flat=True)
    )
    if not live:
        return []
    issued = {
        row["application_id"]: row
        for row in access.filter(application_id__in=live)
        .values("application_id")
        .annotate(first=Min("created"), last=Max("created"))
    }
    saved = dict(
        Source.objects.filter(owner=user, agent_id__in=live)
        .values("agent_id")
        .annotate(last=Max("recorded_at"))
        .values_list("agent_id", "last")
    )
    scopes: dict[int, list[str]] = {}
    # The newest token's scopes are what the app holds now (a refresh keeps them).
    for app_id, scope in (
        access.filter(application_id__in=live).order_by("-created").values_list("application_id", "scope")
    ):
        scopes.setdefault(app_id, sorted(scope.split()))
    space = space_default(owner=user)
    apps = []
    for application in get_application_model().objects.filter(id__in=live).order_by("name", "id"):
        times = [t for t in (issued.get(application.id, {}).get("last"), saved.get(application.id)) if t]
        apps.append(
            ConnectedApp(
                id=application.id,
                name=application.name or f"App {application.id}",
                scopes=scopes.get(application.id, []),
                space=space,
                connected_at=issued.get(application.id, {}).get("first"),
                last_used_at=max(times) if times else None,
            )
        )
    return apps


def connected_app_get(*, user: User, application_id: int) -> ConnectedApp | None:
    """One of `user`'s connected apps, or None (also for another account's app)."""
    return next((app for app in connected_app_list(user=user) if app.id == application_id), None)
