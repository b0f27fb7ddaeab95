# ruff: noqa: S608 - the SQL here is built from checked identifiers and this module's own names
"""The open query's database roles: what the query role is, what nobody but the service may call,
the SQL an administrator runs once for it, and the check the service runs before trusting it.

The open query runs the caller's SELECT on a connection of its own that logs in as the query role
(`settings.OPEN_QUERY_ROLE`). The guard (memories.open_query.guard) is the first wall; this module
is the one that holds when the guard is wrong:

- the query role is the session user: it is no superuser, member of no role and owner of nothing,
  so `RESET ROLE` or `set_config('role', ...)` leads back to itself;
- it may read the `open_query` views and nothing else, and the views show the rows of the one
  space the service named for this connection's backend (the scope row, which the role can
  neither read nor write: memories.selectors.open_query);
- the functions below are taken from PUBLIC, so no role but the service may run SQL from a string
  (ts_stat, query_to_xml ...), change or read settings, sleep, take or wait for locks, signal or
  watch other sessions, or touch large objects. The service gets back the few it uses.

Function privileges live in each database (pg_proc is per database), and changing those of
pg_catalog needs a superuser: the embedded server's start-up applies `admin_sql` itself
(config/embedded_pg); a deployment runs it once as its PostgreSQL superuser (docs/deploy.md,
`deeprecall manage open_query_roles --sql`). Until it has, `role_problems` names what is missing and
the open query refuses to run (`query_unavailable`): it fails closed.
"""

from __future__ import annotations

import re

# By name, in pg_catalog, every overload: signatures differ between PostgreSQL majors.
RUNS_SQL_FROM_TEXT = (
    "ts_stat",
    "ts_rewrite",
    "query_to_xml",
    "query_to_xmlschema",
    "query_to_xml_and_xmlschema",
    "cursor_to_xml",
    "cursor_to_xmlschema",
    "table_to_xml",
    "table_to_xmlschema",
    "table_to_xml_and_xmlschema",
    "schema_to_xml",
    "schema_to_xmlschema",
    "schema_to_xml_and_xmlschema",
    "database_to_xml",
    "database_to_xmlschema",
    "database_to_xml_and_xmlschema",
    # They call a type's input function named by text (regclass and friends: catalog lookups).
    "pg_input_is_valid",
    "pg_input_error_info",
)
SETTINGS = ("set_config", "current_setting")
SLEEPS = ("pg_sleep", "pg_sleep_for", "pg_sleep_until")
LOCKS = (
    "pg_advisory_lock",
    "pg_advisory_lock_shared",
    "pg_advisory_unlock",
    "pg_advisory_unlock_shared",
    "pg_advisory_unlock_all",
    "pg_advisory_xact_lock",
    "pg_advisory_xact_lock_shared",
    "pg_try_advisory_lock",
    "pg_try_advisory_lock_shared",
    "pg_try_advisory_xact_lock",
    "pg_try_advisory_xact_lock_shared",
)
# Every open query logs in as the same role, so these would let one tenant's query see or stop
# another tenant's (pg_stat_activity shows a same-role session's statement text).
OTHER_SESSIONS = (
    "pg_cancel_backend",
    "pg_terminate_backend",
    "pg_blocking_pids",
    "pg_safe_snapshot_blocking_pids",
    "pg_isolation_test_session_is_blocked",
    "pg_notify",
    "pg_lock_status",
    "pg_xact_status",
    "txid_status",
)
# Every statistics function (pg_stat_activity's statement texts, each table's live rows and scans):
# they describe the whole service, every tenant's rows together.
OTHER_SESSIONS_PREFIX = "pg_stat_get_"
# How big each table is: every tenant's rows together, again.
SIZES = (
    "pg_relation_size",
    "pg_total_relation_size",
    "pg_table_size",
    "pg_indexes_size",
    "pg_database_size",
    "pg_tablespace_size",
    "pg_relation_filenode",
    "pg_relation_filepath",
)
LARGE_OBJECTS = (
    "lo_open",
    "lo_close",
    "loread",
    "lowrite",
    "lo_lseek",
    "lo_lseek64",
    "lo_tell",
    "lo_tell64",
    "lo_truncate",
    "lo_truncate64",
    "lo_creat",
    "lo_create",
    "lo_unlink",
    "lo_import",
    "lo_export",
    "lo_get",
    "lo_put",
    "lo_from_bytea",
)
FORBIDDEN_FUNCTIONS: tuple[str, ...] = (
    *RUNS_SQL_FROM_TEXT,
    *SETTINGS,
    *SLEEPS,
    *LOCKS,
    *OTHER_SESSIONS,
    *SIZES,
    *LARGE_OBJECTS,
)
# What the service itself calls (recall's and the migrations' settings, the worker's owner locks, the
# open query's sweep of scope rows whose backend is gone) and what its operators and tests read about
# their own database (statistics, locks, sizes): granted back to the service's user only.
SERVICE_FUNCTIONS: tuple[str, ...] = (
    "set_config",
    "current_setting",
    "pg_advisory_xact_lock",
    "pg_lock_status",
    *SIZES,
)
SERVICE_PREFIX = OTHER_SESSIONS_PREFIX

# The query role's own defaults, set by `cluster_sql`; the check fails closed when they differ (a role
# may change its own defaults, so a session that logged in as it could have lifted them).
ROLE_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("statement_timeout", "60s"),
    ("idle_in_transaction_session_timeout", "60s"),
    ("temp_file_limit", "256MB"),
    ("search_path", "open_query"),
)

_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _identifier(name: str) -> str:
    if not _IDENTIFIER.fullmatch(name):
        raise ValueError(f"{name!r} is not a plain lower-case SQL identifier")
    return name


def _names(names: tuple[str, ...]) -> str:
    return "ARRAY[" + ", ".join(f"'{_identifier(name)}'" for name in names) + "]::text[]"


def _defaults() -> str:
    items = sorted(f"{name}={value}" for name, value in ROLE_DEFAULTS)
    return "ARRAY[" + ", ".join(f"'{item}'" for item in items) + "]::text[]"


def _matching(names: tuple[str, ...]) -> str:
    return (
        "p.pronamespace = 'pg_catalog'::regnamespace AND (p.proname = ANY("
        + _names(names)
        + f") OR starts_with(p.proname, '{OTHER_SESSIONS_PREFIX}'))"
    )


def cluster_sql(*, query_role: str) -> str:
    """The cluster-wide part of `admin_sql`: the query role, a plain login that can become no one.

    Its password is the operator's to set (docs/deploy.md); the embedded server trusts its own
    socket. A role left by an older release (NOLOGIN, granted to the service's user) is turned into
    this one and loses its memberships both ways.
    """
    role = _identifier(query_role)
    return f"""
DO $$
DECLARE membership record;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN
        CREATE ROLE {role} LOGIN;
    END IF;
    ALTER ROLE {role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS;
    FOR membership IN
        SELECT g.rolname AS granted, m.rolname AS member
        FROM pg_auth_members a
        JOIN pg_roles g ON g.oid = a.roleid
        JOIN pg_roles m ON m.oid = a.member
        WHERE m.rolname = '{role}' OR g.rolname = '{role}'
    LOOP
        EXECUTE format('REVOKE %I FROM %I CASCADE', membership.granted, membership.member);
    END LOOP;
END
$$;
-- A backstop if the guard and the views are both wrong: what one query may take from the server.
ALTER ROLE {role} RESET ALL;
""" + "".join(f"ALTER ROLE {role} SET {name} = '{value}';\n" for name, value in ROLE_DEFAULTS)


def database_sql(*, service_role: str) -> str:
    """The per-database part of `admin_sql`, run in the service's database as a superuser."""
    service = _identifier(service_role)
    return f"""
DO $$
DECLARE f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p WHERE {_matching(FORBIDDEN_FUNCTIONS)} LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
    END LOOP;
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_proc p
        WHERE p.pronamespace = 'pg_catalog'::regnamespace
          AND (p.proname = ANY({_names(SERVICE_FUNCTIONS)}) OR starts_with(p.proname, '{SERVICE_PREFIX}'))
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO {service}', f);
    END LOOP;
    -- Temporary tables and the public schema are the service's (the database's owner keeps both).
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
    REVOKE ALL ON SCHEMA public FROM PUBLIC;
    GRANT USAGE ON SCHEMA public TO {service};
END
$$;
"""


def admin_sql(*, service_role: str, query_role: str) -> str:
    """Everything a superuser runs once, in the service's database, to make the query role safe."""
    header = (
        "-- Deep Recall: the open query's roles, run once as a PostgreSQL superuser in the service's\n"
        "-- database (docs/deploy.md). Printed by `deeprecall manage open_query_roles --sql` from\n"
        "-- memories/open_query/roles.py; idempotent.\n"
    )
    return header + cluster_sql(query_role=query_role) + database_sql(service_role=service_role)


# One row, run on the query connection as the query role itself: each column a way it could be
# more than a reader of the views. All false (and the first true) or the open query does not run.
CHECK_SQL = f"""
SELECT session_user = current_user AND current_user = %(role)s,
       r.rolsuper, r.rolbypassrls, r.rolcreaterole, r.rolcreatedb, r.rolreplication,
       EXISTS (SELECT 1 FROM pg_auth_members a WHERE a.member = r.oid),
       EXISTS (SELECT 1 FROM pg_class c WHERE c.relowner = r.oid)
           OR EXISTS (SELECT 1 FROM pg_namespace n WHERE n.nspowner = r.oid)
           OR EXISTS (SELECT 1 FROM pg_proc p WHERE p.proowner = r.oid),
       EXISTS (SELECT 1 FROM pg_class c
               WHERE c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace,
                                            'open_query'::regnamespace)
                 AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
                 AND (has_table_privilege(c.oid, 'SELECT') OR has_table_privilege(c.oid, 'INSERT')
                      OR has_table_privilege(c.oid, 'UPDATE') OR has_table_privilege(c.oid, 'DELETE'))),
       (SELECT coalesce(string_agg(p.proname, ', ' ORDER BY p.proname), '')
        FROM (SELECT DISTINCT p.proname FROM pg_proc p
              WHERE {_matching(FORBIDDEN_FUNCTIONS)} AND has_function_privilege(p.oid, 'EXECUTE')) p),
       has_database_privilege(current_database(), 'TEMPORARY'),
       has_schema_privilege('public', 'USAGE'),
       coalesce((SELECT array_agg(item ORDER BY item) FROM pg_db_role_setting s, unnest(s.setconfig) AS item
                 WHERE s.setrole = r.oid
                   AND s.setdatabase IN (0, (SELECT d.oid FROM pg_database d
                                             WHERE d.datname = current_database()))), '{{}}')
           IS DISTINCT FROM {_defaults()}
FROM pg_roles r WHERE r.rolname = current_user
"""

CHECK_NAMES = (
    "logged in as the query role",
    "superuser",
    "bypasses row-level security",
    "may create roles",
    "may create databases",
    "may replicate",
    "is a member of another role",
    "owns objects",
    "may read or write a table outside the open_query views",
    "may execute",
    "may create temporary tables",
    "may use the public schema",
    "has other defaults than open_query_roles --sql set (run it again)",
)


# The views the role must be able to read, each read once by the check (`view_problems`). A plain
# server lets a view read its tables with its owner's rights; Citus checks every shard's privileges
# as the role that runs the query (docs/scale.md, "The open query on Citus"), so there the role, which
# holds SELECT on the views alone, reads none of them and the open query stays off.
VIEWS_SQL = """
SELECT c.relname FROM pg_class c
WHERE c.relnamespace = 'open_query'::regnamespace AND c.relkind = 'v'
ORDER BY c.relname
"""


def view_problems(names: list[str], refused: dict[str, str]) -> list[str]:
    """What keeps the role from reading its views: none at all, or the ones whose read failed
    (`refused`: a view's name and PostgreSQL's message)."""
    if not names:
        return ["has no open_query views to read (migrations not applied?)"]
    return [f"cannot read the view open_query.{name}: {refused[name]}" for name in names if name in refused]


def role_problems(row: tuple[object, ...] | None) -> list[str]:
    """What is wrong with the query role, from `CHECK_SQL`'s row: empty when it is safe."""
    if row is None:
        return ["the query role does not exist"]
    problems = [] if row[0] else [f"not {CHECK_NAMES[0]}"]
    for name, value in zip(CHECK_NAMES[1:], row[1:], strict=True):
        if isinstance(value, str):
            if value:
                problems.append(f"{name} {value}")
        elif value:
            problems.append(name)
    return problems
