"""Liveness, readiness and the health report, with the real parts: database, broker, real workers,
the model."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest
from django.urls import reverse

from memories import embeddings
from tests.conftest import ROOT


@pytest.fixture
def model_loaded() -> None:
    embeddings.get_model()


@pytest.fixture
def database_gone() -> Iterator[None]:
    """This process's database connection points at a database that does not exist."""
    from django.db import connection

    def reset() -> None:
        connection.close()
        if hasattr(connection, "close_pool"):
            connection.close_pool()  # the pool holds connections to the old database

    reset()
    original = dict(connection.settings_dict)
    connection.settings_dict["NAME"] = "no_such_database_hunter2"
    try:
        yield
    finally:
        reset()
        connection.settings_dict.clear()
        connection.settings_dict.update(original)


@pytest.fixture
def second_worker(child_env, celery_worker) -> Iterator[subprocess.Popen[bytes]]:
    """Another real worker beside the suite's own, under its own name and without beat."""
    from config.celery import app
    from memories.management.commands.up import worker_command

    command = [arg for arg in worker_command(concurrency=1, hostname="second@%h") if arg != "-B"]
    proc = subprocess.Popen(
        command, cwd=ROOT, env=child_env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 90
    while not any(
        name.startswith("second@") for reply in app.control.ping(timeout=0.5) or [] for name in reply
    ):
        assert proc.poll() is None and time.monotonic() < deadline, "the second worker did not start"
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=20)


@pytest.mark.django_db(transaction=True)
class TestHealth:
    def test_it_is_ready_when_every_part_is(self, client, celery_worker, model_loaded):
        response = client.get(reverse("healthz"))
        body = response.json()
        assert response.status_code == 200, body
        assert body["ready"] is True
        assert {name: check["ready"] for name, check in body["checks"].items()} == {
            "database": True,
            "broker": True,
            "worker": True,
            "embeddings": True,
        }
        assert body["checks"]["worker"]["workers"] >= 1

    def test_it_counts_every_worker_and_shows_one_that_died(self, client, second_worker, model_loaded):
        body = client.get(reverse("healthz")).json()
        worker = body["checks"]["worker"]
        assert worker["workers"] == 2, worker
        assert worker["missing"] == [] and worker["state"] == "ok"
        second = next(name for name in worker["answered"] if name.startswith("second@"))
        second_worker.kill()
        second_worker.wait(timeout=20)
        response = client.get(reverse("healthz"))
        worker = response.json()["checks"]["worker"]
        # The web process is still ready (recall needs no worker); the dead one is named.
        assert response.status_code == 200
        assert worker["workers"] == 1 and worker["missing"] == [second], worker
        assert worker["state"] == "1 of 2 workers did not answer"

    def test_a_worker_stopped_cleanly_is_not_reported_missing(self, client, second_worker, model_loaded):
        worker = client.get(reverse("healthz")).json()["checks"]["worker"]
        assert worker["workers"] == 2 and worker["state"] == "ok", worker
        # SIGTERM, as `manage.py up` and service managers stop a worker: a warm shutdown.
        second_worker.terminate()
        assert second_worker.wait(timeout=60) == 0
        worker = client.get(reverse("healthz")).json()["checks"]["worker"]
        assert worker["workers"] == 1 and worker["missing"] == [] and worker["state"] == "ok", worker

    def test_a_missing_worker_does_not_make_the_web_process_unready(
        self, client, no_worker_broker, model_loaded
    ):
        for name in ("healthz", "healthz-ready"):
            response = client.get(reverse(name))
            assert response.status_code == 200, response.json()
            assert response.json()["ready"] is True
        worker = client.get(reverse("healthz")).json()["checks"]["worker"]
        assert worker["ready"] is False and worker["workers"] == 0
        assert worker["state"] in ("no worker answered", "1 of 1 workers did not answer")

    def test_it_is_not_ready_without_the_database_but_still_live(self, client, database_gone, model_loaded):
        for name in ("healthz", "healthz-ready"):
            response = client.get(reverse(name))
            assert response.status_code == 503
            text = response.content.decode()
            assert response.json()["checks"]["database"] == {
                "ready": False,
                "state": "unreachable (OperationalError)",
            }
            assert "hunter2" not in text and "/" not in text  # no names, hosts or paths
        live = client.get(reverse("healthz-live"))
        assert live.status_code == 200 and live.json() == {"live": True}

    def test_it_answers_a_probe_by_address_that_allowed_hosts_refuses_elsewhere(self, client, model_loaded):
        probe = {"HTTP_HOST": "10.0.3.7:8001"}
        assert client.get("/accounts/login/", **probe).status_code == 400
        for path in ("/healthz", "/healthz/live", "/healthz/ready"):
            response = client.get(path, **probe)
            assert response.status_code == 200, (path, response.content[:300])
        assert client.post("/healthz/live", **probe).status_code == 405
