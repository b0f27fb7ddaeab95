"""`manage.py job_rerun JOB_ID`: send a failed job to the workers again."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memories.management.operator import app_errors_as_command_errors
from memories.services.job_rerun import job_rerun


class Command(BaseCommand):
    help = (
        "Put a failed job back in the queue and send it to a worker (ids in manage.py pipeline_status). "
        "Safe to repeat: the pipeline never makes the same memory twice."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("job_id", help="the failed job's id")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            job_id = uuid.UUID(options["job_id"])
        except ValueError:
            raise CommandError(f"{options['job_id']!r} is not a job id (a UUID)") from None
        with app_errors_as_command_errors():
            job = job_rerun(job_id=job_id)
        self.stdout.write(f"re-queued {job.id} ({job.kind}, attempt {job.attempts + 1} next)")
