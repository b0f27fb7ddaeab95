"""Run a checked SELECT over the open_query views, for one owner and space, safely.

The database does the enforcing, in one transaction:

- `READ ONLY`, `REPEATABLE READ`: nothing can be written, and every row comes from one snapshot,
  whose time the answer reports;
- `statement_timeout` and `lock_timeout` (SET LOCAL): a query that runs too long is stopped by the
  server, not by us;
- the owner and the space as a row of `open_query_scope` keyed by this transaction's id, written
  as the service's own user before the role switch (the views filter on it; the query role can
  neither read nor write it, so no SQL can name another owner or space), and rolled back at the
  end with the rest of the transaction;
- `SET LOCAL ROLE` to the NOLOGIN query role, which may read the views and nothing else, and
  `search_path` to the views' schema only.

The statement is fetched through a server-side cursor, so at most the row cap plus one row is
ever produced; rows past the byte cap are dropped, and both drops are reported.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from psycopg import errors as pg_errors
from psycopg import sql as pg_sql

from accounts.models import User
from memories.errors import AppError, Code
from memories.models import Space
from memories.open_query.catalogue import SCHEMA
from memories.open_query.guard import CheckedQuery

# PostgreSQL type OIDs of the values the views and the allowed functions produce.
_TYPE_NAMES = {
    16: "boolean",
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


def json_value(value: Any) -> Any:
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
        # SET TRANSACTION must open the transaction, and SET LOCAL ROLE must end with it.
        raise RuntimeError("query_run opens its own transaction; call it outside atomic()")
    limits = caps(limit=limit)
    started = dt.datetime.now(dt.UTC)
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                # The scope the views read, keyed by this transaction and written as the service's
                # own user; rolled back below, so no other transaction ever sees it.
                cursor.execute(
                    "INSERT INTO open_query_scope (txid, owner_id, space_id)"
                    " VALUES (pg_current_xact_id(), %s, %s) RETURNING statement_timestamp()",
                    [owner.pk, space.pk],
                )
                snapshot_at = cursor.fetchone()[0]
                cursor.execute("SET TRANSACTION READ ONLY")
                cursor.execute(
                    "SELECT set_config('statement_timeout', %s, true), set_config('lock_timeout', %s, true),"
                    " set_config('idle_in_transaction_session_timeout', %s, true)",
                    [
                        f"{limits['statement_timeout_ms']}ms",
                        f"{limits['lock_timeout_ms']}ms",
                        f"{limits['statement_timeout_ms'] * 2}ms",
                    ],
                )
                cursor.execute(
                    pg_sql.SQL("SET LOCAL search_path = {}; SET LOCAL ROLE {}").format(
                        pg_sql.Identifier(SCHEMA), pg_sql.Identifier(settings.OPEN_QUERY_ROLE)
                    )
                )
            columns, rows, drops = _fetch(query, params, limits, describe_only=describe_only)
            # Nothing of this transaction is kept: the scope row goes, and the role with it.
            transaction.set_rollback(True)
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
            "The query reads something the open query may not read.",
            details={"reason": "forbidden_relation"},
            agent_action="read only the documented views (query_space lists them)",
        ) from None
    except pg_errors.Error as exc:
        # The statement was the caller's, so PostgreSQL's complaint about it is theirs to read:
        # its primary message only (no detail, context or query text), and the SQLSTATE.
        diag = exc.diag
        message = (diag.message_primary or "PostgreSQL could not run the query.")[:300]
        raise AppError(
            Code.QUERY_FAILED,
            f"PostgreSQL could not run the query: {message}",
            details={"sqlstate": diag.sqlstate or ""},
        ) from None
    elapsed = int((dt.datetime.now(dt.UTC) - started).total_seconds() * 1000)
    return QueryResult(
        columns=columns, rows=rows, drops=drops, snapshot_at=snapshot_at, elapsed_ms=elapsed, caps=limits
    )


def _fetch(
    query: CheckedQuery, params: list[Any], limits: dict[str, int], *, describe_only: bool
) -> tuple[list[dict[str, str]], list[list[Any]], list[dict[str, Any]]]:
    raw = connection.connection
    assert raw is not None  # opened by the statements above
    rows: list[list[Any]] = []
    drops: list[dict[str, Any]] = []
    size = 0
    max_rows, max_bytes = limits["max_rows"], limits["max_bytes"]
    # A named (server-side) cursor: PostgreSQL produces rows only as they are fetched.
    with raw.cursor(name=f"open_query_{uuid.uuid4().hex}") as cursor:
        cursor.execute(query.driver_sql(), query.driver_params(params))
        description = cursor.description or []
        columns = [{"name": c.name, "type": _TYPE_NAMES.get(c.type_code, "other")} for c in description]
        if describe_only:
            return columns, rows, drops
        while True:
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
                    return columns, rows, drops
                row = [json_value(value) for value in record]
                row_size = len(json.dumps(row, ensure_ascii=False))
                if size + row_size > max_bytes:
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
                    return columns, rows, drops
                size += row_size
                rows.append(row)
            if len(rows) > max_rows:
                break
    return columns, rows, drops
