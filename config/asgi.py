"""The ASGI entry point: Django for the site and API, the MCP gateway beside it.

Django's ASGI handler rejects the `lifespan` scope, and the MCP SDK's session
manager must run inside one, so this small router answers lifespan itself
(starting the manager and warming the embedding model) and sends `/mcp` to the
gateway (`/mcp/graph`, `/mcp/evidence`, `/mcp/ingest` are its other tool
profiles) and everything else to Django (see ../shared/design/MCP.md).
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import django
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.handlers.asgi import ASGIHandler, ASGIRequest

from config import runtime
from config.boundary import settings_load

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Under uvicorn or gunicorn a configuration mistake is one line and exit status 2, as under
# manage.py, instead of a traceback through the server's import machinery.
settings_load()


class Request(ASGIRequest):
    """Django's ASGI request, except that a charset in the Content-Type does not read the query.

    Django's encoding setter asks `hasattr(self, "GET")`, which builds the query dict (a cached
    property) while the request is being constructed, where nothing turns TooManyFieldsSent into
    a response: more than 1,000 query parameters and `Content-Type: ...; charset=...` were a 500
    from the server. Forgetting a dict already built is all the setter has to do; the first read
    of `GET` then refuses the query where the error handlers answer it (400 too_many_fields).
    """

    @property
    def encoding(self) -> str | None:
        return self._encoding

    @encoding.setter
    def encoding(self, value: str | None) -> None:
        self._encoding = value
        self.__dict__.pop("GET", None)
        if hasattr(self, "_post"):
            del self._post


class _Executors:
    """Single-thread executors kept for the next request, instead of one made and joined per request.

    Django runs each request's synchronous code (middleware, views) on one thread of its own: it
    enters a ThreadSensitiveContext, and asgiref makes a new one-thread executor for it, starts its
    thread on the first call, and joins it on exit. Both block the event loop until the other
    thread is scheduled, so on a busy machine every request in flight waited for each of those
    starts and joins (docs/pipeline.md, 4 December 2026). A context given an executor uses it and
    leaves it running (asgiref >= 3.13): here it goes back to this list for the next request, as a
    WSGI server's threads serve request after request. The loop is one thread, so the list needs
    no lock.
    """

    # Idle threads kept beyond this many are let go (their executor shut down without waiting).
    KEEP = 32

    def __init__(self) -> None:
        self._idle: list[ThreadPoolExecutor] = []

    def take(self) -> ThreadPoolExecutor:
        return (
            self._idle.pop()
            if self._idle
            else ThreadPoolExecutor(max_workers=1, thread_name_prefix="request")
        )

    def give_back(self, executor: ThreadPoolExecutor) -> None:
        if len(self._idle) < self.KEEP:
            self._idle.append(executor)
        else:
            executor.shutdown(wait=False)


class Handler(ASGIHandler):
    """Django's ASGI handler, with the middleware and the view run as one synchronous call.

    In async mode Django adapts each middleware separately: a MiddlewareMixin's process_request and
    process_response each run through sync_to_async, and a synchronous middleware or view switches
    back and forth again, so a request crossed between the event loop and its thread about ten
    times, each a handoff that waits for the other thread to be scheduled (a fifth of the web
    process's Python time at ingest concurrency 8, docs/pipeline.md). Every middleware and view
    here is synchronous, so the chain is built in sync mode and called once, on the request's
    thread: one crossing in, one out. Reading the body, noticing a client that left and sending
    the response stay Django's async code, unchanged.
    """

    request_class = Request
    executors = _Executors()

    def __init__(self) -> None:
        super().__init__()
        self.load_middleware(is_async=False)

    async def get_response_async(self, request: Any) -> Any:
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            # Django's own refusal (anything but HTTP is not ours to serve).
            await super().__call__(scope, receive, send)
            return
        executor = self.executors.take()
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        finally:
            # A view still running after its client left (Django cancels the response, not the
            # thread) only delays the next request given this executor: its calls queue behind it.
            self.executors.give_back(executor)


django.setup(set_prefix=False)
django_app = ASGIStaticFilesHandler(Handler())

from mcp_gateway.app import McpEndpoint, build_manager  # noqa: E402 - needs Django set up first
from memories.operations.registry import PROFILES  # noqa: E402

manager = build_manager()
# One endpoint (and one OAuth resource) per tool profile; one stateless manager serves them all.
MCP_ENDPOINTS = {p.path: McpEndpoint(manager, path=p.path, profile=p.name) for p in PROFILES.values()}


async def _lifespan(receive: Any, send: Any) -> None:
    stack = contextlib.AsyncExitStack()
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            from memories import embeddings

            try:
                await stack.enter_async_context(manager.run())
            except Exception as exc:  # pragma: no cover - start-up failure is fatal
                await send({"type": "lifespan.startup.failed", "message": exc.__class__.__name__})
                return
            embeddings.warm_up()
            runtime.settle()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await stack.aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    if scope["type"] == "http":
        endpoint = MCP_ENDPOINTS.get(scope["path"].rstrip("/") or "/")
        if endpoint is not None:
            await endpoint(scope, receive, send)
            return
    await django_app(scope, receive, send)
