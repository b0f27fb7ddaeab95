"""Health of the service, in three questions a supervisor or load balancer asks.

- live (`GET /healthz/live`): is this process answering at all? No dependency is consulted, so a
  database outage never makes a supervisor restart every web process.
- ready (`GET /healthz/ready`): should this web process get traffic? The database (reachable,
  pgvector, migrations applied) and the embedding model. Not the broker and not the workers: recall
  and answer need neither, and a save is stored (its job queued) either way, so a worker outage
  must not take every web node out of the load balancer.
- the report (`GET /healthz`): readiness as above, plus the broker and every worker, each reported
  truthfully (how many answered, which known ones did not) without deciding the status code; and,
  when read replicas are configured, each by name with its state (ok, lagging, down) and lag: a
  replica that is down or lagging only sends reads to the primary, so it does not decide `ready`.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from config import replicas
from memories import embeddings

logger = logging.getLogger(__name__)

# Workers that answered a ping, by name, with when they last did, in the cache every web process
# shares: one that stops answering is reported missing (a dead worker is visible), for this long
# after its last answer, so a worker that died overnight is still listed in the morning.
KNOWN_WORKERS_KEY = "health:known-workers"
MISSING_REPORTED_FOR_SECONDS = 24 * 3600

# Migrations only ever get applied while a process runs (a release restarts the processes), so
# once this process has seen none pending it stops planning them: planning reads every migration
# file, hundreds of milliseconds that a probe under load must not pay each time.
_migrations_applied = False


def _check_database() -> dict[str, Any]:
    global _migrations_applied
    try:
        connection.ensure_connection()
        with connection.cursor() as cur:
            cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cur.fetchone()
        if row is None:
            return {"ready": False, "state": "pgvector extension missing; run migrate"}
        if not _migrations_applied:
            executor = MigrationExecutor(connection)
            plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
            if plan:
                return {"ready": False, "state": f"{len(plan)} migrations not applied; run migrate"}
            _migrations_applied = True
        return {"ready": True, "state": "ok", "pgvector": row[0]}
    except Exception as exc:
        # The detail (host, SQL) stays in the log; the client learns only the kind.
        logger.warning("health: database check failed", exc_info=True)
        return {"ready": False, "state": f"unreachable ({exc.__class__.__name__})"}


def _check_embeddings() -> dict[str, Any]:
    ready, state = embeddings.readiness()
    return {"ready": ready, "state": state}


def _known_workers(now: float) -> dict[str, float]:
    try:
        known = cache.get(KNOWN_WORKERS_KEY) or {}
    except Exception:
        # The shared cache is down (Redis): report what answers now, remember nothing.
        logger.warning("health: cannot read the known workers", exc_info=True)
        return {}
    return {name: seen for name, seen in known.items() if now - seen < MISSING_REPORTED_FOR_SECONDS}


def _remember_workers(known: dict[str, float]) -> None:
    try:
        cache.set(KNOWN_WORKERS_KEY, known, timeout=MISSING_REPORTED_FOR_SECONDS)
    except Exception:
        logger.warning("health: cannot record the known workers", exc_info=True)


def worker_forget(name: str) -> None:
    """A worker that stops cleanly is gone, not missing: the report stops naming it. Its name is
    new at each start (`manage.py up` puts its process id in it), so after a restart the report
    would otherwise count every earlier run's worker as missing for a day."""
    try:
        known = cache.get(KNOWN_WORKERS_KEY) or {}
        if name in known:
            del known[name]
            _remember_workers(known)
    except Exception:
        logger.warning("health: cannot forget the worker %s", name, exc_info=True)


def _check_broker_and_workers() -> tuple[dict[str, Any], dict[str, Any]]:
    from config.celery import app

    timeout = settings.HEALTH_PING_TIMEOUT_SECONDS
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=timeout)
        broker = {"ready": True, "state": "ok", "transport": app.conf.broker_url.split(":", 1)[0]}
    except Exception as exc:
        logger.warning("health: broker check failed", exc_info=True)
        unreachable = {"ready": False, "state": f"unreachable ({exc.__class__.__name__})"}
        return unreachable, {"ready": False, "state": "unknown (broker unreachable)", "workers": 0}
    now = time.time()
    known = _known_workers(now)
    try:
        # Stop waiting once every known worker has answered (the usual case, fast); otherwise wait
        # the whole timeout, which is generous because a worker busy with a job answers late.
        replies = app.control.ping(timeout=timeout, limit=len(known) or None) or []
    except Exception as exc:
        logger.warning("health: worker ping failed", exc_info=True)
        return broker, {"ready": False, "state": f"ping failed ({exc.__class__.__name__})", "workers": 0}
    answered = sorted({name for reply in replies for name in reply})
    for name in answered:
        known[name] = now
    _remember_workers(known)
    missing = sorted(set(known) - set(answered))
    if not answered:
        state = "no worker answered"
    elif missing:
        state = f"{len(missing)} of {len(known)} workers did not answer"
    else:
        state = "ok"
    worker = {
        "ready": bool(answered),
        "state": state,
        "workers": len(answered),
        "answered": answered,
        "missing": missing,
    }
    return broker, worker


def health_live() -> dict[str, Any]:
    """Liveness: this process answers. Consults nothing, so it cannot fail for a dependency."""
    return {"live": True}


def health_ready() -> dict[str, Any]:
    """Readiness of a web process: the database and the embedding model (not the workers)."""
    checks = {"database": _check_database(), "embeddings": _check_embeddings()}
    return {"ready": all(c["ready"] for c in checks.values()), "checks": checks}


def health_report() -> dict[str, Any]:
    """Readiness plus the broker and the workers, which are reported but do not decide `ready`."""
    report = health_ready()
    broker, worker = _check_broker_and_workers()
    report["checks"] = {
        "database": report["checks"]["database"],
        "broker": broker,
        "worker": worker,
        "embeddings": report["checks"]["embeddings"],
    }
    if replicas.configured():
        report["checks"]["replicas"] = _check_replicas()
    return report


def _check_replicas() -> dict[str, Any]:
    states = replicas.replica_states()
    serving = [s["alias"] for s in states if s["state"] == "ok"]
    unhealthy = {s["alias"]: s["state"] for s in states if s["state"] != "ok"}
    return {
        "state": "ok"
        if not unhealthy
        else "degraded: reads of "
        + ", ".join(f"{alias} ({state})" for alias, state in unhealthy.items())
        + " go to the primary",
        "serving": serving,
        "replicas": states,
        "max_lag_seconds": settings.DATABASE_REPLICA_MAX_LAG_SECONDS,
    }
