"""The text readers from many threads at once (the web process runs requests in a thread pool):
every thread gets what one thread alone gets, and none an error.

A stemmer shared by threads mixed their words: a recall under load answered HTTP 500 (IndexError
inside the stemmer), or worse, a wrong stem was cached for the life of the process. A Markdown
parser shared by threads could be seen half built by a second thread during its first parse."""

from __future__ import annotations

import random
import sys
import threading
from collections.abc import Callable

import snowballstemmer

from memories.pipeline import documents
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


def _at_once(work: Callable[[int], object]) -> list[object]:
    """`work(i)` on THREADS new threads released together, the interpreter switching between threads
    as often as it allows (a race needs a switch inside one call); each thread's result or error."""
    start = threading.Barrier(THREADS)
    results: list[object] = [None] * THREADS

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = work(i)
        except Exception as exc:  # reported in the test's thread
            results[i] = exc

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    return results


def _words() -> list[str]:
    # Distinct words the stemmer works on in several steps (its suffix rules), so that a switch
    # between threads lands inside a word's stemming; numbered so that the cache never answers.
    return [f"{base}{'x' * n}{suffix}" for n in range(12) for base in BASES for suffix in SUFFIXES]


def test_threads_stemming_at_once_get_the_stems_one_thread_gets():
    words = _words()
    alone = snowballstemmer.stemmer("english")
    expected = {word: alone.stemWord(word) for word in words}

    def work(seed: int) -> dict[str, str]:
        order = list(words)
        random.Random(seed).shuffle(order)  # noqa: S311 - an order, not a secret
        return {word: stem(word) for word in order}

    stem.cache_clear()
    try:
        got = _at_once(work)
    finally:
        stem.cache_clear()
    errors = [found for found in got if not isinstance(found, dict)]
    assert not errors, errors
    wrong = {
        word: found[word]
        for found in got
        if isinstance(found, dict)
        for word in words
        if found[word] != expected[word]
    }
    assert not wrong, dict(list(wrong.items())[:10])


MARKDOWN = """# Packing list

Some *light* things for the trip.

| item | count |
|---|---|
| socks | 4 |
| shirts | 3 |

- passport
- charger for the phone
"""


# Rounds of new threads: one parser shared by them, built at their first parse, gave a wrong parse or
# an error in about 1 of 170 thread-parses at this switch interval.
ROUNDS = 100


def test_threads_reading_markdown_at_once_get_the_blocks_one_thread_gets():
    expected = documents.document_blocks(MARKDOWN, "text/markdown")
    results: list[object] = []
    for _ in range(ROUNDS):
        # New threads: each parses with a parser of its own, built on its first parse.
        results += _at_once(lambda _: documents.document_blocks(MARKDOWN, "text/markdown"))
    # The document's table rows and list items are there, so the comparison compares something.
    assert any("socks" in block.text for block in expected) and any("passport" in b.text for b in expected)
    assert len(results) == ROUNDS * THREADS
    assert all(result == expected for result in results), next(r for r in results if r != expected)
