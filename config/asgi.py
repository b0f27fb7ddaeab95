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
from typing import Any

import django
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.handlers.asgi import ASGIHandler, ASGIRequest

from config.cli import settings_load

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


class Handler(ASGIHandler):
    request_class = Request


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
