"""The text readers from many threads at once (the web process runs requests in a thread pool):
every thread gets what one thread alone gets, and none an error.

A stemmer shared by threads mixed their words: a recall under load answered HTTP 500 (IndexError
inside the stemmer), or worse, a wrong stem was cached for the life of the process. A Markdown
parser shared by threads could be seen half built by a second thread during its first parse."""

from __future__ import annotations

import random
import sys
import threading

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
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(ROUNDS):
            start = threading.Barrier(THREADS)

            def work(start: threading.Barrier) -> None:
                start.wait()
                try:
                    # New threads: each parses with a parser of its own, built on this first parse.
                    results.append(documents.document_blocks(MARKDOWN, "text/markdown"))
                except Exception as exc:  # reported in the test's thread
                    results.append(exc)

            threads = [threading.Thread(target=work, args=(start,)) for _ in range(THREADS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    finally:
        sys.setswitchinterval(interval)
    # The document's table rows and list items are there, so the comparison compares something.
    assert any("socks" in block.text for block in expected) and any("passport" in b.text for b in expected)
    assert len(results) == ROUNDS * THREADS
    assert all(result == expected for result in results), next(r for r in results if r != expected)
