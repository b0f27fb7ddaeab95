"""Job claims are leases in the database: an expiry the holder's heartbeat extends, respected while
live and taken over once expired, whichever host holds it; the sweep finds expired leases and the
outbox's unpublished jobs from the database alone."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone

from memories.errors import Code
from memories.models import Job, Memory, Source
from memories.selectors.jobs import jobs_to_recover
from memories.tasks import process_job
from memories.worker import lease, run
from memories.worker.lease import LeaseHeld, job_claim
from memories.worker.run import job_process
from tests.helpers import pat_client
from tests.memories.test_worker_crash import _long_text

# A broker folder no worker reads: the jobs here are run by this process only.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("no_worker_broker")]

OTHER_HOST = "worker-2.internal:4242"


def _saved(alice: Any, content: str) -> Job:
    response = pat_client(alice).post("/api/v1/operations/remember", {"content": content}, format="json")
    assert response.status_code == 200, response.json()
    return Job.objects.get(id=response.json()["job_id"])


def _held_by_another_host(job: Job, *, lease_left: timedelta) -> None:
    Job.objects.filter(id=job.id).update(
        status=Job.Status.RUNNING,
        attempts=1,
        started_at=timezone.now() - timedelta(seconds=40),
        claimed_by=OTHER_HOST,
        lease_expires_at=timezone.now() + lease_left,
    )


def test_it_respects_a_live_lease_held_on_another_host(alice):
    job = _saved(alice, "My dentist is Dr Okafor.")
    _held_by_another_host(job, lease_left=timedelta(seconds=20))

    with pytest.raises(LeaseHeld) as held:
        job_claim(job_id=job.id)
    assert 1 <= held.value.seconds <= 22
    # The task asks again later instead of running it or failing it: the holder is at work.
    process_job.apply(args=[str(job.id)])
    job.refresh_from_db()
    assert (job.status, job.attempts, job.claimed_by) == ("running", 1, OTHER_HOST)
    assert not Memory.objects.filter(owner=alice).exists()


@contextmanager
def _row_locked_elsewhere(job: Job) -> Iterator[None]:
    """The job's row locked by another connection's open transaction, as a batch holds its jobs' rows
    until it commits (memories.worker.run._batch_run)."""
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                list(Job.objects.select_for_update().filter(id=job.id))
                locked.set()
                release.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=hold)
    thread.start()
    assert locked.wait(10)
    try:
        yield
    finally:
        release.set()
        thread.join()


@pytest.mark.parametrize("lease_left", [timedelta(seconds=20), timedelta(seconds=-1)])
def test_a_message_for_a_job_in_another_process_hands_does_not_wait_for_its_lock(alice, lease_left):
    # Live: a batch at work on it. Expired but locked: its holder is writing it right now. Either way
    # the message steps back at once instead of blocking its worker process until that commits.
    job = _saved(alice, "My dentist is Dr Okafor.")
    _held_by_another_host(job, lease_left=lease_left)
    with _row_locked_elsewhere(job), connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '2s'")
        try:
            with pytest.raises(LeaseHeld) as held:
                job_claim(job_id=job.id)
        finally:
            cursor.execute("RESET lock_timeout")
    assert held.value.batched
    job.refresh_from_db()
    assert (job.status, job.attempts, job.claimed_by) == ("running", 1, OTHER_HOST)


def test_it_takes_over_an_expired_lease_held_on_another_host(alice):
    job = _saved(alice, "My dentist is Dr Okafor.")
    _held_by_another_host(job, lease_left=timedelta(seconds=-1))

    job_process(job_id=job.id)
    job.refresh_from_db()
    assert job.status == "succeeded" and job.attempts == 2 and job.claimed_by != OTHER_HOST
    assert job.lease_expires_at is None
    assert Memory.objects.filter(owner=alice, content__icontains="Okafor").count() == 1


def test_a_running_job_without_a_lease_is_taken_over(alice):
    # A row claimed before leases existed: nothing says its holder is alive.
    job = _saved(alice, "My dentist is Dr Okafor.")
    _held_by_another_host(job, lease_left=timedelta(seconds=0))
    Job.objects.filter(id=job.id).update(lease_expires_at=None)

    job_process(job_id=job.id)
    assert Job.objects.get(id=job.id).status == "succeeded"


def test_the_heartbeat_extends_the_lease_while_the_job_runs(alice, monkeypatch):
    monkeypatch.setattr(lease, "HEARTBEAT_EVERY", timedelta(seconds=0.2))
    job = _saved(alice, _long_text())
    failures: list[BaseException] = []

    def run() -> None:
        try:
            job_process(job_id=job.id)
        except BaseException as exc:  # reported below, in the test's thread
            failures.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    leases = set()
    while thread.is_alive():
        row = Job.objects.filter(id=job.id).values("status", "lease_expires_at").get()
        if row["status"] == "running" and row["lease_expires_at"] is not None:
            leases.add(row["lease_expires_at"])
        time.sleep(0.05)
    thread.join()
    assert not failures, failures
    assert Job.objects.get(id=job.id).status == "succeeded"
    # The claim set one expiry and the beats moved it on, each time to about LEASE from then.
    assert len(leases) >= 3, leases
    assert max(leases) - min(leases) >= timedelta(seconds=0.3)


def _recovered(waiting: int | None) -> set:
    """The ids the sweep would send, each with its job's owner (the message carries it: issue 43)."""
    pairs = jobs_to_recover(waiting=waiting)
    owners = dict(Job.objects.filter(id__in=[job_id for job_id, _ in pairs]).values_list("id", "owner_id"))
    assert all(owner_id == owners[job_id] for job_id, owner_id in pairs), pairs
    return {job_id for job_id, _ in pairs}


def test_the_sweep_finds_expired_leases_and_unpublished_jobs_only(alice):
    now = timezone.now()
    fresh = _saved(alice, "The boiler is serviced in March.")
    assert fresh.published_at is not None  # its publish went through
    unpublished = _saved(alice, "The car is serviced in April.")
    Job.objects.filter(id=unpublished.id).update(published_at=None, created_at=now - timedelta(seconds=10))
    just_committed = _saved(alice, "The bike is serviced in May.")
    Job.objects.filter(id=just_committed.id).update(published_at=None)
    lost = _saved(alice, "The roof is checked in June.")
    Job.objects.filter(id=lost.id).update(published_at=now - timedelta(minutes=3))
    live = _saved(alice, "The piano is tuned in July.")
    _held_by_another_host(live, lease_left=timedelta(seconds=20))
    expired = _saved(alice, "The chimney is swept in August.")
    _held_by_another_host(expired, lease_left=timedelta(seconds=-1))
    # Published before it was claimed (40 seconds ago).
    Job.objects.filter(id=expired.id).update(published_at=now - timedelta(seconds=45))

    # The broker holds no message: the one job published long ago lost its own.
    assert _recovered(0) == {unpublished.id, lost.id, expired.id}
    # It holds one (the lost job's, or the fresh one's): a job merely waiting its turn is not sent again.
    assert _recovered(1) == {unpublished.id, expired.id}
    # The broker cannot tell: only what it never had or cannot hand over any more.
    assert _recovered(None) == {unpublished.id, expired.id}

    # Sent again after its lease ran out (published after the lease's end), the expired job waits for
    # a worker like a queued one: not sent at every sweep while the backlog lasts.
    Job.objects.filter(id=expired.id).update(published_at=timezone.now() - timedelta(seconds=40))
    Job.objects.filter(id=expired.id).update(lease_expires_at=timezone.now() - timedelta(minutes=1))
    assert _recovered(2) == {unpublished.id}
    assert _recovered(1) == {unpublished.id, lost.id}
    assert _recovered(0) == {unpublished.id, lost.id, expired.id}


def test_a_failure_reported_late_does_not_fail_the_attempt_that_took_the_job_over(alice):
    job = _saved(alice, "My dentist is Dr Okafor.")
    _held_by_another_host(job, lease_left=timedelta(seconds=20))
    # This process's attempt gave up (retries spent) after the other host took the job over.
    lease.job_fail(job_id=job.id, code=Code.RETRIES_EXHAUSTED, message="Processing failed.")
    job.refresh_from_db()
    assert (job.status, job.claimed_by, job.error_code) == ("running", OTHER_HOST, "")
    # Once that lease has run out nobody is at work: the failure is recorded.
    Job.objects.filter(id=job.id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    lease.job_fail(job_id=job.id, code=Code.RETRIES_EXHAUSTED, message="Processing failed.")
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error_code


def _while_embedding(monkeypatch, then: Any) -> None:
    """Run `then()` after the job's text is embedded (the real model), before its write."""
    real = run.embeddings.embed

    def embed_then(texts: list[str]) -> list[list[float]]:
        vectors = real(texts)
        try:
            then()
        finally:
            if threading.current_thread() is not threading.main_thread():
                # A short save is embedded on the model's thread (embeddings.embed_soon), which
                # lives on: the connection `then` opened there must not outlive the test.
                connection.close()
        return vectors

    monkeypatch.setattr(run.embeddings, "embed", embed_then)


@pytest.mark.parametrize("long", [False, True], ids=["short save", "long save"])
def test_a_save_whose_source_is_deleted_while_it_runs_fails_and_writes_nothing(alice, monkeypatch, long):
    job = _saved(alice, _long_text() if long else "My dentist is Dr Okafor.")
    source_id = job.source_id
    _while_embedding(monkeypatch, lambda: Source.objects.filter(id=source_id).delete())
    job_process(job_id=job.id)
    job.refresh_from_db()
    assert (job.status, job.error_code) == ("failed", Code.SOURCE_MISSING)
    assert not Memory.objects.filter(owner=alice).exists()


def test_a_save_taken_over_while_it_runs_leaves_the_job_to_its_new_holder(alice, monkeypatch):
    job = _saved(alice, "My dentist is Dr Okafor.")

    def taken_over() -> None:
        Job.objects.filter(id=job.id).update(attempts=2, claimed_by=OTHER_HOST)

    _while_embedding(monkeypatch, taken_over)
    job_process(job_id=job.id)
    job.refresh_from_db()
    assert (job.status, job.attempts, job.claimed_by, job.error_code) == ("running", 2, OTHER_HOST, "")
    assert not Memory.objects.filter(owner=alice).exists()
    assert Source.objects.filter(id=job.source_id).exists()
