"""Start-up checks: every REST endpoint declares the scope of each method it serves, and every MCP
profile that fixes its tools is offered exactly those.

Run by `manage.py check`, `runserver` and `migrate` (registered in MemoriesConfig.ready);
tests/memories/test_scopes.py runs it under pytest, which does not run system checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register
from django.urls import URLPattern, URLResolver, get_resolver

from accounts.caller import ALL_SCOPES
from memories.api.base import SCOPED_METHODS, ApiView


def api_route_list(*, urlconf: str | None = None) -> list[tuple[URLPattern, type[ApiView]]]:
    """(route, view) for each route of `urlconf` (default: the project's) to an ApiView, in URL order."""
    routes = []
    for pattern in _patterns(get_resolver(urlconf or settings.ROOT_URLCONF).url_patterns):
        view = getattr(pattern.callback, "view_class", None)
        if isinstance(view, type) and issubclass(view, ApiView):
            routes.append((pattern, view))
    return routes


def api_view_list(*, urlconf: str | None = None) -> list[type[ApiView]]:
    """The ApiView classes routed in `urlconf` (default: the project's), each once, in URL order."""
    return list(dict.fromkeys(view for _, view in api_route_list(urlconf=urlconf)))


def _patterns(patterns: Iterable[Any]) -> Iterator[URLPattern]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _patterns(entry.url_patterns)
        elif isinstance(entry, URLPattern):
            yield entry


def api_scope_errors(*, views: Iterable[type[ApiView]]) -> list[Error]:
    """An Error for each method of `views` served without a declared scope or with an unknown one."""
    found: list[Error] = []
    for view in views:
        name = f"{view.__module__}.{view.__qualname__}"
        for method in SCOPED_METHODS:
            if hasattr(view, method) and method not in view.scopes:
                found.append(
                    Error(
                        f"{name} serves {method.upper()} without declaring its scope.",
                        hint=f'Add "{method}" to {view.__qualname__}.scopes, e.g. '
                        f'scopes = {{"{method}": SCOPE_READ}}.',
                        obj=view,
                        id="memories.E001",
                    )
                )
        for method, scope in view.scopes.items():
            # A function is a scope known only per request; its result is checked when it runs.
            if not callable(scope) and scope not in ALL_SCOPES:
                found.append(
                    Error(
                        f"{name} declares the unknown scope {scope!r} for {method.upper()}.",
                        hint=f"Use one of {sorted(ALL_SCOPES)} (accounts.caller).",
                        obj=view,
                        id="memories.E002",
                    )
                )
    return found


@register(Tags.security, Tags.urls)
def api_scopes_check(app_configs: object = None, **kwargs: object) -> list[CheckMessage]:
    """System check: the routed REST endpoints declare known scopes for every method."""
    return list(api_scope_errors(views=api_view_list()))


@register(Tags.compatibility)
def profile_tools_check(app_configs: object = None, **kwargs: object) -> list[CheckMessage]:
    """System check: a profile that fixes its tools (a contract's closed namespace) is offered
    exactly those operations."""
    from memories.operations.registry import profile_problems

    return [
        Error(problem, hint="Align Profile.tools with the operations' profiles.", id="memories.E003")
        for problem in profile_problems()
    ]
