"""Job progress written by the worker: the stages, and the share of segments embedded so far."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.caller import ALL_SCOPES, Caller
from memories.models import Job
from memories.representations import job_dict
from memories.services.documents import document_ingest
from memories.services.memories import remember
from memories.worker.run import PROGRESS_BATCH, job_process

pytestmark = pytest.mark.django_db


# One job's progress as the worker's UPDATE carries it: an element of a jsonb[] literal, so its quotes
# arrive escaped.
_WRITTEN = re.compile(r'\\*"stage\\*": \\*"(\w+)\\*", \\*"done\\*": (\d+), \\*"total\\*": (\d+)')


def _progress_writes(queries: list[dict[str, str]]) -> list[dict[str, int | str]]:
    """The progress values the worker wrote, in order, read from its UPDATE statements
    (memories.worker.run._progress_write)."""
    written: list[dict[str, int | str]] = []
    for query in queries:
        sql = query["sql"]
        if sql.startswith("UPDATE memories_job j SET progress"):
            written += [
                {"stage": stage, "done": int(done), "total": int(total)}
                for stage, done, total in _WRITTEN.findall(sql)
            ]
    return written


class TestJobProgress:
    def test_a_note_goes_through_its_stages_in_one_embedding_batch(self, alice, no_worker_broker):
        job = remember(caller=Caller(user=alice, scopes=ALL_SCOPES), content="I live in Porto.")
        assert job_dict(job)["progress"] == {"stage": "queued", "done": 0, "total": 0}
        with CaptureQueriesContext(connection) as captured:
            job_process(job_id=job.id)
        stages = [write["stage"] for write in _progress_writes(captured.captured_queries)]
        assert stages == ["extracting", "embedding", "storing"]
        job.refresh_from_db()
        assert job.status == Job.Status.SUCCEEDED
        assert job_dict(job)["progress"] == {"stage": "done", "done": 1, "total": 1}

    def test_a_long_document_shows_its_segments_being_done(self, alice, no_worker_broker):
        lines = [f"- Item {n} is stored in box {n}." for n in range(PROGRESS_BATCH + 6)]
        _, job, _ = document_ingest(
            caller=Caller(user=alice, scopes=ALL_SCOPES),
            filename="boxes.md",
            data=("# Boxes\n\n" + "\n".join(lines) + "\n").encode(),
        )
        with CaptureQueriesContext(connection) as captured:
            job_process(job_id=job.id)
        writes = _progress_writes(captured.captured_queries)
        total = writes[-1]["total"]
        assert isinstance(total, int) and total > PROGRESS_BATCH
        assert [w["stage"] for w in writes] == ["reading", "extracting", "embedding", "embedding", "storing"]
        assert [w["done"] for w in writes if w["stage"] == "embedding"] == [0, PROGRESS_BATCH]
        job.refresh_from_db()
        assert job_dict(job)["progress"] == {"stage": "done", "done": total, "total": total}
