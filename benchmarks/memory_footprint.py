"""Memory of every process of a running service, and the embedding model ONNX Runtime vs torch.

    .venv/bin/python benchmarks/memory_footprint.py [--saves 30] [--recalls 50] [--runs 200]

Part 1, the model alone: each runtime in a fresh child process (so neither's libraries are in the
other's figures): the resident memory after loading and after embedding, then milliseconds per call
at batch 1 (one short query, as recall embeds) and batch 32 (short notes and long texts cut at 256
tokens, as the worker embeds), one thread as the service runs it.

Part 2, the service: a throwaway `manage.py up` (temporary data folder), warmed up with `--saves`
saves (a few of them long) that the worker embeds, and `--recalls` recalls; then RSS, PSS (shared
pages split between the processes that map them) and USS (pages only this process has) of the
supervisor, the web process, the worker and its children and the embedded PostgreSQL, and whether
torch's library is mapped in each one.

The ONNX file is converted once into the checkout's var/models/ (memories/onnx_model.py) and
copied into the throwaway data folder, so the service does not convert it again at every run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import _service
from benchmarks._service import ROOT, running_service
from benchmarks.locomo import percentile

MODEL_FILES = ("all-MiniLM-L6-v2.onnx", "all-MiniLM-L6-v2.json")

# Runs in a child process per runtime; prints one JSON line.
MODEL_PROBE = textwrap.dedent(
    """
    import json, os, sys, time
    import psutil
    runtime, runs = sys.argv[1], int(sys.argv[2])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    django.setup()
    process = psutil.Process()
    before = process.memory_info().rss
    if runtime == "onnx":
        from memories import embeddings
        encode = embeddings.get_model().encode
    else:
        os.environ["HF_HUB_OFFLINE"] = "1"
        import torch
        from sentence_transformers import SentenceTransformer
        from memories import onnx_model
        torch.set_num_threads(1)
        model = SentenceTransformer(str(onnx_model.source_dir()), device="cpu")
        def encode(texts):
            return model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    loaded = process.memory_info().rss
    short = [f"where did Mara go on holiday in {year}, and with whom?" for year in range(1900, 2100)]
    notes = [f"Note {i}: moved the budget meeting with Tomas to {i % 12 + 1} pm." for i in range(32)]
    sentence = "Paragraph {}, sentence {}: the project review covered budgets and risks."
    long = [" ".join(sentence.format(i, j) for j in range(40)) for i in range(32)]
    def timed(calls):
        times = []
        for texts in calls:
            started = time.perf_counter()
            encode(texts)
            times.append(time.perf_counter() - started)
        return times
    for texts in ([short[0]], notes, long[:4]):
        encode(texts)  # warm-up
    result = {
        "runtime": runtime,
        "rss_start": before, "rss_loaded": loaded,
        "batch1": timed([[q] for q in short[:runs]]),
        "batch32_notes": timed([notes] * max(5, runs // 20)),
        "batch32_long": timed([long] * max(3, runs // 50)),
        "rss_after": process.memory_info().rss,
        "torch": "torch" in sys.modules,
    }
    print(json.dumps(result))
    """
)


def ensure_converted() -> Path:
    """The checkout's converted model folder (converting it now if needed, in a child process)."""
    subprocess.run(
        [sys.executable, "-c", "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE',"
         " 'config.settings'); django.setup(); from memories import embeddings; embeddings.get_model()"],
        cwd=ROOT, check=True,
    )  # fmt: skip
    return ROOT / "var" / "models"


@contextmanager
def service_with_model(
    *, env: dict[str, str] | None = None, keep: bool = False
) -> Iterator[tuple[str, str, Path]]:
    """running_service() with the checkout's converted model copied into its data folder first.

    Also yields the data folder. `env` is added to the service's environment.
    """
    models = ensure_converted()
    made: list[str] = []
    real_mkdtemp = tempfile.mkdtemp

    def seeded_mkdtemp(*args: Any, **kwargs: Any) -> str:
        path = real_mkdtemp(*args, **kwargs)
        made.append(path)
        (Path(path) / "models").mkdir()
        for name in MODEL_FILES:
            shutil.copy(models / name, Path(path) / "models" / name)
        return path

    with ExitStack() as stack:
        # running_service() keeps its data folder to itself; its one mkdtemp is where to seed it.
        with (
            mock.patch.object(_service.tempfile, "mkdtemp", seeded_mkdtemp),
            mock.patch.dict(_service.os.environ, env or {}),
        ):
            url, token = stack.enter_context(running_service(keep=keep))
        yield url, token, Path(made[0])


def _probe(runtime: str, runs: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", MODEL_PROBE, runtime, str(runs)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _ms(values: list[float]) -> str:
    return f"p50 {percentile(values, 50) * 1000:7.1f} ms  p95 {percentile(values, 95) * 1000:7.1f} ms"


def model_alone(runs: int) -> None:
    print("the model alone, one thread, each runtime in a fresh process (Django set up first):")
    for runtime in ("onnx", "torch"):
        r = _probe(runtime, runs)
        label = "ONNX Runtime" if runtime == "onnx" else "torch + sentence-transformers"
        print(
            f"  {label:<30} RSS {r['rss_start'] / 1e6:5.0f} MB before, {r['rss_loaded'] / 1e6:5.0f} MB"
            f" loaded, {r['rss_after'] / 1e6:5.0f} MB after the runs (torch imported: {r['torch']})"
        )
        for key, what in (
            ("batch1", "batch 1, short query"),
            ("batch32_notes", "batch 32, short notes"),
            ("batch32_long", "batch 32, 256-token texts"),
        ):
            times = r[key]
            per_second = (1 if key == "batch1" else 32) / percentile(times, 50)
            print(f"    {what:<28} {_ms(times)}   {per_second:7.0f} texts/s at p50  ({len(times)} calls)")


def _role(process: psutil.Process, up_pid: int) -> str:
    line = " ".join(process.cmdline())
    if process.pid == up_pid:
        return "supervisor (manage.py up)"
    if "uvicorn" in line:
        return "web (uvicorn)"
    if "celery" in line:
        parent = process.parent()
        if parent and "celery" in " ".join(parent.cmdline()):
            # `up` runs beat inside the worker (-B): the one child that never loads the model.
            return "worker child" if _libraries(process) != "none" else "worker child (beat)"
        return "worker (celery main)"
    if "postgres" in process.name() or "postgres" in line:
        return "postgres"
    return process.name()


def _libraries(process: psutil.Process) -> str:
    """Which model runtime's shared library the process has mapped: onnxruntime, torch, both, none."""
    try:
        paths = [m.path for m in process.memory_maps(grouped=True)]
    except (psutil.AccessDenied, psutil.NoSuchProcess):
        return "?"
    found = [
        name
        for name, part in (("onnxruntime", "onnxruntime_pybind"), ("torch", "libtorch"))
        if any(part in p for p in paths)
    ]
    return " + ".join(found) or "none"


def service_footprint(saves: int, recalls: int) -> None:
    with service_with_model() as (url, token, data_dir):
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, timeout=120, headers=headers) as client:
            jobs = []
            for i in range(saves):
                content = f"Note {i}: Mara moved the garden budget review to Thursday, room {i}."
                if i % 5 == 0:  # a few long ones: the worker's widest batches
                    content = " ".join([content] * 30)
                response = client.post("/api/v1/operations/remember", json={"content": content})
                response.raise_for_status()
                jobs.append(response.json()["job_id"])
            deadline = time.monotonic() + 600
            while jobs and time.monotonic() < deadline:
                if client.get(f"/api/v1/jobs/{jobs[0]}").json()["status"] in ("succeeded", "failed"):
                    jobs.pop(0)
                else:
                    time.sleep(0.1)
            for i in range(recalls):
                client.post(
                    "/api/v1/operations/recall", json={"query": f"when is the budget review {i}?"}
                ).raise_for_status()
        me = psutil.Process()
        (up,) = [p for p in me.children() if "manage.py" in " ".join(p.cmdline())]
        print()
        print(f"the service after {saves} saves and {recalls} recalls (MB):")
        print(f"  {'process':<28} {'pid':>7} {'RSS':>7} {'PSS':>7} {'USS':>7}  model runtime mapped")
        totals = {"rss": 0.0, "pss": 0.0}
        # The embedded PostgreSQL runs detached from `up`; its processes name the data folder.
        postgres = [
            p for p in psutil.process_iter(["cmdline"])
            if str(data_dir) in " ".join(p.info["cmdline"] or []) and "postgres" in p.name()
        ]  # fmt: skip
        postgres += [c for p in postgres for c in p.children(recursive=True)]
        tree = [up, *up.children(recursive=True)]
        for process in tree + [p for p in dict.fromkeys(postgres) if p not in tree]:
            try:
                info = process.memory_full_info()
                role = _role(process, up.pid)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            totals["rss"] += info.rss
            totals["pss"] += info.pss
            print(
                f"  {role:<28} {process.pid:>7} {info.rss / 1e6:7.0f} {info.pss / 1e6:7.0f}"
                f" {info.uss / 1e6:7.0f}  {_libraries(process)}"
            )
        print(f"  {'all of them':<28} {'':>7} {totals['rss'] / 1e6:7.0f} {totals['pss'] / 1e6:7.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=30)
    parser.add_argument("--recalls", type=int, default=50)
    parser.add_argument("--runs", type=int, default=200, help="batch-1 calls per runtime (batch 32: fewer)")
    parser.add_argument("--skip-model", action="store_true", help="only the service's processes")
    args = parser.parse_args()
    if not args.skip_model:
        model_alone(args.runs)
    service_footprint(args.saves, args.recalls)


if __name__ == "__main__":
    main()
