"""The Overview page: charts of the person's memory drawn in the browser from their own numbers.

The numbers come as JSON from `overview_data` (same selector as the page's tables), read by the
static `overview.js` with the vendored Chart.js: the CSP allows no inline script, so nothing is
embedded in the HTML. The tables carry the same numbers for screen readers and for no-JS readers.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.http import AuthedHttpRequest
from memories.selectors.overview import overview_stats


@login_required
@require_GET
def overview(request: AuthedHttpRequest) -> HttpResponse:
    return render(request, "dashboard/overview/overview.html", {"stats": overview_stats(owner=request.user)})


@login_required
@require_GET
def overview_data(request: AuthedHttpRequest) -> JsonResponse:
    """The Overview's numbers as JSON, for its charts; the signed-in person's only."""
    response = JsonResponse(overview_stats(owner=request.user))
    response["Cache-Control"] = "private, no-store"
    return response
