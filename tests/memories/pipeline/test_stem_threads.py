"""Stemming from many threads at once (the web process runs requests in a thread pool): every
thread gets the stem one thread alone would, and none an error. A stemmer shared by threads mixed
their words: a recall under load answered HTTP 500 (IndexError inside the stemmer), or worse, a
wrong stem was cached for the life of the process."""

from __future__ import annotations

import random
import sys
import threading

import snowballstemmer

from memories.pipeline.language import stem

BASES = [
    "allerg",
    "nation",
    "connect",
    "compute",
    "relat",
    "gener",
    "organ",
    "hope",
    "run",
    "walk",
    "sing",
    "teach",
    "argu",
    "establish",
]
SUFFIXES = [
    "ic",
    "y",
    "ies",
    "ation",
    "ational",
    "ations",
    "izing",
    "ization",
    "ness",
    "ful",
    "fully",
    "ively",
    "ement",
    "ements",
    "ing",
    "ed",
    "er",
]
THREADS = 8


def _words() -> list[str]:
    # Distinct words the stemmer works on in several steps (its suffix rules), so that a switch
    # between threads lands inside a word's stemming; numbered so that the cache never answers.
    return [f"{base}{'x' * n}{suffix}" for n in range(12) for base in BASES for suffix in SUFFIXES]


def test_threads_stemming_at_once_get_the_stems_one_thread_gets():
    words = _words()
    alone = snowballstemmer.stemmer("english")
    expected = {word: alone.stemWord(word) for word in words}
    got: list[dict[str, str]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def work(seed: int) -> None:
        order = list(words)
        random.Random(seed).shuffle(order)  # noqa: S311 - an order, not a secret
        start.wait()
        try:
            got.append({word: stem(word) for word in order})
        except BaseException as exc:  # reported in the test's thread
            errors.append(exc)

    stem.cache_clear()
    interval = sys.getswitchinterval()
    # Switch between threads as often as the interpreter allows: the race needs a switch inside
    # one word's stemming.
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
        stem.cache_clear()
    assert not errors, errors
    assert len(got) == THREADS
    wrong = {word: found[word] for found in got for word in words if found[word] != expected[word]}
    assert not wrong, dict(list(wrong.items())[:10])
