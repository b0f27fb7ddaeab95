"""Reading a document's text in a child process with hard limits (the worker's side of uploads).

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

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from django.conf import settings

from memories.errors import Code
from memories.pipeline import parse
from memories.pipeline.parse import ExtractedDocument
from memories.pipeline.parse_child import EXIT_OUT_OF_MEMORY

logger = logging.getLogger(__name__)

# What the reader itself may answer with; anything else from the child is a bug, not a verdict.
_READER_CODES = frozenset({Code.DOCUMENT_UNREADABLE, Code.DOCUMENT_EMPTY, Code.DOCUMENT_TOO_LARGE})
_TOO_COMPLEX = "This document is too complex to read within the limits of this service."


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


def extract_isolated(*, data: bytes, media_type: str) -> ExtractedDocument:
    """The document's text, read in a child process under the DOCUMENT_PARSE_* limits.

    Raises DocumentRefused when the document has no readable text or is over a limit, and
    RuntimeError when the child fails in a way no document should cause (logged).
    """
    command = [
        sys.executable,
        "-m",
        "memories.pipeline.parse_child",
        media_type,
        str(settings.DOCUMENT_PARSE_CPU_SECONDS),
        str(settings.DOCUMENT_PARSE_MEMORY_MB * 1024 * 1024),
        str(_output_limit(data)),
    ]
    env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "PYTHONPATH": str(settings.BASE_DIR)}
    timeout = settings.DOCUMENT_PARSE_TIMEOUT_SECONDS
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
            logger.warning("document parse: over the %s s wall-clock limit; child killed", timeout)
            raise DocumentRefused(Code.DOCUMENT_TOO_COMPLEX, _TOO_COMPLEX) from None
        elapsed = time.monotonic() - started
        stderr.seek(0)
        detail = stderr.read(4000).decode("utf-8", "replace")
        if done.returncode < 0 or done.returncode == EXIT_OUT_OF_MEMORY:
            reason = "out of memory" if done.returncode > 0 else _signal_name(-done.returncode)
            logger.warning("document parse: child stopped by a limit (%s) after %.1f s", reason, elapsed)
            raise DocumentRefused(Code.DOCUMENT_TOO_COMPLEX, _TOO_COMPLEX)
        if done.returncode != 0:
            logger.error("document parse: child exited with %s: %s", done.returncode, detail)
            raise RuntimeError(f"document parser exited with {done.returncode}")
        stdout.seek(0)
        answer = json.loads(stdout.read().decode())
    if "error" in answer:
        code = Code(answer["error"]["code"])
        if code not in _READER_CODES:
            raise RuntimeError(f"document parser answered with {code}")
        logger.info("document parse: refused (%s) after %.1f s", code, elapsed)
        raise DocumentRefused(code, str(answer["error"]["message"]))
    return ExtractedDocument(
        text=str(answer["text"]),
        media_type=media_type,
        title=str(answer["title"]),
        pages=int(answer["pages"]),
    )
