"""`manage.py up`: the whole service in one command.

Starts (or reuses) the database, applies migrations, then runs the ASGI web
server (Django + MCP) and a Celery worker as child processes, prints the URL,
and waits. The worker embeds Celery beat (`-B`), which sends the recovery sweep
on schedule: right for one machine, where this is the only worker; a deployment
with several workers runs exactly one beat (docs/deploy.md). Ctrl-C (or SIGTERM)
stops the children, then the embedded database. Running it again reuses
everything: initdb, the secret and migrations are idempotent.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psycopg
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser, SystemCheckError
from django.db import OperationalError, connections

from config.boundary import ServiceConfigError

STOP_GRACE_SECONDS = 15
READY_TIMEOUT_SECONDS = 300


def _check_port_free(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ServiceConfigError(
                    f"port {port} on {host} is already in use; stop the program using it "
                    f"or choose another port with PORT=... (or --port)"
                ) from None
            raise ServiceConfigError(f"cannot listen on {host}:{port} ({exc.strerror})") from None


def _probe_database() -> None:
    """One plain connection attempt (not through the pool, which would retry for seconds)."""
    params = connections["default"].get_connection_params()
    params.pop("pool", None)
    params.setdefault("connect_timeout", 5)
    with psycopg.connect(**params) as conn:
        conn.execute("SELECT 1")


def _describe_database() -> str:
    db = settings.DATABASES["default"]
    if db["ENGINE"] == "config.embedded_pg":
        return f"embedded PostgreSQL in {db['PGDATA']}"
    host = db.get("HOST") or "localhost"
    return f"PostgreSQL at {host}:{db.get('PORT') or 5432}/{db['NAME']}"


def worker_command(*, concurrency: int, hostname: str) -> list[str]:
    """The command line of the service's Celery worker (the tests start theirs with it too)."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "config",
        "worker",
        "--loglevel",
        "INFO",
        "--concurrency",
        str(concurrency),
        "--hostname",
        hostname,
        "--without-gossip",
        "--without-mingle",
        # The one beat of this single-machine service, sending the recovery sweep; its schedule
        # file is under var/ (config/celery.py).
        "-B",
    ]


def web_command(*, host: str, port: int) -> list[str]:
    """The command line of the service's web process (the tests start theirs with it too)."""
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "config.asgi:application",
        "--host",
        host,
        "--port",
        str(port),
        "--lifespan",
        "on",
        "--no-server-header",
        # The client address has one rule, accounts.throttles.client_address (the peer, and
        # X-Forwarded-For only from DEEPRECALL_TRUSTED_PROXIES). uvicorn's proxy headers, on by
        # default, would put X-Forwarded-For from 127.0.0.1 into REMOTE_ADDR whatever that setting
        # says. X-Forwarded-Proto is Django's to read (SECURE_PROXY_SSL_HEADER, in production).
        "--no-proxy-headers",
        "--log-level",
        "warning",
    ]


class Command(BaseCommand):
    help = "Start Deep Recall: web + MCP (uvicorn), Celery worker with beat, database."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=settings.PORT)

    def handle(self, *args: Any, **options: Any) -> None:
        host: str = options["host"]
        port: int = options["port"]
        _check_port_free(host, port)
        self._prepare_database()
        children = self._spawn(host, port)
        display_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        url = f"http://{display_host}:{port}"
        self.stdout.write(f"Deep Recall is starting at {url}  (public URL {settings.PUBLIC_URL})")
        self.stdout.write("Ctrl-C stops everything.")
        self._supervise(children, url)

    def _prepare_database(self) -> None:
        db = settings.DATABASES["default"]
        if db["ENGINE"] == "config.embedded_pg":
            from config.embedded_pg import EmbeddedPostgresError, adopt

            try:
                adopt(Path(str(db["PGDATA"])))
            except EmbeddedPostgresError as exc:
                raise ServiceConfigError(str(exc)) from None
        try:
            _probe_database()
        except (OperationalError, psycopg.OperationalError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "no answer"
            raise ServiceConfigError(
                f"cannot connect to {_describe_database()}: {reason}; check DATABASE_URL"
            ) from None
        # What `runserver` would check, before anything serves: e.g. a REST method without a
        # declared scope (memories.checks) must stop the service, not open an endpoint.
        try:
            call_command("check", fail_level="ERROR", stdout=io.StringIO())
        except SystemCheckError as exc:
            problems = [line.strip() for line in str(exc).splitlines() if ".E0" in line or ".E1" in line]
            raise ServiceConfigError("; ".join(problems) or "system checks failed") from None
        call_command("migrate", interactive=False, verbosity=0)
        # The rate limits' table, should the cache have moved from Redis to the database since
        # the migration made it (accounts.0003_shared_cache_table); a no-op when it exists.
        call_command("createcachetable", verbosity=0)
        # The children open their own connections; ours would only hold a backend.
        connections.close_all()
        self.stdout.write(f"Database ready: {_describe_database()}")

    def _spawn(self, host: str, port: int) -> dict[str, subprocess.Popen[bytes]]:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        web = web_command(host=host, port=port)
        worker = worker_command(
            concurrency=settings.CELERY_WORKER_CONCURRENCY, hostname=f"deeprecall-{os.getpid()}@%h"
        )
        # Each child leads a process group of its own, with everything it starts (the worker's pool
        # processes and its beat): stopping signals the whole group, so nothing outlives a child
        # that was killed (the OOM killer, kill -9), whose own children would otherwise be orphans,
        # the beat still sending the sweep into a queue nobody reads.
        return {
            "worker": subprocess.Popen(worker, env=env, cwd=settings.BASE_DIR, start_new_session=True),
            "web": subprocess.Popen(web, env=env, cwd=settings.BASE_DIR, start_new_session=True),
        }

    def _supervise(self, children: dict[str, subprocess.Popen[bytes]], url: str) -> None:
        stopping = False

        def on_signal(signum: int, frame: object) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        announced = False
        started = time.monotonic()
        exit_code = 0
        try:
            while not stopping:
                dead = [name for name, proc in children.items() if proc.poll() is not None]
                if dead:
                    self.stderr.write(f"deeprecall: the {dead[0]} process exited; stopping everything")
                    exit_code = 1
                    break
                if not announced:
                    announced = self._report_ready(url, started)
                time.sleep(0.5)
        finally:
            self._stop(children)
            from config.embedded_pg import stop

            db = settings.DATABASES["default"]
            if db["ENGINE"] == "config.embedded_pg":
                stop(Path(str(db["PGDATA"])))
            self.stdout.write("Deep Recall stopped.")
        if exit_code:
            raise SystemExit(exit_code)

    def _report_ready(self, url: str, started: float) -> bool:
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=10) as resp:  # noqa: S310
                report = json.loads(resp.read())
            # The web process is ready without a worker (recall needs none), but this command
            # started one and says so only when it answers too.
            ready = bool(report["ready"] and report["checks"]["worker"]["ready"])
        except (urllib.error.URLError, OSError, ValueError, KeyError):
            ready = False
        if ready:
            self.stdout.write(f"Deep Recall is ready at {url}  (health: {url}/healthz)")
            return True
        if time.monotonic() - started > READY_TIMEOUT_SECONDS:
            self.stderr.write(f"deeprecall: not ready after {READY_TIMEOUT_SECONDS}s; see {url}/healthz")
            return True
        return False

    def _stop(self, children: dict[str, subprocess.Popen[bytes]]) -> None:
        # Every group, also that of a child already gone: its own children may still run.
        for proc in children.values():
            _signal_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for proc in children.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        # What outlived its group's leader (the children of a child that was killed) has the rest
        # of the grace period to finish, then everything left is killed.
        while any(_group_alive(proc.pid) for proc in children.values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        for proc in children.values():
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait()


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
