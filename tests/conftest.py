"""The shared cast and the real parts the tests use.

Alice owns things, Bob is a second user with his own things, Charlie is the
outsider who must never see or change anything of Alice's.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from accounts.models import User
from memories.services.account import user_sign_up

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "correct horse battery staple"

# Every service a test starts on a throwaway data folder uses the model file this checkout already
# converted (memories/onnx_model.py), instead of converting its own (half a minute each).
os.environ.setdefault("DEEPRECALL_MODELS_DIR", str(settings.MODELS_DIR))


@pytest.fixture(autouse=True)
def _fast_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# Tests save, upload and query freely (many in a second, for one user), so those limits are off here;
# the tests of the limits (tests/accounts/test_rate_limits.py, tests/memories/test_image_budget.py,
# tests/memories/test_open_query_isolation.py) switch them on with small rates. Every other limit
# keeps its production default. Child processes get the same through env.
TESTS_RATE_LIMITS_OFF = {"save": None, "upload": None, "image": None, "query": None}


@pytest.fixture(autouse=True)
def _test_rate_limits(settings, request, django_db_blocker):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, **TESTS_RATE_LIMITS_OFF}
    yield
    # The limits live in a database table that no model owns, so a transactional test's flush
    # leaves them; the counts of one test must not refuse the next.
    marker = request.node.get_closest_marker("django_db")
    if "transactional_db" in request.fixturenames or (
        marker is not None and marker.kwargs.get("transaction")
    ):
        from django.core.cache import cache

        with django_db_blocker.unblock():
            cache.clear()


WORKER_SETTLE_SECONDS = 60


@pytest.fixture(autouse=True)
def _worker_settles(request, django_db_blocker):
    """After a test that ran with the real worker, wait until the worker has nothing in hand.

    A test may end while the worker still processes a save it asked for and did not wait on. The
    transactional test's flush (one TRUNCATE of every table) then races that job's transaction for
    the same tables' locks, and PostgreSQL breaks the deadlock by cancelling the flush: the next
    test starts on the rows this one left. Defined here, this teardown runs before pytest-django's
    flush (its fixture was set up first, so it is torn down last)."""
    yield
    if "celery_worker" not in request.fixturenames or "no_worker_broker" in request.fixturenames:
        return
    from memories.models import Job

    with django_db_blocker.unblock():
        if not Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).exists():
            return
        _wait_for_idle_worker(request.getfixturevalue("child_env"))


def _wait_for_idle_worker(env: dict[str, str]) -> None:
    """Until no message waits in the worker's queue folder and the worker reports no task running
    or reserved. Jobs a test made queued or running by hand never move; this waits on the worker,
    not on them. Gives up quietly after WORKER_SETTLE_SECONDS: the flush then reports any race."""
    from config.celery import app

    queue = Path(env["DEEPRECALL_BROKER_DIR"]) / "queue"
    deadline = time.monotonic() + WORKER_SETTLE_SECONDS
    while time.monotonic() < deadline:
        if not any(queue.glob("*.msg")):
            inspect = app.control.inspect(timeout=1.0, limit=1)
            replies = [inspect.active(), inspect.reserved()]
            if all(replies) and not any(tasks for reply in replies for tasks in (reply or {}).values()):
                return
        time.sleep(0.05)


@pytest.fixture
def alice(db) -> User:
    return user_sign_up(email="alice@example.com", password=PASSWORD)


@pytest.fixture
def bob(db) -> User:
    return user_sign_up(email="bob@example.com", password=PASSWORD)


@pytest.fixture
def charlie(db) -> User:
    return user_sign_up(email="charlie@example.com", password=PASSWORD)


def run_manage(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run `manage.py` in a child process, as an operator would."""
    full_env = {**os.environ, **(env or {})}
    command = [sys.executable, str(ROOT / "manage.py"), *args]
    return subprocess.run(command, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=timeout)


def test_database_url() -> str:
    """A DATABASE_URL for the test database, for child processes (the worker)."""
    params = connection.get_connection_params()
    host = params.get("host") or "localhost"
    port = params.get("port") or 5432
    user = params.get("user") or "postgres"
    name = connection.settings_dict["NAME"]
    return f"postgresql://{user}@/{name}?host={host}&port={port}"


@pytest.fixture(scope="session", autouse=True)
def images_dir(tmp_path_factory) -> Iterator[Path]:
    """Stored pictures go to a folder of this run, not the checkout's var/; child processes (the
    worker, the server) get the same folder through child_env."""
    from django.test import override_settings

    folder = tmp_path_factory.mktemp("images")
    os.environ["DEEPRECALL_IMAGES_DIR"] = str(folder)
    images: Any = settings.STORAGES["images"]
    storages = {
        **settings.STORAGES,
        "images": {**images, "OPTIONS": {**images["OPTIONS"], "location": str(folder)}},
    }
    with override_settings(STORAGES=storages):
        yield folder


@pytest.fixture(scope="session")
def child_env(django_db_setup, django_db_blocker, tmp_path_factory, images_dir) -> dict[str, str]:
    """Environment for child processes (worker, servers): the test database and a private broker."""
    from config.celery import app

    broker = tmp_path_factory.mktemp("broker")
    with django_db_blocker.unblock():
        connection.ensure_connection()
        database_url = test_database_url()
    _use_broker(app, _broker_options(broker))
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "DEEPRECALL_BROKER_DIR": str(broker),
        "PYTHONUNBUFFERED": "1",
        **{f"RATE_LIMIT_{name.upper()}": "off" for name in TESTS_RATE_LIMITS_OFF},
        # Low enough that the PDF bomb test fails fast; the documents of the other tests take a
        # fraction of a second to read.
        "DOCUMENT_PARSE_CPU_SECONDS": "3",
        "DEEPRECALL_IMAGES_DIR": str(images_dir),
    }


# The session's worker, while it runs (celery_worker): session_worker_paused stops it for a test.
_SESSION_WORKERS: list[subprocess.Popen[str]] = []


@pytest.fixture
def session_worker_paused() -> Iterator[None]:
    """The session's worker (celery_worker), if one runs, suspended for this test. It works on the
    test database through its own broker folder, and its recovery sweep acts on every job it finds
    there: a test that runs another broker against the same database (one database, two brokers,
    which no deployment is) would see that sweep send its jobs to the other broker."""
    with session_worker_suspended():
        yield


@contextlib.contextmanager
def session_worker_suspended() -> Iterator[None]:
    """The session's worker (celery_worker), if one runs, suspended while the block runs: what it is
    sent meanwhile waits for it (a page seen while its job is still queued)."""
    import psutil

    family = [
        member
        for proc in _SESSION_WORKERS
        if proc.poll() is None
        for parent in [psutil.Process(proc.pid)]
        for member in (parent, *parent.children(recursive=True))
    ]
    for member in family:
        member.suspend()
    try:
        yield
    finally:
        for member in family:
            member.resume()


@pytest.fixture(scope="session")
def celery_worker(child_env) -> Iterator[subprocess.Popen[str]]:
    """A real Celery worker process on the test database and a private broker folder.

    Started as `manage.py up` starts its worker, embedded beat (the recovery sweep) included.
    Tests that use it must be transactional (`transactional_db`): the worker is
    another process and sees only committed rows.
    """
    from config.celery import app
    from memories.management.commands.up import worker_command

    env = child_env
    broker = Path(env["DEEPRECALL_BROKER_DIR"])
    # The beat's schedule file beside the private broker, not in the checkout's var/.
    schedule = str(broker / "beat-schedule")
    command = [*worker_command(concurrency=1, hostname="test@%h"), "--schedule", schedule]
    log = open(broker / "worker.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError((broker / "worker.log").read_text()[-2000:])
        if app.control.ping(timeout=0.5, limit=1):
            break
    else:
        proc.kill()
        raise RuntimeError("the test worker did not answer a ping within 60 s")
    _SESSION_WORKERS.append(proc)
    yield proc
    _SESSION_WORKERS.remove(proc)
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def _broker_options(folder: Path) -> dict[str, object]:
    options = dict(settings.CELERY_BROKER_TRANSPORT_OPTIONS)
    for key in ("data_folder_in", "data_folder_out"):
        options[key] = str(folder / "queue")
    options["control_folder"] = str(folder / "control")
    options["processed_folder"] = str(folder / "processed")
    for key in ("data_folder_in", "control_folder", "processed_folder"):
        Path(str(options[key])).mkdir(parents=True, exist_ok=True)
    return options


def _use_broker(app, options: dict[str, object]) -> None:
    """Point this process's Celery app at another broker folder."""
    app.conf.broker_transport_options = options
    # Drop the cached pools (not close: others may still hold them) so the next
    # connection is made with the new options.
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def no_worker_broker(tmp_path) -> Iterator[None]:
    """A broker folder that no worker listens on, for this test only."""
    from config.celery import app

    previous = dict(app.conf.broker_transport_options)
    _use_broker(app, _broker_options(tmp_path / "broker"))
    yield
    _use_broker(app, previous)


@pytest.fixture
def unused_tcp_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """A real uvicorn process serving config.asgi on the test database."""

    def __init__(self, url: str, proc: subprocess.Popen[str], log: Path) -> None:
        self.url = url
        self.proc = proc
        self.log = log


def start_live_server(
    env: dict[str, str], log_dir: Path, name: str = "server", *, timeout: float = 60
) -> LiveServer:
    """uvicorn on a free port, started with the command line `manage.py up` uses."""
    import socket

    import httpx

    from memories.management.commands.up import web_command

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    url = f"http://127.0.0.1:{port}"
    log = log_dir / f"{name}.log"
    proc = subprocess.Popen(
        web_command(host="127.0.0.1", port=port),
        cwd=ROOT,
        env={**env, "PUBLIC_URL": url},
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(log.read_text()[-3000:])
        try:
            if httpx.get(f"{url}/.well-known/oauth-protected-resource/mcp", timeout=2).status_code == 200:
                return LiveServer(url, proc, log)
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"{name} did not start: {log.read_text()[-3000:]}")


def stop_live_server(server: LiveServer) -> None:
    stop_process(server.proc)


def stop_process(proc: subprocess.Popen[str], timeout: float = 20) -> None:
    """SIGTERM, and SIGKILL if it has not exited within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def asgi_server(child_env, celery_worker, tmp_path_factory) -> Iterator[LiveServer]:
    """The web + MCP server as a separate process (real HTTP), with the real worker behind it."""
    server = start_live_server(child_env, tmp_path_factory.mktemp("server"))
    yield server
    stop_live_server(server)


_NOT_SHIPPED = ("*.egg-info", ".venv", ".git", "var", "node_modules", "build", "__pycache__")


@pytest.fixture(scope="session")
def installed_wheel(tmp_path_factory) -> Path:
    """This checkout as `pip install .` installs it: a wheel built from a copy (so the checkout
    gets no build/ folder), installed with `--target` into a folder of its own (the dependencies
    are this venv's). Put the folder first on PYTHONPATH and run from anywhere but the checkout."""
    import shutil

    source = tmp_path_factory.mktemp("source") / "deeprecall"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*_NOT_SHIPPED))
    wheels = tmp_path_factory.mktemp("wheels")
    site = tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", str(source), "-w", str(wheels)],
        check=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("deeprecall-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True, timeout=300)
    return site


@pytest.fixture
def standby_named_default() -> Iterator[None]:
    """Read replicas configured, the one 'replica' being the test database itself: a primary, not a
    standby, so it never serves reads (config/replicas.py)."""
    from django.test import override_settings

    from config import replicas

    replicas._replicas.clear()
    with override_settings(DATABASE_REPLICA_ALIASES=["default"]):
        yield
    replicas._replicas.clear()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that need a real Citus (tests/sharding/test_citus.py) leave the run without CITUS_URL:
    deselected, so the default run neither skips nor passes them (docs/scale.md)."""
    if os.environ.get("CITUS_URL"):
        return
    kept = [item for item in items if item.get_closest_marker("citus") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept
