"""The agents (OAuth applications) connected to a user's memory, and what each saved. Nothing here
writes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Max, Min, QuerySet
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model

from accounts.models import User
from accounts.selectors import app_paused_ids
from memories.as_of import active_q
from memories.errors import AppError, Code
from memories.models import Job, Memory, Source, Space
from memories.selectors.jobs import job_list
from memories.selectors.memories import memory_list
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


@dataclass(frozen=True)
class AgentSummary:
    """One app as the Agents page shows it: what it saved and how it stands."""

    id: int
    name: str
    memories: int
    saves: int
    jobs: int
    last_saved_at: datetime | None
    connected: ConnectedApp | None
    paused: bool


def _counts(rows: QuerySet[Any], field: str) -> dict[int | None, int]:
    return dict(rows.values(field).annotate(n=Count("pk")).order_by().values_list(field, "n"))


def agent_summary_list(*, user: User) -> list[AgentSummary]:
    """Every app that is connected to `user` or ever saved into their memory, by name, with its
    active memories, saves (sources) and jobs counted, whether it is connected and whether paused.

    Reads leave no row behind (recall and answer write nothing), so what an app read is only
    visible as its last use on the connected app (`ConnectedApp.last_used_at`).
    """
    connected = {app.id: app for app in connected_app_list(user=user)}
    memories = _counts(Memory.objects.filter(active_q(), owner=user), "agent_id")
    saves = _counts(Source.objects.filter(owner=user), "agent_id")
    jobs = _counts(Job.objects.filter(owner=user), "agent_id")
    last_saved = dict(
        Source.objects.filter(owner=user, agent_id__isnull=False)
        .values("agent_id")
        .annotate(last=Max("recorded_at"))
        .order_by()
        .values_list("agent_id", "last")
    )
    ids = {i for i in (*connected, *memories, *saves, *jobs) if i is not None}
    paused = app_paused_ids(user=user)
    return [
        AgentSummary(
            id=application.id,
            name=application.name or f"App {application.id}",
            memories=memories.get(application.id, 0),
            saves=saves.get(application.id, 0),
            jobs=jobs.get(application.id, 0),
            last_saved_at=last_saved.get(application.id),
            connected=connected.get(application.id),
            paused=application.id in paused,
        )
        for application in get_application_model().objects.filter(id__in=ids).order_by("name", "id")
    ]


def agent_summary_get(*, user: User, application_id: int) -> AgentSummary:
    """One app of `agent_summary_list`. Raises `application_not_found` (404) for an app that neither
    is connected to `user` nor saved anything of theirs (also another account's app)."""
    found = next((a for a in agent_summary_list(user=user) if a.id == application_id), None)
    if found is None:
        raise AppError(Code.APPLICATION_NOT_FOUND, "No app with this id in your account.")
    return found


def agent_memory_list(*, user: User, application_id: int) -> QuerySet[Memory]:
    """The active memories `application_id` saved into `user`'s memory, newest first."""
    return memory_list(owner=user).filter(agent_id=application_id).order_by("-recorded_at", "-id")


def agent_job_list(*, user: User, application_id: int) -> QuerySet[Job]:
    """The jobs `application_id` started for `user`, newest first."""
    return job_list(owner=user).filter(agent_id=application_id)
