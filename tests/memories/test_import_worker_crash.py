"""A worker process killed in the middle of an import: the import carries on where it stopped, with
nothing lost and nothing stored twice (memories/worker/imports.py)."""

from __future__ import annotations

import io
import json
import signal
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import psutil
import pytest

from memories.models import Import, Job, Memory, Source
from tests.helpers import pat_client, wait_for_job

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

TOPICS = ["garden", "violin", "marathon", "pottery", "chess", "sailing", "baking", "astronomy"]
ITEMS = 1500


def _history() -> bytes:
    start = datetime(2024, 1, 1, tzinfo=UTC)
    results = [
        {
            "id": f"item-{i}",
            "memory": f"Entry {i}: I spent the afternoon on my {TOPICS[i % 8]} project number {i}, "
            f"and it went better than last time (detail {i * 7919 % 1000}).",
            "created_at": (start + timedelta(hours=i)).isoformat(),
        }
        for i in range(ITEMS)
    ]
    return json.dumps({"results": results}).encode()


def test_it_resumes_an_import_whose_worker_process_was_killed(alice, celery_worker):
    upload = io.BytesIO(_history())
    upload.name = "mem0.json"
    response = pat_client(alice).post("/api/v1/imports", {"file": upload}, format="multipart")
    assert response.status_code == 202, response.json()
    made = response.json()["import"]

    # Killed once a batch is committed and before the last one is.
    deadline = time.monotonic() + 240
    while not 0 < Import.objects.get(id=made["id"]).items_read < ITEMS:
        assert time.monotonic() < deadline, "the import never got past its first batch"
        time.sleep(0.02)
    job = Job.objects.get(id=made["job_id"])
    read_before_kill = Import.objects.get(id=made["id"]).items_read
    claimed_pid = int(job.claimed_by.rsplit(":", 1)[1])
    assert claimed_pid in {p.pid for p in psutil.Process(celery_worker.pid).children(recursive=True)}
    psutil.Process(claimed_pid).send_signal(signal.SIGKILL)

    job = wait_for_job(made["job_id"], timeout=300)
    assert job.status == "succeeded", (job.error_code, job.error_message)
    assert job.attempts >= 2
    done = Import.objects.get(id=made["id"])
    assert read_before_kill < ITEMS
    assert done.items_read == ITEMS
    assert done.items_stored + done.items_skipped + done.items_failed == ITEMS
    refs = Counter(Source.objects.filter(owner=alice, origin="import").values_list("source_ref", flat=True))
    assert len(refs) == done.items_stored and max(refs.values()) == 1, "an item was stored twice"
    contents = Counter(Memory.objects.filter(owner=alice).values_list("content", flat=True))
    assert max(contents.values()) == 1, "a memory was stored twice"
    # Nothing lost: every item is stored (its source) or counted skipped with its reason.
    assert len(refs) + done.items_skipped == ITEMS
    assert set(refs) <= {f"item-{i}" for i in range(ITEMS)}
    assert celery_worker.poll() is None
