"""A stand-in for a hosted OpenAI-compatible API, on loopback.

A hosted LLM is the one third-party service the tests cannot run, so this
small HTTP server plays it, speaking the OpenAI wire format. `respond(path,
body)` decides each answer: (HTTP status, JSON payload).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[str, dict[str, Any]], tuple[int, dict[str, Any]]]


@contextmanager
def fake_openai_server(respond: Responder) -> Iterator[str]:
    """Serve `respond` on 127.0.0.1; yield the base URL (ending in /v1)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, payload = respond(self.path, body)
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
