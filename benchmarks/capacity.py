"""Capacity model from fresh measurements: what one web process, one worker, one database core and one
GB hold, and what 10k, 100k and 1M active users need.

    .venv/bin/python benchmarks/capacity.py [--memories 5000] [--others 3] [--saves 200] [--recalls 200]
        [--saves-per-day 20] [--recalls-per-day 60] [--peak 3] [--utilisation 0.6]
        [--memories-per-user 5000] [--reuse]

It starts a throwaway service (`manage.py up`: embedded PostgreSQL, the worker, the real model), loads
one measured space of `--memories` memories among `--others` owners of as many (recall_latency.py's
loader: real embeddings, sources and entity links), then measures, from the processes' CPU counters
(benchmarks/_service.py, as ingest.py and recall_latency.py do):

- CPU per recall by part, one call at a time, every question one the service has not embedded yet
  (recall_latency.py's `measure`);
- CPU per save by part, `--saves` saves through REST at concurrency 8 until each job has succeeded
  (ingest.py's `save_and_wait` and observer: its 5 ms polls of the job rows are in the database's part);
- memory per process (PSS: shared pages shared out) of the web process and of the worker (its main
  process, pool child and beat);
- storage per memory: every table and index of the memory store over the memories it holds, and the
  HNSW index alone (what must stay in the database's memory for recall to be fast).

Then it prints the capacity table with the assumptions it used, and keeps the measurements in
var/benchmarks/capacity-last.json: `--reuse` prints the table again from them with other assumptions.
CPU figures are the service's own work; on a machine shared with other work they move much less than
latency does, but they are still a measurement of this machine: run it on the hardware you plan for.
docs/scale.md explains the model.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import psutil
from django.db.backends.utils import CursorWrapper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import (
    cpu_seconds,
    cpu_spent,
    service_pgdata,
    service_processes,
    use_service_database,
)
from benchmarks.ingest import save_and_wait, shared_observer
from benchmarks.locomo import service_with_data_dir
from benchmarks.recall_latency import distinct_queries, load, make_bases, measure, prewarm

DAY_SECONDS = 86_400
LAST = Path(__file__).resolve().parent.parent / "var" / "benchmarks" / "capacity-last.json"
USERS = (10_000, 100_000, 1_000_000)


@dataclass(frozen=True)
class Measurements:
    """CPU milliseconds per call by part, MB per process, bytes per memory."""

    recall_web_ms: float
    recall_db_ms: float
    save_web_ms: float
    save_worker_ms: float
    save_db_ms: float
    web_mb: float
    worker_mb: float
    bytes_per_memory: float
    hnsw_bytes_per_memory: float
    memories: int


@dataclass(frozen=True)
class Assumptions:
    saves_per_day: float
    recalls_per_day: float
    peak: float
    utilisation: float
    memories_per_user: int


@dataclass(frozen=True)
class Holds:
    """Active users one unit holds at the peak rate, with `utilisation` of its core used."""

    web: float
    worker: float
    db_core: float
    # A database core doing the saves alone: what the primary must hold once reads are on replicas.
    db_core_saves: float
    storage_gb: float
    index_gb: float


def holds(m: Measurements, a: Assumptions) -> Holds:
    """Active users each unit holds. A user's peak rate is their daily calls times `peak` spread over a
    day; a unit is one core (a web or worker process is one Python process: one core at a time) kept at
    `utilisation`."""
    saves = a.saves_per_day * a.peak / DAY_SECONDS
    recalls = a.recalls_per_day * a.peak / DAY_SECONDS
    core_ms = 1000 * a.utilisation
    per_user_storage = a.memories_per_user * m.bytes_per_memory
    return Holds(
        web=core_ms / (saves * m.save_web_ms + recalls * m.recall_web_ms),
        worker=core_ms / (saves * m.save_worker_ms),
        db_core=core_ms / (saves * m.save_db_ms + recalls * m.recall_db_ms),
        db_core_saves=core_ms / (saves * m.save_db_ms),
        storage_gb=1e9 / per_user_storage,
        index_gb=1e9 / (a.memories_per_user * m.hnsw_bytes_per_memory),
    )


def table(m: Measurements, a: Assumptions) -> str:
    """The capacity table, its measurements and its assumptions, as printed."""
    h = holds(m, a)
    lines = [
        "measured (this machine, fresh):",
        f"  CPU per recall: web {m.recall_web_ms:.1f} ms, database {m.recall_db_ms:.1f} ms",
        f"  CPU per save:   web {m.save_web_ms:.1f} ms, worker {m.save_worker_ms:.1f} ms,"
        f" database {m.save_db_ms:.1f} ms",
        f"  memory (PSS):   web process {m.web_mb:.0f} MB, worker {m.worker_mb:.0f} MB",
        f"  storage:        {m.bytes_per_memory / 1024:.1f} KiB per memory (tables and indexes, over"
        f" {m.memories:,} memories), of which the HNSW index {m.hnsw_bytes_per_memory / 1024:.1f} KiB",
        "",
        "assumptions (flags of this command):",
        f"  an active user saves {a.saves_per_day:g} and recalls {a.recalls_per_day:g} times a day;"
        f" the peak hour runs at {a.peak:g}x the day's mean rate;",
        f"  each core kept at {a.utilisation:.0%} busy at the peak; {a.memories_per_user:,} memories"
        " kept per user;",
        f"  recall's CPU as measured on a space of {m.memories:,} memories in all (see --memories)",
        "",
        "one unit holds (active users at the peak):",
        f"  one web process (one core, {m.web_mb:.0f} MB)     {h.web:>12,.0f}",
        f"  one worker (one core, {m.worker_mb:.0f} MB)           {h.worker:>12,.0f}",
        f"  one database core                       {h.db_core:>12,.0f}",
        f"  one database core, saves only (primary) {h.db_core_saves:>12,.0f}",
        f"  one GB of database storage              {h.storage_gb:>12,.0f}"
        f"   ({1e9 / m.bytes_per_memory:,.0f} memories)",
        f"  one GB of database memory (HNSW index)  {h.index_gb:>12,.0f}",
        "",
        f"{'active users':>14} {'web procs':>10} {'workers':>8} {'db cores':>9} {'of which saves':>15}"
        f" {'storage GB':>11} {'index GB':>9} {'web+worker RAM GB':>18}",
    ]
    for users in USERS:
        webs = max(2, math.ceil(users / h.web))
        workers = max(2, math.ceil(users / h.worker))
        ram = (webs * m.web_mb + workers * m.worker_mb) / 1000
        lines.append(
            f"{users:>14,} {webs:>10,} {workers:>8,} {math.ceil(users / h.db_core):>9,}"
            f" {math.ceil(users / h.db_core_saves):>15,} {users / h.storage_gb:>11,.1f}"
            f" {users / h.index_gb:>9,.1f} {ram:>18,.1f}"
        )
    lines += [
        "",
        "at least two web processes and two workers each (one may fail); database cores are the",
        "primary's and its replicas' together: recall's share can move to read replicas, the saves'",
        "cores stay on the primary (or, past one server, on Citus shards by owner: docs/scale.md);",
        "the index GB should fit in the database servers' memory for recall to stay fast.",
    ]
    return "\n".join(lines)


def _pss_mb(processes: list[psutil.Process]) -> float:
    total = 0
    for process in processes:
        try:
            total += process.memory_full_info().pss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total / 1e6


def _storage(cursor: CursorWrapper) -> tuple[int, int, int]:
    """(memories, bytes of every memory-store table with its indexes and TOAST, bytes of HNSW indexes)."""
    cursor.execute("SELECT count(*) FROM memories_memory")
    (count,) = cursor.fetchone()
    cursor.execute(
        "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE c.relkind = 'r' AND n.nspname = 'public' AND c.relname LIKE 'memories\\_%'"
    )
    (total,) = cursor.fetchone()
    cursor.execute(
        "SELECT coalesce(sum(pg_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_am am ON am.oid = c.relam"
        " WHERE am.amname = 'hnsw'"
    )
    (hnsw,) = cursor.fetchone()
    return int(count), int(total), int(hnsw)


def measure_service(args: argparse.Namespace) -> Measurements:
    with service_with_data_dir() as (url, _token, data_dir):
        use_service_database(data_dir)
        from django.db import connection

        from accounts.models import User
        from accounts.services import pat_create
        from memories.services.account import user_sign_up

        users: list[User] = [
            user_sign_up(email=f"capacity-{i}@example.com", password="bench-password-123")  # noqa: S106
            for i in range(1 + args.others)
        ]
        token = pat_create(user=users[0], name="capacity", scopes=["memory:read", "memory:write"])[1]
        rng = random.Random(42)  # noqa: S311 - reproducible synthetic data, not secrets
        print(f"loading {args.memories:,} memories for each of {1 + args.others} owners ...", flush=True)
        load(owners=[(u, args.memories) for u in users], bases=make_bases(args.distinct, rng), rng=rng)
        with connection.cursor() as cursor:
            prewarm(cursor)
        connection.close()

        fresh = iter(distinct_queries(args.recalls + 20, random.Random(9191)))  # noqa: S311
        warm_up = [{"query": next(fresh)} for _ in range(20)]
        questions = [{"query": next(fresh)} for _ in range(args.recalls)]
        with httpx.Client(base_url=url, timeout=120, headers={"Authorization": f"Bearer {token}"}) as client:
            measure(client, token, warm_up)
            print(f"recalls: {args.recalls}, one at a time ...", flush=True)
            recalled = measure(client, token, questions)

            parts = service_processes(url)
            observe = shared_observer(service_pgdata(parts))
            save_and_wait(client, -1, observe)  # warm-up
            print(f"saves: {args.saves} at concurrency 8 ...", flush=True)
            before = cpu_seconds(service_processes(url))
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda i: save_and_wait(client, i, observe), range(args.saves)))
            spent = cpu_spent(before, cpu_seconds(service_processes(url)))
            saved = {part: seconds * 1000 / args.saves for part, seconds in spent.items()}

            parts = service_processes(url)
            web_mb, worker_mb = _pss_mb(parts["web"]), _pss_mb(parts["worker"])
        with connection.cursor() as cursor:
            count, total, hnsw = _storage(cursor)
        connection.close()
    return Measurements(
        recall_web_ms=recalled.web_cpu_ms,
        recall_db_ms=recalled.database_cpu_ms,
        save_web_ms=saved["web"],
        save_worker_ms=saved["worker"],
        save_db_ms=saved["database"],
        web_mb=web_mb,
        worker_mb=worker_mb,
        bytes_per_memory=total / count,
        hnsw_bytes_per_memory=hnsw / count,
        memories=count,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=5000, help="in the measured space")
    parser.add_argument("--others", type=int, default=3, help="other owners with as many memories")
    parser.add_argument("--distinct", type=int, default=2000, help="sentences embedded with the real model")
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--recalls", type=int, default=200)
    parser.add_argument("--saves-per-day", type=float, default=20)
    parser.add_argument("--recalls-per-day", type=float, default=60)
    parser.add_argument("--peak", type=float, default=3, help="peak hour's rate over the day's mean")
    parser.add_argument("--utilisation", type=float, default=0.6, help="of each core at the peak")
    parser.add_argument("--memories-per-user", type=int, default=5000)
    parser.add_argument(
        "--reuse", action="store_true", help=f"the last run's measurements ({LAST}) with these assumptions"
    )
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    started = time.perf_counter()
    if args.reuse:
        measured = Measurements(**json.loads(LAST.read_text()))
        print(f"measurements of {time.ctime(LAST.stat().st_mtime)} ({LAST})")
    else:
        measured = measure_service(args)
        LAST.parent.mkdir(parents=True, exist_ok=True)
        LAST.write_text(json.dumps(asdict(measured), indent=1))
    assumptions = Assumptions(
        saves_per_day=args.saves_per_day,
        recalls_per_day=args.recalls_per_day,
        peak=args.peak,
        utilisation=args.utilisation,
        memories_per_user=args.memories_per_user,
    )
    print()
    print(table(measured, assumptions))
    if not args.reuse:
        elapsed = time.perf_counter() - started
        print(f"\n(measured in {elapsed:.0f} s; the machine has {psutil.cpu_count()} cores)")


if __name__ == "__main__":
    main()
