"""The ASGI entry point: Django for every path, plus the process lifespan.

Django's ASGI handler rejects the `lifespan` scope, so this small router
answers it and uses startup to warm the embedding model in the background.
(The MCP gateway will be routed here too; see ../shared/design/MCP.md.)
"""

from __future__ import annotations

import os
from typing import Any

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

django_app = ASGIStaticFilesHandler(get_asgi_application())


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                from memories import embeddings

                embeddings.warm_up()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    await django_app(scope, receive, send)
