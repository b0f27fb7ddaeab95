"""The move onto Citus, against a real Citus (docs/scale.md, "Sharding by owner (Citus)").

Opt-in: set CITUS_URL to an empty database on a Citus coordinator (with the citus and vector
extensions available). Not part of the default run: Citus cannot be installed on the machines this
project is built on, so without CITUS_URL the test is deselected (tests/conftest.py), never run and
never counted as passed or skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import psycopg
import pytest

from tests.conftest import ROOT

CITUS_URL = os.environ.get("CITUS_URL", "")

pytestmark = [pytest.mark.slow, pytest.mark.citus]


def _manage(*args: str) -> str:
    env = {**os.environ, "DATABASE_URL": CITUS_URL}
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture(scope="module")
def distributed() -> None:
    """Steps 1 and 4 of docs/scale.md, once for the module: migrated, then distributed by owner."""
    with psycopg.connect(CITUS_URL, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS citus")
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    _manage("migrate", "--no-input")
    plan = [line for line in _manage("citus_plan").splitlines() if line and not line.startswith("--")]
    with psycopg.connect(CITUS_URL, autocommit=True) as conn:
        for statement in plan:
            conn.execute(statement)


def test_it_distributes_every_tenant_table_by_owner_and_routes_a_recall_to_one_shard(distributed):
    with psycopg.connect(CITUS_URL, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT logicalrelid::text, colocationid FROM pg_dist_partition WHERE partmethod = 'h'"
        ).fetchall()
        distributed = dict(rows)
        tenant = conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid"
            " WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attname = 'owner_id'"
            " AND c.relname <> 'open_query_scope'"
        ).fetchall()
        assert {name for (name,) in tenant} <= set(distributed)
        assert len(set(distributed.values())) == 1, distributed
        owner = uuid.uuid4()
        plan_text = "\n".join(
            row[0]
            for row in conn.execute(
                "EXPLAIN SELECT m.id FROM memories_memory m JOIN memories_source s"
                " ON s.owner_id = m.owner_id AND s.id = m.source_id WHERE m.owner_id = %s",
                [owner],
            ).fetchall()
        )
        assert "Task Count: 1" in plan_text, plan_text


def test_the_open_query_stays_off_and_its_check_names_every_view(distributed):
    """docs/scale.md, "The open query on Citus": Citus checks each shard's privileges as the query
    role, not as the views' owner, so the role reads none of its views and the check, which reads
    each, refuses the open query. Expected from Citus's own source and tests; never run here. The
    query role must be able to log in to the coordinator (OPEN_QUERY_PASSWORD, or a trusting
    pg_hba.conf)."""
    env = {**os.environ, "DATABASE_URL": CITUS_URL}
    done = subprocess.run(
        [sys.executable, "manage.py", "open_query_roles", "--check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0, done.stdout
    assert "cannot log in" not in done.stderr, done.stderr
    with psycopg.connect(CITUS_URL, autocommit=True) as conn:
        views = [
            name
            for (name,) in conn.execute(
                "SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'open_query'::regnamespace"
                " AND c.relkind = 'v'"
            ).fetchall()
        ]
    assert views, "no open_query views: the migration did not make them"
    for view in views:
        assert f"cannot read the view open_query.{view}" in done.stderr, (view, done.stderr[-2000:])
