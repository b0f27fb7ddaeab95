"""An operator's re-run of a failed job (`manage.py job_rerun`).

Beside `memories.services.jobs` (which queues jobs for the surfaces) because it is the operator's
write only; it sends the job the same way, through `job_enqueue`, after commit.
"""

from __future__ import annotations

import logging
import uuid

from django.db import transaction

from memories.errors import AppError, Code
from memories.models import Job
from memories.services.jobs import job_enqueue

logger = logging.getLogger(__name__)


@transaction.atomic
def job_rerun(*, job_id: uuid.UUID) -> Job:
    """Put a failed job back in the queue and send it to a worker; return it.

    Only a failed job: a queued or running one is already on its way (the recovery sweep covers a
    lost message) and a succeeded one has its memories. Re-running is safe because the pipeline is
    idempotent (the same statement again is more evidence, not a second memory). A job whose
    source was purged has nothing left to read and is refused.
    """
    job = Job.objects.select_for_update().filter(id=job_id).first()
    if job is None:
        raise AppError(Code.JOB_NOT_FOUND, f"There is no job {job_id}.")
    if job.status != Job.Status.FAILED:
        raise AppError(Code.INVALID_VALUE, f"Job {job_id} is {job.status}; only a failed job can be re-run.")
    if job.source_id is None:
        raise AppError(
            Code.INVALID_VALUE, f"Job {job_id} has no source left (it was purged); nothing to re-run."
        )
    previous = job.error_code
    job.status = Job.Status.QUEUED
    job.error_code = ""
    job.error_message = ""
    job.claimed_by = ""
    job.started_at = None
    job.finished_at = None
    job.save(
        update_fields=["status", "error_code", "error_message", "claimed_by", "started_at", "finished_at"]
    )
    logger.info("job %s re-run by an operator (it had failed with %s)", job_id, previous or "no code")
    transaction.on_commit(lambda: job_enqueue(job_id=job.id, owner_id=job.owner_id))
    return job
