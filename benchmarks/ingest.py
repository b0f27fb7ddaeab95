"""Ingest benchmark: saves per second through the REST API and the worker, and
save-to-recallable latency.

    .venv/bin/python benchmarks/ingest.py [--saves 200] [--concurrency 8]

It starts a throwaway service (`manage.py up` on a temporary data folder: the
embedded PostgreSQL, the worker, the real model), creates a user and a token,
then POSTs short notes and polls each job until it has succeeded. A memory is
"recallable" when its job has succeeded: from then on it is in the database
with its embedding and full-text vector. Latency is measured per save from the
POST to the first poll that sees the job succeeded (polling every 20 ms).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import running_service

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


def save_and_wait(client: httpx.Client, i: int) -> tuple[float, float, float]:
    """(save-to-recallable, queue wait, processing) in seconds for one save."""
    started = time.perf_counter()
    response = client.post("/api/v1/operations/remember", json={"content": note(i)})
    response.raise_for_status()
    job_id = response.json()["job_id"]
    while True:
        polled = client.get(f"/api/v1/jobs/{job_id}")
        if polled.status_code != 200:
            raise RuntimeError(f"GET job answered {polled.status_code}: {polled.text}")
        job = polled.json()
        if job["status"] == "succeeded":
            latency = time.perf_counter() - started
            return (
                latency,
                _seconds_between(job["created_at"], job["started_at"]),
                _seconds_between(job["started_at"], job["finished_at"]),
            )
        if job["status"] == "failed":
            raise RuntimeError(f"job {job_id} failed")
        time.sleep(0.02)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with running_service() as (url, token):
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            save_and_wait(client, -1)  # warm-up: first request loads code paths
            started = time.perf_counter()
            with ThreadPoolExecutor(args.concurrency) as pool:
                timings = list(pool.map(lambda i: save_and_wait(client, i), range(args.saves)))
            elapsed = time.perf_counter() - started
    latencies = [t[0] for t in timings]
    waits = [t[1] for t in timings]
    work = [t[2] for t in timings]
    print(f"saves: {args.saves}  concurrency: {args.concurrency}")
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


if __name__ == "__main__":
    main()
