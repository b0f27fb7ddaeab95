"""The child process that reads one document's text: `python -m memories.pipeline.parse_child`.

Started by `memories.pipeline.parse_sandbox` (never by hand). It sets its own hard limits before it
reads a single byte of the document, so whatever a crafted file makes the reader do, it can spend
no more than its CPU seconds, its address space and its output size; the parent adds a wall-clock
timeout. The limits are set here rather than in a `preexec_fn`, which is unsafe in a parent with
threads (a Celery pool process runs torch's).

    argv:   media_type cpu_seconds memory_bytes output_bytes
    stdin:  the document's bytes
    stdout: one JSON object, {"text", "title", "pages"} or {"error": {"code", "message"}}
    exit:   0 with that object; EXIT_OUT_OF_MEMORY when the address-space limit was reached
"""

from __future__ import annotations

import json
import resource
import signal
import sys

EXIT_OUT_OF_MEMORY = 3


def _limit(kind: int, soft: int, hard: int | None = None) -> None:
    resource.setrlimit(kind, (soft, soft if hard is None else hard))


def main(argv: list[str]) -> int:
    media_type, cpu_seconds, memory_bytes, output_bytes = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    # SIGXCPU at the soft limit ends the process; the hard limit's SIGKILL is for a handler-proof end.
    _limit(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)
    _limit(resource.RLIMIT_AS, memory_bytes)
    # Caps what this process can write (its stdout is a file): an over-long answer is SIGXFSZ,
    # which Python ignores by default (a write would only fail); here it ends the process.
    _limit(resource.RLIMIT_FSIZE, output_bytes)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    # SIGXCPU would otherwise leave a core file of up to the address-space limit.
    _limit(resource.RLIMIT_CORE, 0)

    # Imported after the limits: the reader is what the limits are for.
    from memories.errors import AppError
    from memories.pipeline.parse import extract_detected

    result: dict[str, object]
    try:
        document = extract_detected(sys.stdin.buffer.read(), media_type)
    except MemoryError:
        return EXIT_OUT_OF_MEMORY
    except AppError as error:
        result = {"error": {"code": error.code.value, "message": error.message}}
    else:
        result = {"text": document.text, "title": document.title, "pages": document.pages}
    try:
        encoded = json.dumps(result, ensure_ascii=False).encode()
    except MemoryError:
        return EXIT_OUT_OF_MEMORY
    sys.stdout.buffer.write(encoded)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
