from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from accounts.http import AuthedHttpRequest
from memories.dashboard.views import memory_list
from memories.health import health_report


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    report = health_report()
    response = JsonResponse(report, status=200 if report["ready"] else 503)
    if not report["ready"]:
        # "Not ready yet" is a state, not a server error: keep it out of the error log
        # (Django skips responses marked as logged).
        response._has_been_logged = True  # type: ignore[attr-defined]
    return response


def home(request: AuthedHttpRequest) -> HttpResponse:
    """The front page is the memories page (search, filters, the newest memories).

    memory_list requires the login itself, so a visitor is sent to log in from here too.
    """
    return memory_list(request)
