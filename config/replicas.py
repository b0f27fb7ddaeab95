"""Read replicas: which reads may go to a PostgreSQL streaming replica, and when they must not.

Configured by DATABASE_REPLICA_URLS (settings: the aliases `replica_1`, `replica_2`, ...). With none,
settings installs no router and `replica_reads` calls straight through: a single-machine deployment
pays one module-level test per request.

The rules (docs/decisions.md, "Read replicas"):

- Reads go to a replica only inside `replica_reads(owner_id, call)` (or the REST view's equivalent,
  `route_enter` / `route_leave`), which the read-only entry points enter after authentication:
  recall, answer and the other read-only operations, REST GETs, the dashboard's GET pages. Everything
  else (writes, job claims, sign-in, the cache table, the open query's scope) stays on the primary;
  so do `memories` reads inside a transaction on the primary (a read-modify-write).
- Read-your-writes by LSN: after a write of an owner commits (a job stored by the worker, a write
  operation, a REST or dashboard write) and after a read on the primary that showed a caller its
  own writes (a job's status), the primary's WAL position is recorded for the owner in the shared
  cache. A replica serves that owner only once it has replayed that far.
- A replica is probed at most every PROBE_SECONDS per process (replay position, and the primary's
  position to measure lag against); one that does not answer, fails a read, or lags more than
  DATABASE_REPLICA_MAX_LAG_SECONDS is skipped, and a read that fails on a replica runs again on the
  primary: no error reaches the caller. `replica_states` reports each for the health check.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any, TypedDict, TypeVar

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections

logger = logging.getLogger(__name__)

REPLICA_PREFIX = "replica_"
# The app whose reads may be served by a replica: the memory store. Users, sessions, tokens, OAuth
# and the cache table are read on the primary (a new session or token is read at once).
ROUTED_APPS = frozenset({"memories"})
PROBE_SECONDS = 0.5
# A replica that failed is not tried again for this long (a stopped server refuses at once, but a
# dead host costs a connect timeout per try).
DOWN_SECONDS = 2.0
_KEY = "replica:rw-lsn:{}"
# No replica has replayed this far: the owner reads on the primary.
UNKNOWN_POSITION = 2**64 - 1

T = TypeVar("T")

# The replica alias this context's `memories` reads use; None: the primary.
_route: ContextVar[str | None] = ContextVar("replica_route", default=None)


def configured() -> bool:
    """Whether any replica is configured (settings.DATABASE_REPLICA_ALIASES)."""
    return bool(settings.DATABASE_REPLICA_ALIASES)


def lsn_value(text: str) -> int:
    """A PostgreSQL LSN ('16/B374D848') as a number that orders as the WAL does."""
    high, low = text.split("/")
    return (int(high, 16) << 32) + int(low, 16)


# --- the router ---------------------------------------------------------------------------------


class ReplicaRouter:
    """Installed only with replicas (settings.DATABASE_ROUTERS). Reads of the memory store follow the
    context's route; every write, and every read in a transaction on the primary, uses the primary."""

    def db_for_read(self, model: type[Any], **hints: object) -> str | None:
        return route_for(model._meta.app_label)

    def db_for_write(self, model: type[Any], **hints: object) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: object, obj2: object, **hints: object) -> bool:
        # The replicas hold the primary's rows: an object read from one relates to one from the other.
        return True

    def allow_migrate(self, db: str, app_label: str, **hints: object) -> bool:
        return db == DEFAULT_DB_ALIAS


def route_for(app_label: str) -> str | None:
    """The alias a read of `app_label` uses in this context, None for the primary."""
    alias = _route.get()
    if alias is None or app_label not in ROUTED_APPS:
        return None
    if connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return None
    return alias


def read_alias() -> str:
    """The alias for this context's raw SQL reads of the memory store (recall's statements)."""
    return route_for("memories") or DEFAULT_DB_ALIAS


# --- health of each replica ---------------------------------------------------------------------


class ReplicaState(TypedDict):
    """One replica as the health check reports it."""

    alias: str
    state: str  # "ok", "lagging", "down" or "unchecked"
    lag_seconds: float | None


@dataclass
class _Replica:
    alias: str
    state: str = "unchecked"
    replay_lsn: int = 0
    lag_seconds: float | None = None
    checked_at: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    # The probe's own connection, outside the pool: a pool waits its whole timeout for a server that
    # is down, a direct connection is refused at once.
    probe: psycopg.Connection[Any] | None = None


_replicas: dict[str, _Replica] = {}
_replicas_lock = threading.Lock()
_turn = itertools.count()
# (when, the primary's WAL position then), oldest first: how far behind a replica's replay position
# is, in seconds, is the age of the oldest position it has not reached.
_primary_positions: deque[tuple[float, int]] = deque()


def _replica(alias: str) -> _Replica:
    with _replicas_lock:
        return _replicas.setdefault(alias, _Replica(alias))


def lag_seconds(
    positions: deque[tuple[float, int]] | list[tuple[float, int]],
    replay_lsn: int,
    now: float,
    *,
    replay_age: float | None,
) -> float:
    """How far a replica at `replay_lsn` is behind: the age of the oldest primary position it has not
    replayed. Behind every position this process has seen, it is at least as old as the last
    transaction it replayed (`replay_age`, the replica's own clock): conservative, a process that
    started a moment ago must not take a replica hours behind for a current one."""
    behind = [when for when, lsn in positions if lsn > replay_lsn]
    if not behind:
        return 0.0
    lag = now - behind[0]
    if len(behind) == len(positions) and replay_age is not None:
        lag = max(lag, replay_age)
    return lag


def _probe(replica: _Replica) -> None:
    """Read the replica's replay position and the primary's WAL position (at most every PROBE_SECONDS)."""
    now = time.monotonic()
    if now - replica.checked_at < (DOWN_SECONDS if replica.state == "down" else PROBE_SECONDS):
        return
    with replica.lock:
        if now - replica.checked_at < PROBE_SECONDS:
            return
        replica.checked_at = now
        try:
            primary_lsn = _primary_lsn()
            if replica.probe is None or replica.probe.closed:
                replica.probe = _probe_connection(replica.alias)
            row = replica.probe.execute(
                "SELECT pg_last_wal_replay_lsn()::text,"
                " extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8"
            ).fetchone()
        except (OperationalError, InterfaceError, psycopg.Error):
            logger.warning("replica %s does not answer; reads go to the primary", replica.alias)
            _mark_down(replica)
            return
        if row is None or row[0] is None:
            # Not a standby (pg_last_wal_replay_lsn is NULL on a primary): never a read replica.
            replica.state, replica.lag_seconds = "down", None
            return
        replica.replay_lsn = lsn_value(row[0])
        positions = _primary_positions
        positions.append((now, primary_lsn))
        horizon = now - max(float(settings.DATABASE_REPLICA_MAX_LAG_SECONDS) * 3, 60.0)
        while positions and positions[0][0] < horizon:
            positions.popleft()
        lag = lag_seconds(list(positions), replica.replay_lsn, now, replay_age=row[1])
        replica.lag_seconds = round(lag, 3)
        replica.state = "lagging" if lag > settings.DATABASE_REPLICA_MAX_LAG_SECONDS else "ok"


def _probe_connection(alias: str) -> psycopg.Connection[Any]:
    params = {k: v for k, v in connections[alias].get_connection_params().items() if k in _LIBPQ_PARAMS}
    return psycopg.connect(**params, connect_timeout=2, autocommit=True, application_name="replica-probe")


_LIBPQ_PARAMS = frozenset({"dbname", "user", "password", "host", "port", "sslmode", "sslrootcert"})


def _mark_down(replica: _Replica) -> None:
    replica.state, replica.lag_seconds, replica.checked_at = "down", None, time.monotonic()
    if replica.probe is not None:
        replica.probe.close()
        replica.probe = None
    # The pooled connection that failed must not serve this thread's next read.
    try:
        connections[replica.alias].close()
    except Exception:
        logger.debug("closing %s failed", replica.alias, exc_info=True)


def _primary_lsn() -> int:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        row = cursor.fetchone()
    assert row is not None
    return lsn_value(row[0])


def replica_states() -> list[ReplicaState]:
    """Each configured replica, probed now if its last probe is older than PROBE_SECONDS."""
    states: list[ReplicaState] = []
    for alias in settings.DATABASE_REPLICA_ALIASES:
        replica = _replica(alias)
        _probe(replica)
        states.append({"alias": alias, "state": replica.state, "lag_seconds": replica.lag_seconds})
    return states


# --- read-your-writes ---------------------------------------------------------------------------


def writes_seen(owner_id: object) -> None:
    """Record that `owner_id`'s caller may have seen (or made) everything committed on the primary so
    far: their next reads go to a replica only once it has replayed this far. Called after a write
    commits and after a read on the primary that showed a caller its own writes."""
    if not configured():
        return
    from django.core.cache import cache

    # Kept longer than a replica may lag before it is skipped: by then every replica still serving
    # has replayed it.
    timeout = int(settings.DATABASE_REPLICA_MAX_LAG_SECONDS) * 2 + 60
    try:
        lsn = _primary_lsn()
    except (OperationalError, InterfaceError):
        # The write is committed and its answer must not turn into an error; with no position known,
        # the owner reads on the primary until the entry expires.
        logger.warning("could not read the primary's WAL position for %s", owner_id, exc_info=True)
        lsn = UNKNOWN_POSITION
    try:
        cache.set(_KEY.format(owner_id), lsn, timeout)
    except Exception:
        logger.error("could not record %s's write position: reads may be stale", owner_id, exc_info=True)


def _owner_position(owner_id: object) -> int | None:
    """The WAL position `owner_id`'s next read needs (0: none recorded); None when the cache fails."""
    from django.core.cache import cache

    try:
        return int(cache.get(_KEY.format(owner_id)) or 0)
    except Exception:
        logger.warning("read-your-writes position unreadable; reading on the primary", exc_info=True)
        return None


def choose(owner_id: object) -> str | None:
    """The replica that may serve `owner_id`'s reads now, None for the primary."""
    needed = _owner_position(owner_id)
    if needed is None:
        return None
    aliases = settings.DATABASE_REPLICA_ALIASES
    start = next(_turn)
    for offset in range(len(aliases)):
        replica = _replica(aliases[(start + offset) % len(aliases)])
        _probe(replica)
        if replica.state == "ok" and replica.replay_lsn >= needed:
            return replica.alias
    return None


# --- entering and leaving a route ---------------------------------------------------------------


def route_enter(owner_id: object) -> Token[str | None] | None:
    """Send this context's memory-store reads for `owner_id` to a replica, if one may serve them.
    Returns what `route_leave` needs; None when nothing changed (no replicas, already routed)."""
    if not settings.DATABASE_REPLICA_ALIASES or _route.get() is not None:
        return None
    alias = choose(owner_id)
    if alias is None:
        return None
    return _route.set(alias)


def route_leave(token: Token[str | None] | None) -> None:
    if token is not None:
        _route.reset(token)


def route_failed(exc: BaseException) -> bool:
    """After `exc` in a routed context: when it is a connection failure on the route's replica, mark
    the replica down, send the rest of this context to the primary and return True (run it again)."""
    alias = _route.get()
    if alias is None or not isinstance(exc, (OperationalError, InterfaceError)):
        return False
    logger.warning("read on %s failed (%s); running it on the primary", alias, exc.__class__.__name__)
    _mark_down(_replica(alias))
    _route.set(None)
    return True


def replica_reads(owner_id: object, call: Callable[[], T]) -> T:
    """`call()` with its memory-store reads on a replica that may serve `owner_id`; run again on the
    primary when the replica fails under it. Only for calls that read: a call that wrote would write
    twice."""
    if not settings.DATABASE_REPLICA_ALIASES:
        return call()
    token = route_enter(owner_id)
    if token is None:
        return call()
    try:
        return call()
    except (OperationalError, InterfaceError) as exc:
        if not route_failed(exc):
            raise
        return call()
    finally:
        _route.reset(token)
