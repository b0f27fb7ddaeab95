"""The filesystem broker's doorbells (config.broker): a consumer waiting for messages is woken when
one is published, and when it acknowledges one, instead of at its next poll. The polling interval
here is an hour, and each wait records which descriptor woke it: a wait that ran out its time woke
on none."""

from __future__ import annotations

import os
import stat
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kombu import Connection, Exchange, Queue

from config import broker
from config.broker import doorbell_path

AN_HOUR = 3600.0
# How long a test waits for a message at most (kombu caps the polling interval at it).
TIMEOUT = 10.0


def _options(folder: Path, polling_interval: float = AN_HOUR) -> dict[str, Any]:
    for name in ("queue", "control", "processed"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "control_folder": str(folder / "control"),
        "processed_folder": str(folder / "processed"),
        "store_processed": False,
        "polling_interval": polling_interval,
    }


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "broker"


@pytest.fixture
def woken_by(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The descriptors that ended a consumer's waits, in order (config.broker drains each one)."""
    seen: list[int] = []
    real = broker._drain

    def spy(fd: int) -> None:
        seen.append(fd)
        real(fd)

    monkeypatch.setattr(broker, "_drain", spy)
    return seen


@pytest.fixture
def queue() -> Queue:
    # A name of its own for each test: kombu keeps the exchanges it has declared in memory, per
    # transport class, whatever the folder.
    name = f"jobs-{uuid.uuid4().hex[:8]}"
    return Queue(name, Exchange(name, type="direct"), routing_key=name)


def _connection(folder: Path) -> Connection:
    return Connection(transport="config.broker:Transport", transport_options=_options(folder))


def _publish(folder: Path, queue: Queue, body: str) -> None:
    with _connection(folder) as connection:
        connection.Producer().publish(
            body, exchange=queue.exchange, routing_key=queue.routing_key, declare=[queue]
        )


@pytest.fixture
def consumer(folder: Path, queue: Queue) -> Iterator[tuple[Connection, list[Any]]]:
    """A consumer of `queue` with a prefetch of one, collecting the messages it receives unacked."""
    received: list[Any] = []
    connection = _connection(folder)
    with connection.Consumer([queue], callbacks=[lambda body, message: received.append(message)]) as consumer:
        consumer.qos(prefetch_count=1)
        yield connection, received
    connection.close()


class TestDoorbell:
    def test_a_waiting_consumer_gets_a_message_published_while_it_waits(
        self, folder, queue, consumer, woken_by
    ):
        connection, received = consumer
        later = threading.Timer(0.2, _publish, args=(folder, queue, "first"))
        later.start()
        try:
            connection.drain_events(timeout=TIMEOUT)
        finally:
            later.join()
        assert [message.decode() for message in received] == ["first"]
        bell = connection.transport._doorbells[doorbell_path(str(folder / "control"), queue.name)]
        assert woken_by == [bell]

    def test_an_acknowledgement_lets_a_waiting_consumer_take_the_next_message(
        self, folder, queue, consumer, woken_by
    ):
        connection, received = consumer
        _publish(folder, queue, "first")
        _publish(folder, queue, "second")
        connection.drain_events(timeout=TIMEOUT)
        # Either one (two messages of the same millisecond are taken in the order of their names).
        assert len(received) == 1
        # Its prefetch is full: the other message waits in the folder until this one is acked,
        # which another thread does while this one waits.
        later = threading.Timer(0.2, received[0].ack)
        later.start()
        try:
            connection.drain_events(timeout=TIMEOUT)
        finally:
            later.join()
        assert sorted(message.decode() for message in received) == ["first", "second"]
        assert woken_by == [connection.transport._wake_pipe[0]]

    def test_with_nobody_listening_a_publish_neither_blocks_nor_loses_the_message(self, folder, queue):
        _publish(folder, queue, "kept")
        assert len(list((folder / "queue").glob(f"*.{queue.name}.msg"))) == 1
        # A consumer that comes later finds it (it looks before it waits).
        with _connection(folder) as connection:
            received: list[str] = []
            with connection.Consumer(
                [queue], callbacks=[lambda body, message: (received.append(body), message.ack())]
            ):
                connection.drain_events(timeout=TIMEOUT)
        assert received == ["kept"]

    def test_the_doorbell_is_a_named_pipe_outside_the_messages_folder(self, folder, queue, consumer):
        connection, _ = consumer
        _publish(folder, queue, "first")
        connection.drain_events(timeout=TIMEOUT)
        with pytest.raises(TimeoutError):
            connection.drain_events(timeout=0.2)  # waits once, on the doorbell
        bell = Path(doorbell_path(str(folder / "control"), queue.name))
        assert stat.S_ISFIFO(os.stat(bell).st_mode)
        assert [path.name for path in (folder / "queue").iterdir()] == []
