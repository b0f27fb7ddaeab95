"""A real Redis server for the tests (Debian's redis-server, installed when missing), which a test
may stop and start again on the same port to inject a broker restart."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.debian import debian_ensure

REDIS_SERVER = Path("/usr/bin/redis-server")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """redis-server on 127.0.0.1:`port`, data in `folder`. Without persistence by default: a restart
    loses every message, the harshest broker restart (the outbox and the sweep bring the jobs back);
    `appendonly=True` is the deploy doc's Redis, which keeps its messages over a restart."""

    def __init__(self, folder: Path, port: int | None = None, *, appendonly: bool = False) -> None:
        self.executable = debian_ensure(package="redis-server", executable=REDIS_SERVER)
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.appendonly = appendonly
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        log = (self.folder / "redis.log").open("ab")
        command = [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "yes" if self.appendonly else "no", "--dir", str(self.folder)]
        self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"redis-server exited: {(self.folder / 'redis.log').read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        pytest.fail("redis-server did not answer PING within 20 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self, *, down_seconds: float = 2.0) -> None:
        self.stop()
        time.sleep(down_seconds)
        self.start()


@contextlib.contextmanager
def publishing_to(url: str) -> Iterator[None]:
    """This process's Celery app publishes to the broker at `url` (Redis) for the block."""
    from config.celery import app

    saved = (app.conf.broker_url, app.conf.broker_transport, app.conf.broker_transport_options)
    app.conf.update(broker_url=url, broker_transport=None, broker_transport_options={})
    _drop_pools(app)
    try:
        yield
    finally:
        app.conf.update(broker_url=saved[0], broker_transport=saved[1], broker_transport_options=saved[2])
        _drop_pools(app)


def _drop_pools(app: Any) -> None:
    # Not closed: a connection of the old broker may still be in use; the next publish connects anew.
    app._pool = None
    app.amqp._producer_pool = None
