"""embed_query: one query's embedding from a bounded per-process cache, keyed by the exact text;
embed_query_soon: the same, computed on another thread."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from memories import embeddings
from memories.outbound import OutboundError
from tests.fake_openai import fake_openai_server


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    embeddings.query_cache_clear()
    yield
    embeddings.query_cache_clear()


def test_it_returns_what_embed_returns():
    first = embeddings.embed_query("where does Mara live?")
    again = embeddings.embed_query("where does Mara live?")
    assert first == again == embeddings.embed(["where does Mara live?"])[0]
    assert embeddings.query_cache_info() == {"hits": 1, "misses": 1, "size": 1}


def test_it_keys_by_the_exact_text():
    embeddings.embed_query("Paris")
    embeddings.embed_query("paris")
    embeddings.embed_query("Paris ")
    assert embeddings.query_cache_info() == {"hits": 0, "misses": 3, "size": 3}


def test_it_keeps_at_most_its_size_and_forgets_the_least_recently_used(monkeypatch):
    monkeypatch.setattr(embeddings, "QUERY_CACHE_SIZE", 3)
    for text in ("one", "two", "three"):
        embeddings.embed_query(text)
    embeddings.embed_query("one")  # now the most recent; "two" is the oldest
    embeddings.embed_query("four")
    assert embeddings.query_cache_info()["size"] == 3
    embeddings.embed_query("one")
    embeddings.embed_query("two")
    assert embeddings.query_cache_info() == {"hits": 2, "misses": 5, "size": 3}


def test_it_hands_out_copies_that_a_caller_cannot_spoil():
    vector = embeddings.embed_query("spoil me")
    vector[0] = 99.0
    assert embeddings.embed_query("spoil me")[0] != 99.0


def test_it_never_serves_the_local_models_vector_for_an_endpoints(settings):
    local = embeddings.embed_query("same text")

    def respond(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 200, {"data": [{"index": 0, "embedding": [1.0] + [0.0] * (embeddings.DIMENSIONS - 1)}]}

    with fake_openai_server(respond) as url:
        settings.EMBEDDINGS_URL = url
        remote = embeddings.embed_query("same text")
    assert remote[0] == 1.0 and remote != local
    assert embeddings.query_cache_info()["misses"] == 2


class TestSoon:
    """embed_query_soon: the same vector, computed on another thread while the caller works."""

    def test_a_new_query_is_embedded_on_another_thread_and_then_cached(self, monkeypatch):
        threads = []
        real_embed = embeddings.embed

        def embed(texts: list[str]) -> list[list[float]]:
            threads.append(threading.current_thread())
            return real_embed(texts)

        monkeypatch.setattr(embeddings, "embed", embed)
        vector = embeddings.embed_query_soon("where does Mara live?").result(timeout=30)
        assert vector == real_embed(["where does Mara live?"])[0]
        assert threads and threads[0] is not threading.current_thread()
        again = embeddings.embed_query_soon("where does Mara live?")
        # Cached: finished before it is returned, so a caller knows there is nothing to overlap.
        assert again.done() and again.result() == vector
        assert embeddings.query_cache_info() == {"hits": 1, "misses": 1, "size": 1}

    def test_it_raises_what_embed_query_raises(self, settings):
        def respond(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            return 200, {"data": [{"index": 0, "embedding": [1.0, 0.0]}]}  # the wrong size

        with fake_openai_server(respond) as url:
            settings.EMBEDDINGS_URL = url
            with pytest.raises(OutboundError) as directly:
                embeddings.embed_query("a question")
            with pytest.raises(OutboundError) as soon:
                embeddings.embed_query_soon("a question").result(timeout=30)
        assert str(soon.value) == str(directly.value) and "384 dimensions" in str(soon.value)
        assert embeddings.query_cache_info()["size"] == 0

    def test_a_forked_child_starts_its_own_threads(self):
        embeddings.embed_query_soon("before the fork").result(timeout=30)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: the parent's threads are not here; a new executor must be made
            try:
                vector = embeddings.embed_query_soon("after the fork").result(timeout=30)
                os.write(write, b"ok" if len(vector) == embeddings.DIMENSIONS else b"bad")
            finally:
                os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        assert os.read(read, 16) == b"ok"
        os.close(read)
