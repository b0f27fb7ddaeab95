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


def save_and_wait(client: httpx.Client, i: int) -> float:
    started = time.perf_counter()
    response = client.post("/api/v1/operations/remember", json={"content": note(i)})
    response.raise_for_status()
    job_id = response.json()["job_id"]
    while True:
        status = client.get(f"/api/v1/jobs/{job_id}").json()["status"]
        if status == "succeeded":
            return time.perf_counter() - started
        if status == "failed":
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
                latencies = list(pool.map(lambda i: save_and_wait(client, i), range(args.saves)))
            elapsed = time.perf_counter() - started
    print(f"saves: {args.saves}  concurrency: {args.concurrency}")
    print(f"throughput: {args.saves / elapsed:.1f} saves/s (save -> job succeeded, end to end)")
    print(
        "save-to-recallable latency: "
        f"p50 {pct(latencies, 50) * 1000:.0f} ms, p95 {pct(latencies, 95) * 1000:.0f} ms, "
        f"max {max(latencies) * 1000:.0f} ms, mean {statistics.mean(latencies) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
