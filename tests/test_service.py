"""The README's run command, end to end: `manage.py up` from start to Ctrl-C and back."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.conftest import PASSWORD, ROOT, run_manage

pytestmark = pytest.mark.slow


def _start(var_dir: Path, port: int) -> subprocess.Popen[str]:
    env = {**os.environ, "DEEPRECALL_VAR_DIR": str(var_dir), "PYTHONUNBUFFERED": "1"}
    env.pop("DATABASE_URL", None)
    env.pop("DEEPRECALL_BROKER_DIR", None)
    log = open(var_dir.parent / f"up-{port}-{time.monotonic_ns()}.log", "w")  # noqa: SIM115
    return subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "up", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_ready(proc: subprocess.Popen[str], url: str, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    body: dict = {}
    while time.monotonic() < deadline:
        assert proc.poll() is None, "manage.py up exited early"
        try:
            response = httpx.get(f"{url}/healthz", timeout=10)
            body = response.json()
            # Ready is the web process's readiness; `up` started a worker too, so wait for it.
            if response.status_code == 200 and body["checks"]["worker"]["ready"]:
                return body
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"not ready in {timeout}s: {body}")


def _descendants_and_postgres(proc: subprocess.Popen[str], pgdata: Path) -> list[psutil.Process]:
    processes = psutil.Process(proc.pid).children(recursive=True)
    postmaster_pid = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    processes.append(psutil.Process(postmaster_pid))
    return processes


def _still_running(processes: list[psutil.Process]) -> list[str]:
    """The processes of `processes` still alive, each with its command line (to say which one)."""
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(f"{process.pid} {' '.join(process.cmdline())[:200]}")
        except psutil.NoSuchProcess:
            continue
    return alive


def _interrupt(proc: subprocess.Popen[str]) -> int:
    proc.send_signal(signal.SIGINT)
    return proc.wait(timeout=60)


def _sign_up(url: str, email: str) -> None:
    with httpx.Client(base_url=url, follow_redirects=False) as http:
        page = http.get("/accounts/signup/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None
        response = http.post(
            "/accounts/signup/",
            data={"csrfmiddlewaretoken": token.group(1), "email": email, "password": PASSWORD},
        )
        assert response.status_code == 302, response.text


def _logs_in(url: str, email: str) -> bool:
    with httpx.Client(base_url=url, follow_redirects=False) as http:
        page = http.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None
        response = http.post(
            "/accounts/login/",
            data={"csrfmiddlewaretoken": token.group(1), "username": email, "password": PASSWORD},
        )
        return response.status_code == 302


def test_it_runs_stops_cleanly_and_restarts_on_the_same_data(tmp_path, unused_tcp_port):
    var_dir = tmp_path / "var"
    pgdata = var_dir / "pgdata"
    url = f"http://127.0.0.1:{unused_tcp_port}"

    first = _start(var_dir, unused_tcp_port)
    try:
        health = _wait_ready(first, url)
        assert all(check["ready"] for check in health["checks"].values())
        assert health["checks"]["database"]["pgvector"].startswith("0.")
        processes = _descendants_and_postgres(first, pgdata)
        _sign_up(url, "persist@example.com")
        admin = httpx.get(f"{url}/admin/login/")
        assert admin.status_code == 200 and "Deep Recall" in admin.text
        css = httpx.get(f"{url}/static/admin/css/base.css")
        assert css.status_code == 200
    finally:
        code = _interrupt(first)
    assert code == 0
    psutil.wait_procs(processes, timeout=10)
    assert _still_running(processes) == []
    assert not (pgdata / "postmaster.pid").exists()

    initialised = (pgdata / "PG_VERSION").stat().st_mtime_ns
    secret = (var_dir / "secret_key").read_text()

    second = _start(var_dir, unused_tcp_port)
    try:
        _wait_ready(second, url)
        assert _logs_in(url, "persist@example.com")
    finally:
        assert _interrupt(second) == 0
    assert (pgdata / "PG_VERSION").stat().st_mtime_ns == initialised
    assert (var_dir / "secret_key").read_text() == secret


def test_it_has_no_missing_migrations():
    result = run_manage("makemigrations", "--check", "--dry-run")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No changes detected" in result.stdout


def test_the_console_script_prints_help():
    script = Path(sys.executable).parent / "deeprecall"
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=False, timeout=30)
    assert result.returncode == 0
    assert "up" in result.stdout and "Deep Recall" in result.stdout


def test_a_killed_worker_stops_everything_and_leaves_nothing_running(tmp_path, unused_tcp_port):
    # The OOM killer or kill -9 on the worker: `up` stops the service, and the worker's own
    # children (its pool processes and its beat, orphaned by the kill) stop with it. The beat used
    # to live on, sending the recovery sweep into a queue nobody read.
    var_dir = tmp_path / "var"
    pgdata = var_dir / "pgdata"
    url = f"http://127.0.0.1:{unused_tcp_port}"
    up = _start(var_dir, unused_tcp_port)
    try:
        _wait_ready(up, url)
        processes = _descendants_and_postgres(up, pgdata)
        [worker] = [p for p in psutil.Process(up.pid).children() if "celery" in " ".join(p.cmdline())]
        orphans = worker.children(recursive=True)
        assert len(orphans) >= 2  # the pool processes and the beat
        worker.kill()
        code = up.wait(timeout=90)
    finally:
        if up.poll() is None:
            _interrupt(up)
    assert code == 1
    psutil.wait_procs(processes, timeout=10)
    assert _still_running(processes) == []
    assert not (pgdata / "postmaster.pid").exists()
