"""The filesystem broker's cost per look for a message does not grow with the queue (config.broker):
kombu's stock channel listed and sorted the whole folder at every look, which under a backlog of
45,000 messages took most of a core in the worker's main process (issue 44). Counted in listings of
the folder, the cost that grew; the time per look at 10 and 10,000 messages is benchmarks/backlog.py's
`--polls` figure."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from kombu import Connection

from config import broker
from tests.config.test_broker_doorbell import _options


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders listed, in order."""
    seen: list[str] = []
    real = os.listdir

    def spy(path: Any = ".") -> list[str]:
        seen.append(str(path))
        return real(path)

    monkeypatch.setattr(broker.os, "listdir", spy)
    return seen


def _fill(channel: Any, queue: str, count: int) -> list[str]:
    bodies = [f"{queue}-{n}" for n in range(count)]
    for body in bodies:
        channel._put(queue, {"body": body})
    return bodies


def test_looks_for_messages_in_a_long_queue_list_the_folder_once(tmp_path: Path, listings: list[str]) -> None:
    # (A folder under LIST_FREELY names may be listed at every look that follows a change: that is
    # what every look cost before, and a bounded cost.)
    queued = 10_000
    with Connection(transport="config.broker:Transport", transport_options=_options(tmp_path)) as conn:
        channel: Any = conn.default_channel
        tasks, control = f"tasks-{uuid.uuid4().hex[:6]}", f"control-{uuid.uuid4().hex[:6]}"
        bodies = _fill(channel, tasks, queued)
        listings.clear()
        started = time.monotonic()
        taken = [channel._get(tasks)["body"] for _ in range(10)]
        # A worker's control queue, empty beside the long one, looked at as often.
        for _ in range(10):
            with pytest.raises(broker.Empty):
                channel._get(control)
        # Each once (in the order of their names, which only tell the millisecond apart).
        assert len(set(taken)) == 10 and set(taken) <= set(bodies)
        # One listing served all twenty looks (a second one only when the looks took over
        # RELIST_AFTER on a slow machine); kombu's channel listed the folder at each.
        allowed = 1 + int((time.monotonic() - started) // broker.RELIST_AFTER)
        assert 1 <= len(listings) <= allowed, (len(listings), allowed)


def test_a_message_put_without_a_ring_is_found(tmp_path: Path, listings: list[str]) -> None:
    """No consumer waits on the doorbell here: a small folder is listed again as soon as it changed,
    a big one at the latest RELIST_AFTER later."""
    with Connection(transport="config.broker:Transport", transport_options=_options(tmp_path)) as conn:
        channel: Any = conn.default_channel
        queue = f"tasks-{uuid.uuid4().hex[:6]}"
        with pytest.raises(broker.Empty):
            channel._get(queue)
        time.sleep(0.02)  # past the folder's clock tick: its time changes with the put
        channel._put(queue, {"body": "small"})
        assert channel._get(queue)["body"] == "small"

        other = f"long-{uuid.uuid4().hex[:6]}"
        _fill(channel, other, broker.LIST_FREELY)
        with pytest.raises(broker.Empty):
            channel._get(queue)
        listed = len(listings)
        channel._put(queue, {"body": "late"})
        # Within RELIST_AFTER, the big folder is not listed again for the empty queue.
        with pytest.raises(broker.Empty):
            channel._get(queue)
        assert len(listings) == listed
        deadline = time.monotonic() + broker.RELIST_AFTER + 5
        while True:
            try:
                assert channel._get(queue)["body"] == "late"
                break
            except broker.Empty:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert len(listings) == listed + 1
