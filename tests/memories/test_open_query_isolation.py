"""The open query's isolation is the database's: attacks written against the design, not the parser.

Every attempt here runs twice: through the guard, as a caller's statement does, and past it (a
`CheckedQuery` made by hand), as if the guard had a hole nobody has imagined yet. Past the guard,
what must hold is the database's part: the statement runs as the query role, logged in as itself
(no role to go back to), with the views showing Alice's space only and every function that runs
SQL, changes a setting, sleeps, locks, watches other sessions or reads files taken away. Each
attempt asserts that no row of anyone else's comes back (Bob's memory, anyone's e-mail, password
hash or session key) and that `current_user` and `session_user` are still the query role afterwards.
"""

# ruff: noqa: S608 - the statements here are attacks this file writes, run to see them fail
from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
import time_machine
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection

from accounts.models import User
from memories.errors import AppError
from memories.models import Evidence, Memory, Source, Space
from memories.open_query import roles
from memories.open_query.guard import CheckedQuery, query_check
from memories.selectors import open_query
from memories.selectors.open_query import query_connection_params, query_run
from memories.services.spaces import space_create_default
from tests.conftest import ROOT
from tests.helpers import READ, error_of, pat_client, superuser_params

pytestmark = pytest.mark.django_db(transaction=True)

BOB_SECRET = f"BOB-SECRET-{uuid.uuid4().hex}"


def _memory(owner: User, space: Space, content: str) -> Memory:
    source = Source.objects.create(
        owner=owner,
        space=space,
        origin=Source.Origin.REMEMBER,
        content=content,
        content_hash=uuid.uuid4().hex,
        claimant="user",
    )
    memory = Memory.objects.create(owner=owner, space=space, source=source, kind="fact", content=content)
    Evidence.objects.create(owner=owner, source=source, memory=memory)
    return memory


@pytest.fixture
def world(alice, bob) -> dict[str, Any]:
    alices = space_create_default(owner=alice)
    _memory(alice, alices, "I love green tea.")
    _memory(bob, space_create_default(owner=bob), f"My plan is {BOB_SECRET}.")
    session = SessionStore()
    session["_auth_user_id"] = str(bob.pk)
    session.create()
    return {
        "space": alices,
        # What must never come back to Alice's query, in any form.
        "secrets": [
            BOB_SECRET,
            bob.email,
            bob.password.split("$")[-1],
            session.session_key,
        ],
    }


def _observed(sql: str) -> str:
    """The attack, then who the session is: the CTE is read before the two users are (a target
    list is evaluated left to right), so a role change inside the attack would show."""
    return (
        f"WITH attack AS MATERIALIZED ({sql}) "
        "SELECT (SELECT string_agg(a::text, ' | ') FROM attack a), current_user::text, session_user::text"
    )


def _attempt(alice: User, space: Space, sql: str, *, guarded: bool) -> list[list[Any]] | AppError:
    try:
        checked = query_check(sql) if guarded else CheckedQuery(sql=sql, parameter_count=0, views=())
        return query_run(owner=alice, space=space, query=checked, params=[]).rows
    except AppError as refused:
        return refused


def _assert_held(outcome: list[list[Any]] | AppError, secrets: list[str], sql: str) -> None:
    if isinstance(outcome, AppError):
        # Refused or failed: the error says nothing of anyone else either.
        assert outcome.code in ("query_rejected", "query_failed", "query_timeout"), (sql, outcome.code)
        seen = outcome.message + str(outcome.details)
    else:
        seen = str(outcome)
        if outcome and len(outcome[0]) == 3 and sql.startswith("WITH attack"):
            assert outcome[0][1:] == [settings.OPEN_QUERY_ROLE, settings.OPEN_QUERY_ROLE], sql
    for secret in secrets:
        assert secret not in seen, (sql, seen[:500])
    assert "@example.com" not in seen, (sql, seen[:500])


def _in_sql(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# The statements of the finding: attribute notation reaching a function that runs SQL it is given,
# and that SQL dropping the role the old design switched to.
_EMAILS = "SELECT to_tsvector('simple', replace(email, '@', ' at ')) FROM public.accounts_user"
_RESET_THEN_READ = (
    "SELECT to_tsvector('simple', w.word) FROM ts_stat("
    + _in_sql(_EMAILS)
    + " || left(set_config('role', 'none', true), 0)) AS w"
)
FINDING = [
    f"SELECT g.ts_stat FROM unnest(ARRAY[{_in_sql(_EMAILS)}]) AS g",
    f"SELECT g.ts_stat FROM unnest(ARRAY[{_in_sql(_RESET_THEN_READ)}]) AS g",
    "SELECT g.set_config FROM unnest(ARRAY['role']) AS g",
    "SELECT g.current_setting FROM unnest(ARRAY['data_directory']) AS g",
    "SELECT g.pg_sleep FROM unnest(ARRAY[5]) AS g",
    "SELECT g.pg_advisory_lock FROM unnest(ARRAY[1]) AS g",
    f"SELECT (g).ts_stat FROM unnest(ARRAY[{_in_sql(_EMAILS)}]) AS g",
    f"SELECT x.ts_stat FROM (SELECT {_in_sql(_EMAILS)} AS q) AS s, unnest(ARRAY[s.q]) AS x",
]

# Written against the design: each names a way out of the views, not a gap in the parser.
ESCAPES = [
    # SQL run from a string, directly and by notation.
    f"SELECT * FROM ts_stat({_in_sql(_EMAILS)})",
    f"SELECT * FROM ts_stat({_in_sql('SELECT to_tsvector(content) FROM public.memories_memory')})",
    "SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, ''b''::tsquery FROM public.accounts_user')",
    "SELECT query_to_xml('SELECT email, password FROM public.accounts_user', true, false, '')::text",
    "SELECT table_to_xml('public.accounts_user', true, false, '')::text",
    "SELECT database_to_xml(true, false, '')::text",
    "SELECT pg_input_is_valid('public.accounts_user', 'regclass')",
    # Role and setting changes.
    "SELECT set_config('role', 'none', true)",
    "SELECT set_config('role', 'deeprecall', true), (SELECT count(*) FROM public.accounts_user)",
    "SELECT set_config('session_authorization', 'postgres', true)",
    "SELECT set_config('search_path', 'public', true), (SELECT count(*) FROM accounts_user)",
    "SELECT current_setting('is_superuser'), current_setting('data_directory')",
    # Other schemas and the catalogs that hold what is not ours.
    "SELECT * FROM public.accounts_user",
    "SELECT * FROM public.django_session",
    "SELECT * FROM public.memories_memory",
    "SELECT * FROM public.open_query_scope",
    "SELECT * FROM public.oauth2_provider_accesstoken",
    "SELECT rolname, rolpassword FROM pg_catalog.pg_authid",
    "SELECT usename, passwd FROM pg_catalog.pg_shadow",
    "SELECT pid, query FROM pg_catalog.pg_stat_activity",
    "SELECT * FROM pg_catalog.pg_stat_get_activity(NULL)",
    "SELECT pg_stat_get_backend_activity(b) FROM pg_stat_get_backend_idset() AS b",
    "SELECT most_common_vals::text FROM pg_catalog.pg_stats",
    "SELECT * FROM pg_catalog.pg_statistic",
    # Large objects and files.
    "SELECT lo_get(oid) FROM pg_catalog.pg_largeobject_metadata",
    "SELECT lo_import('/etc/passwd')",
    "SELECT lo_from_bytea(0, 'x')",
    "SELECT pg_read_file('/etc/passwd')",
    "SELECT pg_read_file('postgresql.auto.conf')",
    "SELECT pg_read_binary_file('pg_hba.conf')",
    "SELECT * FROM pg_ls_dir('.')",
    "SELECT * FROM pg_stat_file('PG_VERSION')",
    f"SELECT * FROM ts_stat({_in_sql('COPY public.accounts_user TO STDOUT')})",
    # Prepared statements and cursors: what this session has is its own, and nothing else.
    "SELECT name, statement FROM pg_catalog.pg_prepared_statements",
    "SELECT name, statement FROM pg_catalog.pg_cursors",
    "SELECT cursor_to_xml('c', 1, true, false, '')::text",
    # Locks, sleeps, signals, notifications, other sessions.
    "SELECT pg_advisory_lock(1)",
    "SELECT pg_try_advisory_xact_lock(1)",
    "SELECT pg_sleep(5)",
    "SELECT pg_notify('x', 'y')",
    "SELECT pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity",
    "SELECT pg_cancel_backend(pg_backend_pid() + 1)",
    "SELECT pg_blocking_pids(pg_backend_pid())",
    # Another database or server, and writing.
    "SELECT dblink('dbname=deeprecall', 'SELECT email FROM accounts_user')",
    "SELECT * FROM memories m, LATERAL (SELECT set_config('transaction_read_only', 'off', true)) AS s",
    "SELECT nextval('public.django_migrations_id_seq')",
]


@pytest.mark.parametrize("sql", FINDING)
def test_it_refuses_the_findings_statements_and_the_database_holds_without_the_guard(world, alice, sql):
    guarded = _attempt(alice, world["space"], sql, guarded=True)
    assert isinstance(guarded, AppError) and guarded.code == "query_rejected", (sql, guarded)
    _assert_held(_attempt(alice, world["space"], sql, guarded=False), world["secrets"], sql)
    observed = _observed(sql)
    _assert_held(_attempt(alice, world["space"], observed, guarded=False), world["secrets"], observed)


@pytest.mark.parametrize("sql", ESCAPES)
def test_it_keeps_every_escape_inside_the_callers_space_even_past_the_guard(world, alice, sql):
    before = (Memory.objects.count(), Source.objects.count(), User.objects.count())
    for attempt in (sql, _observed(sql)):
        _assert_held(_attempt(alice, world["space"], attempt, guarded=True), world["secrets"], attempt)
        _assert_held(_attempt(alice, world["space"], attempt, guarded=False), world["secrets"], attempt)
    assert (Memory.objects.count(), Source.objects.count(), User.objects.count()) == before


def test_it_still_reads_the_callers_own_rows_after_all_that(world, alice, bob):
    assert query_run(
        owner=alice, space=world["space"], query=query_check("SELECT content FROM memories"), params=[]
    ).rows == [["I love green tea."]]
    assert query_run(
        owner=bob,
        space=space_create_default(owner=bob),
        query=query_check("SELECT content FROM memories"),
        params=[],
    ).rows == [[f"My plan is {BOB_SECRET}."]]


def test_it_logs_the_query_in_as_a_role_that_can_become_no_one(world):
    with psycopg.connect(**query_connection_params(), autocommit=True) as conn:
        assert (
            roles.role_problems(conn.execute(roles.CHECK_SQL, {"role": settings.OPEN_QUERY_ROLE}).fetchone())
            == []
        )
        conn.execute("RESET ROLE")
        assert conn.execute("SELECT current_user, session_user").fetchone() == (
            settings.OPEN_QUERY_ROLE,
            settings.OPEN_QUERY_ROLE,
        )
        for statement in (
            f"SET ROLE {connection.settings_dict['USER']}",
            "SET ROLE postgres",
            "SET SESSION AUTHORIZATION postgres",
            "SELECT * FROM public.accounts_user",
            "SELECT * FROM public.open_query_scope",
            "CREATE TEMP TABLE t (a int)",
            "SELECT set_config('role', 'none', false)",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
        # Outside any scope row, the views are empty even for the role itself.
        assert conn.execute("SELECT count(*) FROM open_query.memories").fetchone() == (0,)


def test_the_services_own_database_user_is_no_superuser(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT r.rolsuper, r.rolcreaterole, r.rolbypassrls FROM pg_roles r"
            " WHERE r.rolname = current_user"
        )
        assert cursor.fetchone() == (False, False, False)


@pytest.fixture
def fresh_check():
    """The role check runs at most once a minute per process: these tests need it now."""
    open_query._checked_at = None
    yield
    open_query._checked_at = None


@pytest.mark.parametrize(
    ("make_unsafe", "undo", "problem"),
    [
        (
            "GRANT SELECT ON public.accounts_user TO {role}",
            "REVOKE SELECT ON public.accounts_user FROM {role}",
            "may read or write a table outside the open_query views",
        ),
        (
            "GRANT EXECUTE ON FUNCTION pg_catalog.ts_stat(text) TO {role}",
            "REVOKE EXECUTE ON FUNCTION pg_catalog.ts_stat(text) FROM {role}",
            "may execute ts_stat",
        ),
        ("GRANT {service} TO {role}", "REVOKE {service} FROM {role}", "is a member of another role"),
        ("ALTER ROLE {role} SUPERUSER", "ALTER ROLE {role} NOSUPERUSER", "superuser"),
        # A session logged in as the role may change its own defaults: lifting the backstops.
        (
            "ALTER ROLE {role} RESET statement_timeout",
            "ALTER ROLE {role} SET statement_timeout = '60s'",
            "has other defaults",
        ),
        ("ALTER ROLE {role} SET work_mem = '4GB'", "ALTER ROLE {role} RESET work_mem", "has other defaults"),
        # Less than a reader of the views is refused too: one view it cannot read (a grant gone; on
        # Citus every view, whose shards are checked as the role itself: docs/scale.md).
        (
            "REVOKE SELECT ON open_query.relations FROM {role}",
            "GRANT SELECT ON open_query.relations TO {role}",
            "cannot read the view open_query.relations: permission denied for view relations",
        ),
        # The same defaults for this database alone: a role may set those for itself too.
        (
            "ALTER ROLE {role} IN DATABASE {database} SET statement_timeout = 0",
            "ALTER ROLE {role} IN DATABASE {database} RESET statement_timeout",
            "has other defaults",
        ),
    ],
)
def test_it_fails_closed_when_the_role_could_do_more_than_read_the_views(
    world, alice, fresh_check, make_unsafe, undo, problem, caplog
):
    names = {
        "role": settings.OPEN_QUERY_ROLE,
        "service": connection.settings_dict["USER"],
        "database": connection.settings_dict["NAME"],
    }
    with psycopg.connect(**superuser_params(), autocommit=True) as admin:
        admin.execute(make_unsafe.format(**names))
        try:
            with pytest.raises(AppError) as caught:
                query_run(owner=alice, space=world["space"], query=query_check("SELECT 1"), params=[])
        finally:
            admin.execute(undo.format(**names))
    assert caught.value.code == "query_unavailable" and caught.value.http_status == 503
    assert caught.value.retryable is False
    assert problem in caplog.text
    open_query._checked_at = None
    assert query_run(owner=alice, space=world["space"], query=query_check("SELECT 1"), params=[]).rows == [
        [1]
    ]


def test_it_answers_query_unavailable_when_the_role_may_not_log_in(world, alice, fresh_check):
    role = settings.OPEN_QUERY_ROLE
    with psycopg.connect(**superuser_params(), autocommit=True) as admin:
        admin.execute(f"ALTER ROLE {role} NOLOGIN")
        try:
            with pytest.raises(AppError) as caught:
                query_run(owner=alice, space=world["space"], query=query_check("SELECT 1"), params=[])
        finally:
            admin.execute(f"ALTER ROLE {role} LOGIN")
    assert caught.value.code == "query_unavailable" and caught.value.details == {"reason": "cannot_log_in"}


def test_one_tenants_running_query_is_invisible_to_another(world, alice, bob):
    """Every open query logs in as the same role: what one runs must not show in another's session
    (pg_stat_activity shows a same-role session's statement text to anyone allowed to ask)."""
    started, done = threading.Event(), threading.Event()
    marker = f"'{BOB_SECRET}'"

    def bobs_long_query() -> None:
        try:
            started.set()
            sql = f"SELECT count(*) FROM generate_series(1, 30000000) AS n WHERE {marker} <> n::text"
            query_run(owner=bob, space=space_create_default(owner=bob), query=query_check(sql), params=[])
        except AppError:
            pass
        finally:
            connection.close()
            done.set()

    thread = threading.Thread(target=bobs_long_query)
    thread.start()
    started.wait(5)
    try:
        for sql in (
            "SELECT pid, query FROM pg_catalog.pg_stat_activity",
            "SELECT pg_stat_get_backend_activity(b) FROM pg_stat_get_backend_idset() AS b",
            "SELECT * FROM pg_catalog.pg_stat_get_activity(NULL)",
        ):
            for _ in range(5):
                _assert_held(_attempt(alice, world["space"], sql, guarded=False), world["secrets"], sql)
    finally:
        thread.join(30)


def test_an_owner_runs_at_most_the_allowed_number_of_queries_at_once(world, alice, bob, settings):
    settings.OPEN_QUERY_MAX_CONCURRENT = 1
    settings.OPEN_QUERY_TIMEOUT_MS = 4000
    running = threading.Event()
    outcome: dict[str, Any] = {}

    def long_query() -> None:
        try:
            running.set()
            sql = "SELECT count(*) FROM generate_series(1, 40000000)"
            outcome["first"] = query_run(owner=alice, space=world["space"], query=query_check(sql), params=[])
        except AppError as exc:
            outcome["first"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=long_query)
    thread.start()
    running.wait(5)
    try:
        # Until the long query holds its scope row: from then on it is running.
        for _ in range(100):
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM open_query_scope WHERE owner_id = %s", [alice.pk])
                if cursor.fetchone() == (1,):
                    break
            threading.Event().wait(0.02)
        with pytest.raises(AppError) as caught:
            query_run(owner=alice, space=world["space"], query=query_check("SELECT 1"), params=[])
        refused = caught.value
        assert refused.code == "rate_limited" and refused.retryable, outcome
        assert refused.details["limit"] == "query_concurrency"
        # Another owner is not held back by Alice's queries.
        bobs = query_run(
            owner=bob, space=space_create_default(owner=bob), query=query_check("SELECT 1"), params=[]
        )
        assert bobs.rows == [[1]]
    finally:
        thread.join(30)
    # And once it is done, hers run again; no scope row is left behind.
    assert query_run(owner=alice, space=world["space"], query=query_check("SELECT 2"), params=[]).rows == [
        [2]
    ]
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM open_query_scope")
        assert cursor.fetchone() == (0,)


def test_the_server_never_sends_more_than_the_byte_cap(world, alice, settings):
    """The wrapper nulls every cell of a row past the cap on the server: a 20 MB cell never reaches
    this process (read here off the query connection, as the selector reads it)."""
    limits = open_query.caps()
    limits["max_bytes"] = 10_000
    checked = query_check("SELECT n, repeat('x', 20000000) AS big FROM generate_series(1, 3) AS n")
    with open_query._query_connection() as conn, open_query._scope(conn, owner=alice, space=world["space"]):
        conn.execute("BEGIN READ ONLY")
        try:
            with conn.cursor(name="capped") as cursor:
                cursor.execute(open_query._capped_sql(checked, 2, limits))
                fetched = cursor.fetchall()
        finally:
            conn.execute("ROLLBACK")
    assert fetched == [(None, None, False)] * 3
    settings.OPEN_QUERY_MAX_BYTES = 10_000
    result = query_run(owner=alice, space=world["space"], query=checked, params=[])
    assert result.rows == [] and [d["reason"] for d in result.drops] == ["byte_cap"]


def test_times_python_cannot_hold_come_back_as_postgresqls_text(world, alice):
    sql = (
        "SELECT 'infinity'::timestamptz, '-infinity'::timestamp, '0044-03-15 BC'::date, '24:00'::time,"
        " 'infinity'::date, ARRAY['infinity'::timestamptz, '2026-01-02T03:04:05Z'::timestamptz]"
    )
    result = query_run(owner=alice, space=world["space"], query=query_check(sql), params=[])
    assert result.rows == [
        [
            "infinity",
            "-infinity",
            "0044-03-15 BC",
            "24:00:00",
            "infinity",
            ["infinity", "2026-01-02T03:04:05+00:00"],
        ]
    ]


def test_a_query_flood_gets_429_per_user_and_the_outsider_keeps_his_budget(world, alice, bob, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "query": "2/m"}
    alices, bobs = pat_client(alice, (READ,)), pat_client(bob, (READ,))
    with time_machine.travel(datetime(2026, 12, 1, 10, 0, tzinfo=UTC), tick=False):
        answered = [alices.post("/api/v1/query", {"sql": "SELECT 1"}, format="json") for _ in range(2)]
        refused = alices.post("/api/v1/query/validate", {"sql": "SELECT 1"}, format="json")
        his = bobs.post("/api/v1/query", {"sql": "SELECT count(*) FROM memories"}, format="json")
    assert [r.status_code for r in answered] == [200, 200]
    assert refused.status_code == 429
    error = error_of(refused)
    assert (
        error["code"] == "rate_limited"
        and error["retryable"] is True
        and error["details"]["limit"] == "query"
    )
    assert his.status_code == 200 and his.json()["rows"] == [[1]]


def test_the_compose_routes_sql_is_what_the_command_prints():
    """docs/deploy/open-query-roles.sql (run by db-init.sh) is the command's output for the default
    names: regenerate it with `manage.py open_query_roles --sql > docs/deploy/open-query-roles.sql`."""
    shipped = (ROOT / "docs" / "deploy" / "open-query-roles.sql").read_text()
    assert shipped == roles.admin_sql(service_role="deeprecall", query_role="deeprecall_query")


def test_the_deployment_runs_at_most_its_total_of_queries_at_once(world, alice, bob, charlie, settings):
    """Each query may hold up to a gigabyte of the database server's memory (PostgreSQL bounds no
    aggregate's state): OPEN_QUERY_MAX_TOTAL bounds them all, whoever runs them."""
    settings.OPEN_QUERY_MAX_TOTAL = 2
    settings.OPEN_QUERY_TIMEOUT_MS = 4000
    started = threading.Barrier(3)

    def long_query(owner: User) -> None:
        try:
            started.wait(5)
            sql = "SELECT count(*) FROM generate_series(1, 40000000)"
            query_run(owner=owner, space=space_create_default(owner=owner), query=query_check(sql), params=[])
        except AppError:
            pass
        finally:
            connection.close()

    threads = [threading.Thread(target=long_query, args=(owner,)) for owner in (alice, bob)]
    for thread in threads:
        thread.start()
    started.wait(5)
    try:
        for _ in range(200):
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM open_query_scope")
                if cursor.fetchone() == (2,):
                    break
            threading.Event().wait(0.02)
        with pytest.raises(AppError) as caught:
            query_run(
                owner=charlie,
                space=space_create_default(owner=charlie),
                query=query_check("SELECT 1"),
                params=[],
            )
        assert caught.value.code == "rate_limited" and caught.value.details["limit"] == "query_concurrency"
    finally:
        for thread in threads:
            thread.join(30)
    assert query_run(
        owner=charlie, space=space_create_default(owner=charlie), query=query_check("SELECT 1"), params=[]
    ).rows == [[1]]
