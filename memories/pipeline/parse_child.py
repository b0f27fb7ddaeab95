"""The child process that reads one document's text: `python -m memories.pipeline.parse_child`.

Started by `memories.pipeline.parse_sandbox` (never by hand). It sets its own hard limits before it
reads a single byte of the document, so whatever a crafted file makes the reader do, it can spend
no more than its CPU seconds, its address space and its output size; the parent adds a wall-clock
timeout. The limits are set here rather than in a `preexec_fn`, which is unsafe in a parent with
threads (a Celery pool process runs torch's).

    argv:   media_type cpu_seconds memory_bytes output_bytes [max_pixels ocr]  (the last two: images)
    stdin:  the document's (or image's) bytes
    stdout: one JSON object, {"text", "title", "pages"} for a document, {"text", "width", "height",
            "data_base64"} for an image (`memories.pipeline.images.image_read`), or
            {"error": {"code", "message"}}
    exit:   0 with that object; EXIT_OUT_OF_MEMORY when the address-space limit was reached
"""

from __future__ import annotations

import base64
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

    result: dict[str, object]
    try:
        if media_type.startswith("image/"):
            result = _image(sys.stdin.buffer.read(), media_type, max_pixels=int(argv[4]), ocr=argv[5] == "1")
        else:
            result = _document(sys.stdin.buffer.read(), media_type)
    except MemoryError:
        return EXIT_OUT_OF_MEMORY
    except AppError as error:
        result = {"error": {"code": error.code.value, "message": error.message}}
    try:
        encoded = json.dumps(result, ensure_ascii=False).encode()
    except MemoryError:
        return EXIT_OUT_OF_MEMORY
    sys.stdout.buffer.write(encoded)
    sys.stdout.buffer.flush()
    return 0


def _document(data: bytes, media_type: str) -> dict[str, object]:
    from memories.pipeline.parse import extract_detected

    document = extract_detected(data, media_type)
    return {"text": document.text, "title": document.title, "pages": document.pages}


def _image(data: bytes, media_type: str, *, max_pixels: int, ocr: bool) -> dict[str, object]:
    from memories.pipeline.images import image_read

    image = image_read(data, media_type, max_pixels=max_pixels, ocr=ocr)
    return {
        "text": image.text,
        "width": image.width,
        "height": image.height,
        "data_base64": base64.b64encode(image.data).decode(),
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
