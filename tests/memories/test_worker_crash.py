"""A worker process killed in the middle of a job: the job is retried and completes once."""

from __future__ import annotations

import signal
import time

import psutil
import pytest

from memories.models import Job, Memory
from memories.pipeline.dedupe import fingerprint_of
from tests.helpers import pat_client, wait_for_job

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

TOPICS = ["garden", "violin", "marathon", "pottery", "chess", "sailing", "baking", "astronomy"]


def _long_text() -> str:
    # Enough distinct paragraphs that embedding them takes the worker a few seconds.
    paragraphs = []
    for i in range(160):
        topic = TOPICS[i % len(TOPICS)]
        paragraphs.append(
            f"Entry {i}: I spent the afternoon on my {topic} project number {i}. "
            f"It went better than last time, and I want to keep practising {topic} every week "
            f"because it helps me relax after work. Detail {i * 7919 % 1000}."
        )
    return "\n\n".join(paragraphs)


def test_it_retries_a_job_whose_worker_process_was_killed(alice, celery_worker):
    client = pat_client(alice)
    response = client.post("/api/v1/operations/remember", {"content": _long_text()}, format="json")
    job_id = response.json()["job_id"]

    deadline = time.monotonic() + 60
    while Job.objects.get(id=job_id).status != "running":
        assert time.monotonic() < deadline, "the job never started"
        time.sleep(0.01)
    claimed_pid = int(Job.objects.get(id=job_id).claimed_by.rsplit(":", 1)[1])
    children = {p.pid for p in psutil.Process(celery_worker.pid).children(recursive=True)}
    assert claimed_pid in children  # it is the worker's pool process that holds the job
    psutil.Process(claimed_pid).send_signal(signal.SIGKILL)

    job = wait_for_job(job_id, timeout=120)
    assert job.status == "succeeded", (job.error_code, job.error_message)
    assert job.attempts >= 2
    memories = list(Memory.objects.filter(owner=alice))
    assert memories, "the retried job stored nothing"
    fingerprints = [fingerprint_of(m.content) for m in memories]
    assert len(fingerprints) == len(set(fingerprints)), "a memory was stored twice"
    assert celery_worker.poll() is None  # the worker itself survived and replaced its process
