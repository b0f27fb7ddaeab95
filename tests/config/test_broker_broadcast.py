"""Broadcasts on the filesystem broker (config.broker): a fanout message reaches every live consumer
and leaves nothing behind for a consumer that is gone. Each worker binds a queue named after it to
celery's control exchange, so a worker that died used to keep receiving every broadcast (the health
report's ping) in files nobody read, which every poll then listed."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kombu import Connection, Exchange, Queue

from config.broker import consumer_lock_path, doorbell_path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 10.0


def _options(folder: Path) -> dict[str, Any]:
    for name in ("queue", "control", "processed"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "control_folder": str(folder / "control"),
        "processed_folder": str(folder / "processed"),
        "store_processed": False,
        "polling_interval": 3600.0,
    }


def _connection(folder: Path) -> Connection:
    return Connection(transport="config.broker:Transport", transport_options=_options(folder))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "broker"


@pytest.fixture
def exchange() -> Exchange:
    # A name of its own for each test: kombu keeps the exchanges it has declared in memory.
    return Exchange(f"control-{uuid.uuid4().hex[:8]}", type="fanout", durable=False, auto_delete=True)


def _queue(exchange: Exchange, name: str) -> Queue:
    # As celery's control mailbox declares a worker's queue (kombu.pidbox.Mailbox.get_queue).
    return Queue(f"{name}.{exchange.name}", exchange=exchange, durable=False, auto_delete=True)


def _broadcast(folder: Path, exchange: Exchange, body: str) -> None:
    with _connection(folder) as connection:
        connection.Producer().publish(body, exchange=exchange, declare=[exchange])


def _files(folder: Path, queue: Queue) -> list[Path]:
    return list((folder / "queue").glob(f"*.{queue.name}.msg"))


def _bound(folder: Path, exchange: Exchange) -> list[str]:
    with _connection(folder) as connection:
        channel: Any = connection.default_channel
        return [bound.queue for bound in channel.get_table(exchange.name)]


def _keep(into: list[str]) -> Any:
    def callback(body: str, message: Any) -> None:
        into.append(body)
        message.ack()

    return callback


@pytest.fixture
def listening(folder: Path, exchange: Exchange) -> Iterator[tuple[Connection, Queue, list[str]]]:
    """A live consumer of a queue bound to the broadcast exchange, in this process."""
    queue = _queue(exchange, "alive")
    received: list[str] = []
    connection = _connection(folder)
    with connection.Consumer([queue], callbacks=[_keep(received)]):
        yield connection, queue, received
    connection.close()


# A consumer in a process of its own, which the test kills: it binds its queue, waits once (so its
# doorbell is open, as a worker's is), says so, then sleeps until killed.
_CHILD = """
import sys, time
sys.path.insert(0, {root!r})
from kombu import Connection, Exchange, Queue
options = {options!r}
exchange = Exchange({exchange!r}, type="fanout", durable=False, auto_delete=True)
queue = Queue({queue!r}, exchange=exchange, durable=False, auto_delete=True)
connection = Connection(transport="config.broker:Transport", transport_options=options)
with connection.Consumer([queue], callbacks=[lambda body, message: message.ack()]):
    try:
        connection.drain_events(timeout=0.05)
    except TimeoutError:
        pass
    print("ready", flush=True)
    time.sleep(3600)
"""


def _child(folder: Path, exchange: Exchange, queue: Queue) -> subprocess.Popen[str]:
    script = _CHILD.format(root=str(ROOT), options=_options(folder), exchange=exchange.name, queue=queue.name)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    return child


def _child_starting(folder: Path, exchange: Exchange, queue: Queue) -> subprocess.Popen[str]:
    script = _CHILD.format(root=str(ROOT), options=_options(folder), exchange=exchange.name, queue=queue.name)
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)


def _wait_until_blocked_on(path: str) -> None:
    """Until a process waits for a lock on `path` (/proc/locks lists a waiter with "->")."""
    inode = os.stat(path).st_ino
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        with open("/proc/locks") as locks:
            if any(
                line.split()[1] == "->" and line.split()[6].endswith(f":{inode}")
                for line in locks
                if "->" in line
            ):
                return
        time.sleep(0.01)
    raise AssertionError("no process waited for the lock")


def _kill(child: subprocess.Popen[str]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=TIMEOUT)


class TestBroadcast:
    def test_a_live_consumer_gets_every_broadcast(self, folder, exchange, listening):
        connection, queue, received = listening
        for body in ("one", "two"):
            _broadcast(folder, exchange, body)
            connection.drain_events(timeout=TIMEOUT)
        assert received == ["one", "two"]
        assert _bound(folder, exchange) == [queue.name]

    def test_a_killed_consumer_is_unbound_and_its_messages_deleted(self, folder, exchange, listening):
        connection, alive, received = listening
        dead = _queue(exchange, "killed")
        child = _child(folder, exchange, dead)
        try:
            _broadcast(folder, exchange, "while it lives")
            # Its process is alive but not reading: the message waits in its queue.
            assert len(_files(folder, dead)) == 1
        finally:
            _kill(child)
        _broadcast(folder, exchange, "after it died")
        assert _files(folder, dead) == []
        assert _bound(folder, exchange) == [alive.name]
        control = str(folder / "control")
        assert not os.path.exists(consumer_lock_path(control, dead.name))
        assert not os.path.exists(doorbell_path(control, dead.name))
        # The live consumer got both.
        for _ in range(2):
            connection.drain_events(timeout=TIMEOUT)
        assert received == ["while it lives", "after it died"]

    def test_a_consumer_that_closed_its_connection_is_unbound(self, folder, exchange):
        queue = _queue(exchange, "closed")
        received: list[str] = []
        with _connection(folder) as connection, connection.Consumer([queue], callbacks=[_keep(received)]):
            _broadcast(folder, exchange, "while open")
            connection.drain_events(timeout=TIMEOUT)
        assert received == ["while open"]
        _broadcast(folder, exchange, "after")
        assert _files(folder, queue) == []
        assert _bound(folder, exchange) == []

    def test_a_queue_bound_before_the_locks_with_a_dead_doorbell_is_unbound(
        self, folder, exchange, listening
    ):
        # A worker of an earlier build: bound, its doorbell made, no lock file, then killed.
        _, alive, _ = listening
        legacy = _queue(exchange, "legacy")
        child = _child(folder, exchange, legacy)
        _kill(child)
        os.unlink(consumer_lock_path(str(folder / "control"), legacy.name))
        _broadcast(folder, exchange, "one")
        assert _files(folder, legacy) == []
        assert _bound(folder, exchange) == [alive.name]

    def test_a_queue_bound_before_the_locks_whose_consumer_waits_still_gets_broadcasts(
        self, folder, exchange
    ):
        # A live worker of an earlier build (a rolling restart): no lock file, its doorbell read.
        queue = _queue(exchange, "earlier")
        child = _child(folder, exchange, queue)
        try:
            os.unlink(consumer_lock_path(str(folder / "control"), queue.name))
            _broadcast(folder, exchange, "kept")
            assert len(_files(folder, queue)) == 1
            assert _bound(folder, exchange) == [queue.name]
        finally:
            _kill(child)

    def test_a_queue_bound_before_the_doorbells_and_the_locks_is_unbound(self, folder, exchange):
        # No lock file and no doorbell: nothing of this build bound it, and no consumer ever waited.
        queue = _queue(exchange, "ancient")
        with _connection(folder) as connection:
            queue(connection.default_channel).declare()
        os.unlink(consumer_lock_path(str(folder / "control"), queue.name))
        _broadcast(folder, exchange, "gone")
        assert _files(folder, queue) == []
        assert _bound(folder, exchange) == []

    def test_a_consumer_of_the_same_name_starting_as_its_dead_namesake_is_unbound_keeps_its_binding(
        self, folder, exchange
    ):
        # The broadcast holds the dead queue's lock while it unbinds it; the new consumer, blocked
        # on that lock meanwhile, binds again after.
        queue = _queue(exchange, "reused")
        _kill(_child(folder, exchange, queue))
        lock = consumer_lock_path(str(folder / "control"), queue.name)
        with _connection(folder) as publisher:
            channel: Any = publisher.default_channel
            table = channel.get_table(exchange.name)
            started: list[subprocess.Popen[str]] = []
            real_forget = channel._forget

            def forget_while_it_starts(exchange_name: str, bound: Any) -> None:
                # The new consumer opens the old lock file and blocks on it before the unbinding.
                started.append(_child_starting(folder, exchange, queue))
                _wait_until_blocked_on(lock)
                real_forget(exchange_name, bound)

            channel._forget = forget_while_it_starts
            channel._put_fanout(exchange.name, {"body": "x"}, "")
            assert [bound.queue for bound in table] == [queue.name]
        child = started[0]
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
            assert _bound(folder, exchange) == [queue.name]
            # Its lock is the file at the name again (not the unlinked one it waited on), held.
            with open(lock) as probe, pytest.raises(BlockingIOError):
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _broadcast(folder, exchange, "to the new one")
            assert len(_files(folder, queue)) == 1
        finally:
            _kill(child)
