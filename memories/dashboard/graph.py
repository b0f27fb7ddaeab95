"""The Graph page: entities and their current relations drawn with the vendored Cytoscape.js, a
table of the same relations for keyboards and screen readers, and each relation's evidence page.

The drawing reads `graph_data` (JSON) from the static `graph.js`; the CSP allows no inline script.
"""

from __future__ import annotations

import uuid

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.http import AuthedHttpRequest
from memories.errors import AppError
from memories.selectors.graph_view import graph_payload, graph_relations, relation_evidence

PAGE_SIZE = 50


@login_required
@require_GET
def graph(request: AuthedHttpRequest) -> HttpResponse:
    page = Paginator(graph_relations(owner=request.user), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "dashboard/graph/graph.html", {"page": page})


@login_required
@require_GET
def graph_data(request: AuthedHttpRequest) -> JsonResponse:
    """The drawing's nodes and edges, the signed-in person's only."""
    response = JsonResponse(graph_payload(owner=request.user))
    response["Cache-Control"] = "private, no-store"
    return response


@login_required
@require_GET
def relation_detail(request: AuthedHttpRequest, relation_id: uuid.UUID) -> HttpResponse:
    """One relation and the evidence behind it: the sources that say it, the memories read from them."""
    try:
        relation, evidence = relation_evidence(owner=request.user, relation_id=relation_id)
    except AppError as exc:
        if exc.http_status == 404:
            raise Http404(exc.message) from None
        raise
    return render(request, "dashboard/graph/relation.html", {"relation": relation, "evidence": evidence})
