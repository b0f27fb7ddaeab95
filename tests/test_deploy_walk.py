"""docs/deploy.md, walked on this machine as far as it allows: the doc's own SQL, env file and units.

The admin step is the SQL block of step 1 (role, database, extension, open-query role) read from the
doc; Redis runs with the doc's persistence settings; the project is the installed wheel; the
environment is docs/deploy/deeprecall.env with this machine's addresses; the web processes,
workers and beat run the ExecStart lines of the units in docs/deploy/. Then the doc's checks: two
workers in /healthz, an account and a token from the operator commands, a save through one web
process and its recall through the other. The PostgreSQL is the suite's (with pgvector), not one
from apt.postgresql.org; systemd itself is not involved (its units are parsed, not started).
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.conftest import PASSWORD, ROOT
from tests.debian import debian_ensure
from tests.helpers import superuser_params
from tests.redis_server import REDIS_SERVER

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DOC = ROOT / "docs" / "deploy.md"
UNITS = ROOT / "docs" / "deploy"
HOST = "memory.example.com"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _admin_sql() -> str:
    """The SQL of step 1's `sudo -u postgres psql ... <<'SQL'` block, as the doc has it."""
    text = DOC.read_text()
    match = re.search(
        r"psql -v ON_ERROR_STOP=1 -v pw=\"\$DB_PASSWORD\" -v qpw=\"\$QUERY_PASSWORD\" <<'SQL'\n(.*?)\nSQL\n",
        text,
        re.S,
    )
    assert match, "docs/deploy.md lost its admin SQL block"
    return match.group(1)


def _unit_command(unit: str, instance: str) -> list[str]:
    """A unit's ExecStart with the instance filled in, the venv's scripts run by this Python."""
    text = (UNITS / unit).read_text().replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    command = shlex.split(line.removeprefix("ExecStart=").replace("%i", instance).replace("%%", "%"))
    script = Path(command[0])
    assert script.parent == Path("/srv/deeprecall/venv/bin"), command
    return [sys.executable, "-m", script.name, *command[1:]]


def _tail(log: Path) -> str:
    # Celery copies a traceback's lines to its log as warnings, carets included: keep the words.
    lines = [
        line
        for line in log.read_text().splitlines()
        if line.strip(" ^").rpartition("redirected")[2].strip(" ^")
    ]
    return "\n".join(lines[-40:])


def _env_file() -> dict[str, str]:
    env = {}
    for line in (UNITS / "deeprecall.env").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key] = value.strip('"')
    return env


@pytest.fixture
def redis_server(tmp_path) -> Iterator[tuple[int, str]]:
    """Debian's redis-server with the persistence settings of step 2."""
    # Installed when missing, as the doc's step 2 does (and as the fault suite does).
    binary = debian_ensure(package="redis-server", executable=REDIS_SERVER)
    port, password = _free_port(), secrets.token_urlsafe(16)
    folder = tmp_path / "redis"
    folder.mkdir()
    proc = subprocess.Popen(
        [
            *(binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", ""),
            *("--appendonly", "yes", "--appendfsync", "everysec", "--requirepass", password),
        ],
        stdout=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(port=port, password=password)
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)
    assert client.config_get("appendonly") == {"appendonly": "yes"}
    yield port, password
    proc.terminate()
    proc.wait(timeout=20)


@dataclass
class WalkedDatabase:
    url: str
    query_password: str
    superuser: dict[str, Any]


@pytest.fixture
def walked_database(django_db_blocker) -> Iterator[WalkedDatabase]:
    """Step 1's SQL, as the PostgreSQL superuser, with the names of this walk."""
    with django_db_blocker.unblock():
        params = superuser_params()
    password, query_password = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    # Roles are cluster-wide and the suite's database has deeprecall_query already.
    sql = _admin_sql().replace("deeprecall_query", "walk_query").replace("deeprecall", "walk")
    sql = sql.replace(":'pw'", "'" + password + "'").replace(":'qpw'", "'" + query_password + "'")
    before, _, after = sql.partition("\\c walk\n")
    with psycopg.connect(**params, autocommit=True) as admin:
        for statement in filter(str.strip, before.split(";")):
            admin.execute(statement)
    with psycopg.connect(**{**params, "dbname": "walk"}, autocommit=True) as admin:
        for statement in filter(str.strip, after.split(";")):
            admin.execute(statement)
    host, port = params.get("host") or "localhost", params.get("port") or 5432
    try:
        yield WalkedDatabase(
            f"postgresql://walk:{password}@/walk?host={host}&port={port}",
            query_password,
            {**params, "dbname": "walk"},
        )
    finally:
        with psycopg.connect(**params, autocommit=True) as admin:
            admin.execute("DROP DATABASE walk WITH (FORCE)")
            admin.execute("DROP ROLE walk")
            admin.execute("DROP ROLE walk_query")


def test_the_deploy_doc_walks_to_a_working_service(installed_wheel, walked_database, redis_server, tmp_path):
    redis_port, redis_password = redis_server
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(installed_wheel),
        "PYTHONUNBUFFERED": "1",
        **_env_file(),
        "SECRET_KEY": secrets.token_urlsafe(50),
        "PUBLIC_URL": f"https://{HOST}",
        "DATABASE_URL": walked_database.url,
        "OPEN_QUERY_PASSWORD": walked_database.query_password,
        "CELERY_BROKER_URL": f"redis://:{redis_password}@127.0.0.1:{redis_port}/0",
        "REDIS_URL": f"redis://:{redis_password}@127.0.0.1:{redis_port}/1",
        "DEEPRECALL_VAR_DIR": str(tmp_path / "var"),
        "OPEN_QUERY_ROLE": "walk_query",
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
    }
    state = tmp_path / "state"
    state.mkdir()

    def admin(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        # deeprecall-admin: `deeprecall manage ...` with the env file, from the state folder.
        return subprocess.run(
            [sys.executable, "-c", "from config.cli import main; main()", "manage", *args],
            cwd=state,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=300,
        )

    # Step 5: the open query's privileges, printed by the admin command, run by the superuser.
    printed = admin("open_query_roles", "--sql")
    assert printed.returncode == 0, printed.stderr[-3000:]
    with psycopg.connect(**walked_database.superuser, autocommit=True) as superuser:
        superuser.execute(printed.stdout)
    migrated = admin("migrate")
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    checked = admin("open_query_roles", "--check")
    assert checked.returncode == 0, checked.stderr[-3000:]
    web_ports = [_free_port(), _free_port()]
    commands = {
        **{f"web{p}": _unit_command("deeprecall-web@.service", str(p)) for p in web_ports},
        # Concurrency 1 instead of the unit's 2: this machine is shared with the rest of the suite.
        **{
            name: ["1" if arg == "2" else arg for arg in _unit_command("deeprecall-worker@.service", name)]
            for name in ("worker1", "worker2")
        },
        "beat": _unit_command("deeprecall-beat.service", ""),
    }
    logs = tmp_path / "logs"
    logs.mkdir()
    procs = {
        name: subprocess.Popen(
            command, cwd=state, env=env, stdout=(logs / name).open("w"), stderr=subprocess.STDOUT
        )
        for name, command in commands.items()
    }
    try:
        urls = [f"http://127.0.0.1:{p}" for p in web_ports]
        deadline = time.monotonic() + 300
        health: dict = {}
        while True:
            for name, proc in procs.items():
                assert proc.poll() is None, f"{name} exited: {_tail(logs / name)}"
            try:
                health = httpx.get(f"{urls[0]}/healthz", timeout=15).json()
                ready = httpx.get(f"{urls[1]}/healthz/ready", timeout=15).status_code == 200
                if ready and health["ready"] and health["checks"]["worker"]["workers"] == 2:
                    break
            except (httpx.HTTPError, ValueError):
                pass
            assert time.monotonic() < deadline, f"not ready with two workers: {health}"
            time.sleep(1)
        assert sorted(n.split("@")[0] for n in health["checks"]["worker"]["answered"]) == [
            "worker1",
            "worker2",
        ]
        assert health["checks"]["broker"]["transport"] == "redis"

        created = admin("user_create", "--email", "you@example.com", stdin=PASSWORD + "\n")
        assert created.returncode == 0, created.stderr
        token = admin("token_create", "--email", "you@example.com", "--name", "first-test")
        assert token.returncode == 0, token.stderr
        # As the proxy sends it: the public host, https, the client's address.
        headers = {
            "Host": HOST,
            "X-Forwarded-Proto": "https",
            "Authorization": f"Bearer {token.stdout.strip()}",
        }
        saved = httpx.post(
            f"{urls[1]}/api/v1/memories",
            json={"content": "I prefer window seats on long flights.", "wait": 30},
            headers=headers,
            timeout=120,
        )
        assert saved.status_code in (201, 202), saved.text
        # Recalled through the other web process (202: the worker took longer than the wait).
        deadline = time.monotonic() + 90
        while True:
            found = httpx.post(
                f"{urls[0]}/api/v1/operations/recall",
                json={"query": "which seat do I like?"},
                headers=headers,
                timeout=60,
            )
            assert found.status_code == 200, found.text
            if "window seats" in found.text:
                break
            assert time.monotonic() < deadline, found.text
            time.sleep(1)
        # The open query, logged in as its own role with the env file's password: her row only.
        queried = httpx.post(
            f"{urls[1]}/api/v1/query",
            json={"sql": "SELECT content FROM memories"},
            headers=headers,
            timeout=60,
        )
        assert queried.status_code == 200, queried.text
        assert queried.json()["rows"] == [["I prefer window seats on long flights."]]
        status = admin("pipeline_status", "--json")
        assert status.returncode == 0, status.stderr
        assert '"stuck": []' in status.stdout
    finally:
        for proc in procs.values():
            proc.terminate()
        for proc in procs.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
