"""Recall throughput: requests per second and p50/p95 with 16 concurrent clients through the API.

    .venv/bin/python benchmarks/recall_throughput.py [--clients 16] [--seconds 30] [--web-processes 2]
                                                     [--memories 1000] [--keep]

It starts a throwaway service (`manage.py up` on a temporary data folder, with `--web-processes`
uvicorn processes through WEB_CONCURRENCY, as a deployment runs several), saves `--memories`
synthetic statements (benchmarks/recall_latency.py's templates) through the API and waits until
the worker has stored them all, then runs `--clients` threads, each with its own keep-alive
connection, that POST
`/api/v1/operations/recall` back to back for `--seconds`, in two phases:

- distinct queries: every request asks a question no request asked before (a query-embedding cache
  never hits), so each one pays for its embedding;
- repeated queries: the requests cycle through 50 questions, as agents that ask the same things do
  (a query-embedding cache, memories.embeddings.embed_query, hits once recall uses it).

Each phase starts with a few seconds of warm-up that are not counted. It prints requests per second
(completed calls over the phase's wall time), p50/p95/max latency, the CPU seconds this client
process spent, which the service did not have (the client runs on the same two cores), and the
service's CPU per call by part (web, worker, database; the warm-up's calls included), which moves
much less than the rates from run to run, so two builds compare better by it.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import cpu_seconds, cpu_spent, service_processes
from benchmarks.locomo import percentile
from benchmarks.memory_footprint import service_with_model
from benchmarks.recall_latency import EXTRAS, TEMPLATES, fill, queries

WARM_UP_SECONDS = 3.0


def run_phase(
    url: str, token: str, *, clients: int, seconds: float, questions: list[str]
) -> tuple[list[float], float, dict[str, int], int]:
    """(latencies of the counted calls, counted wall seconds, failures, all calls made, the warm-up's
    included) for `clients` threads."""
    counter = iter(range(10**9))
    lock = threading.Lock()
    latencies: list[float] = []
    failures: dict[str, int] = {}
    start_counting = time.perf_counter() + WARM_UP_SECONDS
    stop = start_counting + seconds

    def next_question() -> str:
        with lock:
            return questions[next(counter) % len(questions)]

    made = [0]

    def client_loop() -> None:
        mine: list[float] = []
        calls = 0
        with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {token}"}) as client:
            while True:
                started = time.perf_counter()
                if started >= stop:
                    break
                try:
                    response = client.post("/api/v1/operations/recall", json={"query": next_question()})
                    failure = "" if response.status_code == 200 else str(response.status_code)
                except httpx.HTTPError as exc:
                    failure = exc.__class__.__name__
                finished = time.perf_counter()
                calls += 1
                if failure:
                    with lock:
                        failures[failure] = failures.get(failure, 0) + 1
                elif started >= start_counting:
                    mine.append(finished - started)
        with lock:
            latencies.extend(mine)
            made[0] += calls

    threads = [threading.Thread(target=client_loop) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Calls still running at `stop` end after it; the counted wall time is up to the last of them.
    return latencies, max(seconds, time.perf_counter() - start_counting), failures, made[0]


def save_all(url: str, token: str, contents: list[str]) -> None:
    """Save every text through the API (8 at a time) and wait until the worker has stored them."""
    headers = {"Authorization": f"Bearer {token}"}

    def save(content: str) -> str:
        with httpx.Client(base_url=url, timeout=120, headers=headers) as client:
            response = client.post("/api/v1/operations/remember", json={"content": content})
            response.raise_for_status()
            return str(response.json()["job_id"])

    with ThreadPoolExecutor(8) as pool:
        jobs = list(pool.map(save, contents))
    deadline = time.monotonic() + 1800
    with httpx.Client(base_url=url, timeout=120, headers=headers) as client:
        while jobs:
            status = client.get(f"/api/v1/jobs/{jobs[-1]}").json()["status"]
            if status in ("succeeded", "failed"):
                jobs.pop()
            elif time.monotonic() > deadline:
                raise RuntimeError(f"{len(jobs)} saves still not stored")
            else:
                time.sleep(0.2)


def report(
    label: str,
    latencies: list[float],
    wall: float,
    failures: dict[str, int],
    cpu: float,
    service_cpu: dict[str, float],
    calls: int,
) -> None:
    """One phase's line; the service's CPU is per call made, the warm-up's included."""
    failed = ", ".join(f"{count} x {what}" for what, count in sorted(failures.items())) or "none"
    per_call = ", ".join(f"{part} {seconds * 1000 / calls:.1f}" for part, seconds in service_cpu.items())
    print(
        f"{label:<22} {len(latencies) / wall:6.1f} req/s   p50 {percentile(latencies, 50) * 1000:6.1f} ms"
        f"   p95 {percentile(latencies, 95) * 1000:6.1f} ms   max {max(latencies) * 1000:6.1f} ms"
        f"   ({len(latencies)} calls in {wall:.1f} s, failed: {failed}; client CPU {cpu:.1f} s;"
        f" service CPU ms/call: {per_call})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--web-processes", type=int, default=2)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--keep", action="store_true", help="keep the data folder and service.log afterwards")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    rng = random.Random(19)  # noqa: S311 - reproducible synthetic data, not secrets

    env = {"WEB_CONCURRENCY": str(args.web_processes)}
    with service_with_model(env=env, keep=args.keep) as (url, token, data_dir):
        if args.keep:
            print(f"data folder and service.log (kept): {data_dir}")
        print(f"saving {args.memories:,} memories through the API ...", flush=True)
        started = time.perf_counter()
        contents = [fill(rng.choice(TEMPLATES)[1], rng)[0] + rng.choice(EXTRAS) for _ in range(args.memories)]
        save_all(url, token, contents)
        print(f"  stored in {time.perf_counter() - started:.0f} s", flush=True)

        # Enough distinct questions that no request repeats one: a numbered variant of each template.
        needed = int(args.clients * (args.seconds + WARM_UP_SECONDS) * 400)
        templates = queries(500, rng)
        distinct = [f"{templates[i % len(templates)]} ({i})" for i in range(needed)]
        repeated = queries(50, rng)

        me = psutil.Process()
        print()
        print(
            f"recall through the API, {args.clients} concurrent clients, {args.web_processes} web"
            f" process(es), {args.memories:,} memories in the space, {args.seconds:.0f} s per phase:"
        )
        for label, questions in (("distinct queries", distinct), ("repeated queries (50)", repeated)):
            cpu_before = sum(me.cpu_times()[:2])
            service_before = cpu_seconds(service_processes(url))
            latencies, wall, failures, calls = run_phase(
                url, token, clients=args.clients, seconds=args.seconds, questions=questions
            )
            service = cpu_spent(service_before, cpu_seconds(service_processes(url)))
            report(label, latencies, wall, failures, sum(me.cpu_times()[:2]) - cpu_before, service, calls)


if __name__ == "__main__":
    main()
