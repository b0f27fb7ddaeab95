"""Workers on a real Redis survive its restarts (the crash the issue saw was kombu's reconnect bug,
fixed in kombu 5.4; the worker also runs without gossip and mingle, whose restart path crashed), and
the recovery sweep, sent by the worker's beat, keeps running through an outage: a save made while
Redis was down is processed once Redis is back."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import psutil
import pytest

from memories.management.commands.up import worker_command
from memories.models import Job, Memory
from tests.conftest import ROOT
from tests.helpers import pat_client, wait_for_job
from tests.redis_server import RedisServer, publishing_to

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def start_worker(env: dict[str, str], folder: Path, name: str) -> subprocess.Popen[str]:
    """A worker as `manage.py up` starts it (beat included), on the broker `env` names."""
    log = (folder / f"{name}.log").open("w")
    schedule = str(folder / f"{name}-beat")
    command = [*worker_command(concurrency=1, hostname=f"{name}@%h"), "--schedule", schedule]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)


def stop_worker(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _save(client, content: str) -> str:
    response = client.post("/api/v1/memories", {"content": content}, format="json")
    assert response.status_code == 202, response.json()
    return str(response.json()["job"]["id"])


def _pool_pids(proc: subprocess.Popen[str]) -> set[int]:
    return {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}


def test_a_worker_survives_redis_restarts_and_its_sweep_survives_an_outage(alice, child_env, tmp_path):
    redis = RedisServer(tmp_path / "redis")
    redis.start()
    env = {**child_env, "CELERY_BROKER_URL": redis.url}
    env.pop("DEEPRECALL_BROKER_DIR", None)
    worker = start_worker(env, tmp_path, "restart")
    log = tmp_path / "restart.log"
    client = pat_client(alice)
    try:
        with publishing_to(redis.url):
            first = wait_for_job(_save(client, "My bike lock code is 3381."), timeout=120)
            assert first.status == "succeeded"

            for _ in range(2):
                redis.restart()
                time.sleep(5)  # the worker notices, and reconnects
            assert worker.poll() is None, log.read_text()[-3000:]
            second = wait_for_job(_save(client, "The wifi password is on the fridge."), timeout=60)
            assert second.status == "succeeded"
            assert int(second.claimed_by.rsplit(":", 1)[1]) in _pool_pids(worker)

            # An outage: the save is accepted (the outbox) and processed once Redis is back, by the
            # sweep the worker's beat sends on schedule (every 15 s).
            redis.stop()
            during = _save(client, "The plumber comes on the 14th.")
            assert Job.objects.get(id=during).published_at is None
            time.sleep(3)
            redis.start()
            back_at = len(log.read_text())
            third = wait_for_job(during, timeout=150)
            assert third.status == "succeeded", (third.error_code, third.error_message)
            assert worker.poll() is None
        # The beat kept its schedule through the outage: the sweep still reaches the worker.
        deadline = time.monotonic() + 75
        while "memories.recover_jobs" not in log.read_text()[back_at:]:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(1)
        for needle in ("3381", "wifi", "plumber"):
            assert Memory.objects.filter(owner=alice, content__icontains=needle).count() == 1
    finally:
        stop_worker(worker)
        redis.stop()
