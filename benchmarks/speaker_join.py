"""What reading a hit's speaker off its save costs recall: the retrieval statement with and without
the per-candidate lookup of `memories_source` (issue 41, whether a `Memory.speaker` column set at save
time would pay).

    .venv/bin/python benchmarks/distractor_stages.py load --conversations 26 30 41 \
        --dir var/benchmarks/locomo-dev
    .venv/bin/python benchmarks/speaker_join.py --dir var/benchmarks/locomo-dev [--conversation 41]

Runs in process against the stored folder's embedded database: each of `--questions` LoCoMo
questions is sent as the retrieval statement recall builds and as the same statement with the
speaker's lookup replaced by NULL (what a column would cost: nothing extra), `--reps` times each,
the two interleaved in a random order so that the machine's load falls on both alike. The lookup is
one primary-key probe per candidate (about 200), so its cost does not grow with the space.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import use_service_database
from benchmarks.locomo import DATA_DIR, load_conversation

SPEAKER_LOOKUP = "SELECT left(src.content, 61) AS head FROM memories_source src WHERE src.id = c.source_id"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, required=True, help="a folder kept by distractor_stages.py load")
    parser.add_argument("--conversation", default="41")
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--reps", type=int, default=8)
    args = parser.parse_args()
    use_service_database(args.dir.resolve())
    from django.db import connection
    from django.utils import timezone

    from accounts.models import User
    from memories import embeddings
    from memories.retrieval import recall
    from memories.selectors.spaces import space_default

    conversation = load_conversation(DATA_DIR / f"{args.conversation}.json")
    owner = User.objects.get(email=f"locomo-{args.conversation}@example.com")
    space = space_default(owner=owner)
    if space is None:
        raise SystemExit("no space: load the folder first")
    queries = [str(q["question"]) for q in conversation.questions][: args.questions]
    vectors = embeddings.embed(queries)
    joined: list[float] = []
    without: list[float] = []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', '400', false), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', false)"
        )
        for query, vector in zip(queries, vectors, strict=True):
            request = recall.RecallRequest(query=query, top_k=20)
            params = recall._params(
                owner=owner,
                space=space,
                request=request,
                knobs=recall.DEFAULT_KNOBS,
                periods=[],
                now=timezone.now(),
            )
            params["qvec"] = recall._vector_literal(vector)
            sql = recall._statement(request, has_periods=False, collapse=True)
            if SPEAKER_LOOKUP not in sql:
                raise SystemExit("the statement no longer looks the speaker up this way")
            plain = sql.replace(SPEAKER_LOOKUP, "SELECT NULL::text AS head")
            times: dict[str, list[float]] = {"joined": [], "without": []}
            for _ in range(args.reps):
                order = [("joined", sql), ("without", plain)]
                random.shuffle(order)
                for name, text in order:
                    started = time.perf_counter()
                    cursor.execute(text, params)
                    cursor.fetchall()
                    times[name].append(time.perf_counter() - started)
            joined.append(statistics.median(times["joined"]))
            without.append(statistics.median(times["without"]))
    diffs = [a - b for a, b in zip(joined, without, strict=True)]
    print(
        f"{len(queries)} questions x {args.reps} reps, interleaved: statement p50 with the speaker lookup "
        f"{statistics.median(joined) * 1000:.2f} ms, without {statistics.median(without) * 1000:.2f} ms; "
        f"per question the lookup costs {statistics.mean(diffs) * 1000:.2f} ms on average "
        f"(median {statistics.median(diffs) * 1000:.2f} ms)"
    )


if __name__ == "__main__":
    main()
