"""The recovery sweep: Celery beat sends it on schedule, and it picks up a job whose message was lost."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from config.celery import app
from memories.models import Job, Memory
from memories.tasks import recover_jobs
from tests.helpers import pat_client, wait_for_job


def test_it_schedules_the_recovery_sweep_every_15_seconds():
    entry = app.conf.beat_schedule["recover-jobs"]
    assert entry["task"] == recover_jobs.name
    assert app.tasks[entry["task"]].name == "memories.recover_jobs"
    assert entry["schedule"] == 15


def test_it_keeps_the_beat_schedule_file_under_var():
    assert Path(app.conf.beat_schedule_filename).parent == settings.VAR_DIR


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_processes_a_queued_job_whose_message_was_lost(alice, celery_worker, no_worker_broker, tmp_path):
    # The save's message goes to a broker folder no worker reads: for the worker it is lost.
    response = pat_client(alice).post(
        "/api/v1/operations/remember", {"content": "My piano teacher is called Marguerite."}, format="json"
    )
    job_id = response.json()["job_id"]
    assert list((tmp_path / "broker" / "queue").glob("*.msg")), "the message was never sent"
    # Published long enough ago that the sweep takes the message for lost rather than on its way.
    Job.objects.filter(id=job_id).update(published_at=timezone.now() - timedelta(hours=1))

    # Only the beat inside the worker (started as `manage.py up` starts it) can re-send it.
    job = wait_for_job(job_id, timeout=60 + 90)
    assert job.status == "succeeded", (job.error_code, job.error_message)
    assert Memory.objects.filter(owner=alice, content__icontains="Marguerite").exists()
