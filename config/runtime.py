"""What a long-running process (a web process, a worker's pool process) does once it has started.

Python's cyclic garbage collector runs a young collection every 700 net allocations and, now and
then, a full one that walks every object the process holds. After start-up that is mostly Django,
the URL and template machinery, the embedding model's tokenizer and session: hundreds of thousands
of objects that live until the process ends. A recall allocates thousands, so a web process
collected many times a second, and every full collection walked all of them again: with 16 clients
the slowest recall took 600-765 ms, against 360-430 ms with the settings below
(`benchmarks/recall_throughput.py`, docs/decisions.md).

`settle()` collects once, then freezes what is left: the start-up objects move to a permanent
generation that no collection walks again (they are never garbage). It raises the young threshold
so that a collection runs every 50,000 allocations, a few requests apart, instead of several
times within one; the older generations follow at the same pace. Reference counting still frees
almost everything at once; only cycles wait for the collector, and at most a few megabytes of them.
"""

from __future__ import annotations

import gc

# Young collections every this many net allocations; the next generations after this many
# collections of the one before.
THRESHOLDS = (50_000, 50, 100)


def settle() -> None:
    """Freeze the objects made while starting, and collect less often from now on. Call it once,
    when the process is ready to serve (after the model is loaded)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
