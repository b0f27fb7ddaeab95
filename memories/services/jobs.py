"""Queueing jobs for the worker. The worker's side (claim, run, fail) is `memories.pipeline.worker`."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from accounts.caller import Caller
from memories.models import Job, Source, Space


def job_queue(*, caller: Caller, space: Space, source: Source, kind: str, options: dict[str, Any]) -> Job:
    job = Job.objects.create(
        owner=caller.user, space=space, agent_id=caller.agent_id, source=source, kind=kind, options=options
    )
    job_id = job.id
    transaction.on_commit(lambda: job_enqueue(job_id=job_id))
    return job


def job_enqueue(*, job_id: Any) -> None:
    """Send the job to the worker. Safe to call twice: the worker claims a job once."""
    from memories.tasks import process_job

    process_job.delay(str(job_id))
