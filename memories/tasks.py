"""Celery tasks: thin wrappers around the worker (memories.worker)."""

from __future__ import annotations

import logging
from typing import Any

from celery import Task
from celery.signals import worker_process_init, worker_ready, worker_shutdown
from django.db import InterfaceError, OperationalError

from accounts.oauth import oauth_housekeeping as oauth_housekeeping_run
from config import runtime
from config.celery import app, queue_depth
from memories.errors import Code
from memories.outbound import OutboundError
from memories.selectors.jobs import jobs_to_recover
from memories.services.jobs import PROCESS_JOB, job_enqueue
from memories.worker.lease import LeaseHeld, job_fail
from memories.worker.run import FAILED_MESSAGE, job_process

logger = logging.getLogger(__name__)


class TransientError(Exception):
    """Worth retrying: the database or a remote service hiccuped."""


class JobTask(Task):
    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        # Retries are exhausted (or the error was unexpected): the job gets a stable code.
        job_id = args[0] if args else kwargs.get("job_id")
        code = Code.RETRIES_EXHAUSTED if isinstance(exc, TransientError) else Code.INTERNAL_ERROR
        logger.error("job %s failed: %s", job_id, exc.__class__.__name__, exc_info=exc)
        try:
            job_fail(job_id=job_id, owner_id=kwargs.get("owner_id"), code=code, message=FAILED_MESSAGE)
        except Exception:
            logger.exception("could not record the failure of job %s", job_id)


@app.task(
    base=JobTask,
    bind=True,
    name=PROCESS_JOB,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(TransientError,),
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=5,
)
def process_job(self: Task, job_id: str, owner_id: str | None = None) -> None:
    # owner_id: messages sent before it travelled with the job carry none (the job's row then says).
    try:
        job_process(job_id=job_id, owner_id=owner_id)
    except LeaseHeld as held:
        if held.batched:
            # A short save another process holds, most likely in a batch it took from the queue
            # (memories.worker.lease.job_batch_claim): the batch commits it within a second.
            # Should that process die, the sweep sends the job again once its lease runs out.
            return
        # Another process holds the job. Ask again once its lease would have run out: if the holder
        # died (or its attempt failed and it could not let go), this message takes the job over then.
        # Out of retries, the sweep takes over an expired lease; never fail a job someone runs.
        if self.request.retries < (self.max_retries or 0):
            raise self.retry(countdown=held.seconds) from None
    except (OperationalError, InterfaceError) as exc:
        raise TransientError(f"database: {exc.__class__.__name__}") from exc
    except OutboundError as exc:
        if exc.transient:
            raise TransientError(str(exc)) from exc
        # The detail (host, status) is for operators: log it, show the owner a plain message.
        logger.error("job %s: remote service error: %s", job_id, exc)
        job_fail(
            job_id=job_id,
            owner_id=owner_id,
            code=Code.REMOTE_SERVICE_ERROR,
            message="A model service this deployment uses refused the request; the operator has been told.",
        )


@app.task(name="memories.recover_jobs", ignore_result=True)
def recover_jobs() -> int:
    """Send the jobs the database says need a worker (memories.selectors.jobs.jobs_to_recover): a
    publish that failed after its commit, an expired lease, a message the broker provably lost (it
    holds fewer messages than jobs wait for one), never a job merely waiting its turn.

    Celery beat sends it every RECOVERY_INTERVAL_SECONDS (config/celery.py); it runs in a pool
    process like any task.
    """
    # The broker's count first: a job published after it is not counted against it. One read across
    # owners (on Citus, every shard at once), then each job on its owner's own.
    ids = jobs_to_recover(waiting=queue_depth())
    for job_id, owner_id in ids:
        job_enqueue(job_id=job_id, owner_id=owner_id)
    if ids:
        logger.info("re-sent %d jobs", len(ids))
    return len(ids)


@app.task(name="accounts.oauth_housekeeping", ignore_result=True)
def oauth_housekeeping() -> dict[str, int]:
    """The authorization server's clean-up (accounts.oauth.oauth_housekeeping), sent hourly by beat."""
    done = oauth_housekeeping_run()
    if any(done.values()):
        logger.info("OAuth housekeeping: %s", done)
    return done


@worker_process_init.connect
def _on_worker_process_init(**kwargs: object) -> None:
    # Each pool process loads the model once, before its first job, so no save waits for it
    # (one thread per process: memories/embeddings.py).
    from memories import embeddings

    embeddings.warm_up()
    runtime.settle()


@worker_ready.connect
def _on_worker_ready(**kwargs: object) -> None:
    # The worker's main process (receiving messages, handing them to the pool) settles too.
    runtime.settle()


@worker_shutdown.connect
def _on_worker_shutdown(sender: object = None, **kwargs: object) -> None:
    # A worker stopping cleanly (SIGTERM, Ctrl-C) leaves the health report's known workers; one that
    # dies without a word stays named as missing (memories.health).
    from memories.health import worker_forget

    hostname = getattr(sender, "hostname", None)
    if hostname:
        worker_forget(hostname)
