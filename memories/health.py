"""Readiness of every part the service needs: database, broker, worker, embeddings."""

from __future__ import annotations

import logging
from typing import Any

from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from memories import embeddings

logger = logging.getLogger(__name__)


def _check_database() -> dict[str, Any]:
    try:
        connection.ensure_connection()
        with connection.cursor() as cur:
            cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cur.fetchone()
        if row is None:
            return {"ready": False, "state": "pgvector extension missing; run migrate"}
        plan = MigrationExecutor(connection).migration_plan(
            MigrationExecutor(connection).loader.graph.leaf_nodes()
        )
        if plan:
            return {"ready": False, "state": f"{len(plan)} migrations not applied; run migrate"}
        return {"ready": True, "state": "ok", "pgvector": row[0]}
    except Exception as exc:
        # The detail (host, SQL) stays in the log; the client learns only the kind.
        logger.warning("health: database check failed", exc_info=True)
        return {"ready": False, "state": f"unreachable ({exc.__class__.__name__})"}


def _check_broker_and_worker() -> tuple[dict[str, Any], dict[str, Any]]:
    from config.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        broker = {"ready": True, "state": "ok", "transport": app.conf.broker_url.split(":", 1)[0]}
    except Exception as exc:
        logger.warning("health: broker check failed", exc_info=True)
        unreachable = {"ready": False, "state": f"unreachable ({exc.__class__.__name__})"}
        return unreachable, {"ready": False, "state": "unknown (broker unreachable)"}
    try:
        replies = app.control.ping(timeout=2.0, limit=1)
    except Exception as exc:
        logger.warning("health: worker ping failed", exc_info=True)
        return broker, {"ready": False, "state": f"ping failed ({exc.__class__.__name__})"}
    if not replies:
        return broker, {"ready": False, "state": "no worker answered"}
    return broker, {"ready": True, "state": "ok", "workers": len(replies)}


def _check_embeddings() -> dict[str, Any]:
    ready, state = embeddings.readiness()
    return {"ready": ready, "state": state}


def health_report() -> dict[str, Any]:
    """Run every check; `ready` is true only when all parts are."""
    database = _check_database()
    broker, worker = _check_broker_and_worker()
    checks = {
        "database": database,
        "broker": broker,
        "worker": worker,
        "embeddings": _check_embeddings(),
    }
    return {"ready": all(c["ready"] for c in checks.values()), "checks": checks}
