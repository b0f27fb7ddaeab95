"""A save whose publish fails after its commit is still accepted, and the sweep sends its job from
the database (the job row is the outbox). The broker is a real one made unreachable: this process
publishes to a TCP port nothing listens on."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories.models import Job, Memory
from memories.tasks import recover_jobs
from tests.helpers import pat_client, wait_for_job
from tests.redis_server import free_port, publishing_to

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_it_accepts_saves_whose_publish_fails_and_the_sweep_sends_them(alice, celery_worker):
    client = pat_client(alice)
    with publishing_to(f"redis://127.0.0.1:{free_port()}/0"):
        saved = client.post("/api/v1/memories", {"content": "My locker number is 4127."}, format="json")
        remembered = client.post(
            "/api/v1/operations/remember", {"content": "The spare key is under the blue pot."}, format="json"
        )
    # The usual answers with the job ids, not a 500 that a retrying client would turn into a duplicate.
    assert saved.status_code == 202, saved.json()
    assert remembered.status_code == 200, remembered.json()
    job_ids = [saved.json()["job"]["id"], remembered.json()["job_id"]]
    jobs = Job.objects.filter(id__in=job_ids)
    assert [(j.status, j.published_at) for j in jobs] == [("queued", None), ("queued", None)]

    # Past the moment a publish right after the commit would have been made, the sweep sends them
    # (here in this process, which publishes to the worker's broker again).
    Job.objects.filter(id__in=job_ids).update(created_at=timezone.now() - timedelta(seconds=10))
    assert recover_jobs() == 2
    for job_id in job_ids:
        job = wait_for_job(job_id, timeout=90)
        assert job.status == "succeeded", (job.error_code, job.error_message)
        assert job.published_at is not None
    assert Memory.objects.filter(owner=alice, content__icontains="4127").count() == 1
    assert Memory.objects.filter(owner=alice, content__icontains="blue pot").count() == 1
    # Sent once: the sweep does not send them again.
    assert recover_jobs() == 0
