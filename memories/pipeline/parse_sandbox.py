"""Reading a document's text, or an image, in a child process with hard limits (the worker's side
of uploads).

A PDF is a program: a few kilobytes of compressed drawing operators shared by two thousand pages
can keep a reader busy for minutes, and a decompression bomb can fill memory. So the reader runs
in `memories.pipeline.parse_child`, a fresh interpreter (a subprocess, not multiprocessing: a Celery
prefork pool process is daemonic and may not have multiprocessing children) with limits of CPU
seconds, address space and output size, and a wall-clock timeout here. A child stopped by any of
them is `document_too_complex`, a permanent failure: the same bytes would hit the same limit again.

The child gets no environment beyond what starting Python needs: no database URL or secret is in
reach of the code that reads hostile bytes.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from memories.errors import Code
from memories.pipeline import parse
from memories.pipeline.images import ReadImage
from memories.pipeline.parse import ExtractedDocument
from memories.pipeline.parse_child import EXIT_OUT_OF_MEMORY

logger = logging.getLogger(__name__)

# What the reader itself may answer with; anything else from the child is a bug, not a verdict.
_READER_CODES = frozenset({Code.DOCUMENT_UNREADABLE, Code.DOCUMENT_EMPTY, Code.DOCUMENT_TOO_LARGE})
_TOO_COMPLEX = "This document is too complex to read within the limits of this service."
_IMAGE_CODES = frozenset({Code.IMAGE_UNREADABLE, Code.IMAGE_TOO_LARGE})
_IMAGE_TOO_COMPLEX = "This image is too complex to read within the limits of this service."


@dataclass(frozen=True)
class DocumentRefused(Exception):
    """No text can be read from the document: a job failure code and a message safe to show."""

    code: Code
    message: str


def _output_limit(data: bytes) -> int:
    # The reader's own caps bound the text (MAX_PDF_CHARS, or the upload's size for text): in UTF-8
    # JSON a character is at most 4 bytes plus escapes, so more than this is a reader gone wrong.
    return 4 * max(parse.MAX_PDF_CHARS, len(data)) + 64 * 1024


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _run_child(
    *,
    args: list[str],
    data: bytes,
    cpu_seconds: int,
    memory_mb: int,
    timeout: int,
    output_bytes: int,
    too_complex: str,
) -> dict[str, Any]:
    """Run parse_child on `data` under the limits and return its JSON answer. A child stopped by a
    limit raises DocumentRefused(document_too_complex, `too_complex`); a child that fails in a way no
    input should cause raises RuntimeError (logged)."""
    media_type, *extra = args
    command = [
        sys.executable,
        "-m",
        "memories.pipeline.parse_child",
        media_type,
        str(cpu_seconds),
        str(memory_mb * 1024 * 1024),
        str(output_bytes),
        *extra,
    ]
    env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "PYTHONPATH": str(settings.BASE_DIR)}
    # Files rather than pipes: nothing can deadlock, and the output limit is the kernel's (FSIZE).
    with (
        tempfile.TemporaryFile() as stdin,
        tempfile.TemporaryFile() as stdout,
        tempfile.TemporaryFile() as stderr,
    ):
        stdin.write(data)
        stdin.seek(0)
        started = time.monotonic()
        try:
            done = subprocess.run(  # noqa: S603 - our own module, fixed arguments
                command,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                cwd=settings.BASE_DIR,
                env=env,
                timeout=timeout,
                start_new_session=True,
                check=False,
            )
        except subprocess.TimeoutExpired:
            logger.warning("%s: over the %s s wall-clock limit; child killed", media_type, timeout)
            raise DocumentRefused(Code.DOCUMENT_TOO_COMPLEX, too_complex) from None
        elapsed = time.monotonic() - started
        stderr.seek(0)
        detail = stderr.read(4000).decode("utf-8", "replace")
        if done.returncode < 0 or done.returncode == EXIT_OUT_OF_MEMORY:
            reason = "out of memory" if done.returncode > 0 else _signal_name(-done.returncode)
            logger.warning("%s: child stopped by a limit (%s) after %.1f s", media_type, reason, elapsed)
            raise DocumentRefused(Code.DOCUMENT_TOO_COMPLEX, too_complex)
        if done.returncode != 0:
            logger.error("%s: reading child exited with %s: %s", media_type, done.returncode, detail)
            raise RuntimeError(f"document parser exited with {done.returncode}")
        stdout.seek(0)
        answer: dict[str, object] = json.loads(stdout.read().decode())
    logger.info("%s: read in %.1f s", media_type, elapsed)
    return answer


def _refusal(answer: dict[str, Any], allowed: frozenset[Code]) -> DocumentRefused | None:
    if "error" not in answer:
        return None
    code = Code(answer["error"]["code"])
    if code not in allowed:
        raise RuntimeError(f"document parser answered with {code}")
    logger.info("reading refused: %s", code)
    return DocumentRefused(code, str(answer["error"]["message"]))


def extract_isolated(*, data: bytes, media_type: str) -> ExtractedDocument:
    """The document's text, read in a child process under the DOCUMENT_PARSE_* limits.

    Raises DocumentRefused when the document has no readable text or is over a limit, and
    RuntimeError when the child fails in a way no document should cause (logged).
    """
    answer = _run_child(
        args=[media_type],
        data=data,
        cpu_seconds=settings.DOCUMENT_PARSE_CPU_SECONDS,
        memory_mb=settings.DOCUMENT_PARSE_MEMORY_MB,
        timeout=settings.DOCUMENT_PARSE_TIMEOUT_SECONDS,
        output_bytes=_output_limit(data),
        too_complex=_TOO_COMPLEX,
    )
    if refused := _refusal(answer, _READER_CODES):
        raise refused
    return ExtractedDocument(
        text=str(answer["text"]),
        media_type=media_type,
        title=str(answer["title"]),
        pages=int(answer["pages"]),
    )


def image_read_isolated(*, data: bytes, media_type: str) -> ReadImage:
    """The image decoded, encoded again without metadata, and the text OCR reads in it (IMAGE_OCR),
    in a child process under the IMAGE_READ_* limits. Raises as `extract_isolated` does."""
    answer = _run_child(
        args=[media_type, str(settings.IMAGE_MAX_PIXELS), "1" if settings.IMAGE_OCR else "0"],
        data=data,
        cpu_seconds=settings.IMAGE_READ_CPU_SECONDS,
        memory_mb=settings.IMAGE_READ_MEMORY_MB,
        timeout=settings.IMAGE_READ_TIMEOUT_SECONDS,
        # The picture comes back in base64 (4/3 of its size); encoded again it can outgrow the
        # upload a little (a heavily compressed JPEG at quality 90), never by this much.
        output_bytes=_output_limit(data) + 4 * settings.IMAGE_MAX_BYTES,
        too_complex=_IMAGE_TOO_COMPLEX,
    )
    if refused := _refusal(answer, _IMAGE_CODES):
        raise refused
    return ReadImage(
        data=base64.b64decode(answer["data_base64"]),
        media_type=media_type,
        width=int(answer["width"]),
        height=int(answer["height"]),
        text=str(answer["text"]),
    )
