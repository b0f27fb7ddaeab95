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

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

django_app = ASGIStaticFilesHandler(get_asgi_application())

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
