"""The web process's memory while open queries return huge cells.

    .venv/bin/python benchmarks/open_query_memory.py [--cell-mb 50] [--parallel 1 4] [--rounds 2]

Starts a throwaway service (`manage.py up` on a temporary data folder), then for each `--parallel`
value sends that many `POST /api/v1/query` at once, each selecting two cells of `--cell-mb`
megabytes (`repeat('x', n)`), `--rounds` times, while a thread samples the web process's resident
memory every 20 ms. Prints the web process's RSS before, its peak, and after (once every answer is
in), with each answer's status and what was dropped. An outside review saw two 50 MB cells take a
web process from 370 MB to 764 MB, and four parallel requests to 1.06 GB with 720 MB still held
after (issue 39); the cap on bytes is now applied by the server.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import running_service

MB = 1024 * 1024


def _web_process(url: str) -> psutil.Process:
    port = url.rsplit(":", 1)[1]
    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if "uvicorn" in cmdline and f"--port {port}" in cmdline:
            return process
    raise RuntimeError("the web process was not found")


class Sampler(threading.Thread):
    def __init__(self, process: psutil.Process) -> None:
        super().__init__(daemon=True)
        self.process = process
        self.peak = process.memory_info().rss
        self.running = True

    def run(self) -> None:
        while self.running:
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.02)


def _ask(url: str, token: str, sql: str) -> tuple[int, str]:
    response = httpx.post(
        f"{url}/api/v1/query",
        json={"sql": sql},
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
    )
    body: Any = response.json()
    if response.status_code == 200:
        return 200, ",".join(d["reason"] for d in body["drops"]) or f"{body['row_count']} rows"
    return response.status_code, str(body.get("error", {}).get("code"))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cell-mb", type=int, default=50)
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    n = args.cell_mb * MB
    sql = f"SELECT repeat('x', {n}) AS a, repeat('y', {n}) AS b"
    with running_service() as (url, token):
        web = _web_process(url)
        # One small query first, so what is measured is the queries, not the first import of the code.
        _ask(url, token, "SELECT 1")
        print(f"web process {web.pid}: {web.memory_info().rss / MB:.0f} MB after start and one small query")
        for parallel in args.parallel:
            for round_ in range(1, args.rounds + 1):
                before = web.memory_info().rss
                sampler = Sampler(web)
                sampler.start()
                with ThreadPoolExecutor(parallel) as pool:
                    answers = list(pool.map(lambda _: _ask(url, token, sql), range(parallel)))
                time.sleep(0.5)
                sampler.running = False
                sampler.join()
                after = web.memory_info().rss
                print(
                    f"parallel {parallel} round {round_}: RSS before {before / MB:.0f} MB, peak "
                    f"{sampler.peak / MB:.0f} MB, after {after / MB:.0f} MB; answers {answers}"
                )


if __name__ == "__main__":
    main()
