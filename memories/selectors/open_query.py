"""Run a checked SELECT over the open_query views, for one owner and space, safely.

The database does the enforcing (memories/open_query/roles.py says why each part is there):

- the statement runs on a connection of its own that logs in as the query role: no superuser, a
  member of nothing, allowed to read the views and nothing else, so no SQL, wherever it hides,
  can become anyone else (`RESET ROLE` leads back to the query role itself);
- the owner and the space are a row of `open_query_scope` keyed by that connection's backend
  process id, written and deleted by the service on its own connection: the views filter on it,
  the query role can neither read nor write it, and `pg_backend_pid()` is not a setting;
- the transaction is `READ ONLY`, `REPEATABLE READ` (every row from one snapshot, whose time the
  answer reports), with `statement_timeout` and `lock_timeout`;
- before the first query of a process (and every minute after), the role itself is checked
  (`roles.CHECK_SQL`): if it is more than a reader of the views, nothing runs (`query_unavailable`).

The caps are enforced by the server: the statement is wrapped so that it yields at most the row cap
plus one row, and a running sum of each row's size in text: a row past the byte cap comes with its
cells nulled, so at most the byte cap of data ever reaches this process, whatever one cell weighs.
A user has at most OPEN_QUERY_MAX_CONCURRENT queries running at once and the deployment at most
OPEN_QUERY_MAX_TOTAL (counted on the scope rows, across processes); a process at most
OPEN_QUERY_PROCESS_CONCURRENT.

Times the Python types cannot hold (`infinity`, years BC, `24:00`) come back as PostgreSQL's text.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection, transaction
from psycopg import errors as pg_errors
from psycopg import sql as pg_sql
from psycopg.adapt import AdaptersMap, Loader
from psycopg.types import datetime as pg_datetime
from psycopg.types import json as pg_json

from accounts.models import User
from accounts.throttles import rate_limited
from memories.errors import AppError, Code
from memories.models import Space
from memories.open_query.guard import CheckedQuery
from memories.open_query.roles import CHECK_SQL, VIEWS_SQL, role_problems, view_problems

logger = logging.getLogger(__name__)

# PostgreSQL type OIDs of the values the views and the allowed functions produce.
_TYPE_NAMES = {
    16: "boolean",
    19: "name",
    20: "int8",
    21: "int2",
    23: "int4",
    25: "text",
    114: "json",
    700: "float4",
    701: "float8",
    1009: "text[]",
    1015: "varchar[]",
    1043: "varchar",
    1082: "date",
    1083: "time",
    1114: "timestamp",
    1184: "timestamptz",
    1186: "interval",
    1700: "numeric",
    2950: "uuid",
    2951: "uuid[]",
    3802: "jsonb",
    1005: "int2[]",
    1007: "int4[]",
    1016: "int8[]",
    1185: "timestamptz[]",
    16 + 1000: "boolean[]",
}
FETCH_BATCH = 200


@dataclass
class QueryResult:
    """What one run produced, before rendering."""

    columns: list[dict[str, str]]
    rows: list[list[Any]]
    drops: list[dict[str, Any]]
    snapshot_at: dt.datetime
    elapsed_ms: int
    caps: dict[str, int] = field(default_factory=dict)


def json_value(value: object) -> Any:
    """One cell as JSON: times in ISO 8601, ids and decimals as text (exact), intervals in seconds."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else str(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (uuid.UUID, decimal.Decimal)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [json_value(item) for item in value]
    if isinstance(value, dict):
        return {str(key): json_value(item) for key, item in value.items()}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    return str(value)


def caps(*, limit: int | None = None) -> dict[str, int]:
    """The limits one run works under (a caller may ask for fewer rows, never more)."""
    max_rows = settings.OPEN_QUERY_MAX_ROWS
    return {
        "max_rows": min(limit, max_rows) if limit else max_rows,
        "max_bytes": settings.OPEN_QUERY_MAX_BYTES,
        "statement_timeout_ms": settings.OPEN_QUERY_TIMEOUT_MS,
        "lock_timeout_ms": settings.OPEN_QUERY_LOCK_TIMEOUT_MS,
    }


def query_run(
    *,
    owner: User,
    space: Space,
    query: CheckedQuery,
    params: list[Any],
    limit: int | None = None,
    describe_only: bool = False,
) -> QueryResult:
    """Run an accepted statement for `owner` in `space` (see the module docstring for how);
    `describe_only`: plan it and read its columns, fetch nothing."""
    if len(params) != query.parameter_count:
        raise AppError(
            Code.INVALID_ARGUMENTS,
            f"The statement uses {query.parameter_count} parameter(s) ($1 ...); {len(params)} were sent.",
            details={"field": "params", "expected": query.parameter_count},
            agent_action="send one value in params for each $n of the statement, in order",
        )
    if connection.in_atomic_block:
        # The scope row must be committed before the query's snapshot is taken.
        raise RuntimeError("query_run commits its scope row; call it outside atomic()")
    limits = caps(limit=limit)
    if not _PROCESS_SLOTS.acquire(blocking=False):
        raise rate_limited(limit="query_concurrency", wait=1)
    started = dt.datetime.now(dt.UTC)
    try:
        with _query_connection() as conn, _scope(conn, owner=owner, space=space):
            columns, rows, drops, snapshot_at = _run(conn, query, params, limits, describe_only=describe_only)
    except pg_errors.QueryCanceled:
        raise AppError(
            Code.QUERY_TIMEOUT,
            f"The query ran longer than {limits['statement_timeout_ms']} ms and was stopped.",
            details={"statement_timeout_ms": limits["statement_timeout_ms"]},
        ) from None
    except pg_errors.LockNotAvailable:
        raise AppError(Code.QUERY_TIMEOUT, "The query waited too long for a lock and was stopped.") from None
    except pg_errors.InsufficientPrivilege:
        raise AppError(
            Code.QUERY_REJECTED,
            "The query reads or calls something the open query may not.",
            details={"reason": "forbidden_relation"},
            agent_action="read only the documented views with the listed functions (query_space lists both)",
        ) from None
    except _OutOfTime:
        raise AppError(
            Code.QUERY_TIMEOUT,
            f"The query ran longer than {limits['statement_timeout_ms']} ms and was stopped.",
            details={"statement_timeout_ms": limits["statement_timeout_ms"]},
        ) from None
    except pg_errors.OperationalError as exc:
        if _server_gone(exc):
            # The server went away in the middle (class 08, 57P0x): the service's trouble, not the
            # caller's; a retry can succeed and a read cannot duplicate anything.
            raise AppError(Code.DATABASE_UNAVAILABLE) from exc
        # Class 53 (out of memory, temp_file_limit), 54 (a program limit: too many columns, a value
        # past 1 GB, an expression too deep), 55: what the caller's statement asked was too much.
        raise _failed(exc) from None
    except pg_errors.Error as exc:
        raise _failed(exc) from None
    finally:
        _PROCESS_SLOTS.release()
    elapsed = int((dt.datetime.now(dt.UTC) - started).total_seconds() * 1000)
    return QueryResult(
        columns=columns, rows=rows, drops=drops, snapshot_at=snapshot_at, elapsed_ms=elapsed, caps=limits
    )


_PROCESS_SLOTS = threading.BoundedSemaphore(settings.OPEN_QUERY_PROCESS_CONCURRENT)


class _OutOfTime(Exception):
    """The statement's time ran out between two fetches (each FETCH is a statement of its own)."""


def _server_gone(exc: pg_errors.OperationalError) -> bool:
    sqlstate = exc.sqlstate or ""
    return not sqlstate or sqlstate.startswith("08") or sqlstate in ("57P01", "57P02", "57P03")


def _failed(exc: pg_errors.Error) -> AppError:
    """PostgreSQL's refusal of the caller's statement is theirs to read: its primary message only
    (no detail, hint, context or query text), and the SQLSTATE."""
    diag = exc.diag
    message = (diag.message_primary or "PostgreSQL could not run the query.")[:300]
    return AppError(
        Code.QUERY_FAILED,
        f"PostgreSQL could not run the query: {message}",
        details={"sqlstate": diag.sqlstate or ""},
    )


# --- the connection -------------------------------------------------------------------------


def _tolerant(base: type[Loader]) -> type[Loader]:
    """`base`, giving PostgreSQL's own text for a value Python's type cannot hold."""

    class Tolerant(base):  # type: ignore[valid-type, misc]  # a subclass of the loader it is given
        def load(self, data: Any) -> Any:
            try:
                return super().load(data)
            except (psycopg.DataError, ValueError, OverflowError, RecursionError):
                return bytes(data).decode("utf-8", "replace")

    Tolerant.__name__ = f"Tolerant{base.__name__}"
    return Tolerant


_ADAPTERS = AdaptersMap(psycopg.adapters)
for _type_name, _loader in (
    ("date", pg_datetime.DateLoader),
    ("time", pg_datetime.TimeLoader),
    ("timetz", pg_datetime.TimetzLoader),
    ("timestamp", pg_datetime.TimestampLoader),
    ("timestamptz", pg_datetime.TimestamptzLoader),
    ("interval", pg_datetime.IntervalLoader),
):
    _ADAPTERS.register_loader(_type_name, _tolerant(_loader))

# JSON nested deeper than this comes back as its text: rendering it again as JSON (json_value, the
# response) recurses once per level, and Python's stack is about a thousand frames deep.
MAX_JSON_DEPTH = 64


def _shallow(data: Any, raw: Any) -> Any:
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                return bytes(raw).decode("utf-8", "replace")
            stack.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value))
    return data


def _json_loader(base: type[Loader]) -> type[Loader]:
    tolerant = _tolerant(base)

    class ShallowJson(tolerant):  # type: ignore[valid-type, misc]  # a subclass of the loader it is given
        def load(self, data: object) -> Any:
            return _shallow(super().load(data), data)

    return ShallowJson


_ADAPTERS.register_loader("json", _json_loader(pg_json.JsonLoader))
_ADAPTERS.register_loader("jsonb", _json_loader(pg_json.JsonbLoader))

# Options of Django's that are not libpq's, and what the query connection sets itself.
_NOT_LIBPQ = ("cursor_factory", "context", "prepare_threshold", "pool", "user", "password")


def query_connection_params() -> dict[str, Any]:
    """Where the query connection goes: the service's server and database (the test database in
    tests), as the query role with its own password."""
    params = {k: v for k, v in connection.get_connection_params().items() if k not in _NOT_LIBPQ}
    params["user"] = settings.OPEN_QUERY_ROLE
    if settings.OPEN_QUERY_PASSWORD:
        params["password"] = settings.OPEN_QUERY_PASSWORD
    params.setdefault("connect_timeout", 10)
    params["application_name"] = "deeprecall open query"
    return params


_LOGIN_REFUSED = (
    "does not exist",
    "not permitted to log in",
    "authentication failed",
    "no password supplied",
    "pg_hba.conf",
)
_CHECK_EVERY_SECONDS = 60.0
_checked_at: float | None = None


def _unavailable(why: str) -> AppError:
    return AppError(
        Code.QUERY_UNAVAILABLE,
        "The open query is not available on this deployment: its database role is not set up safely. "
        "Nothing was run.",
        details={"reason": why},
    )


def _connect() -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(**query_connection_params(), context=_ADAPTERS, autocommit=True)
    except psycopg.OperationalError as exc:
        # Refused as the role (no such role, not permitted to log in, a wrong or missing password,
        # pg_hba.conf) is the operator's to fix; a server that is down or full is not the caller's
        # either, and a retry helps. libpq reports the start-up refusal as text, without a SQLSTATE.
        text = str(exc)
        if any(phrase in text for phrase in _LOGIN_REFUSED):
            logger.error("open query: cannot log in as %s: %s", settings.OPEN_QUERY_ROLE, text[-300:])
            raise _unavailable("cannot_log_in") from None
        raise AppError(Code.DATABASE_UNAVAILABLE) from exc


def _problems(conn: psycopg.Connection[Any]) -> list[str]:
    try:
        problems = role_problems(conn.execute(CHECK_SQL, {"role": settings.OPEN_QUERY_ROLE}).fetchone())
        names = [str(row[0]) for row in conn.execute(VIEWS_SQL).fetchall()]
    except psycopg.Error as exc:
        # No open_query schema yet (migrations not applied), or a catalog the role may not read.
        return [f"could not be checked: {exc.diag.message_primary or type(exc).__name__}"]
    return problems + view_problems(names, _unreadable(conn, names))


def _unreadable(conn: psycopg.Connection[Any], names: list[str]) -> dict[str, str]:
    """Each view read once as the role, outside any scope (so it shows nothing, and what it shows is
    dropped unread): the views whose read PostgreSQL refused, with its message. A grant gone, or a
    database where the views' tables are not read with the views' owner's rights (Citus), is found
    here, before an agent's statement is refused for it."""
    refused: dict[str, str] = {}
    for name in names:
        try:
            conn.execute(pg_sql.SQL("SELECT 1 FROM open_query.{} LIMIT 1").format(pg_sql.Identifier(name)))
        except psycopg.Error as exc:
            refused[name] = (exc.diag.message_primary or type(exc).__name__)[:200]
    return refused


def query_role_problems() -> list[str]:
    """What keeps the query role from being only a reader of the views, as this deployment has it
    (empty: it is safe); `manage.py open_query_roles --check` prints it."""
    try:
        conn = _connect()
    except AppError as exc:
        return [f"cannot log in as {settings.OPEN_QUERY_ROLE} ({exc.code})"]
    with conn:
        return _problems(conn)


@contextmanager
def _query_connection() -> Iterator[psycopg.Connection[Any]]:
    """A new connection as the query role, checked (see `roles.CHECK_SQL`) at most once a minute.

    New for every query: nothing a statement left in its session (a prepared statement, a setting)
    can reach the next caller, and the scope row's key is this backend alone."""
    global _checked_at
    conn = _connect()
    try:
        if _checked_at is None or time.monotonic() - _checked_at > _CHECK_EVERY_SECONDS:
            problems = _problems(conn)
            if problems:
                logger.error(
                    "open query refused: the role %s %s (docs/deploy.md, the open query's database role)",
                    settings.OPEN_QUERY_ROLE,
                    "; ".join(problems),
                )
                raise _unavailable("unsafe_role")
            _checked_at = time.monotonic()
        yield conn
    finally:
        conn.close()


# --- the scope ------------------------------------------------------------------------------

# pg_advisory_xact_lock(int, int)'s class for the scope rows (the worker's is "deep").
_SCOPE_LOCK = 0x7175_6572  # "quer"


@contextmanager
def _scope(conn: psycopg.Connection[Any], *, owner: User, space: Space) -> Iterator[None]:
    """The views' scope for `conn`'s backend, written and removed by the service's own connection.

    Committed before the query starts (its snapshot must see it). The rows of queries still running
    are the concurrency (the owner's, and the deployment's), and a row whose backend is gone (a
    process killed in the middle) is swept here."""
    pid = conn.info.backend_pid
    with transaction.atomic(), connection.cursor() as cursor:
        # One writer of scope rows at a time (a short transaction): the counts below are exact.
        cursor.execute("SELECT pg_advisory_xact_lock(%s, 0)", [_SCOPE_LOCK])
        cursor.execute(
            "DELETE FROM open_query_scope"
            " WHERE pid NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)"
            " OR started_at < now() - make_interval(secs => %s)",
            [2 * settings.OPEN_QUERY_TIMEOUT_MS / 1000 + 10],
        )
        cursor.execute(
            "SELECT count(*) FILTER (WHERE owner_id = %s), count(*) FROM open_query_scope", [owner.pk]
        )
        mine, everyone = cursor.fetchone()
        # Each query may hold up to a gigabyte of the database server's memory while it runs
        # (PostgreSQL bounds no aggregate's state): the deployment's total is the real bound.
        if mine >= settings.OPEN_QUERY_MAX_CONCURRENT or everyone >= settings.OPEN_QUERY_MAX_TOTAL:
            raise rate_limited(limit="query_concurrency", wait=1)
        # A row left by a backend that had this pid before is replaced.
        cursor.execute(
            "INSERT INTO open_query_scope (pid, owner_id, space_id) VALUES (%s, %s, %s)"
            " ON CONFLICT (pid) DO UPDATE SET owner_id = EXCLUDED.owner_id, space_id = EXCLUDED.space_id,"
            " started_at = now()",
            [pid, owner.pk, space.pk],
        )
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM open_query_scope WHERE pid = %s AND owner_id = %s", [pid, owner.pk])


# --- the statement --------------------------------------------------------------------------


def _run(
    conn: psycopg.Connection[Any],
    query: CheckedQuery,
    params: list[Any],
    limits: dict[str, int],
    *,
    describe_only: bool,
) -> tuple[list[dict[str, str]], list[list[Any]], list[dict[str, Any]], dt.datetime]:
    timeout = limits["statement_timeout_ms"]
    deadline = time.monotonic() + timeout / 1000
    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    try:
        conn.execute(
            pg_sql.SQL(
                "SET LOCAL statement_timeout = {}; SET LOCAL lock_timeout = {};"
                " SET LOCAL idle_in_transaction_session_timeout = {}; SET LOCAL TimeZone = 'UTC';"
                " SET LOCAL search_path = open_query"
            ).format(
                pg_sql.Literal(f"{timeout}ms"),
                pg_sql.Literal(f"{limits['lock_timeout_ms']}ms"),
                pg_sql.Literal(f"{timeout * 2}ms"),
            )
        )
        # The first statement that reads takes the snapshot every row comes from.
        row = conn.execute("SELECT statement_timestamp()").fetchone()
        assert row is not None
        snapshot_at: dt.datetime = row[0]
        columns, count = _describe(conn, query, params)
        if describe_only:
            return columns, [], [], snapshot_at
        rows, drops = _fetch(conn, query, params, count, limits, deadline=deadline)
        return columns, rows, drops, snapshot_at
    finally:
        conn.execute("ROLLBACK")


def _describe(
    conn: psycopg.Connection[Any], query: CheckedQuery, params: list[Any]
) -> tuple[list[dict[str, str]], int]:
    """The statement's columns, from PostgreSQL planning it (nothing is fetched)."""
    with conn.cursor(name=f"open_query_{uuid.uuid4().hex}") as cursor:
        cursor.execute(query.driver_sql(), query.driver_params(params))
        description = cursor.description or []
    columns = [{"name": c.name, "type": _TYPE_NAMES.get(c.type_code, "other")} for c in description]
    return columns, len(description)


def _capped_sql(query: CheckedQuery, count: int, limits: dict[str, int]) -> str:
    """The statement inside a wrapper that stops at the row cap plus one and nulls every cell of a
    row past the byte cap (a running sum of the cells' sizes as text), so the server never sends
    more than about the byte cap."""
    names = [f"__c{index}" for index in range(1, count + 1)]
    size = " + ".join(f"coalesce(octet_length(q.{name}::text), 4) + 3" for name in names)
    cells = ", ".join(f"CASE WHEN s.__fits THEN s.{name} END" for name in names)
    return (
        f"SELECT {cells}, s.__fits FROM ("  # noqa: S608 - our own names and numbers around a checked statement
        f"SELECT q.*, sum({size}) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) <= "
        f"{int(limits['max_bytes'])} AS __fits "
        # On lines of their own: a statement that ends in a -- comment must not swallow the rest.
        f"FROM (\n{query.driver_sql()}\n) AS q({', '.join(names)})"
        f") AS s LIMIT {int(limits['max_rows']) + 1}"
    )


def _fetch(
    conn: psycopg.Connection[Any],
    query: CheckedQuery,
    params: list[Any],
    count: int,
    limits: dict[str, int],
    *,
    deadline: float,
) -> tuple[list[list[Any]], list[dict[str, Any]]]:
    rows: list[list[Any]] = []
    drops: list[dict[str, Any]] = []
    size = 0
    max_rows, max_bytes = limits["max_rows"], limits["max_bytes"]
    # A statement of no columns (`SELECT FROM memories`) has nothing to weigh or wrap.
    sql = _capped_sql(query, count, limits) if count else query.driver_sql()
    # A named (server-side) cursor: PostgreSQL produces rows only as they are fetched.
    with conn.cursor(name=f"open_query_{uuid.uuid4().hex}") as cursor:
        cursor.execute(sql, query.driver_params(params))
        while True:
            # statement_timeout counts each FETCH alone: what is left of the query's time is the
            # limit of the next one, so a statement that yields its rows slowly stops in time too.
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                raise _OutOfTime
            conn.execute(
                pg_sql.SQL("SET LOCAL statement_timeout = {}").format(pg_sql.Literal(f"{left_ms}ms"))
            )
            batch = cursor.fetchmany(min(FETCH_BATCH, max_rows + 1 - len(rows)))
            if not batch:
                break
            for record in batch:
                if len(rows) == max_rows:
                    drops.append(
                        {
                            "what": "rows",
                            "reason": "row_cap",
                            "cap": max_rows,
                            "message": f"More than {max_rows} rows: the first {max_rows} are returned.",
                        }
                    )
                    return rows, drops
                fits = record[-1] if count else True
                row = [json_value(value) for value in (record[:-1] if count else record)]
                row_size = len(json.dumps(row, ensure_ascii=False))
                if not fits or size + row_size > max_bytes:
                    drops.append(
                        {
                            "what": "rows",
                            "reason": "byte_cap",
                            "cap": max_bytes,
                            "message": (
                                f"The rows after the first {len(rows)} would pass {max_bytes:,} bytes of "
                                "JSON: they are left out. Select fewer or shorter columns."
                            ),
                        }
                    )
                    return rows, drops
                size += row_size
                rows.append(row)
            if len(rows) > max_rows:
                break
    return rows, drops
