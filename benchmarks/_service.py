"""Start a throwaway Deep Recall (manage.py up) for a benchmark, with its own data folder."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """While a service runs, SIGINT and SIGTERM raise KeyboardInterrupt, so that its `finally` stops it.

    A benchmark started in the background inherits SIGINT ignored, and SIGTERM (what `kill` and
    `pkill` send) ends a Python process without unwinding: either way the service (web, worker,
    embedded PostgreSQL) outlived the benchmark. Signals can only be handled in the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, _interrupt) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextmanager
def running_service(*, keep: bool = False, var_dir: Path | None = None) -> Iterator[tuple[str, str]]:
    """Yield (base_url, personal access token) of a fresh service; stop it afterwards, also when the
    benchmark is interrupted or sent SIGTERM. `var_dir` runs it on that data folder instead of a
    temporary one, and keeps it (a benchmark's cache of ingested data, started again later)."""
    with _stopped_by_signals():
        yield from _running_service(keep=keep or var_dir is not None, var_dir=var_dir)


class FolderInUse(SystemExit):
    """Another benchmark run holds the kept data folder."""


def hold_folder(var_dir: Path) -> TextIO:
    """The kept data folder's lock, held by this process until it closes the returned file (or
    exits). Two runs on one folder would start two services on one database and interleave two
    ingests under one manifest: the figures of both would be wrong without an error. So the second
    run stops at once with a message (FolderInUse) instead."""
    lock = open(var_dir / "benchmark.lock", "w")  # noqa: SIM115 - held until the run ends
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise FolderInUse(
            f"another benchmark run is using {var_dir}; wait for it to finish, or give this run"
            " another folder (longmemeval.py: --cache DIR)"
        ) from None
    return lock


def _running_service(*, keep: bool, var_dir: Path | None) -> Iterator[tuple[str, str]]:
    if var_dir is None:
        var_dir = Path(tempfile.mkdtemp(prefix="deeprecall-bench-"))
    var_dir.mkdir(parents=True, exist_ok=True)
    with hold_folder(var_dir):
        yield from _serving(keep=keep, var_dir=var_dir)


def _serving(*, keep: bool, var_dir: Path) -> Iterator[tuple[str, str]]:
    port = _free_port()
    env = {**os.environ, "DEEPRECALL_VAR_DIR": str(var_dir), "PYTHONUNBUFFERED": "1"}
    # The model file converted for ONNX Runtime is the same for every run: made once, in var/models.
    env.setdefault("DEEPRECALL_MODELS_DIR", str(ROOT / "var" / "models"))
    env.pop("DATABASE_URL", None)
    # A benchmark saves as fast as the service takes it; the per-user save budget (60/min by
    # default) would measure the limit, not the service. Set RATE_LIMIT_SAVE to measure with one.
    env.setdefault("RATE_LIMIT_SAVE", "off")
    log = open(var_dir / "service.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "up", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        # Generous: on two cores shared with other work, migrations and the model load take minutes.
        deadline = time.monotonic() + 900
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the service exited; see {var_dir / 'service.log'}")
            try:
                health = httpx.get(f"{url}/healthz", timeout=10)
                # The web process's readiness, and the worker `up` started (saves wait for it).
                if health.status_code == 200 and health.json()["checks"]["worker"]["ready"]:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the service did not become ready")
            time.sleep(0.5)
        token = (
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "manage.py"),
                    "shell",
                    "-c",
                    "from memories.services.account import user_sign_up;"
                    "from accounts.models import User;"
                    "from accounts.services import pat_create;"
                    # A kept data folder started again already has the user.
                    "u = User.objects.filter(email='bench@example.com').first()"
                    " or user_sign_up(email='bench@example.com', password='bench-password-123');"
                    "print(pat_create(user=u, name='bench', scopes=['memory:read','memory:write'])[1])",
                ],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        yield url, token
    except BaseException:
        keep = True
        print(f"service log kept in {var_dir / 'service.log'}", file=sys.stderr)
        raise
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        log.close()
        if not keep:
            import shutil

            shutil.rmtree(var_dir, ignore_errors=True)


def shared_data(name: str) -> Path:
    """../shared/benchmarks/<name> beside the checkout; from a git worktree elsewhere, beside the
    main checkout the worktree belongs to."""
    here = ROOT.parent / "shared" / "benchmarks" / name
    if here.exists():
        return here
    try:
        common = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return here
    return Path(common).parent.parent / "shared" / "benchmarks" / name


def use_service_database(data_dir: Path) -> None:
    """Point this process's Django at a throwaway service's embedded database (for bulk loads)."""
    os.environ["DEEPRECALL_VAR_DIR"] = str(data_dir)
    os.environ.setdefault("DEEPRECALL_MODELS_DIR", str(ROOT / "var" / "models"))
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def service_processes(url: str) -> dict[str, list[psutil.Process]]:
    """The throwaway service's processes by part: `manage.py up --port N` and its children (web,
    worker with its pool), and the embedded PostgreSQL's postmaster with its backends."""
    port = url.rsplit(":", 1)[1]
    up = next(
        proc
        for proc in psutil.process_iter(["cmdline"])
        if "up" in (cmd := proc.info["cmdline"] or []) and "--port" in cmd and port in cmd
    )
    parts: dict[str, list[psutil.Process]] = {"web": [], "worker": [], "database": []}
    for child in up.children():
        part = "web" if "uvicorn" in " ".join(child.cmdline()) else "worker"
        parts[part] += [child, *child.children(recursive=True)]
    pgdata = Path(up.environ()["DEEPRECALL_VAR_DIR"]) / "pgdata"
    postmaster = psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))
    parts["database"] = [postmaster, *postmaster.children(recursive=True)]
    return parts


def service_pgdata(parts: dict[str, list[psutil.Process]]) -> Path:
    """The embedded PostgreSQL's data folder, from its postmaster's command line."""
    return Path(parts["database"][0].cmdline()[parts["database"][0].cmdline().index("-D") + 1])


CpuReading = dict[tuple[str, int, float], float]


def cpu_seconds(parts: dict[str, list[psutil.Process]]) -> CpuReading:
    """CPU seconds (user + system) by process: (part, pid, start time), so a pid reused is another.
    Read before and after a phase; `cpu_spent` turns the two into what the phase cost by part,
    whatever else the machine was doing."""
    totals = {}
    for part, procs in parts.items():
        for proc in procs:
            try:
                times = proc.cpu_times()
                totals[(part, proc.pid, proc.create_time())] = times.user + times.system
            except psutil.NoSuchProcess:
                continue
    return totals


def cpu_spent(before: CpuReading, after: CpuReading) -> dict[str, float]:
    """CPU seconds by part between two readings. A process started in between (a database backend,
    a pool process replaced) counts whole; one that ended in between is lost with what it spent.
    Read `after` from a fresh `service_processes` so the processes started in between are in it."""
    spent = {part: 0.0 for part, _, _ in (*before, *after)}
    for key, seconds in after.items():
        spent[key[0]] += seconds - before.get(key, 0.0)
    return spent
