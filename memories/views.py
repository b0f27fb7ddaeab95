from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from accounts.http import AuthedHttpRequest
from memories.dashboard.views import memory_list
from memories.health import health_live, health_ready, health_report


def _health_response(report: dict[str, Any]) -> JsonResponse:
    response = JsonResponse(report, status=200 if report.get("ready", True) else 503)
    if response.status_code != 200:
        # "Not ready yet" is a state, not a server error: keep it out of the error log
        # (Django skips responses marked as logged).
        response._has_been_logged = True  # type: ignore[attr-defined]
    return response


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """The full report: 200 when this web process is ready; broker and workers reported."""
    return _health_response(health_report())


@never_cache
@require_GET
def healthz_live(request: HttpRequest) -> JsonResponse:
    return _health_response(health_live())


@never_cache
@require_GET
def healthz_ready(request: HttpRequest) -> JsonResponse:
    return _health_response(health_ready())


HEALTH_VIEWS: dict[str, Callable[[HttpRequest], HttpResponse]] = {
    "/healthz": healthz,
    "/healthz/live": healthz_live,
    "/healthz/ready": healthz_ready,
}


class HealthProbeMiddleware:
    """Answer the health paths before anything reads the Host header.

    A load balancer or an orchestrator probes a process by its address (`Host: 10.0.3.7:8001`),
    which ALLOWED_HOSTS rightly refuses everywhere else. The health answers are safe for any host:
    GET only, no session or cookie, nothing in them built from the request, no secret.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        view = HEALTH_VIEWS.get(request.path_info)
        if view is not None:
            return view(request)
        return self.get_response(request)


def home(request: AuthedHttpRequest) -> HttpResponse:
    """The front page is the memories page (search, filters, the newest memories).

    memory_list requires the login itself, so a visitor is sent to log in from here too.
    """
    return memory_list(request)
