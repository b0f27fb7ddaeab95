from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from accounts.http import AuthedHttpRequest
from memories import selectors
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


@login_required
@require_GET
def home(request: AuthedHttpRequest) -> HttpResponse:
    owner = request.user
    context = {
        "spaces": selectors.space_list(owner=owner),
        "memory_count": selectors.memory_list(owner=owner).count(),
    }
    return render(request, "memories/home.html", context)
