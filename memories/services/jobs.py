"""Queueing jobs for the worker. The worker's side (claim, run, fail) is `memories.worker`.

The job row is the outbox: it is committed first, then its message is published, and the row
records the publish (`published_at`: written with the row, cleared when the publish fails). A
publish that fails after the commit (the broker restarting) leaves the save accepted; the recovery
sweep sends the job from the database (`memories.selectors.jobs.jobs_to_recover`).
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError, transaction
from django.db.models.functions import Now
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from accounts.caller import Caller
from config.celery import app
from memories.models import Job, Source, Space
from memories.parsing import RowId
from memories.services.rows import rows_insert

logger = logging.getLogger(__name__)


def job_queue(
    *, caller: Caller, space: Space, source: Source | None, kind: str, options: dict[str, Any]
) -> Job:
    """Create the job, and its source first when that is new (`source_new`), in one message: both
    rows or neither, one round trip. Its message is published once the caller's transaction commits
    (at once outside an atomic block).

    The row says it was published from the start: the publish follows the commit, and a failed one
    clears the mark (job_publish), so the common case costs no second write. Only a process that
    dies between the commit and the publish leaves a marked job unsent; the sweep takes it for a
    lost message and sends it REPUBLISH_AFTER later (memories.selectors.jobs.jobs_to_recover).
    """
    job = Job(
        owner=caller.user,
        space=space,
        agent_id=caller.agent_id,
        source=source,
        kind=kind,
        options=options,
        published_at=timezone.now(),
    )
    rows_insert(*([source] if source is not None and source._state.adding else []), job)
    job_id = job.id
    owner_id = job.owner_id
    transaction.on_commit(lambda: job_publish(job_id=job_id, owner_id=owner_id))
    return job


# The task that runs a job (memories.tasks.process_job), sent by its name: the tasks and the worker
# sit above the services, which only queue.
PROCESS_JOB = "memories.process_job"


def _send(job_id: RowId, owner_id: RowId) -> bool:
    # The owner travels with the job's id: every statement the worker sends for it names the owner,
    # which a database sharded by owner routes to one node (docs/scale.md).
    try:
        app.send_task(
            PROCESS_JOB,
            args=(str(job_id),),
            kwargs={"owner_id": str(owner_id)},
            retry=True,
            retry_policy=PUBLISH_RETRY,
        )
    except (BrokerError, OSError) as exc:
        logger.warning("job %s: publish failed (%s); the sweep sends it", job_id, exc.__class__.__name__)
        return False
    return True


def job_publish(*, job_id: RowId, owner_id: RowId) -> bool:
    """Send a job that job_queue just committed, marked published. False when the broker could not be
    reached: the mark is cleared, so the sweep sends the job from the outbox (committed,
    unpublished) a few seconds on, and the save that queued it is still accepted, because a client
    told to retry it would save it twice."""
    if _send(job_id, owner_id):
        return True
    try:
        owner = Job._meta.pk.to_python(owner_id)
        Job.objects.filter(owner_id=owner, id=job_id, status=Job.Status.QUEUED).update(published_at=None)
    except DatabaseError:
        # Neither sent nor unmarked: the sweep sends it as a lost message, later. The save itself
        # committed, so it must not fail now.
        logger.warning("job %s: not published, and the mark could not be cleared", job_id)
    return False


def job_enqueue(*, job_id: RowId, owner_id: RowId) -> bool:
    """Send a job to the worker again (the sweep, a batch that let its members go) and mark it
    published. Safe to call twice: the worker claims a job once. False when the broker could not be
    reached: the job stays as it was for the next sweep."""
    if not _send(job_id, owner_id):
        return False
    try:
        Job.objects.filter(owner_id=Job._meta.pk.to_python(owner_id), id=job_id).update(published_at=Now())
    except DatabaseError:
        # Sent, but not marked: the sweep sends it once more, which the claim makes harmless.
        logger.warning("job %s: published, but the mark was not stored", job_id)
    return True


# A few quick tries ride out a broker restart's blink without holding the save's response for long;
# anything longer is the sweep's.
PUBLISH_RETRY = {"max_retries": 2, "interval_start": 0.2, "interval_step": 0.3, "interval_max": 0.5}
