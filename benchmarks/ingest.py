"""Ingest benchmark: saves per second through the REST API and the worker, and
save-to-recallable latency.

    .venv/bin/python benchmarks/ingest.py [--saves 200] [--concurrency 8] [--observe shared|database|api]
                                          [--owners 1]
    .venv/bin/python benchmarks/ingest.py --service URL --data-dir DIR --owner EMAIL [--first N]

It starts a throwaway service (`manage.py up` on a temporary data folder: the
embedded PostgreSQL, the worker, the real model), creates a user and a token,
then each of `--concurrency` clients POSTs a short note and waits until its job
has succeeded before the next (a closed loop). With `--owners N` the notes are
saved by N users in turn (note i by user i mod N), as a service with many people
saving at once; the default is one user. A memory is "recallable" when its
job has succeeded: from then on it is in the database with its embedding and
full-text vector. Latency is measured per save from the POST to the first poll
that sees the job succeeded: one reader of every waiting job's row every 5 ms
(default, since 2026-12-04), each client's read of its own job's row every 5 ms
(`--observe database`, whose eight readers' queries took CPU from the service on
the same cores), or GET /api/v1/jobs/{id} every 20 ms (`--observe api`, the way
before 2026-12-02, whose polls cost the web process more CPU than the saves).

With `--service` it saves instead into a service already running on a kept data folder (`manage.py
up` with `DEEPRECALL_VAR_DIR=DIR` and `RATE_LIMIT_SAVE=off`) as EMAIL: into the 100,000-memory
space that `recall_latency.py --keep` leaves (latency-0@example.com), say, to measure saves into a
big index. `--first` numbers the notes, so that a second run saves new notes, not duplicates.

It prints how long the POST took to answer (the web's part of the latency), and how many claims
ran the saves: a worker process takes the queued short saves in a batch, whose jobs share their
process and start time, so saves per claim is the mean batch size.

It also prints the CPU time the service spent per save, by part (web, worker, database), read from
the processes' counters over the timed run: it moves much less than latency when other work loads
the machine, so two runs on a busy machine compare better by it. Beside it, the CPU the benchmark's
own clients spent per save and how busy the machine's cores were over the run: the clients share
the cores with the service, so a rate with the cores near 100 % busy is bound by the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psutil
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import (
    cpu_seconds,
    cpu_spent,
    running_service,
    service_pgdata,
    service_processes,
    use_service_database,
)

NOTES = [
    "I moved to {city} last month and I love the coffee there.",
    "My sister {name} is getting married next June in {city}.",
    "Yesterday I had lunch with {name} from the {team} team.",
    "I prefer window seats on long flights, especially to {city}.",
    "Remind me to call {name} about the {team} budget next Friday.",
]
CITIES = ["Lisbon", "Berlin", "Osaka", "Nairobi", "Montreal", "Lima", "Oslo", "Hanoi"]
NAMES = ["Maya", "Tomas", "Aiko", "Kwame", "Lena", "Omar", "Priya", "Jonas"]
TEAMS = ["design", "platform", "finance", "research"]


def note(i: int) -> str:
    return (
        NOTES[i % len(NOTES)].format(
            city=CITIES[i % len(CITIES)], name=NAMES[(i // 3) % len(NAMES)], team=TEAMS[i % len(TEAMS)]
        )
        + f" (note {i})"
    )


def _seconds_between(start: str | None, end: str | None) -> float:
    if not start or not end:
        return 0.0
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def save_and_wait(client: httpx.Client, i: int, observe: Observer) -> tuple[float, float, float, float, str]:
    """(save-to-recallable, queue wait, processing, the POST's answer) in seconds for one save, and
    the claim it ran in (its process and start: the saves of one batch share it)."""
    started = time.perf_counter()
    response = client.post("/api/v1/operations/remember", json={"content": note(i)})
    response.raise_for_status()
    answered = time.perf_counter() - started
    job = observe(client, response.json()["job_id"])
    latency = time.perf_counter() - started
    return (
        latency,
        _seconds_between(job["created_at"], job["started_at"]),
        _seconds_between(job["started_at"], job["finished_at"]),
        answered,
        f"{job.get('claimed_by')} {job['started_at']}",
    )


Observer = Callable[[httpx.Client, str], dict[str, Any]]


def observe_api(client: httpx.Client, job_id: str) -> dict[str, Any]:
    """Poll GET /api/v1/jobs/{id} every 20 ms until the job has succeeded."""
    while True:
        polled = client.get(f"/api/v1/jobs/{job_id}")
        if polled.status_code != 200:
            raise RuntimeError(f"GET job answered {polled.status_code}: {polled.text}")
        job = polled.json()
        if job["status"] == "succeeded":
            return dict(job)
        if job["status"] == "failed":
            raise RuntimeError(f"job {job_id} failed")
        time.sleep(0.02)


def database_observer(pgdata: Path) -> Observer:
    """Poll the job's row in the service's database every 5 ms until it has succeeded: what recall
    reads, at a fraction of an API poll's cost (one indexed read in PostgreSQL, no request)."""
    lines = (pgdata / "postmaster.pid").read_text().splitlines()
    conninfo = f"host={lines[4].strip()} port={int(lines[3])} user=postgres dbname=deeprecall"
    local = threading.local()

    def observe(client: httpx.Client, job_id: str) -> dict[str, Any]:
        if not hasattr(local, "conn"):
            local.conn = psycopg.connect(conninfo, autocommit=True)
        while True:
            row = local.conn.execute(
                "SELECT status, created_at, started_at, finished_at, claimed_by"
                " FROM memories_job WHERE id = %s",
                (job_id,),
            ).fetchone()
            if row is not None and row[0] == "succeeded":
                return {
                    "created_at": row[1].isoformat(),
                    "started_at": row[2].isoformat(),
                    "finished_at": row[3].isoformat(),
                    "claimed_by": row[4],
                }
            if row is not None and row[0] == "failed":
                raise RuntimeError(f"job {job_id} failed")
            time.sleep(0.005)

    return observe


def shared_observer(pgdata: Path) -> Observer:
    """One thread reads the rows of every job a client is waiting for, in one query every 5 ms, and
    wakes each client when its job has succeeded: the same 5 ms granularity as database_observer at
    an eighth of its queries with eight clients, whose polls otherwise take CPU from the service
    on the same two cores."""
    lines = (pgdata / "postmaster.pid").read_text().splitlines()
    conninfo = f"host={lines[4].strip()} port={int(lines[3])} user=postgres dbname=deeprecall"
    lock = threading.Lock()
    waiting: dict[str, tuple[threading.Event, dict[str, Any]]] = {}

    def poll() -> None:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            while True:
                with lock:
                    ids = list(waiting)
                if ids:
                    rows = conn.execute(
                        "SELECT id::text, status, created_at, started_at, finished_at, claimed_by"
                        " FROM memories_job WHERE id = ANY(%s::uuid[]) AND status IN ('succeeded', 'failed')",
                        (ids,),
                    ).fetchall()
                    for job_id, status, created, started, finished, claimed_by in rows:
                        with lock:
                            done, result = waiting.pop(job_id)
                        if status == "succeeded":
                            result.update(
                                created_at=created.isoformat(),
                                started_at=started.isoformat(),
                                finished_at=finished.isoformat(),
                                claimed_by=claimed_by,
                            )
                        done.set()
                time.sleep(0.005)

    threading.Thread(target=poll, daemon=True).start()

    def observe(client: httpx.Client, job_id: str) -> dict[str, Any]:
        done = threading.Event()
        result: dict[str, Any] = {}
        with lock:
            waiting[job_id] = (done, result)
        if not done.wait(120):
            raise RuntimeError(f"job {job_id} did not finish in 120 s")
        if not result:
            raise RuntimeError(f"job {job_id} failed")
        return result

    return observe


@contextmanager
def existing_service(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    """The running service of --service, and a new write token of --owner (made in its database)."""
    use_service_database(args.data_dir)
    from django.db import connection

    from accounts.models import User
    from accounts.services import pat_create

    owner = User.objects.get(email=args.owner)
    token = pat_create(user=owner, name="ingest benchmark", scopes=["memory:read", "memory:write"])[1]
    connection.close()
    yield args.service, token


def more_owners(url: str, count: int) -> list[str]:
    """Write tokens of `count` new users of the throwaway service at `url`, made in its database."""
    use_service_database(service_pgdata(service_processes(url)).parent)
    from django.db import connection
    from django.test import override_settings

    from accounts.services import pat_create
    from memories.services.account import user_sign_up

    tokens = []
    # Benchmark users never sign in with a password: a fast hasher makes them quick.
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        for n in range(count):
            user = user_sign_up(email=f"ingest-{n}@example.com", password="bench-password-123")  # noqa: S106
            tokens.append(pat_create(user=user, name="ingest", scopes=["memory:read", "memory:write"])[1])
    connection.close()
    return tokens


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument(
        "--observe",
        choices=["shared", "database", "api"],
        default="shared",
        help="how a client learns its save is recallable: one reader of every waiting job's row every 5 ms "
        "(shared, the default), each client reading its own job's row every 5 ms (database, the default "
        "until 2026-12-04), or GET /api/v1/jobs/{id} every 20 ms, whose polls cost the web process more "
        "CPU than the saves (see docs/pipeline.md)",
    )
    parser.add_argument("--owners", type=int, default=1, help="users saving in turn (note i by user i mod N)")
    parser.add_argument("--service", help="URL of a service already running on --data-dir")
    parser.add_argument("--data-dir", type=Path, help="the data folder of --service")
    parser.add_argument("--owner", default="latency-0@example.com", help="with --service: who saves")
    parser.add_argument("--first", type=int, default=0, help="number of the first note")
    args = parser.parse_args()
    if args.service and not args.data_dir:
        parser.error("--service needs --data-dir")
    with running_service() if not args.service else existing_service(args) as (url, token):
        tokens = [token, *(more_owners(url, args.owners - 1) if args.owners > 1 else [])]
        with ExitStack() as stack:
            clients = [
                stack.enter_context(
                    httpx.Client(base_url=url, headers={"Authorization": f"Bearer {each}"}, timeout=60)
                )
                for each in tokens
            ]
            client = clients[0]
            parts = service_processes(url)
            observers = {
                "api": lambda _: observe_api,
                "database": database_observer,
                "shared": shared_observer,
            }
            observe = observers[args.observe](service_pgdata(parts))
            save_and_wait(client, args.first - 1, observe)  # warm-up: first request loads code paths
            # Processes are read once the service is warm (the database's backends are pooled).
            parts = service_processes(url)
            cpu_before = cpu_seconds(parts)
            client_before, machine_before = time.process_time(), psutil.cpu_times()
            started = time.perf_counter()
            with ThreadPoolExecutor(args.concurrency) as pool:
                numbers = range(args.first, args.first + args.saves)
                timings = list(
                    pool.map(lambda i: save_and_wait(clients[i % len(clients)], i, observe), numbers)
                )
            elapsed = time.perf_counter() - started
            client_cpu, machine_after = time.process_time() - client_before, psutil.cpu_times()
            # Read again: processes started during the run (database backends) count too.
            cpu_after = cpu_seconds(service_processes(url))
    latencies = [t[0] for t in timings]
    waits = [t[1] for t in timings]
    work = [t[2] for t in timings]
    answers = [t[3] for t in timings]
    batches = Counter(t[4] for t in timings)
    print(
        f"saves: {args.saves}  concurrency: {args.concurrency}  owners: {args.owners}  "
        f"observed through: {args.observe}"
    )
    print(f"throughput: {args.saves / elapsed:.1f} saves/s (save -> job succeeded, end to end)")
    print(
        "save-to-recallable latency: "
        f"p50 {pct(latencies, 50) * 1000:.0f} ms, p95 {pct(latencies, 95) * 1000:.0f} ms, "
        f"max {max(latencies) * 1000:.0f} ms, mean {statistics.mean(latencies) * 1000:.0f} ms"
    )
    print(
        f"of which queue wait p50 {pct(waits, 50) * 1000:.0f} ms / p95 {pct(waits, 95) * 1000:.0f} ms, "
        f"processing p50 {pct(work, 50) * 1000:.0f} ms / p95 {pct(work, 95) * 1000:.0f} ms"
    )
    print(
        f"the POST answered in p50 {pct(answers, 50) * 1000:.0f} ms / p95 {pct(answers, 95) * 1000:.0f} ms; "
        f"{len(batches)} claims ran the saves, {args.saves / len(batches):.1f} saves each on average"
        + (" (api observer: claims not read)" if args.observe == "api" else "")
    )
    spent = {part: seconds * 1000 / args.saves for part, seconds in cpu_spent(cpu_before, cpu_after).items()}
    print(
        f"CPU per save ({'API polls' if args.observe == 'api' else 'database polls'} included): "
        + ", ".join(f"{part} {ms:.1f} ms" for part, ms in spent.items())
        + f", total {sum(spent.values()):.1f} ms"
    )
    # The clients run on the same cores as the service: what they spent, and how busy the machine
    # was, say whether a rate was bound by the cores or by waiting.
    idle = sum(getattr(machine_after, f) - getattr(machine_before, f) for f in ("idle", "iowait"))
    busy = sum(machine_after) - sum(machine_before) - idle
    print(
        f"this benchmark's clients: {client_cpu * 1000 / args.saves:.1f} ms of CPU per save; "
        f"the machine's {psutil.cpu_count()} cores were {100 * busy / (busy + idle):.0f} % busy"
    )


if __name__ == "__main__":
    main()
