"""An outside review's attacks on the open query's tenant isolation, each kept as a test.

Written against the design (docs/decisions.md, "The open query: SQL that the database itself keeps
in bounds"), not only the parser. Alice is the attacker, with a read-only caller's means: one SELECT
through the guard (`query_check`) and, to see what the database holds on its own, the same text past
the guard (a hand-made `CheckedQuery`). Bob is the victim: whatever of his reaches Alice, in rows,
errors or side channels, is a hole.

Every attempt asserts the secure outcome. Where the outcome is not secure, the test is kept and
marked `xfail(strict=True, reason="HOLE: ...")` (or "BUG: ..." for a harmless inconsistency), so the
file runs green while the hole stays documented, and turns red the day it is fixed (strict).
"""

# ruff: noqa: S608 - the statements here are attacks this file writes, run to see them fail
from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection

from accounts.caller import Caller
from accounts.models import User
from mcp_gateway.tools import call_tool
from memories.errors import AppError
from memories.models import Entity, Evidence, Memory, Source, Space
from memories.open_query.guard import CheckedQuery, query_check
from memories.selectors import open_query
from memories.selectors.open_query import query_connection_params, query_run
from memories.services.spaces import space_create_default
from memories.worker.store import OWNER_WRITE_LOCK, owner_write_keys
from tests.helpers import READ, error_of, link, pat_client, superuser_params

pytestmark = pytest.mark.django_db(transaction=True)

BOB_SECRET = f"BOB-SECRET-{uuid.uuid4().hex}"
BOB_ENTITY = f"BobEntity{uuid.uuid4().hex[:12]}"
BOB_TITLE = f"bob-title-{uuid.uuid4().hex[:12]}"
ROLE = settings.OPEN_QUERY_ROLE
# The codes an attempt may end in: refused by the guard, refused or failed in PostgreSQL, stopped.
REFUSED = ("query_rejected", "query_failed", "query_timeout")


def _hole(reason: str) -> pytest.MarkDecorator:
    """A documented hole: the test fails on its assertion until the hole is fixed (then it passes,
    and strict makes the run red so the mark is removed). Any other exception is a real failure."""
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)


def _memory(owner: User, space: Space, content: str, *, title: str = "") -> Memory:
    source = Source.objects.create(
        owner=owner,
        space=space,
        origin=Source.Origin.REMEMBER,
        content=content,
        content_hash=uuid.uuid4().hex,
        claimant="user",
        title=title,
    )
    memory = Memory.objects.create(owner=owner, space=space, source=source, kind="fact", content=content)
    Evidence.objects.create(owner=owner, source=source, memory=memory)
    return memory


@pytest.fixture
def world(alice, bob) -> dict[str, Any]:
    alices = space_create_default(owner=alice)
    _memory(alice, alices, "I love green tea.")
    bobs = space_create_default(owner=bob)
    secret = _memory(bob, bobs, f"My plan is {BOB_SECRET}.", title=BOB_TITLE)
    entity = Entity.objects.create(
        owner=bob, space=bobs, name=BOB_ENTITY, normalized_name=BOB_ENTITY.lower(), type="Person"
    )
    link(secret, entity)
    # Alice's own second space: the open query reads her current space only, not all of hers.
    other = Space.objects.create(owner=alice, name="work", is_default=False)
    _memory(alice, other, f"Alice's other space {uuid.uuid4().hex}.")
    session = SessionStore()
    session["_auth_user_id"] = str(bob.pk)
    session.create()
    return {
        "space": alices,
        "bob_space": bobs,
        "other_space": other,
        # What must never reach Alice, in any form.
        "secrets": [
            BOB_SECRET,
            BOB_ENTITY,
            BOB_TITLE,
            bob.email,
            str(bob.pk),
            str(bobs.pk),
            bob.password.split("$")[-1],
            str(session.session_key),
            "Alice's other space",
        ],
    }


def _checked(sql: str, *, guarded: bool) -> CheckedQuery:
    return query_check(sql) if guarded else CheckedQuery(sql=sql, parameter_count=0, views=())


def _attempt(alice: User, space: Space, sql: str, *, guarded: bool) -> list[list[Any]] | AppError:
    try:
        return query_run(owner=alice, space=space, query=_checked(sql, guarded=guarded), params=[]).rows
    except AppError as refused:
        return refused


def _held(outcome: list[list[Any]] | AppError, secrets: list[str], sql: str) -> None:
    """Nothing of anyone else came back, and a refusal is one of the open query's own codes."""
    if isinstance(outcome, AppError):
        assert outcome.code in REFUSED, (sql, outcome.code, outcome.message)
        seen = outcome.message + str(outcome.details)
    else:
        seen = str(outcome)
    for secret in secrets:
        assert secret not in seen, (sql, seen[:500])
    assert "@example.com" not in seen, (sql, seen[:500])


def _observed(sql: str) -> str:
    """The attack, then who the session is (past the guard only: the guard refuses current_user)."""
    return (
        f"WITH attack AS MATERIALIZED ({sql}) "
        "SELECT (SELECT count(*) FROM attack), current_user::text, session_user::text"
    )


def _role_unchanged(alice: User, space: Space, sql: str) -> None:
    outcome = _attempt(alice, space, _observed(sql), guarded=False)
    if not isinstance(outcome, AppError):
        assert outcome[0][1:] == [ROLE, ROLE], sql


def _scope_rows() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM open_query_scope")
        return int(cursor.fetchone()[0])


def _guard_refuses(sql: str) -> None:
    """The guard itself (no database) refuses `sql`: PostgreSQL's own refusal is also reported as
    query_rejected, so only query_check tells the two walls apart."""
    try:
        accepted = query_check(sql)
    except AppError as refused:
        assert refused.code == "query_rejected", refused
        return
    raise AssertionError(f"the guard accepted {accepted.sql[:300]!r}")


def _query_role_backends(wait: float = 5.0) -> int:
    """The query role's backends still there, once the ones just closed have had time to exit."""
    deadline = time.monotonic() + wait
    with psycopg.connect(**superuser_params(), autocommit=True) as admin:
        while True:
            row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s", [ROLE]).fetchone()
            left = int(row[0]) if row else 0
            if left == 0 or time.monotonic() > deadline:
                return left
            time.sleep(0.05)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# --- 1. The name resolver: attribute notation by spellings the scopes are worked out wrong for -----
#
# PostgreSQL reads `x.f`, when f is not a column of x, as f(x). names.py must find x where PostgreSQL
# would; each shape below registers an `x` that PostgreSQL cannot see at that place (a join alias
# hides the names inside it; a FROM subquery without LATERAL, a VALUES list and a JOIN's ON clause do
# not see their FROM siblings), so PostgreSQL takes the next `x` out: a scalar from unnest().

_HIDDEN = "((SELECT 1 AS {f}) AS x JOIN (SELECT 1 AS y) AS z ON true) AS j"
SHAPES = {
    "join_alias_hides_inner_alias": "SELECT (SELECT x.{f} FROM " + _HIDDEN + ") FROM unnest(ARRAY[{a}]) AS x",
    "join_alias_same_level": "SELECT x.{f} FROM unnest(ARRAY[{a}]) AS x, " + _HIDDEN,
    "subquery_without_lateral": (
        "SELECT (SELECT s.v FROM (SELECT 1 AS {f}) AS x, (SELECT x.{f} AS v) AS s)"
        " FROM unnest(ARRAY[{a}]) AS x"
    ),
    "join_on_clause": (
        "SELECT (SELECT count(*) FROM (SELECT 1 AS {f}) AS x, memories a JOIN memories b"
        " ON x.{f} IS NOT NULL) FROM unnest(ARRAY[{a}]) AS x"
    ),
    "values_list_in_from": (
        "SELECT (SELECT v.column1 FROM (SELECT 1 AS {f}) AS x, (VALUES (x.{f})) AS v)"
        " FROM unnest(ARRAY[{a}]) AS x"
    ),
    "distinct_on": "SELECT (SELECT DISTINCT ON (x.{f}) 1 FROM " + _HIDDEN + ") FROM unnest(ARRAY[{a}]) AS x",
    "grouping_sets": (
        "SELECT (SELECT count(*) FROM " + _HIDDEN + " GROUP BY GROUPING SETS ((x.{f}), ()) LIMIT 1)"
        " FROM unnest(ARRAY[{a}]) AS x"
    ),
    "order_by": "SELECT (SELECT 1 FROM " + _HIDDEN + " ORDER BY x.{f} LIMIT 1) FROM unnest(ARRAY[{a}]) AS x",
    "window_definition": (
        "SELECT (SELECT max(1) OVER w FROM " + _HIDDEN + " WINDOW w AS (PARTITION BY x.{f}))"
        " FROM unnest(ARRAY[{a}]) AS x"
    ),
    "where_clause_oracle": (
        "SELECT (SELECT 1 FROM " + _HIDDEN + " WHERE x.{f}::text LIKE '%scope%') FROM unnest(ARRAY[{a}]) AS x"
    ),
    "natural_join_alias": (
        "SELECT (SELECT x.{f} FROM ((SELECT 1 AS {f}) AS x NATURAL JOIN (SELECT 1 AS y) AS z) AS j)"
        " FROM unnest(ARRAY[{a}]) AS x"
    ),
    "using_join_alias": (
        "SELECT (SELECT x.{f} FROM ((SELECT 1 AS {f}) AS x JOIN (SELECT 1 AS {f}) AS z USING ({f})) AS j)"
        " FROM unnest(ARRAY[{a}]) AS x"
    ),
    "cte_inside_join_alias": (
        "WITH x AS (SELECT 1 AS {f}) SELECT (SELECT x.{f} FROM (x JOIN (SELECT 1 AS y) AS z ON true) AS j)"
        " FROM unnest(ARRAY[{a}]) AS x"
    ),
}
# Spellings the resolver gets right (it must refuse them): kept so a regression shows.
SAFE_SHAPES = {
    "plain_scalar_alias": "SELECT x.{f} FROM unnest(ARRAY[{a}]) AS x",
    "lateral_subquery": "SELECT s.v FROM unnest(ARRAY[{a}]) AS x, LATERAL (SELECT x.{f} AS v) AS s",
    "with_ordinality_alias_list": "SELECT x.{f} FROM unnest(ARRAY[{a}]) WITH ORDINALITY AS x(v, n)",
    "cte_shadowing_a_view": "WITH memories AS (SELECT {a} AS content) SELECT m.{f} FROM memories m",
    "cte_of_a_sibling_subquery": (
        "SELECT (WITH c AS (SELECT 1 AS {f}) SELECT 1), (SELECT c.{f} FROM c) FROM unnest(ARRAY[{a}]) AS c"
    ),
    "recursive_cte": (
        "WITH RECURSIVE r(v) AS (SELECT {a} UNION ALL SELECT v FROM r WHERE false) SELECT r.{f} FROM r"
    ),
    "quoted_name": 'SELECT x."{f}" FROM unnest(ARRAY[{a}]) AS x',
    "jsonb_each_alias": "SELECT e.{f} FROM jsonb_each(jsonb_build_object('k', {a})) AS e",
    "subquery_output_name": "SELECT s.{f} FROM (SELECT {a} AS v) AS s",
    "star_of_hidden_join": "SELECT j.{f} FROM " + _HIDDEN.replace("{f}", "v"),
    "field_selection_of_row": "SELECT (ROW(x)).{f} FROM unnest(ARRAY[{a}]) AS x",
    "three_part_name": "SELECT memories.m.{f} FROM memories m",
}

_EMAILS = "SELECT to_tsvector('simple', replace(email, '@', ' at ')) FROM public.accounts_user"
# Functions of one argument that would leak, write or reach other sessions if they ran: the database
# has taken each from PUBLIC (roles.py, or PostgreSQL's own default).
DANGEROUS = {
    "ts_stat": _quoted(_EMAILS),
    "pg_read_file": "'/etc/passwd'",
    "pg_ls_dir": "'.'",
    "lo_import": "'/etc/passwd'",
    "current_setting": "'data_directory'",
    "pg_sleep": "3",
    "pg_advisory_lock": "1",
    "pg_terminate_backend": "1",
    "pg_stat_get_backend_activity": "1",
}


def _shape(template: str, function: str, argument: str) -> str:
    return template.replace("{f}", function).replace("{a}", argument)


@pytest.mark.parametrize("function", list(DANGEROUS))
@pytest.mark.parametrize("shape", list(SHAPES) + list(SAFE_SHAPES))
def test_attribute_notation_in_every_shape_reaches_nothing_of_anyone_else(world, alice, shape, function):
    """Through the guard and past it: whatever the resolver lets by, the database refuses the
    function (it is not PUBLIC's), and nothing of Bob's comes back."""
    sql = _shape({**SHAPES, **SAFE_SHAPES}[shape], function, DANGEROUS[function])
    before = (Memory.objects.count(), User.objects.count())
    for guarded in (True, False):
        outcome = _attempt(alice, world["space"], sql, guarded=guarded)
        _held(outcome, world["secrets"], sql)
        assert isinstance(outcome, AppError), (sql, guarded, outcome)
    _role_unchanged(alice, world["space"], sql)
    assert (Memory.objects.count(), User.objects.count()) == before
    assert _scope_rows() == 0


# These shapes got through names.py as first written (it registered FROM items PostgreSQL cannot
# see at that place: inside a join alias, beside a non-LATERAL subquery, VALUES list or ON clause),
# so `x.f` passed as a column and PostgreSQL called f(x) on an outer value. Closed since.
@pytest.mark.parametrize("shape", [*SHAPES, *SAFE_SHAPES])
def test_the_guard_refuses_a_function_called_by_attribute_notation(world, alice, shape):
    """pg_get_viewdef is outside the allow-list: a statement that calls it must be refused. Where the
    guard lets it through, it returns the views' SQL (open_query_scope, pg_backend_pid)."""
    sql = _shape({**SHAPES, **SAFE_SHAPES}[shape], "pg_get_viewdef", "'open_query.memories'")
    _guard_refuses(sql)


def test_through_the_guard_alice_cannot_weigh_every_tenants_memories(world, alice, bob):
    """The resolver hole put to use: regclassout(oid) names every relation, pg_relation_size(oid)
    weighs it, both by attribute notation on generate_series's integers (int -> regclass is an
    implicit cast, and neither function checks a privilege). Alice sees one memory in her view; the
    table's size is Bob's too."""
    for index in range(300):
        _memory(bob, world["bob_space"], f"{index} {uuid.uuid4().hex * 16}")

    def called(function: str) -> str:
        return (
            f"(SELECT x.{function} FROM ((SELECT 1 AS {function}) AS x JOIN (SELECT 1 AS y) AS z ON true)"
            " AS j)"
        )

    # to_regclass finds a view's oid (the tables' are just below), regclassout names each oid under
    # it, pg_relation_size weighs it.
    sql = (
        f"WITH v AS (SELECT {called('to_regclass')}::int8 AS top"
        " FROM unnest(ARRAY['open_query.memories']) AS x)"
        f" SELECT t.name, t.bytes FROM (SELECT {called('regclassout')}::text AS name,"
        f" {called('pg_relation_size')} AS bytes FROM v, generate_series(v.top - 200000, v.top) AS x) AS t"
        " WHERE t.name = 'public.memories_memory'"
    )
    outcome = _attempt(alice, world["space"], sql, guarded=True)
    # Refused, or at most her own share: two short memories fit in one 8 kB page.
    assert isinstance(outcome, AppError) or not outcome or int(outcome[0][1]) <= 8192, outcome


# Column names PostgreSQL would not give: the resolver trusts them, PostgreSQL then looks for a
# function of that name. Harmless while no such function exists, but the guard should refuse.
@pytest.mark.parametrize(
    "sql",
    [
        # names.py once named CURRENT_TIMESTAMP(n) 'current_timestamp_n' (PostgreSQL: current_timestamp).
        "SELECT s.current_timestamp_n FROM (SELECT CURRENT_TIMESTAMP(2)) AS s",
        # Once named 'case' by names.py; PostgreSQL names it after the subquery's column (?column?).
        "SELECT s.case FROM (SELECT CASE WHEN true THEN 1 ELSE (SELECT 1) END) AS s",
        "SELECT s.nullif FROM (SELECT nullif(1, 2)) AS s",
    ],
)
def test_the_guard_refuses_output_names_postgresql_would_not_give(world, alice, sql):
    _held(_attempt(alice, world["space"], sql, guarded=False), world["secrets"], sql)
    _guard_refuses(sql)


# Operators are functions too: decisions.md says qualified operators must be pg_catalog's. ORDER BY
# ... USING and `op ANY (subquery)` carry their operator outside A_Expr, and the guard once missed them
# (the database refused public's anyway: no USAGE).


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1 ORDER BY 1 USING OPERATOR(public.<)",
        "SELECT 1 WHERE 1 OPERATOR(public.=) ANY (SELECT 1)",
        "SELECT 1 WHERE 1 OPERATOR(public.=) ALL (ARRAY[1])",
        "SELECT 1 WHERE 1 OPERATOR(open_query.=) 1",
    ],
)
def test_qualified_operators_outside_pg_catalog_are_refused(world, alice, sql):
    for guarded in (False, True):
        _held(_attempt(alice, world["space"], sql, guarded=guarded), world["secrets"], sql)
    _guard_refuses(sql)


# --- 2. Functions and views PostgreSQL leaves to PUBLIC, past the guard --------------------------
#
# The guard refuses all of these (catalogs, functions off the list); the question is what the query
# role could do with them if it had a hole (section 1 shows it has one for one-argument functions).

PAST_GUARD = [
    # Settings, read without current_setting.
    "SELECT name, setting FROM pg_settings",
    "SELECT * FROM pg_show_all_settings()",
    "SELECT * FROM pg_file_settings",
    "SELECT * FROM pg_hba_file_rules",
    # Snapshots and transaction ids: other sessions' transactions, never their rows.
    "SELECT pg_export_snapshot()",
    "SELECT pg_current_snapshot()::text, txid_current_snapshot()::text",
    "SELECT pg_current_xact_id()::text, txid_current()",
    "SELECT txid_status(1), pg_xact_status('1'::xid8)",
    # Deparsing the views and the functions: definitions, not data.
    "SELECT pg_get_viewdef('open_query.memories'::regclass, true)",
    "SELECT pg_get_functiondef('pg_catalog.pg_backend_pid'::regproc)",
    "SELECT pg_get_userbyid(10), pg_get_serial_sequence('public.memories_memory', 'id')",
    # Sizes and statistics of tables that are not Alice's alone.
    "SELECT pg_total_relation_size('public.memories_memory')",
    "SELECT pg_database_size('postgres'), pg_database_size(current_database())",
    "SELECT pg_column_size(m.*), pg_column_compression(m.content) FROM memories m",
    "SELECT attname, most_common_vals::text FROM pg_stats WHERE schemaname = 'public'",
    "SELECT * FROM pg_stats_ext",
    "SELECT * FROM pg_stats_ext_exprs",
    "SELECT * FROM pg_statistic_ext_data",
    # Sequences and large objects.
    "SELECT * FROM pg_sequences",
    "SELECT pg_sequence_last_value(c.oid) FROM pg_class c WHERE c.relkind = 'S'",
    "SELECT * FROM pg_get_sequence_data('public.django_migrations_id_seq')",
    "SELECT setval('public.django_migrations_id_seq', 1)",
    "SELECT lo_get(loid) FROM pg_largeobject",
    # Other sessions, in other ways than pg_stat_activity.
    "SELECT * FROM pg_stat_ssl",
    "SELECT * FROM pg_stat_gssapi",
    "SELECT * FROM pg_stat_progress_vacuum",
    "SELECT * FROM pg_backend_memory_contexts",
    "SELECT pg_log_backend_memory_contexts(1)",
    "SELECT * FROM pg_prepared_xacts",
    "SELECT * FROM pg_replication_slots",
    "SELECT * FROM pg_stat_replication",
    "SELECT * FROM pg_shmem_allocations",
    "SELECT pg_notification_queue_usage(), pg_listening_channels()",
    # What changes the server: statistics, maintenance, replication, configuration.
    "SELECT pg_stat_reset()",
    "SELECT pg_stat_reset_single_table_counters('public.memories_memory'::regclass)",
    "SELECT pg_restore_relation_stats('schemaname', 'open_query', 'relname', 'memories', 'relpages', 1::int)",
    "SELECT pg_clear_relation_stats('open_query', 'memories')",
    "SELECT brin_summarize_new_values('public.memories_memory'::regclass)",
    "SELECT gin_clean_pending_list('public.memories_memory'::regclass)",
    "SELECT pg_create_logical_replication_slot('x', 'pgoutput')",
    "SELECT pg_reload_conf(), pg_rotate_logfile()",
    "SELECT pg_switch_wal()",
    "SELECT pg_create_restore_point('x')",
    "SELECT pg_import_system_collations('pg_catalog')",
    # The service's own tables by other spellings.
    "SELECT * FROM ONLY public.memories_memory",
    'SELECT * FROM "public"."memories_memory"',
    "SELECT * FROM open_query.memories m JOIN public.memories_memory x ON true",
    "SELECT (SELECT content FROM public.memories_memory LIMIT 1)",
    "SELECT * FROM information_schema.column_privileges",
    "TABLE public.accounts_user",
    # Encodings, XML and JSON paths over text (nothing here but the argument).
    "SELECT convert_from(convert_to(content, 'LATIN1'), 'LATIN1') FROM memories",
    "SELECT xpath('/a', '<!DOCTYPE a [<!ENTITY e SYSTEM \"/etc/passwd\">]><a>&e;</a>')::text",
    "SELECT xmlparse(document '<!DOCTYPE a [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><a>&e;</a>')::text",
]


@pytest.mark.parametrize("sql", PAST_GUARD)
def test_functions_and_views_left_to_public_reach_nothing_of_anyone_else(world, alice, sql):
    before = (Memory.objects.count(), Source.objects.count(), User.objects.count())
    for guarded in (True, False):
        _held(_attempt(alice, world["space"], sql, guarded=guarded), world["secrets"], sql)
    guarded_outcome = _attempt(alice, world["space"], sql, guarded=True)
    assert isinstance(guarded_outcome, AppError) and guarded_outcome.code == "query_rejected", sql
    _role_unchanged(alice, world["space"], sql)
    assert (Memory.objects.count(), Source.objects.count(), User.objects.count()) == before
    assert _scope_rows() == 0


def test_past_the_guard_the_statistics_reset_time_is_unchanged(world, alice):
    """pg_stat_reset and friends are the superuser's: the query role's call must change nothing."""
    with psycopg.connect(**superuser_params(), autocommit=True) as admin:
        before = admin.execute(
            "SELECT stats_reset FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
        for sql in ("SELECT pg_stat_reset()", "SELECT pg_stat_reset_shared('io')"):
            _held(_attempt(alice, world["space"], sql, guarded=False), world["secrets"], sql)
        admin.execute("SELECT pg_stat_clear_snapshot()")
        after = admin.execute(
            "SELECT stats_reset FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    assert before == after


_METADATA_HOLE = (
    "HOLE (database layer, low, past the guard only): pg_class.reltuples, the planner's estimate of "
    "every table's rows, is in a catalog every role reads; taking SELECT on pg_class from PUBLIC would "
    "break every client's catalog lookups (the sizes and pg_stat_* functions are revoked since)"
)


@pytest.mark.parametrize(
    ("sql", "alices_share"),
    [
        # Alice's two memories fit in one 8 kB page; Bob's 300 take dozens.
        ("SELECT pg_relation_size(c.oid) FROM pg_class c WHERE c.relname = 'memories_memory'", 8192),
        pytest.param(
            "SELECT c.reltuples::int8 FROM pg_class c WHERE c.relname = 'memories_memory'",
            2,
            marks=_hole(_METADATA_HOLE),
        ),
        ("SELECT s.n_live_tup FROM pg_stat_all_tables s WHERE s.relname = 'memories_memory'", 2),
    ],
)
def test_past_the_guard_alice_cannot_count_everyones_memories(world, alice, bob, sql, alices_share):
    for index in range(300):
        _memory(bob, world["bob_space"], f"{index} {uuid.uuid4().hex * 16}")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")  # what autovacuum does on its own
    rows = _attempt(alice, world["space"], sql, guarded=False)
    # Refused, or nothing beyond what her own rows account for.
    assert isinstance(rows, AppError) or not rows or rows[0][0] is None or int(rows[0][0]) <= alices_share, (
        rows
    )


def test_past_the_guard_alice_cannot_watch_bobs_owner_lock(world, alice, bob):
    """While the worker writes for Bob, it holds pg_advisory_xact_lock("deep", key(bob)); Alice's
    query, past the guard, must not see it (nor which relations Bob's session has open)."""
    key = owner_write_keys([bob.pk])[0]
    service = {**query_connection_params(), "user": connection.settings_dict["USER"]}
    service.pop("application_name", None)
    if connection.settings_dict.get("PASSWORD"):
        service["password"] = connection.settings_dict["PASSWORD"]
    with psycopg.connect(**service) as writer:
        writer.execute("SELECT pg_advisory_xact_lock(%s, %s)", [OWNER_WRITE_LOCK, key])
        writer.execute("SELECT count(*) FROM memories_memory")
        rows = _attempt(
            alice,
            world["space"],
            "SELECT locktype, classid::int8, objid::int8, pid, relation::int8 FROM pg_locks",
            guarded=False,
        )
        writer.rollback()
    assert isinstance(rows, AppError) or not any(row[2] == key % 2**32 or row[2] == key for row in rows), rows


# --- 3. The scope row: pointed elsewhere, replaced, deleted, reused ------------------------------
#
# The views read the scope row whose pid is pg_backend_pid(). These try to make that row name Bob:
# changed while Alice's query runs, left behind by Bob on the pid Alice's backend gets next, read by
# a parallel worker (another pid), raced by two tenants at once, swept by Bob's queries.


def _slow_view_read(thousands: int = 6_000) -> str:
    """Burn CPU first (an initplan evaluated before the next), then read the view. The burn is a
    cross join of two small series, not one big generate_series (which is written to a temporary
    file, and past 256 MB hits temp_file_limit)."""
    return (
        "SELECT (SELECT count(*) FROM generate_series(1, 1000) a,"
        f" generate_series(1, {thousands}) b) AS burn,"
        " (SELECT string_agg(content, ' | ') FROM memories) AS seen"
    )


@pytest.mark.parametrize("change", ["replace_with_bobs", "delete", "replace_then_delete"])
def test_the_scope_row_changing_under_a_running_query_changes_nothing(world, alice, bob, change, settings):
    """The service changes (or a pid reuse would change) the scope row while Alice's query runs: her
    REPEATABLE READ snapshot predates it, so she still reads her own rows, never Bob's."""
    settings.OPEN_QUERY_TIMEOUT_MS = 20_000  # the burn must finish, even on a busy machine
    checked = query_check(_slow_view_read())
    result: dict[str, Any] = {}
    with open_query._query_connection() as conn, open_query._scope(conn, owner=alice, space=world["space"]):
        pid = conn.info.backend_pid

        def run() -> None:
            try:
                result["rows"] = open_query._run(conn, checked, [], open_query.caps(), describe_only=False)[1]
            except Exception as exc:  # reported by the assertion below
                result["rows"] = exc

        thread = threading.Thread(target=run)
        thread.start()
        time.sleep(0.15)
        with connection.cursor() as cursor:
            if change.startswith("replace"):
                cursor.execute(
                    "UPDATE open_query_scope SET owner_id = %s, space_id = %s WHERE pid = %s",
                    [bob.pk, world["bob_space"].pk, pid],
                )
            if change.endswith("delete"):
                cursor.execute("DELETE FROM open_query_scope WHERE pid = %s", [pid])
        thread.join(30)
    with connection.cursor() as cursor:
        # The scope row the service's delete (by pid and owner) no longer matches.
        cursor.execute("DELETE FROM open_query_scope WHERE pid = %s", [pid])
    rows = result["rows"]
    assert isinstance(rows, list), rows
    assert rows[0][1] == "I love green tea.", rows
    _held(rows, world["secrets"], change)


def _planted_pids(count: int) -> list[int]:
    """The next `count` process ids Linux will hand out (after the last one, wrapping past pid_max
    to 300): where the query connection's backend, and any parallel worker of it, will be."""
    last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    top = int(Path("/proc/sys/kernel/pid_max").read_text())
    pids: list[int] = []
    pid = last
    while len(pids) < count:
        pid = pid + 1 if pid + 1 < top else 300
        pids.append(pid)
    return pids


def _plant(pids: list[int], owner: User, space: Space) -> None:
    with connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO open_query_scope (pid, owner_id, space_id) VALUES (%s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            [(pid, owner.pk, space.pk) for pid in pids],
        )


@pytest.mark.skipif(not Path("/proc/sys/kernel/ns_last_pid").exists(), reason="needs Linux's pid counter")
def test_a_stale_scope_row_of_bob_on_the_pid_alice_gets_is_replaced(world, alice, bob):
    """Bob's process died before it deleted its scope rows, on every pid Alice's next backend could
    get (pid_max is 32768 here: reuse is ordinary). Her query must read her own space."""
    pids = _planted_pids(3000)
    _plant(pids, bob, world["bob_space"])
    try:
        for _ in range(3):
            rows = query_run(
                owner=alice,
                space=world["space"],
                query=query_check("SELECT string_agg(content, ' | ') FROM memories"),
                params=[],
            ).rows
            assert rows == [["I love green tea."]], rows
        # Every planted row is gone: those of dead pids swept before her first query, the one of the
        # pid her live backend had taken over and deleted after.
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM open_query_scope WHERE owner_id = %s", [bob.pk])
            assert cursor.fetchone()[0] == 0
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM open_query_scope WHERE pid = ANY(%s)", [pids])


@pytest.mark.skipif(not Path("/proc/sys/kernel/ns_last_pid").exists(), reason="needs Linux's pid counter")
def test_parallel_workers_have_their_own_pids_and_still_read_the_leaders_scope(world, alice, bob):
    """A parallel worker is another process with another pid; had pg_backend_pid() been evaluated
    in one, the views would read the scope row of the worker's pid: here, Bob's, planted on every
    pid a worker could get. Parallel plans are forced for the database while this runs."""
    for index in range(200):
        _memory(bob, world["bob_space"], f"{index} bob filler {uuid.uuid4().hex}")
    forcing = (
        "debug_parallel_query = 'on'",
        "parallel_setup_cost = 0",
        "parallel_tuple_cost = 0",
        "min_parallel_table_scan_size = 0",
    )
    # Forced for the database, not the role: the role check (roles.CHECK_SQL, at most once a minute)
    # rightly refuses a query role whose own defaults were changed, and would fail this test whenever
    # its minute happened to end inside it.
    database = connection.settings_dict["NAME"]
    with psycopg.connect(**superuser_params(), autocommit=True) as admin:
        for setting in forcing:
            admin.execute(f"ALTER DATABASE {database} SET {setting}")
        launched = "SELECT parallel_workers_launched FROM pg_stat_database WHERE datname = current_database()"
        before = admin.execute(launched).fetchone()
        pids = _planted_pids(3000)
        _plant(pids, bob, world["bob_space"])
        try:
            for sql in (
                "SELECT string_agg(content, ' | ') FROM memories",
                "SELECT count(*) FROM memories",
                "SELECT m.content FROM memories m JOIN memory_entities e ON e.memory_id = m.id",
            ):
                rows = query_run(owner=alice, space=world["space"], query=query_check(sql), params=[]).rows
                _held(rows, world["secrets"], sql)
                assert "bob filler" not in str(rows)
                assert rows in ([["I love green tea."]], [[1]], []), (sql, rows)
        finally:
            for setting in forcing:
                admin.execute(f"ALTER DATABASE {database} RESET {setting.split(' ')[0]}")
            with connection.cursor() as cursor:
                cursor.execute("DELETE FROM open_query_scope WHERE pid = ANY(%s)", [pids])
        # A backend reports its counts when it exits: once the query role's are gone, they are in.
        _query_role_backends()
        deadline = time.monotonic() + 5
        while True:
            admin.execute("SELECT pg_stat_clear_snapshot()")
            after = admin.execute(launched).fetchone()
            if after[0] > before[0] or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    # Workers did run (the probe is not vacuous).
    assert after[0] > before[0], (before, after)


def test_two_tenants_querying_side_by_side_each_read_their_own(world, alice, bob):
    """Scope rows written and deleted by two callers at once, many times: never crossed."""
    bobs = world["bob_space"]
    sql = query_check("SELECT string_agg(content, ' | ') FROM memories")
    problems: list[Any] = []

    def caller(owner: User, space: Space, expected: str) -> None:
        try:
            for _ in range(15):
                rows = query_run(owner=owner, space=space, query=sql, params=[]).rows
                if rows != [[expected]]:
                    problems.append((owner.email, rows))
        except AppError as exc:
            if exc.code != "rate_limited":
                problems.append(exc)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=caller, args=(alice, world["space"], "I love green tea.")),
        threading.Thread(target=caller, args=(bob, bobs, f"My plan is {BOB_SECRET}.")),
        threading.Thread(target=caller, args=(alice, world["space"], "I love green tea.")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert problems == []
    assert _scope_rows() == 0


def test_bobs_stale_row_sweep_never_touches_alices_running_query(world, alice, bob, settings):
    """Bob's queries sweep rows whose backend is gone, his own only: Alice's running query keeps its
    row (and so its scope), and Bob's sweep does not count it against him."""
    settings.OPEN_QUERY_MAX_CONCURRENT = 1
    started = threading.Event()
    result: dict[str, Any] = {}

    def alices_long_query() -> None:
        try:
            started.set()
            result["rows"] = query_run(
                owner=alice, space=world["space"], query=query_check(_slow_view_read(15_000)), params=[]
            ).rows
        except AppError as exc:
            result["rows"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=alices_long_query)
    thread.start()
    started.wait(5)
    for _ in range(100):
        if _scope_rows() == 1:
            break
        time.sleep(0.02)
    bobs = query_run(
        owner=bob, space=world["bob_space"], query=query_check("SELECT count(*) FROM memories"), params=[]
    )
    assert bobs.rows == [[1]]
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM open_query_scope WHERE owner_id = %s", [alice.pk])
        still = cursor.fetchone()[0]
    thread.join(30)
    assert still == 1
    rows = result["rows"]
    if isinstance(rows, AppError):
        assert rows.code == "query_timeout"
    else:
        assert rows[0][1] == "I love green tea.", rows


# --- 4. Exhausting the service: memory, time, connections, caps ---------------------------------
#
# What one read-only caller can take from everyone: the database's memory and temp files, time past
# the statement timeout, the web process's memory past the byte cap, connections left open; and
# whether hitting a server limit is answered as the caller's mistake or as an outage.


@pytest.mark.parametrize(
    ("sql", "guarded"),
    [
        pytest.param("SELECT repeat('xx', 600000000)", True, id="repeat_past_1GB_54000"),
        pytest.param("SELECT '{{{{{{{1}}}}}}}'::int[]", True, id="seven_array_dimensions_54000"),
        pytest.param("SELECT " + ", ".join(["1"] * 1664), True, id="1664_columns_and_the_wrapper_54011"),
        pytest.param("SELECT " + "1+" * 6000 + "1", True, id="stack_depth_54001"),
        pytest.param(
            "SELECT count(*) FROM (SELECT n, repeat(md5(n::text), 40) AS r FROM generate_series(1, 300000) n"
            " ORDER BY 2 DESC, 1) AS t",
            True,
            id="temp_file_limit_by_a_sort_53400",
        ),
        pytest.param(
            "SELECT count(*) FROM generate_series(1, 20000000)",
            True,
            id="temp_file_limit_by_generate_series_53400",
        ),
        pytest.param(
            "SELECT n FROM generate_series(1, 30000000) AS n", True, id="row_capped_generate_series_53400"
        ),
        pytest.param("SELECT pg_xact_commit_timestamp('3'::xid)", False, id="past_the_guard_55000"),
        pytest.param("SELECT * FROM pg_last_committed_xact()", False, id="past_the_guard_55000_again"),
    ],
)
def test_a_statement_past_a_postgresql_limit_is_the_callers_mistake(world, alice, sql, guarded, settings):
    settings.OPEN_QUERY_TIMEOUT_MS = 30_000  # the limit, not the timeout, must be what stops these
    outcome = _attempt(alice, world["space"], sql, guarded=guarded)
    assert isinstance(outcome, AppError), outcome
    assert outcome.code in REFUSED, (outcome.code, outcome.message)
    assert outcome.http_status < 500 and not outcome.retryable


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT (repeat('[', 1000) || repeat(']', 1000))::jsonb",
        "SELECT to_json((repeat('[', 3000) || repeat(']', 3000))::json)",
        "SELECT (repeat('{\"a\":', 2000) || '1' || repeat('}', 2000))::jsonb",
    ],
)
def test_deeply_nested_json_is_a_clear_answer_not_an_internal_error(world, alice, sql):
    try:
        outcome: Any = query_run(owner=alice, space=world["space"], query=query_check(sql), params=[])
    except Exception as exc:  # an internal error is the finding: asserted below
        outcome = exc
    assert isinstance(outcome, (AppError, open_query.QueryResult)), repr(outcome)[:300]
    # Either rows (the cell as text, or dropped) or one of the open query's own errors; no exception.
    assert isinstance(outcome, open_query.QueryResult) or outcome.code in REFUSED
    assert _scope_rows() == 0


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT (repeat('[', 3000) || repeat(']', 3000))::jsonb",
        "SELECT repeat('xx', 600000000)",
        "SELECT count(*) FROM generate_series(1, 1000000000)",
    ],
)
def test_whatever_the_failure_no_scope_row_or_connection_is_left(world, alice, sql, settings):
    """Even where the answer is wrong (an internal error, a misread limit), the scope row is deleted
    and the query role's backend is gone: nothing is left for the next backend with that pid."""
    settings.OPEN_QUERY_TIMEOUT_MS = 500
    # Any failure: what matters is what it leaves.
    with contextlib.suppress(Exception):
        query_run(owner=alice, space=world["space"], query=query_check(sql), params=[])
    assert _scope_rows() == 0
    assert _query_role_backends() == 0


def _peak_memory_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@_hole(
    "HOLE (bounded, not closed): PostgreSQL bounds no aggregate's memory, so one string_agg builds up "
    "to 1 GB inside the statement timeout. What bounds it now: the timeout counts the whole query (not "
    "each FETCH), two per user and OPEN_QUERY_MAX_TOTAL (6) per deployment; docs/deploy.md says to size "
    "the database server for that",
)
def test_one_query_cannot_take_hundreds_of_megabytes_of_the_database_servers_memory(world, alice, settings):
    """Measured on the query's own backend (the server is on this machine): its peak resident size.
    temp_file_limit bounds what spills to disk; in-memory aggregates are not bounded at all."""
    settings.OPEN_QUERY_TIMEOUT_MS = 20_000  # not stopped early by a busy machine
    checked = query_check("SELECT length(string_agg(repeat('x', 1000000), '')) FROM generate_series(1, 300)")
    with open_query._query_connection() as conn, open_query._scope(conn, owner=alice, space=world["space"]):
        pid = conn.info.backend_pid
        if not Path(f"/proc/{pid}/status").exists():
            pytest.skip("the database server is not on this machine")
        baseline = _peak_memory_kb(pid)
        with contextlib.suppress(psycopg.Error):
            open_query._run(conn, checked, [], open_query.caps(), describe_only=False)
        peak = _peak_memory_kb(pid)
    assert peak - baseline < 256 * 1024, f"the backend grew by {(peak - baseline) // 1024} MB"


def test_a_query_cannot_run_much_longer_than_the_statement_timeout(world, alice, settings):
    """Row n is produced at the transaction's start plus n x 2.5 ms (a busy loop on the clock), so
    each FETCH of 200 rows takes half a second, under the 1 s timeout, and the 1,001 rows take 2.5 s.
    Past the guard for the clock only (clock_timestamp is off the list): through the guard the same
    is done with counted work per row, calibrated to the machine."""
    settings.OPEN_QUERY_TIMEOUT_MS = 1000
    sql = (
        "SELECT n, (WITH RECURSIVE w(t) AS (SELECT clock_timestamp() UNION ALL SELECT clock_timestamp()"
        " FROM w WHERE t < now() + n * interval '2.5 milliseconds') SELECT count(*) FROM w) AS spins"
        " FROM generate_series(1, 1001) AS n"
    )
    started = time.monotonic()
    outcome = _attempt(alice, world["space"], sql, guarded=False)
    elapsed = time.monotonic() - started
    assert not isinstance(outcome, AppError) or outcome.code == "query_timeout", outcome
    assert elapsed < 1.5, f"ran {elapsed:.1f} s under a 1 s statement timeout"


@pytest.mark.parametrize(
    ("sql", "outcome"),
    [
        # Explosions the statement timeout stops.
        ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r", "timeout"),
        (
            "SELECT count(*) FROM generate_series(1, 3000) a, generate_series(1, 3000) b,"
            " generate_series(1, 3000) c",
            "timeout",
        ),
        (
            "SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b",
            "timeout",
        ),
        ("SELECT regexp_count(repeat('a', 200000), '(a|aa|aaa)*(b|c)')", "timeout_or_rows"),
        ("SELECT regexp_match(repeat('ab', 100000), '((a|b)*)*c')", "timeout_or_rows"),
        (
            "SELECT jsonb_path_exists(to_jsonb(array_agg(n)), 'strict $[*] ? (@ like_regex \"(a*)*b\")')"
            " FROM generate_series(1, 200000) AS n",
            "timeout_or_rows",
        ),
        # Caps: what reaches the web process is bounded by max_rows and max_bytes.
        ("SELECT array_agg(n) FROM generate_series(1, 1000000) AS n", "byte_cap"),
        ("SELECT repeat(E'\\x01', 900000)", "byte_cap"),
        ("SELECT " + ", ".join(["repeat('x', 2000)"] * 700), "byte_cap"),
        ("SELECT n, repeat('y', 3000) FROM generate_series(1, 10000) AS n", "byte_cap"),
        ("SELECT FROM generate_series(1, 1000000)", "row_cap"),
        ("SELECT n FROM generate_series(1, 1000000) AS n", "row_cap"),
        ("SELECT n FROM generate_series(1, 1000, 1) AS n, generate_series(1, 100000) AS m", "row_cap"),
        ("SELECT repeat('9', 131072)::numeric", "rows"),
        ("SELECT 1e131071::numeric, '-1e-16383'::numeric", "rows"),
        ("SELECT 'infinity'::interval, '178000000 years'::interval, 'NaN'::float8", "rows"),
    ],
)
def test_exhausting_the_service_is_bounded(world, alice, sql, outcome, settings):
    # A short timeout where stopping is the point; room to finish elsewhere (the machine may be busy).
    settings.OPEN_QUERY_TIMEOUT_MS = 1500 if outcome.startswith("timeout") else 10_000
    started = time.monotonic()
    try:
        result: Any = query_run(owner=alice, space=world["space"], query=query_check(sql), params=[])
    except AppError as exc:
        result = exc
    elapsed = time.monotonic() - started
    assert elapsed < 15, elapsed
    if outcome == "timeout":
        assert isinstance(result, AppError) and result.code == "query_timeout", result
        return
    if outcome == "timeout_or_rows":
        assert not isinstance(result, AppError) or result.code in ("query_timeout", "query_failed"), result
        return
    assert not isinstance(result, AppError), (result.code, result.message)
    size = len(str(result.rows))
    assert size <= settings.OPEN_QUERY_MAX_BYTES * 2, size
    assert len(result.rows) <= settings.OPEN_QUERY_MAX_ROWS
    if outcome in ("byte_cap", "row_cap"):
        assert [drop["reason"] for drop in result.drops] == [outcome], result.drops


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT n, repeat('x', 20000000) FROM generate_series(1, 3) AS n",
        "SELECT n, repeat('y', 3000) FROM generate_series(1, 100000) AS n",
        "SELECT " + ", ".join(["repeat('z', 2000)"] * 700) + " FROM generate_series(1, 50)",
        "SELECT array_agg(n) FROM generate_series(1, 1000000) AS n",
        "SELECT to_jsonb(array_agg(repeat('w', 100))) FROM generate_series(1, 200000)",
        "SELECT n, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM generate_series(1, 100000) AS n",
    ],
)
def test_the_web_process_holds_about_the_byte_cap_whatever_the_statement(world, alice, sql, settings):
    """Python's own allocations while one query runs: a few times the 1 MB cap, never the tens of
    megabytes the statement produces in the database."""
    settings.OPEN_QUERY_TIMEOUT_MS = 20_000
    import tracemalloc

    tracemalloc.start()
    try:
        result = query_run(owner=alice, space=world["space"], query=query_check(sql), params=[])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.rows or result.drops
    assert peak < 16 * settings.OPEN_QUERY_MAX_BYTES, f"{peak // 2**20} MB"


def test_no_query_connection_or_scope_row_outlives_its_query(world, alice, settings):
    """After queries that succeed, fail, time out and are rejected: no backend of the query role is
    left, and no scope row."""
    settings.OPEN_QUERY_TIMEOUT_MS = 300
    for sql in (
        "SELECT 1",
        "SELECT 1 / 0",
        "SELECT count(*) FROM generate_series(1, 1000000000)",
        "SELECT n FROM generate_series(1, 5000) AS n",
        "SELECT * FROM public.accounts_user",
    ):
        _attempt(alice, world["space"], sql, guarded=False)
    assert _query_role_backends() == 0
    assert _scope_rows() == 0


# --- 5. What errors say ----------------------------------------------------------------------
#
# PostgreSQL's message for the caller's own statement is passed on: it must carry the caller's own
# values only, no detail, hint or statement text, and no name of the tables behind the views.


@pytest.mark.parametrize(
    ("sql", "guarded"),
    [
        ("SELECT content::int4 FROM memories", True),
        ("SELECT content::uuid FROM memories ORDER BY recorded_at", True),
        ("SELECT (SELECT string_agg(content, ',') FROM memories)::date", True),
        ("SELECT 1 / (SELECT count(*) - 1 FROM memories)", True),
        ("SELECT to_date(content, 'YYYY') FROM memories", True),
        ("SELECT jsonb_path_query(to_jsonb(m.*), 'strict $.nope') FROM memories m", True),
        ("SELECT contnt FROM memories", False),
        ("SELECT content::int4 FROM public.memories_memory", False),
        ("SELECT email::int4 FROM public.accounts_user", False),
        ("SELECT owner_id::int4 FROM public.open_query_scope", False),
        ("SELECT m.owner_id FROM memories m", False),
    ],
)
def test_errors_say_nothing_of_anyone_else_nor_the_internals(world, alice, sql, guarded):
    outcome = _attempt(alice, world["space"], sql, guarded=guarded)
    assert isinstance(outcome, AppError), outcome
    _held(outcome, world["secrets"], sql)
    said = outcome.message + str(outcome.details) + str(outcome.agent_action)
    for internal in ("memories_memory", "open_query_scope", "accounts_user", "HINT", "Perhaps", "LINE 1"):
        assert internal not in said, (sql, said)
    if outcome.code == "query_failed":
        assert set(outcome.details) == {"sqlstate"}, outcome.details


@pytest.mark.parametrize(
    "sql", ["SELECT content FROM memories -- her tea", "SELECT content FROM memories --", "SELECT 1 --x"]
)
def test_a_valid_statement_ending_in_a_line_comment_runs(world, alice, sql):
    outcome = _attempt(alice, world["space"], sql, guarded=True)
    assert not isinstance(outcome, AppError), (outcome.code, outcome.message)


# --- 6. The REST and MCP boundaries -----------------------------------------------------------
#
# Odd bodies, params of every JSON type and size, limits, saved queries' params, and the statements
# of the holes above through the real routes and the MCP tool: each a clear 4xx, never a 5xx.

_DEEP = "SELECT (repeat('[', 3000) || repeat(']', 3000))::jsonb"
_BYPASS = (
    "SELECT (SELECT x.pg_get_viewdef FROM ((SELECT 1 AS pg_get_viewdef) AS x JOIN (SELECT 1 AS y) AS z"
    " ON true) AS j) FROM unnest(ARRAY['open_query.memories']) AS x"
)


@pytest.mark.parametrize(
    ("route", "body", "status", "code"),
    [
        ("/api/v1/query", {"sql": "SELECT content FROM memories"}, 200, None),
        (
            "/api/v1/query",
            {"sql": "SELECT 1\u0000; SELECT email FROM accounts_user"},
            400,
            "invalid_characters",
        ),
        ("/api/v1/query", {"sql": "SELECT $1::text", "params": ["a\u0000b"]}, 400, "invalid_characters"),
        ("/api/v1/query", '{"sql": "SELECT $1::numeric", "params": [' + "9" * 5000 + "]}", 400, None),
        ("/api/v1/query", '{"sql": "SELECT $1::float8", "params": [NaN]}', 400, None),
        ("/api/v1/query", {"sql": "SELECT $1::text", "params": [["nested"]]}, 400, "wrong_type"),
        ("/api/v1/query", {"sql": "SELECT $1::text", "params": [{"a": 1}]}, 400, "wrong_type"),
        ("/api/v1/query", {"sql": "SELECT 1", "params": ["x"] * 101}, 400, None),
        ("/api/v1/query", {"sql": "SELECT $1::text", "params": ["x" * 3_000_000]}, 413, None),
        ("/api/v1/query", {"sql": "SELECT 1", "params": [1]}, 400, "invalid_arguments"),
        ("/api/v1/query", {"sql": "SELECT $1::int", "params": ["x"]}, 422, "query_failed"),
        ("/api/v1/query", {"sql": "SELECT content FROM memories WHERE id = $1", "params": [1]}, 422, None),
        ("/api/v1/query", {"sql": "SELECT 1", "limit": 0}, 400, "value_out_of_range"),
        ("/api/v1/query", {"sql": "SELECT 1", "limit": 1.0}, 400, "wrong_type"),
        ("/api/v1/query", {"sql": "SELECT 1", "limit": True}, 400, "wrong_type"),
        ("/api/v1/query", {"sql": "SELECT 1", "limit": 10**30}, 400, "value_out_of_range"),
        ("/api/v1/query", {"sql": "SELECT 1", "limit": "5"}, 400, "wrong_type"),
        ("/api/v1/query", {"sql": "x" * 20_001}, 400, "value_too_long"),
        ("/api/v1/query", {"sql": "SELECT 1", "space": "x"}, 400, "unknown_field"),
        ("/api/v1/query", "[1, 2]", 400, "invalid_arguments"),
        ("/api/v1/query", "{" * 100_000, 400, None),
        ("/api/v1/query", {"sql": "SELECT " + "(" * 3000 + "1" + ")" * 3000}, 200, None),
        # Once a 500 (RecursionError rendering it): deeper than 64 levels, the cell is its JSON text.
        ("/api/v1/query", {"sql": _DEEP}, 200, None),
        # Once a 503 database_unavailable (class 54 read as the server's trouble).
        ("/api/v1/query", {"sql": "SELECT ARRAY" + "[" * 3000 + "1" + "]" * 3000}, 422, "query_failed"),
        ("/api/v1/query", {"sql": _BYPASS}, 400, "query_rejected"),
        ("/api/v1/query/validate", {"sql": "SELECT * FROM public.accounts_user"}, 400, "query_rejected"),
        ("/api/v1/query/validate", {"sql": "SELECT $1::uuid"}, 200, None),
        (
            "/api/v1/query/saved/run",
            {"name": "examples.sources_of_fact", "params": {"fact_id": "not-a-uuid"}},
            400,
            "invalid_format",
        ),
        (
            "/api/v1/query/saved/run",
            {"name": "examples.sources_of_fact", "params": {"fact_id": str(uuid.uuid4()), "x": 1}},
            400,
            "unknown_field",
        ),
        (
            "/api/v1/query/saved/run",
            {"name": "examples.changed_since", "params": {"since": "0001-01-01T00:00:00+14:00"}},
            200,
            None,
        ),
        ("/api/v1/query/saved/run", {"name": "examples.memories_by_month", "params": []}, 400, "wrong_type"),
        ("/api/v1/query/saved/run", {"name": "../../etc/passwd"}, 404, "saved_query_not_found"),
        (
            "/api/v1/query/saved/run",
            {"name": "examples.sources_of_fact", "params": {"fact_id": "' OR true --"}},
            400,
            "invalid_format",
        ),
    ],
)
def test_rest_answers_every_odd_request_with_its_own_clear_code(world, alice, route, body, status, code):
    client = pat_client(alice, (READ,))
    raw = body if isinstance(body, str) else json.dumps(body)
    response = client.post(route, raw, content_type="application/json")
    assert response.status_code == status, (response.status_code, response.content[:300])
    seen = response.content.decode("utf-8", "replace")
    for secret in world["secrets"]:
        assert secret not in seen
    if code is not None:
        assert error_of(response)["code"] == code
    assert _scope_rows() == 0


def test_a_read_token_reaches_every_query_route_and_each_reads_the_callers_space_only(world, alice):
    client = pat_client(alice, (READ,))
    for route, body in (
        ("/api/v1/query", {"sql": "SELECT string_agg(content, ' | ') FROM memories"}),
        ("/api/v1/query/saved/run", {"name": "examples.memories_by_month"}),
        ("/api/v1/query/validate", {"sql": "SELECT content FROM memories"}),
    ):
        response = client.post(route, body, format="json")
        assert response.status_code == 200, response.content[:300]
        _held([[response.content.decode()]], world["secrets"], route)
    # No token, or a token without memory:read, reads nothing.
    from rest_framework.test import APIClient

    assert APIClient().post("/api/v1/query", {"sql": "SELECT 1"}, format="json").status_code == 401


def _mcp(alice: User, tool: str, arguments: Any) -> Any:
    caller = Caller(user=alice, scopes=frozenset({READ}), via="pat")
    return asyncio.run(call_tool(caller, tool, arguments, profile="evidence"))


@pytest.mark.parametrize(
    ("tool", "arguments", "is_error", "code"),
    [
        ("query", {"sql": "SELECT string_agg(content, ' | ') FROM memories"}, False, None),
        ("query", {"sql": "SELECT * FROM public.accounts_user"}, True, "query_rejected"),
        ("query", {"sql": "SELECT 1", "params": "not a list"}, True, "wrong_type"),
        ("query", {"sql": "SELECT $1::text", "params": [None, None]}, True, "invalid_arguments"),
        ("query", {"sql": "SELECT 1", "limit": -1}, True, "value_out_of_range"),
        ("query", ["SELECT 1"], True, "invalid_arguments"),
        ("validate_query", {"sql": "SELECT g.ts_stat FROM unnest(ARRAY['x']) AS g"}, True, "query_rejected"),
        ("run_saved_query", {"name": "examples.superseded_facts", "limit": 1}, False, None),
        (
            "run_saved_query",
            {"name": "examples.sources_of_fact", "params": {"fact_id": 1}},
            True,
            "wrong_type",
        ),
        ("describe_view", {"view": "pg_authid"}, True, None),
        ("query", {"sql": _DEEP}, False, None),
        ("query", {"sql": _BYPASS}, True, "query_rejected"),
    ],
)
def test_mcp_evidence_tools_answer_with_the_callers_space_or_a_clear_error(
    world, alice, tool, arguments, is_error, code
):
    result = _mcp(alice, tool, arguments)
    text = result.content[0].text
    for secret in world["secrets"]:
        assert secret not in text
    assert bool(result.is_error) is is_error, text[:300]
    if is_error:
        payload = result.structured_content or {}
        assert payload.get("http_status", 400) < 500, text[:300]
        if code is not None:
            assert payload.get("code") == code, text[:300]
    assert _scope_rows() == 0


# --- 7. The query role itself, logged in directly ---------------------------------------------
#
# What the role could do with a session of its own (its password is in the service's environment):
# become another role, create, write, copy files, change settings, its own defaults, other databases.


def _as_query_role(dbname: str | None = None) -> psycopg.Connection[Any]:
    params = query_connection_params()
    if dbname is not None:
        params["dbname"] = dbname
    return psycopg.connect(**params, autocommit=True)


_SERVICE = str(connection.settings_dict["USER"] or "deeprecall")


@pytest.mark.parametrize(
    "statement",
    [
        f"SET ROLE {_SERVICE}",
        f"SET SESSION AUTHORIZATION {_SERVICE}",
        "SET ROLE postgres",
        "CREATE SCHEMA stolen",
        "CREATE TABLE open_query.stolen (a int)",
        "CREATE VIEW open_query.stolen AS SELECT 1",
        "CREATE FUNCTION open_query.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "CREATE TEMP TABLE t (a int)",
        "CREATE ROLE stolen",
        "CREATE DATABASE stolen",
        "ALTER VIEW open_query.memories RENAME TO m2",
        "ALTER VIEW open_query.memories OWNER TO deeprecall_query",
        "DROP VIEW open_query.memories",
        "INSERT INTO public.open_query_scope VALUES (pg_backend_pid(), gen_random_uuid(), gen_random_uuid())",
        "UPDATE public.open_query_scope SET pid = pg_backend_pid()",
        "DELETE FROM public.open_query_scope",
        "COPY public.accounts_user TO STDOUT",
        "COPY (SELECT 1) TO '/tmp/stolen'",
        "COPY open_query.memories FROM '/etc/passwd'",
        "LOAD 'plpgsql'",
        "SELECT pg_catalog.set_config('role', 'deeprecall', false)",
        "ALTER SYSTEM SET statement_timeout = 0",
        "SET temp_file_limit = -1",
        "ALTER ROLE deeprecall SET statement_timeout = 0",
        "CLUSTER public.memories_memory",
        "BEGIN; LOCK TABLE open_query.memories IN ACCESS EXCLUSIVE MODE; COMMIT",
        "COMMENT ON VIEW open_query.memories IS 'x'",
        "CREATE EXTENSION dblink",
        "CREATE PUBLICATION stolen FOR ALL TABLES",
        "CREATE SUBSCRIPTION s CONNECTION 'dbname=postgres' PUBLICATION p",
    ],
)
def test_the_query_role_logged_in_directly_may_do_nothing_but_read_the_views(world, statement):
    with _as_query_role() as conn:
        with pytest.raises(psycopg.Error) as caught:
            conn.execute(statement)
        # Refused by the server for want of a privilege, not misspelt, not refused by the driver.
        assert caught.value.sqlstate == "42501", (caught.value.sqlstate, str(caught.value)[:200])
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")
        assert conn.execute("SELECT current_user, session_user").fetchone() == (ROLE, ROLE)
        assert conn.execute("SELECT count(*) FROM open_query.memories").fetchone() == (0,)


def test_the_query_role_cannot_hand_its_views_on_nor_vacuum_the_tables(world):
    """GRANT without the grant option and VACUUM of a table one may not maintain are warnings, not
    errors: what they must leave is nothing changed."""
    with _as_query_role() as conn:
        for statement in (
            "GRANT SELECT ON open_query.memories TO PUBLIC",
            "VACUUM open_query.memories",
            "ANALYZE open_query.memories",
            "NOTIFY open_query, 'x'",
        ):
            conn.execute(statement)
    with psycopg.connect(**superuser_params(), autocommit=True) as admin:
        assert admin.execute(
            "SELECT has_table_privilege('public', 'open_query.memories', 'SELECT')"
        ).fetchone() == (False,)


_SELF_HOLE = (
    "HOLE (defence in depth, needs a login as the role, which the guard never gives): PostgreSQL lets "
    "any role change its own password and defaults. roles.CHECK_SQL now compares the defaults with "
    "what open_query_roles --sql set and fails closed (test_open_query_isolation.py, test_it_fails_"
    "closed_when_the_role_could_do_more_than_read_the_views); a changed password locks the open query "
    "out (query_unavailable), nothing more"
)


@_hole(_SELF_HOLE)
@pytest.mark.parametrize(
    "statement",
    [
        f"ALTER ROLE {ROLE} RESET statement_timeout",
        f"ALTER ROLE {ROLE} SET work_mem = '4GB'",
        f"ALTER ROLE {ROLE} SET search_path = public",
        f"ALTER ROLE {ROLE} PASSWORD 'chosen-by-the-attacker'",
    ],
)
def test_the_query_role_cannot_change_its_own_defaults_or_password(world, statement):
    with psycopg.connect(**superuser_params(), autocommit=True) as admin:
        saved = admin.execute(
            "SELECT s.setconfig FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole"
            " WHERE r.rolname = %s AND s.setdatabase = 0",
            [ROLE],
        ).fetchone()
        try:
            with _as_query_role() as conn:
                try:
                    conn.execute(statement)
                except psycopg.errors.InsufficientPrivilege:
                    return
                raise AssertionError(f"the query role ran {statement!r}")
        finally:
            admin.execute(f"ALTER ROLE {ROLE} RESET ALL")
            for item in (saved[0] if saved else None) or []:
                name, value = item.split("=", 1)
                admin.execute(f"ALTER ROLE {ROLE} SET {name} = '{value}'")
            admin.execute(f"ALTER ROLE {ROLE} PASSWORD NULL")


def test_the_query_role_can_connect_to_no_other_database(world):
    try:
        _as_query_role("postgres").close()
    except psycopg.OperationalError:
        return
    raise AssertionError("the query role logged in to the database postgres")


def test_the_services_own_user_is_no_superuser_and_holds_no_dangerous_membership(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT r.rolsuper, r.rolbypassrls, r.rolcreaterole, r.rolreplication,"
            " pg_has_role(current_user, 'pg_read_server_files', 'USAGE'),"
            " pg_has_role(current_user, 'pg_execute_server_program', 'USAGE'),"
            " pg_has_role(current_user, 'pg_write_server_files', 'USAGE'),"
            " pg_has_role(current_user, 'pg_read_all_data', 'USAGE'),"
            " pg_has_role(current_user, %s, 'USAGE')"
            " FROM pg_roles r WHERE r.rolname = current_user",
            [ROLE],
        )
        assert cursor.fetchone() == (False,) * 9


# --- 8. A scope named by a setting (issue 43: the per-query capability evaluated) ----------------
#
# Routing the open query on Citus was to move its scope from the backend's row into settings given
# at connection start (`deeprecall.owner`, `deeprecall.scope_token`); docs/decisions.md says why
# that was not adopted. These are the attempts made to judge it, kept against today's wall: a
# setting, whoever sets it and however, names no one; and a setting given at connection start (where
# a capability would travel) shows in no other session, table, statistic or error.

_SETTING_NAMES = ("deeprecall.owner", "deeprecall.scope_owner", "deeprecall.space", "deeprecall.scope_token")
_VIEWS = ("memories", "entities", "memory_entities", "relations", "sources", "evidence")


def _everything_visible(conn: psycopg.Connection[Any]) -> str:
    """Every row of every view as text, in a session of the query role."""
    return " ".join(str(conn.execute(f"SELECT * FROM open_query.{view}").fetchall()) for view in _VIEWS)


@contextlib.contextmanager
def _bobs_running_query(bob: User, space: Space) -> Any:
    """A query-role session of Bob's with his scope row, as `query_run` makes one: the victim."""
    with _as_query_role() as conn:
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO open_query_scope (pid, owner_id, space_id) VALUES (%s, %s, %s)",
                [conn.info.backend_pid, bob.pk, space.pk],
            )
        try:
            yield conn
        finally:
            with connection.cursor() as cursor:
                cursor.execute("DELETE FROM open_query_scope WHERE pid = %s", [conn.info.backend_pid])


def test_settings_naming_bob_at_connection_start_or_by_set_read_nothing_of_his(world, bob):
    """Any role may set a custom setting, at connection start or with SET: why a setting alone was
    rejected as the scope. While Bob's query runs, a session of the role naming him every way reads
    nothing, and neither does SET."""
    bobs = world["bob_space"]
    named = {"deeprecall.owner": bob.pk, "deeprecall.scope_owner": bob.pk, "deeprecall.space": bobs.pk}
    options = " ".join(f"-c {name}={value}" for name, value in named.items())
    options += f" -c deeprecall.scope_token={uuid.uuid4().hex}{uuid.uuid4().hex}"
    with _bobs_running_query(bob, bobs) as victim:
        # The victim's session does read his rows: the attempts below have something to find.
        assert BOB_SECRET in _everything_visible(victim)
        with psycopg.connect(**query_connection_params(), options=options, autocommit=True) as attacker:
            assert attacker.execute("SHOW deeprecall.owner").fetchone() == (str(bob.pk),)
            seen = _everything_visible(attacker)
            for name in _SETTING_NAMES:
                attacker.execute(f"SET {name} = '{bob.pk}'")
            seen += _everything_visible(attacker)
            attacker.execute(f"SET application_name = '{bob.pk}'")
            seen += _everything_visible(attacker)
    _held([[seen]], world["secrets"], options)
    assert "I love green tea." not in seen, seen[:300]


@pytest.mark.parametrize("guarded", [True, False])
@pytest.mark.parametrize(
    ("sql", "refused"),
    [
        ("SELECT set_config('deeprecall.owner', '{bob}', false)", True),
        ("SELECT set_config('deeprecall.scope_token', '{bob}', true)", True),
        ("SELECT current_setting('deeprecall.owner', true)", True),
        ("SELECT pg_catalog.current_setting('search_path')", True),
        # Two statements where the open query runs one: the driver declares a cursor for it.
        ("SELECT 1; SET deeprecall.owner = '{bob}'", True),
        ("SELECT 1; SHOW search_path", True),
        ("SELECT 1) AS q; SET deeprecall.owner = '{bob}'; SELECT (1", True),
        ("PREPARE stolen AS SELECT content FROM memories", True),
        (
            "WITH s AS (UPDATE pg_settings SET setting = '{bob}' WHERE name = 'application_name'"
            " RETURNING name) SELECT count(*) FROM s",
            True,
        ),
        # Readable, and empty of any custom setting: a placeholder is not listed.
        ("SELECT name, setting FROM pg_settings WHERE name LIKE 'deeprecall%'", False),
        ("SELECT s.name FROM pg_show_all_settings() s WHERE s.name LIKE 'deeprecall%'", False),
        ("SELECT d.setconfig::text FROM pg_db_role_setting d", False),
    ],
)
def test_the_open_query_can_neither_set_nor_read_a_setting(world, alice, bob, sql, refused, guarded):
    statement = sql.format(bob=bob.pk)
    with _bobs_running_query(bob, world["bob_space"]):
        outcome = _attempt(alice, world["space"], statement, guarded=guarded)
        after = _attempt(alice, world["space"], "SELECT content FROM memories", guarded=False)
    _held(outcome, world["secrets"], statement)
    if refused:
        assert isinstance(outcome, AppError), (statement, outcome)
    else:
        assert isinstance(outcome, AppError) or "deeprecall" not in str(outcome).replace(
            "deeprecall_query", ""
        ), (
            statement,
            outcome,
        )
    assert after == [["I love green tea."]], after


def test_a_setting_given_at_connection_start_shows_in_no_other_session(world):
    """Where a per-query capability would travel: the startup packet. Another session of the role,
    and even the superuser's activity view, must not show it."""
    secret = f"TOKEN{uuid.uuid4().hex}{uuid.uuid4().hex}"
    with psycopg.connect(
        **query_connection_params(), options=f"-c deeprecall.scope_token={secret}", autocommit=True
    ) as holder:
        # Its own session can SHOW it (a statement the open query never runs: see above), and even
        # there pg_settings does not list it.
        assert holder.execute("SHOW deeprecall.scope_token").fetchone() == (secret,)
        seen = str(holder.execute("SELECT name, setting FROM pg_settings").fetchall())
        with _as_query_role() as other:
            for sql in (
                "SELECT name, setting FROM pg_settings",
                "SELECT name, setting FROM pg_show_all_settings()",
                "SELECT setconfig::text FROM pg_db_role_setting",
                "SELECT query, application_name FROM pg_stat_activity",
                "SELECT * FROM pg_stat_ssl",
                "SELECT * FROM pg_stat_gssapi",
                "SHOW deeprecall.scope_token",
            ):
                try:
                    seen += str(other.execute(sql).fetchall())
                except psycopg.Error as refused:
                    seen += str(refused)
        with psycopg.connect(**superuser_params(), autocommit=True) as admin:
            seen += str(admin.execute("SELECT a.*::text FROM pg_stat_activity a").fetchall())
    assert secret not in seen


def test_nothing_another_session_of_the_role_prepares_or_holds_open_reaches_a_query(world, alice):
    with _as_query_role() as planter:
        planter.execute("PREPARE stolen AS SELECT content FROM open_query.memories")
        planter.execute("BEGIN")
        planter.execute("DECLARE held CURSOR WITH HOLD FOR SELECT content FROM open_query.memories")
        planter.execute("COMMIT")
        # Planted: the attacker's own session has both.
        assert planter.execute(
            "SELECT (SELECT count(*) FROM pg_prepared_statements), (SELECT count(*) FROM pg_cursors)"
        ).fetchone() == (1, 1)
        outcome = _attempt(
            alice,
            world["space"],
            "SELECT name FROM pg_prepared_statements UNION ALL"
            " SELECT name FROM pg_cursors WHERE name NOT LIKE 'open_query_%'",
            guarded=False,
        )
    assert outcome == [], outcome


def test_no_function_the_role_may_call_runs_with_anyone_elses_rights(world):
    """A SECURITY DEFINER function the role could reach (what a capability's views would call to
    read a setting) runs as its owner: today there is none in any schema the role may use."""
    with psycopg.connect(**superuser_params(), autocommit=True) as admin:
        reachable = admin.execute(
            "SELECT p.oid::regprocedure::text FROM pg_proc p"
            " WHERE p.prosecdef AND has_function_privilege(%s, p.oid, 'EXECUTE')"
            " AND has_schema_privilege(%s, p.pronamespace, 'USAGE')",
            [ROLE, ROLE],
        ).fetchall()
    assert reachable == []
