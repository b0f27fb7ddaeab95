"""Under a backlog a job has at most one live message (issue 44). The recovery sweep used to send
again every queued job published over 30 s ago, so a backlog multiplied its own messages (45,522 in
the queue for 2,953 jobs). Now it sends again only what the broker can have lost: never published, a
lease run out, or missing by the broker's own count (memories.selectors.jobs.jobs_to_recover).

A real worker with a backlog of 10,000 saves made through the service layer and published through
the real publish path, on the embedded broker and on a real Redis; several sweeps, and the broker's
messages counted after each. Then the broker loses every message (the queue folder emptied; Redis
restarted without persistence): one sweep sends each waiting job once, the next none."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.db import transaction
from django.utils import timezone

from accounts.caller import ALL_SCOPES, Caller
from memories.models import Job
from memories.services.memories import remember
from memories.tasks import recover_jobs
from tests.conftest import _broker_options, _use_broker
from tests.memories.test_broker_restart import start_worker, stop_worker
from tests.redis_server import RedisServer, publishing_to

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    # The session's worker sweeps the same database from its own broker: it would send this test's
    # backlog there (found in the full run, where an earlier test had started it).
    pytest.mark.usefixtures("session_worker_paused"),
]

BACKLOG = 10_000
SWEEPS = 4
# Messages of waiting jobs a worker holds outside the queue (its prefetch: one per pool process, and
# the one it runs), which the broker's count cannot see: the sweep may send those jobs a second time.
SLACK = 4


@dataclass
class Broker:
    name: str
    env: dict[str, str]
    # How many messages the broker holds for the workers: waiting, and taken but not acknowledged.
    messages: Callable[[], int]
    # Loses every message, as a broker that restarts without persistence does.
    lose_all: Callable[[], None]


@contextlib.contextmanager
def _filesystem(child_env: dict[str, str], folder: Path) -> Iterator[Broker]:
    from config.celery import app

    queue = folder / "queue"
    previous = dict(app.conf.broker_transport_options)
    _use_broker(app, _broker_options(folder))

    def lose_all() -> None:
        for path in queue.glob("*.msg"):
            path.unlink()

    try:
        yield Broker(
            "filesystem",
            {**child_env, "DEEPRECALL_BROKER_DIR": str(folder)},
            lambda: len(list(queue.glob("*.celery.msg"))),
            lose_all,
        )
    finally:
        _use_broker(app, previous)


@contextlib.contextmanager
def _redis(child_env: dict[str, str], folder: Path) -> Iterator[Broker]:
    server = RedisServer(folder)
    server.start()
    client = redis.Redis.from_url(server.url)
    env = {**child_env, "CELERY_BROKER_URL": server.url}
    env.pop("DEEPRECALL_BROKER_DIR", None)
    try:
        with publishing_to(server.url):
            # kombu's Redis transport: the queue is a list; a message a worker took and has not
            # acknowledged waits in the `unacked` hash until it is (or its visibility timeout).
            yield Broker(
                "redis",
                env,
                lambda: int(client.llen("celery")) + int(client.hlen("unacked")),
                lambda: server.restart(down_seconds=0.5),
            )
    finally:
        client.close()
        server.stop()


def _backlog(user: Any, count: int) -> None:
    """`count` saves through the service layer, a thousand per transaction: each is published right
    after its transaction commits, by the same path as a save over the API."""
    caller = Caller(user=user, scopes=ALL_SCOPES)
    for start in range(0, count, 1000):
        with transaction.atomic():
            for n in range(start, min(start + 1000, count)):
                remember(
                    caller=caller, content=f"Note {n}: the locker at gym {n} has code {n * 7919 % 10007}."
                )


def _waiting() -> int:
    return Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).count()


@pytest.mark.parametrize("kind", ["filesystem", "redis"])
def test_a_backlog_keeps_one_message_a_job_through_the_sweeps(alice, child_env, tmp_path, kind):
    make = _filesystem if kind == "filesystem" else _redis
    with make(child_env, tmp_path / kind) as broker:
        _backlog(alice, BACKLOG)
        assert Job.objects.filter(published_at__isnull=True).count() == 0
        published = broker.messages()
        assert published == BACKLOG
        # Every job has waited its turn longer than REPUBLISH_AFTER: the old sweep's cue to send it again.
        Job.objects.update(published_at=timezone.now() - timedelta(minutes=2))

        worker = start_worker(broker.env, tmp_path, f"backlog-{kind}")
        try:
            deadline = time.monotonic() + 240
            while not Job.objects.filter(status=Job.Status.SUCCEEDED).exists():
                assert worker.poll() is None, (tmp_path / f"backlog-{kind}.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "the worker did not start on the backlog"
                time.sleep(0.5)

            sent = 0
            for _ in range(SWEEPS):
                sent += recover_jobs()
                messages = broker.messages()
                # At most one message a job: the backlog's own ones (a batch takes jobs whose messages
                # are still queued: those only fall out as the worker reaches them), and no more.
                assert messages <= BACKLOG + SLACK, (messages, sent)
                time.sleep(2)
            assert sent <= SLACK
            assert _waiting() > BACKLOG / 2, "the backlog drained before the sweeps: nothing was shown"
        finally:
            stop_worker(worker)

        # The broker loses every message. Each job still waiting is sent once, then never again.
        broker.lose_all()
        assert broker.messages() == 0
        queued = Job.objects.filter(status=Job.Status.QUEUED).count()
        gone = Job.objects.filter(status=Job.Status.RUNNING, lease_expires_at__lte=timezone.now()).count()
        assert recover_jobs() == queued + gone
        assert broker.messages() == queued + gone
        assert recover_jobs() == 0
        assert broker.messages() == queued + gone
    Job.objects.all().delete()
