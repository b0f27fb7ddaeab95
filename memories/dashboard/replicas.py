"""The dashboard's pages on a read replica (installed by settings only when replicas are configured).

A signed-in person's GET pages read their memories on a replica that has replayed their own writes
(config/replicas.py); their POSTs write on the primary and record how far their next reads must see.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase

from config import replicas

_READS = frozenset({"GET", "HEAD"})


class ReplicaReadsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if request.method not in _READS and response.status_code < 400 and user and user.is_authenticated:
            replicas.writes_seen(user.pk)
        return response

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., HttpResponseBase],
        view_args: tuple[object, ...],
        view_kwargs: dict[str, object],
    ) -> HttpResponseBase | None:
        if request.method not in _READS or not view_func.__module__.startswith("memories.dashboard."):
            return None
        user = request.user
        if not user.is_authenticated:
            return None
        # A page is rendered inside the view (render()), so its reads are inside the route.
        return replicas.replica_reads(user.pk, lambda: view_func(request, *view_args, **view_kwargs))
