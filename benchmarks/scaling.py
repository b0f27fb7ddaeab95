"""Growth: recall p50/p95 and ingest rate as one space grows to 10k, 100k (and 1M) memories, and
with the table's rows spread over many owners.

    .venv/bin/python benchmarks/scaling.py [--sizes 10000 100000] [--million] [--owners 100]
                                           [--queries 200] [--saves 400] [--plot var/benchmarks/scaling.svg]

One throwaway service (`manage.py up` on a temporary data folder: embedded PostgreSQL, the real
worker, the real model). The measured user's default space is filled step by step to each of
`--sizes` (`--million` adds 1,000,000); at every step:

- recall through the API (`POST /api/v1/operations/recall`, HTTP, query embedding included), one
  call at a time: default (top_k 20), `types=[episode]` + `tags=[travel]`, and `at` (time travel);
- the same default recall in process with the query vector given (the database statement and the
  hit loading, no HTTP, no embedding), and where its statement spends its time: EXPLAIN ANALYZE per
  common table expression (median over the queries), beside the index sizes and shared_buffers;
- ingest: `--saves` notes saved through REST at concurrency 8 into the same space, each waited
  for until its job succeeded (benchmarks/ingest.py's client and its default observer, one reader
  of the waiting jobs' rows every 5 ms): saves/s and save-to-recallable p95.

Then the memory tables are emptied and `--owners` owners get 1,000 memories each (`--million`:
1,000 owners, 1M rows), and one of them is measured the same way: the tenancy case, where the
table is big and the space small.

Data, said plainly: the statements are the distractor generator's (benchmarks/distractors.py:
synthetic personal notes, all distinct), stored with the worker's own rules for kind, clocks,
entities and slot (`distractors.copy_memories`) by COPY, in conversation-like sessions, with saver
tags, a few suppressed, superseded and pinned. The first 100,000 have their own real
all-MiniLM-L6-v2 embeddings (the distractor cache); beyond that a row reuses the vector of one of
those plus Gaussian noise (sigma 0.01 per dimension, re-normalised), so its text and vector no
longer match: fine for latency, which is all that is measured here. The HNSW and full-text indexes
are dropped for each load and built again from the model's definitions (the migration's
parameters), then the tables are analysed. The figures and the plot (SVG, written by hand,
no plotting library) are also kept as JSON beside the plot.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import ROOT, use_service_database
from benchmarks.distractors import Saved, _texts, bulk_indexes_dropped, copy_memories, distractors
from benchmarks.ingest import save_and_wait, shared_observer
from benchmarks.locomo import percentile, service_with_data_dir
from benchmarks.recall_latency import TAGS, queries

# Real embeddings available (the distractor cache); rows beyond reuse them with noise.
REAL = 100_000
PER_OWNER = 1_000
AT = "2024-06-01T00:00:00+00:00"
SPAN_START = datetime(2020, 1, 1, tzinfo=UTC)
SPAN = timedelta(days=6 * 365)


@dataclass
class Step:
    label: str
    space_memories: int
    table_memories: int
    load: str
    latencies: dict[str, tuple[float, float]] = field(default_factory=dict)  # ms p50, p95
    hits: dict[str, float] = field(default_factory=dict)
    ctes: list[tuple[str, float]] = field(default_factory=list)  # ms, median over queries
    ingest_rate: float = 0.0
    ingest_p95_ms: float = 0.0
    sizes_mb: dict[str, float] = field(default_factory=dict)
    bulk_rows_per_s: float = 0.0


# --- the data ----------------------------------------------------------------------------------


class Rows:
    """The sequence of statements and vectors the loads draw from, in order (a prefix is stable)."""

    def __init__(self, count: int) -> None:
        import numpy

        real = distractors(count=min(count, REAL))
        self.texts = real.texts if count <= REAL else _texts(count=count, seed=11)[1]
        self.vectors = real.vectors
        self.noise = numpy.random.default_rng(7)
        self.numpy = numpy

    def vector(self, index: int) -> Any:
        if index < len(self.vectors):
            return self.vectors[index]
        vector = self.vectors[index % len(self.vectors)] + self.noise.normal(0, 0.01, size=384)
        return (vector / self.numpy.linalg.norm(vector)).astype(self.numpy.float32)


def saved_items(rows: Rows, start: int, stop: int, rng: random.Random) -> Any:
    """Rows start..stop as saves: sessions of 5-20 statements a minute or so apart (60% with a
    session id, as an agent's conversation; the rest separate notes) at random times over 2020-2025."""
    moment = SPAN_START
    session: uuid.UUID | None = None
    left = 0
    for index in range(start, stop):
        if left == 0:
            left = rng.randint(5, 20)
            moment = SPAN_START + SPAN * rng.random()
            session = uuid.uuid4() if rng.random() < 0.6 else None
        left -= 1
        moment += timedelta(seconds=rng.uniform(5, 90))
        yield Saved(
            text=rows.texts[index],
            vector=rows.vector(index),
            saved=moment,
            session_id=session,
            tags=rng.sample(TAGS, rng.randint(0, 2)),
            status="suppressed" if rng.random() < 0.02 else "active",
            pinned=rng.random() < 0.01,
            superseded_at=moment + timedelta(days=10) if rng.random() < 0.03 else None,
        )


def load(spaces: list[tuple[Any, int, int]], rows: Rows, rng: random.Random) -> float:
    """COPY rows [start, stop) into each (space, start, stop); indexes rebuilt. Rows per second."""
    from django.db import connection

    started = time.perf_counter()
    total = 0
    with connection.cursor() as cursor, bulk_indexes_dropped(cursor):
        for space, start, stop in spaces:
            items = saved_items(rows, start, stop, rng)
            total += copy_memories(cursor, owner_id=space.owner_id, space_id=space.pk, items=items)
    return total / (time.perf_counter() - started)


# --- the measurements --------------------------------------------------------------------------


def api_latencies(
    client: httpx.Client, token: str, bodies: list[dict[str, Any]]
) -> tuple[list[float], float]:
    headers = {"Authorization": f"Bearer {token}"}
    latencies, hits = [], []
    for body in bodies:
        started = time.perf_counter()
        response = client.post("/api/v1/operations/recall", json=body, headers=headers)
        latencies.append(time.perf_counter() - started)
        response.raise_for_status()
        hits.append(len(response.json()["memories"]))
    return latencies, statistics.mean(hits)


def cte_times(plan: dict[str, Any]) -> dict[str, float]:
    """Milliseconds per common table expression of one EXPLAIN (ANALYZE, FORMAT JSON) plan: the
    inclusive time of the node that computes it, so nested ones are counted in their parents too."""
    found: dict[str, float] = {}

    def walk(node: dict[str, Any]) -> None:
        name = node.get("Subplan Name", "")
        if name.startswith("CTE "):
            found[name[4:]] = node.get("Actual Total Time", 0.0) * node.get("Actual Loops", 1)
        for child in node.get("Plans", []):
            walk(child)

    walk(plan["Plan"])
    found["(whole statement)"] = plan.get("Execution Time", 0.0)
    return found


def in_process(
    owner: Any, space: Any, questions: list[str], vectors: list[list[float]]
) -> tuple[list[float], list[tuple[str, float]]]:
    """memory_recall with the query vector given: its wall times, and per-CTE medians of the plans."""
    from django.db import connection, transaction

    from memories.retrieval.recall import RecallRequest, memory_recall

    plans: list[dict[str, Any]] = []

    def explain(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        # The retrieval statement is the one with a vector pool; it is explained first, then run.
        # It travels behind its SET LOCALs in one message, and EXPLAIN of that message would explain
        # the SET LOCALs only: the two parts run apart here, in one transaction so the settings hold.
        if "vector_pool AS MATERIALIZED" in sql and not sql.startswith("EXPLAIN"):
            settings, statement = sql.split(";", 1)
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(settings, params)
                cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement, params)
                plans.append(cursor.fetchone()[0][0])
        return execute(sql, params, many, context)

    def recall(question: str, vector: list[float]) -> None:
        memory_recall(owner=owner, space=space, request=RecallRequest(query=question), query_vector=vector)

    for question, vector in zip(questions[:10], vectors[:10], strict=False):  # warm-up
        recall(question, vector)
    latencies = []
    for question, vector in zip(questions, vectors, strict=True):
        started = time.perf_counter()
        recall(question, vector)
        latencies.append(time.perf_counter() - started)
    with connection.execute_wrapper(explain):
        for question, vector in zip(questions[:40], vectors[:40], strict=False):
            recall(question, vector)
    per_cte: dict[str, list[float]] = {}
    for plan in plans:
        for name, ms in cte_times(plan).items():
            per_cte.setdefault(name, []).append(ms)
    medians = sorted(((n, statistics.median(v)) for n, v in per_cte.items()), key=lambda x: -x[1])
    return latencies, medians


def sizes_mb() -> dict[str, float]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_relation_size('memory_embedding_hnsw'), pg_relation_size('memory_search_gin'),"
            " pg_total_relation_size('memories_memory'), pg_size_bytes(current_setting('shared_buffers'))"
        )
        hnsw, gin, table, buffers = cursor.fetchone()
    mb = 1024 * 1024
    return {"hnsw": hnsw / mb, "gin": gin / mb, "memories table": table / mb, "shared_buffers": buffers / mb}


def ingest(url: str, token: str, saves: int, offset: int, pgdata: Path) -> tuple[float, float]:
    """(saves/s, save-to-recallable p95 ms) for `saves` REST saves at concurrency 8, observed as
    `benchmarks/ingest.py` does by default (polling the API cost the web more CPU than the saves)."""
    headers = {"Authorization": f"Bearer {token}"}
    observe = shared_observer(pgdata)
    with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
        save_and_wait(client, offset - 1, observe)  # warm-up
        started = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            timings = list(
                pool.map(lambda i: save_and_wait(client, i, observe), range(offset, offset + saves))
            )
        elapsed = time.perf_counter() - started
    return saves / elapsed, percentile([t[0] for t in timings], 95) * 1000


def measure(
    step: Step,
    *,
    url: str,
    token: str,
    owner: Any,
    space: Any,
    questions: list[str],
    vectors: Any,
    saves: int,
    pgdata: Path,
) -> None:
    step.sizes_mb = sizes_mb()
    with httpx.Client(base_url=url, timeout=120) as client:
        api_latencies(client, token, [{"query": q} for q in questions[:20]])  # warm-up
        bodies: dict[str, list[dict[str, Any]]] = {
            "default": [{"query": q} for q in questions],
            "types+tags": [{"query": q, "types": ["episode"], "tags": ["travel"]} for q in questions[:100]],
            "at": [{"query": q, "at": AT} for q in questions[:100]],
        }
        for name, chosen in bodies.items():
            latencies, hits = api_latencies(client, token, chosen)
            step.latencies[name] = (percentile(latencies, 50) * 1000, percentile(latencies, 95) * 1000)
            step.hits[name] = hits
    latencies, step.ctes = in_process(owner, space, questions, vectors)
    step.latencies["in process"] = (percentile(latencies, 50) * 1000, percentile(latencies, 95) * 1000)
    step.ingest_rate, step.ingest_p95_ms = ingest(url, token, saves, step.table_memories, pgdata)
    load1 = os.getloadavg()[0]
    print(
        f"  {step.label}: default p95 {step.latencies['default'][1]:.1f} ms, in process p95 "
        f"{step.latencies['in process'][1]:.1f} ms, ingest {step.ingest_rate:.1f} saves/s (load {load1:.1f})",
        flush=True,
    )


# --- the report --------------------------------------------------------------------------------


def print_table(steps: list[Step]) -> None:
    print()
    print("recall through the API, one call at a time (ms, p50 / p95); in process = the statement and")
    print("hit loading with the query vector given; ingest = REST saves at concurrency 8, end to end")
    header = (
        f"{'case':<28}{'space':>10}{'table':>11}{'default':>16}{'types+tags':>16}{'at':>16}"
        f"{'in process':>16}{'ingest/s':>10}{'save p95':>10}"
    )
    print(header)
    for step in steps:
        cells = "".join(
            f"{f'{step.latencies[n][0]:.1f} / {step.latencies[n][1]:.1f}':>16}"
            for n in ("default", "types+tags", "at", "in process")
        )
        print(
            f"{step.label:<28}{step.space_memories:>10,}{step.table_memories:>11,}{cells}"
            f"{step.ingest_rate:>10.1f}{step.ingest_p95_ms:>8.0f}ms"
        )
    print()
    print("where the statement's time goes (EXPLAIN ANALYZE, median ms over 40 default recalls; a CTE's")
    print("time includes the CTEs it reads) and what has to fit in memory:")
    for step in steps:
        top = ", ".join(f"{name} {ms:.1f}" for name, ms in step.ctes[:7])
        sizes = ", ".join(f"{name} {mb:,.0f} MB" for name, mb in step.sizes_mb.items())
        print(f"  {step.label}: {top}")
        hits = ", ".join(f"{name} {mean:.1f}" for name, mean in step.hits.items())
        print(f"  {'':<{len(step.label)}}  {sizes}")
        print(
            f"  {'':<{len(step.label)}}  hits per call: {hits}; bulk load {step.bulk_rows_per_s:,.0f} rows/s"
        )


def _tag(name: str, text: str = "", **attributes: Any) -> str:
    """One SVG element; attribute names with an underscore are written with a dash."""
    attrs = " ".join(
        f'{key.replace("_", "-")}="{f"{value:.1f}" if isinstance(value, float) else value}"'
        for key, value in attributes.items()
    )
    return f"<{name} {attrs}>{text}</{name}>" if text else f"<{name} {attrs}/>"


def svg(steps: list[Step], path: Path) -> None:
    """Two panels: recall p95 and ingest rate against memories in the space (log scale); the
    many-owners case as squares at the table's size."""
    import math

    growth = [s for s in steps if s.label.startswith("one space")]
    others = [s for s in steps if s not in growth]
    width, height, pad = 900, 380, 60
    panel = (width - 3 * pad) // 2
    xs = [s.table_memories for s in steps] + [s.space_memories for s in steps]
    lo, hi = math.log10(min(xs)) - 0.2, math.log10(max(xs)) + 0.2
    bottom = height - pad
    series = [("default", "#1f77b4"), ("types+tags", "#ff7f0e"), ("at", "#2ca02c"), ("in process", "#7f7f7f")]
    top_ms = max(s.latencies[n][1] for s in steps for n, _ in series) * 1.15
    top_rate = max(s.ingest_rate for s in steps) * 1.15 or 1.0

    def x(value: float, left: int) -> float:
        return left + (math.log10(value) - lo) / (hi - lo) * panel

    def y(value: float, top: float) -> float:
        return bottom - value / top * (height - 2 * pad)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        ' font-family="sans-serif" font-size="12">',
        _tag("rect", width=width, height=height, fill="white"),
    ]
    for left, title, top in (
        (pad, "recall p95 (ms)", top_ms),
        (2 * pad + panel, "ingest (saves/s)", top_rate),
    ):
        parts.append(_tag("line", x1=left, y1=bottom, x2=left + panel, y2=bottom, stroke="black"))
        parts.append(_tag("line", x1=left, y1=pad, x2=left, y2=bottom, stroke="black"))
        parts.append(_tag("text", title, x=left, y=pad - 20, font_weight="bold"))
        for power in range(math.ceil(lo), math.floor(hi) + 1):
            px = x(10**power, left)
            parts.append(_tag("line", x1=px, y1=bottom, x2=px, y2=bottom + 5, stroke="black"))
            parts.append(_tag("text", f"{10**power:,}", x=px, y=bottom + 18, text_anchor="middle"))
        for i in range(5):
            py = y(top * i / 4, top)
            parts.append(_tag("text", f"{top * i / 4:.0f}", x=left - 6, y=py + 4, text_anchor="end"))
            parts.append(_tag("line", x1=left, y1=py, x2=left + panel, y2=py, stroke="#eee"))
        label = "memories in the space (log scale)"
        parts.append(_tag("text", label, x=left + panel / 2, y=height - 15, text_anchor="middle"))

    def plot(left: int, values: list[tuple[Step, float]], top: float, colour: str) -> None:
        points = [(x(s.space_memories, left), y(v, top)) for s, v in values if s in growth]
        line = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        parts.append(_tag("polyline", points=line, fill="none", stroke=colour, stroke_width=2))
        parts.extend(_tag("circle", cx=px, cy=py, r=3, fill=colour) for px, py in points)
        for s, v in values:
            if s in others:
                px, py = x(s.table_memories, left), y(v, top)
                parts.append(_tag("rect", x=px - 4, y=py - 4, width=8, height=8, fill="none", stroke=colour))

    for n, (name, colour) in enumerate(series):
        plot(pad, [(s, s.latencies[name][1]) for s in steps], top_ms, colour)
        parts.append(_tag("text", name, x=pad + 10, y=pad + 14 * n, fill=colour))
    note = "squares: one owner of many (x = the table's size)"
    parts.append(_tag("text", note, x=pad + 10, y=pad + 14 * len(series)))
    plot(2 * pad + panel, [(s, s.ingest_rate) for s in steps], top_rate, "#d62728")
    parts.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))


# --- the run -----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument(
        "--million", action="store_true", help="also 1,000,000 in one space, and 1,000 owners"
    )
    parser.add_argument("--owners", type=int, default=100, help=f"owners of {PER_OWNER:,} memories each")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--saves", type=int, default=400)
    parser.add_argument("--plot", type=Path, default=ROOT / "var" / "benchmarks" / "scaling.svg")
    parser.add_argument(
        "--report", action="store_true", help="only print and plot the figures kept beside --plot"
    )
    args = parser.parse_args()
    figures = args.plot.with_suffix(".json")
    if args.report:
        kept = [Step(**{**s, "ctes": [tuple(c) for c in s["ctes"]]}) for s in json.loads(figures.read_text())]
        print_table(kept)
        svg(kept, args.plot)
        return
    sizes = sorted({*args.sizes, *([1_000_000] if args.million else [])})
    owners = 1_000 if args.million else args.owners
    logging.getLogger("httpx").setLevel(logging.WARNING)
    rng = random.Random(42)  # noqa: S311 - reproducible synthetic data, not secrets
    started = time.perf_counter()
    print(f"load average at the start: {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)

    with service_with_data_dir() as (url, _token, data_dir):
        use_service_database(data_dir)
        from django.db import connection
        from django.test import override_settings

        from accounts.services import pat_create
        from memories import embeddings
        from memories.selectors.spaces import space_default
        from memories.services.account import user_sign_up

        print("reading the statements and their embeddings (benchmarks/distractors.py cache) ...", flush=True)
        rows = Rows(max(max(sizes), owners * PER_OWNER))
        questions = queries(args.queries, rng)
        vectors = embeddings.embed(questions)
        # Benchmark users never sign in with a password: a fast hasher makes 1,000 of them quick.
        with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
            user = user_sign_up(email="scaling@example.com", password="bench-password-123")  # noqa: S106
        token = pat_create(user=user, name="bench", scopes=["memory:read", "memory:write"])[1]
        space = space_default(owner=user)
        steps: list[Step] = []
        loaded = 0
        for size in sizes:
            print(f"one space: loading {size - loaded:,} more memories (to {size:,}) ...", flush=True)
            step = Step(f"one space, {size:,}", size, size, "")
            step.bulk_rows_per_s = load([(space, loaded, size)], rows, rng)
            loaded = size
            connection.close()
            measure(step, url=url, token=token, owner=user, space=space, questions=questions, vectors=vectors,
                    saves=args.saves, pgdata=data_dir / "pgdata")  # fmt: skip
            steps.append(step)

        print(
            f"many owners: emptying the memory tables, then {owners:,} owners x {PER_OWNER:,} ...", flush=True
        )
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE memories_memory, memories_source, memories_entity CASCADE")
        with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
            users = [user] + [
                user_sign_up(email=f"owner-{i}@example.com", password="bench-password-123")  # noqa: S106
                for i in range(1, owners)
            ]
        spaces = [space_default(owner=u) for u in users]
        # The measured owner's rows come last, so they are not the first pages of the table.
        plan = [(s, i * PER_OWNER, (i + 1) * PER_OWNER) for i, s in enumerate(spaces[1:], start=1)]
        plan.append((spaces[0], 0, PER_OWNER))
        step = Step(f"{owners:,} owners x {PER_OWNER:,}", PER_OWNER, owners * PER_OWNER, "")
        step.bulk_rows_per_s = load(plan, rows, rng)
        connection.close()
        measure(step, url=url, token=token, owner=user, space=space, questions=questions, vectors=vectors,
                saves=args.saves, pgdata=data_dir / "pgdata")  # fmt: skip
        steps.append(step)

    print_table(steps)
    svg(steps, args.plot)
    figures.write_text(json.dumps([asdict(s) for s in steps], indent=1))
    print()
    print(f"plot: {args.plot} (figures: {figures}; `--report` prints and plots them again)")
    print(
        f"data: synthetic notes (benchmarks/distractors.py), {min(REAL, len(rows.texts)):,} with their own "
        "all-MiniLM-L6-v2 vectors, any beyond reusing those with Gaussian noise (sigma 0.01, re-normalised)"
    )
    print(
        f"load average at the end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}; "
        f"{time.perf_counter() - started:.0f} s in all"
    )


if __name__ == "__main__":
    main()
