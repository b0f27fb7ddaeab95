"""Import speed and quality: one person's LoCoMo conversation imported (one `POST /api/v1/imports`)
until every turn is recallable, beside the same turns saved one by one through REST and beside mem0
OSS `add(infer=False)`, in one run.

    .venv/bin/python benchmarks/imports.py [--conversations 26] [--no-mem0] [--no-per-save]

What runs (a throwaway service, `benchmarks/locomo.py`'s; one user per path and conversation):
- import: the conversation's turns as a mem0 `get_all` file (each turn's id its dia id, content
  "Speaker: text" as the per-save path saves it, `created_at` its session's date, `run_id` its
  session), posted once; timed from the POST until the import's status is `succeeded` (every item
  committed, so recallable); CPU of the whole service tree (web + worker + PostgreSQL) over it;
- per save: `benchmarks/locomo.py`'s ingest exactly (one REST save per turn, session ids), timed
  until every job finished, with its CPU the same way;
- mem0: `benchmarks/peers/run.py`'s runner (`infer=False`, local Qdrant, the same embedding
  weights), its `add` calls one after another, in process, and its process's CPU over them.
Then every question of categories 1-4 is asked of each through recall (top_k 20) and scored as
`benchmarks/locomo.py` scores it (a memory counts for the turn it came from: for the import, the
item id its source keeps, read from the account export).

The machine is shared: the three paths run one after another in the same run, so compare them
with each other, not with figures from another run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import cpu_seconds, cpu_spent, service_processes
from benchmarks.locomo import (
    DATA_DIR,
    Conversation,
    ask,
    create_users,
    ingest,
    load_conversation,
    service_with_data_dir,
    wait_for_jobs,
)


def mem0_file(conversation: Conversation) -> bytes:
    """The conversation as mem0's get_all returns memories (memories/pipeline/import_formats.py)."""
    return json.dumps(
        {
            "results": [
                {
                    "id": turn.dia_id,
                    "memory": turn.content,
                    "created_at": turn.occurred_at.isoformat(),
                    "run_id": turn.session_id,
                    "metadata": None,
                }
                for turn in conversation.turns
            ]
        }
    ).encode()


def import_run(client: httpx.Client, url: str, conversation: Conversation) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {conversation.token}"}
    data = mem0_file(conversation)
    cpu_before = cpu_seconds(service_processes(url))
    started = time.perf_counter()
    response = client.post(
        "/api/v1/imports", files={"file": ("locomo.json", data, "application/json")}, headers=headers
    )
    response.raise_for_status()
    made = response.json()["import"]
    while made["status"] in ("queued", "running"):
        time.sleep(0.2)
        made = client.get(f"/api/v1/imports/{made['id']}", headers=headers).json()["import"]
    seconds = time.perf_counter() - started
    parts = cpu_spent(cpu_before, cpu_seconds(service_processes(url)))
    # Which turn each memory came from: the item id its source keeps (source_ref), from the export.
    sources: dict[str, str] = {}
    export = client.get("/api/v1/export", headers=headers)
    export.raise_for_status()
    # JSON Lines: one record per "\n" (httpx's iter_lines also splits at U+2028 and U+0085, which
    # JSON leaves unescaped in a record's text).
    for line in export.content.split(b"\n"):
        if line.strip():
            record = json.loads(line)
            if record["type"] == "source":
                sources[record["id"]] = record["source_ref"]
            elif record["type"] == "memory" and record["provenance"]["source_id"] in sources:
                conversation.memory_turn[record["id"]] = sources[record["provenance"]["source_id"]]
    return {"import": made, "seconds": seconds, "cpu": sum(parts.values()), "parts": parts}


def per_save_run(client: httpx.Client, url: str, conversation: Conversation) -> dict[str, Any]:
    cpu_before = cpu_seconds(service_processes(url))
    started = time.perf_counter()
    jobs = ingest(client, conversation, session_ids=True)
    wait_for_jobs(client, conversation, jobs)
    seconds = time.perf_counter() - started
    cpu = sum(cpu_spent(cpu_before, cpu_seconds(service_processes(url))).values())
    return {"seconds": seconds, "cpu": cpu}


def r_at(scores: list[tuple[int, dict[int, float]]], k: int = 10) -> float:
    return statistics.mean(r[k] for _, r in scores)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", nargs="+", default=["26"])
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--no-mem0", action="store_true")
    parser.add_argument("--no-per-save", action="store_true")
    args = parser.parse_args()

    rows: list[tuple[str, int, float, float, float]] = []
    with service_with_data_dir() as (url, _token, data_dir):
        names = args.conversations
        imported = [load_conversation(args.data_dir / f"{n}.json") for n in names]
        saved = [load_conversation(args.data_dir / f"{n}.json") for n in names]
        tokens = create_users(
            data_dir, [f"import-{n}@example.com" for n in names] + [f"save-{n}@example.com" for n in names]
        )
        for conversation, token in zip(imported + saved, tokens, strict=True):
            conversation.token = token
        with httpx.Client(base_url=url, timeout=300) as client:
            # The model loaded and the pages warm before either path is timed.
            ask(client, imported[0], 20, [])
            for conversation in imported:
                result = import_run(client, url, conversation)
                made = result["import"]
                print(
                    f"import {conversation.name}: {made['status']}, items {made['items']}, "
                    f"skipped {made['skipped_reasons']}, {result['seconds']:.1f} s",
                    file=sys.stderr,
                )
                # Where the import's CPU went, a turn's share by part (which part to work on next).
                shares = ", ".join(
                    f"{part} {seconds / len(conversation.turns) * 1000:.1f}"
                    for part, seconds in sorted(result["parts"].items())
                )
                print(f"import {conversation.name}: CPU ms/turn by part: {shares}", file=sys.stderr)
                scores = ask(client, conversation, 20, [])
                turns = len(conversation.turns)
                rows.append(
                    (f"import {conversation.name}", turns, result["seconds"], result["cpu"], r_at(scores))
                )
            if not args.no_per_save:
                for conversation in saved:
                    result = per_save_run(client, url, conversation)
                    scores = ask(client, conversation, 20, [])
                    turns = len(conversation.turns)
                    rows.append(
                        (
                            f"per save {conversation.name}",
                            turns,
                            result["seconds"],
                            result["cpu"],
                            r_at(scores),
                        )
                    )
    if not args.no_mem0:
        from benchmarks.peers.run import mem0_venv, run_mem0

        conversations = [load_conversation(args.data_dir / f"{n}.json") for n in args.conversations]
        result = run_mem0(mem0_venv(), conversations, "default")
        r10 = statistics.mean(q["recall"]["10"] for q in result["questions"])
        rows.append(
            ("mem0 infer=False", result["turns"], result["ingest_seconds"], result["ingest_cpu_seconds"], r10)
        )

    print()
    print(f"{'path':<22}{'turns':>7}{'seconds':>9}{'turns/s':>9}{'CPU ms/turn':>13}{'R@10':>8}")
    for name, turns, seconds, cpu, r10 in rows:
        cpu_text = f"{cpu / turns * 1000:.1f}"
        print(f"{name:<22}{turns:>7}{seconds:>9.1f}{turns / seconds:>9.1f}{cpu_text:>13}{r10:>8.3f}")
    base = rows[0]
    for name, turns, seconds, _, _ in rows[1:]:
        print(f"import / {name}: {(base[1] / base[2]) / (turns / seconds):.2f}x the turns a second")
    print("(CPU: ours the whole service tree, web + worker + PostgreSQL; mem0's its one process.)")


if __name__ == "__main__":
    main()
