"""Queueing jobs for the worker. The worker's side (claim, run, fail) is `memories.pipeline.worker`.

The job row is the outbox: it is committed first, then its message is published, and the row
records that the publish reached the broker (`published_at`). A publish that fails after the commit
(the broker restarting) leaves the save accepted; the recovery sweep sends the job from the
database (`memories.pipeline.worker.jobs_to_recover`).
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import DatabaseError, transaction
from django.db.models.functions import Now
from kombu.exceptions import OperationalError as BrokerError

from accounts.caller import Caller
from memories.models import Job, Source, Space

logger = logging.getLogger(__name__)


def job_queue(*, caller: Caller, space: Space, source: Source, kind: str, options: dict[str, Any]) -> Job:
    """Create the job; its message is published once the caller's transaction commits."""
    job = Job.objects.create(
        owner=caller.user, space=space, agent_id=caller.agent_id, source=source, kind=kind, options=options
    )
    job_id = job.id
    transaction.on_commit(lambda: job_enqueue(job_id=job_id))
    return job


def job_enqueue(*, job_id: Any) -> bool:
    """Send the job to the worker and mark it published. Safe to call twice: the worker claims a
    job once. False when the broker could not be reached: the job stays in the outbox (committed,
    unpublished) for the sweep, and the save that queued it is still accepted, because a client
    told to retry it would save it twice."""
    from memories.tasks import process_job

    try:
        process_job.apply_async((str(job_id),), retry=True, retry_policy=PUBLISH_RETRY)
    except (BrokerError, OSError) as exc:
        logger.warning("job %s: publish failed (%s); the sweep sends it", job_id, exc.__class__.__name__)
        return False
    try:
        Job.objects.filter(id=job_id).update(published_at=Now())
    except DatabaseError:
        # Sent, but not marked: the sweep sends it once more, which the claim makes harmless. The
        # save itself committed, so it must not fail now.
        logger.warning("job %s: published, but the mark was not stored", job_id)
    return True


# A few quick tries ride out a broker restart's blink without holding the save's response for long;
# anything longer is the sweep's.
PUBLISH_RETRY = {"max_retries": 2, "interval_start": 0.2, "interval_step": 0.3, "interval_max": 0.5}
