"""REST endpoint of the account export (JSON Lines, streamed)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from accounts.caller import SCOPE_READ
from memories.api.base import ApiView
from memories.api.query import StrictQuery
from memories.errors import AppError, Code
from memories.services.export import export_begin

# Stream the export in chunks of about this many characters, not one write per record.
EXPORT_CHUNK_CHARS = 64 * 1024


def stream_chunks(lines: Iterator[str]) -> Iterator[str]:
    buffer: list[str] = []
    size = 0
    for line in lines:
        buffer.append(line)
        size += len(line)
        if size >= EXPORT_CHUNK_CHARS:
            yield "".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer)


def _next_chunk(chunks: Iterator[str]) -> str | None:
    return next(chunks, None)


async def stream_chunks_async(chunks: Iterator[str]) -> AsyncIterator[str]:
    # Under ASGI, Django drains a *sync* streaming iterator into a list before
    # sending (StreamingHttpResponse.__aiter__), which would hold the whole export
    # in memory. Pulling one chunk at a time, on the thread that owns the database
    # connection, keeps it streaming.
    pull = sync_to_async(_next_chunk, thread_sensitive=True)
    while (chunk := await pull(chunks)) is not None:
        yield chunk


class ExportView(ApiView):
    scopes = {"get": SCOPE_READ}

    @extend_schema(
        operation_id="export",
        summary="Everything in your account as JSON Lines",
        responses={(200, "application/x-ndjson"): OpenApiTypes.STR},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        StrictQuery(request, ())
        if not self.caller.in_person:
            # Everything the account holds includes what its owner forgot (issue 40): theirs alone.
            raise AppError(
                Code.FORBIDDEN,
                "The export is the owner's own: it is served to the dashboard and personal access tokens, "
                "not to an app acting for them.",
                agent_action="ask the user to export from the dashboard",
            )
        lines = export_begin(actor=self.actor)
        chunks = stream_chunks(lines)
        content = stream_chunks_async(chunks) if isinstance(request._request, ASGIRequest) else chunks
        response = StreamingHttpResponse(content, content_type="application/x-ndjson")
        filename = f"deeprecall-export-{timezone.now().date().isoformat()}.jsonl"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        response["Cache-Control"] = "no-store"
        return response
