"""Short saves are taken in batches: the job whose message arrives claims the other queued short
saves of any owner, embeds their texts in one model call and writes each under its own owner, in one
transaction where a bad job fails alone (memories.worker.lease.job_batch_claim, _batch_run)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from accounts.caller import ALL_SCOPES, Caller
from memories import embeddings
from memories.models import Entity, Evidence, Job, Memory, Source
from memories.services.memories import remember
from memories.tasks import process_job
from memories.worker import lease, store
from memories.worker.lease import BATCH_MAX
from memories.worker.run import job_process
from tests.helpers import pat_client, wait_for_job

pytestmark = pytest.mark.django_db(transaction=True)

# A fresh worker's first batch waits for the model to load: a minute and more on a busy machine.
FIRST_BATCH_WAIT = 240


def _caller(user: Any) -> Caller:
    return Caller(user=user, scopes=ALL_SCOPES)


def _queued_together(*saves: tuple[Any, str], options: dict[int, dict[str, Any]] | None = None) -> list[Job]:
    """Saves committed in one transaction, so every job is queued before any message is sent (a
    worker's first message then finds the others waiting). `options` replaces the options of the
    save at that index: a job as a bug elsewhere could leave it."""
    with transaction.atomic():
        jobs = [remember(caller=_caller(user), content=content) for user, content in saves]
        for index, replaced in (options or {}).items():
            Job.objects.filter(id=jobs[index].id).update(options=replaced)
    return jobs


def _reloaded(jobs: list[Job]) -> list[Job]:
    return [Job.objects.get(id=job.id) for job in jobs]


def _one_batch(jobs: list[Job]) -> bool:
    """The leader was claimed by its message, the others by one batch claim (one statement: one
    started_at), all by the same process."""
    started = {job.started_at for job in jobs}
    return len({job.claimed_by for job in jobs}) == 1 and len(started) <= 2 and len(jobs) > 1


def _broker_drained(folder: Path, timeout: float = 60) -> None:
    """Wait until the worker has taken every message (the batch members' own ones included)."""
    deadline = time.monotonic() + timeout
    while any(folder.glob("*.msg")):
        assert time.monotonic() < deadline, "messages left in the queue"
        time.sleep(0.05)


class TestBatchInProcess:
    pytestmark = pytest.mark.usefixtures("no_worker_broker")

    def test_it_embeds_the_queued_short_saves_in_one_model_call(self, alice, monkeypatch):
        calls: list[list[str]] = []
        real_embed = embeddings.embed

        def counted(texts: list[str]) -> list[list[float]]:
            calls.append(list(texts))
            return real_embed(texts)

        monkeypatch.setattr(embeddings, "embed", counted)
        notes = [
            f"My locker number at the {place} is {n}." for n, place in enumerate(["gym", "pool", "office"])
        ]
        jobs = _queued_together(*[(alice, note) for note in notes])

        job_process(job_id=jobs[0].id)

        jobs = _reloaded(jobs)
        assert [job.status for job in jobs] == ["succeeded"] * 3
        assert len(calls) == 1 and sorted(calls[0]) == sorted(notes)
        assert sorted(Memory.objects.filter(owner=alice).values_list("content", flat=True)) == sorted(notes)
        assert [job.progress for job in jobs] == [{"stage": "done", "done": 1, "total": 1}] * 3
        assert _one_batch(jobs)

    def test_a_batch_started_by_a_message_stores_every_save(self, alice):
        # A message carries the job id as text, as the task receives it.
        jobs = _queued_together((alice, "My bike is a green Brompton."), (alice, "My car is a red Fiat."))

        result = process_job.apply(args=[str(jobs[0].id)])

        assert result.state == "SUCCESS"
        jobs = _reloaded(jobs)
        assert [(job.status, job.attempts) for job in jobs] == [("succeeded", 1)] * 2 and _one_batch(jobs)

    def test_a_members_own_message_does_nothing(self, alice):
        jobs = _queued_together((alice, "My bike is a green Brompton."), (alice, "My car is a red Fiat."))
        job_process(job_id=jobs[0].id)
        before = list(Memory.objects.filter(owner=alice).values_list("id", flat=True))

        job_process(job_id=jobs[1].id)

        member = Job.objects.get(id=jobs[1].id)
        assert (member.status, member.attempts) == ("succeeded", 1)
        assert list(Memory.objects.filter(owner=alice).values_list("id", flat=True)) == before

    def test_a_message_for_a_save_another_batch_holds_is_dropped_not_retried(self, alice):
        (job,) = _queued_together((alice, "My dentist is Dr Okafor."))
        Job.objects.filter(id=job.id).update(
            status=Job.Status.RUNNING,
            attempts=1,
            claimed_by="worker-2.internal:4242",
            lease_expires_at=timezone.now() + timedelta(seconds=20),
        )

        result = process_job.apply(args=[str(job.id)])

        assert result.state == "SUCCESS"  # no retry scheduled: the holder commits it
        job.refresh_from_db()
        assert (job.status, job.attempts, job.claimed_by) == ("running", 1, "worker-2.internal:4242")

    def _meanwhile(self, monkeypatch: pytest.MonkeyPatch, change: Any) -> None:
        # Runs `change` while the batch embeds: after its jobs and sources are read, before the
        # transaction that locks and writes them.
        real_embed = embeddings.embed

        def embed_then_change(texts: list[str]) -> list[list[float]]:
            vectors = real_embed(texts)
            change()
            return vectors

        monkeypatch.setattr(embeddings, "embed", embed_then_change)

    def test_a_member_whose_source_is_deleted_meanwhile_fails_alone(self, alice, monkeypatch):
        jobs = _queued_together((alice, "My bike is a green Brompton."), (alice, "My car is a red Fiat."))
        self._meanwhile(monkeypatch, lambda: Source.objects.filter(id=jobs[1].source_id).delete())

        job_process(job_id=jobs[0].id)

        first, second = _reloaded(jobs)
        assert first.status == "succeeded"
        assert (second.status, second.error_code) == ("failed", "source_missing")
        contents = list(Memory.objects.filter(owner=alice).values_list("content", flat=True))
        assert contents == ["My bike is a green Brompton."]

    def test_a_member_taken_over_meanwhile_is_left_to_its_new_holder(self, alice, monkeypatch):
        jobs = _queued_together((alice, "My bike is a green Brompton."), (alice, "My car is a red Fiat."))
        self._meanwhile(
            monkeypatch,
            lambda: Job.objects.filter(id=jobs[1].id).update(attempts=2, claimed_by="worker-2.internal:4242"),
        )

        job_process(job_id=jobs[0].id)

        first, second = _reloaded(jobs)
        assert first.status == "succeeded"
        assert (second.status, second.attempts, second.claimed_by) == ("running", 2, "worker-2.internal:4242")
        contents = list(Memory.objects.filter(owner=alice).values_list("content", flat=True))
        assert contents == ["My bike is a green Brompton."]

    def test_it_takes_no_more_than_the_batch_size(self, alice):
        jobs = _queued_together(*[(alice, f"Shelf {n} holds the {n}th atlas.") for n in range(BATCH_MAX + 2)])

        job_process(job_id=jobs[0].id)

        statuses = [job.status for job in _reloaded(jobs)]
        assert statuses.count("succeeded") == BATCH_MAX
        assert statuses[BATCH_MAX:] == ["queued", "queued"]  # the newest wait for the next batch

    def test_documents_and_retried_jobs_are_not_taken_into_a_batch(self, alice):
        long_note = "\n\n".join(f"Paragraph {n}: the orchard has {n} apple trees." for n in range(200))
        jobs = _queued_together(
            (alice, "My cat is called Miso."), (alice, long_note), (alice, "Tea, no sugar.")
        )
        Job.objects.filter(id=jobs[2].id).update(attempts=1)  # tried before: it runs alone

        job_process(job_id=jobs[0].id)

        assert [job.status for job in _reloaded(jobs)] == ["succeeded", "queued", "queued"]

    def test_the_same_note_twice_in_one_batch_is_one_memory_with_both_sources(self, alice):
        jobs = _queued_together(
            (alice, "My passport expires in 2031."), (alice, "my passport expires in 2031")
        )

        job_process(job_id=jobs[0].id)

        jobs = _reloaded(jobs)
        assert [job.status for job in jobs] == ["succeeded", "succeeded"] and _one_batch(jobs)
        (memory,) = Memory.objects.filter(owner=alice)
        assert memory.content == "My passport expires in 2031."
        evidence = Evidence.objects.filter(memory=memory).values_list("source_id", flat=True)
        assert sorted(evidence) == sorted(job.source_id for job in jobs)

    def test_saves_of_one_batch_naming_one_entity_share_it_and_its_votes(self, alice, bob):
        jobs = _queued_together(
            (alice, "I had lunch with Priya Raman at Acme yesterday."),
            (bob, "Priya Raman is my new manager."),
            (alice, "Priya Raman moved to the platform team."),
        )

        # A batch is one owner's saves (lease.job_batch_claim): Alice's two, then Bob's alone.
        job_process(job_id=jobs[0].id)
        assert [job.status for job in _reloaded(jobs)] == ["succeeded", "queued", "succeeded"]
        job_process(job_id=jobs[1].id)

        assert [job.status for job in _reloaded(jobs)] == ["succeeded"] * 3
        alices = Entity.objects.get(owner=alice, normalized_name="priya raman")
        assert alices.attributes["type_votes"] == {"Person": 2}
        linked = Memory.objects.filter(owner=alice, entities=alices).values_list("job_id", flat=True)
        assert sorted(linked) == sorted([jobs[0].id, jobs[2].id])
        acme = Memory.objects.get(job=jobs[0]).entities.values_list("normalized_name", flat=True)
        assert sorted(acme) == ["acme", "priya raman"]
        bobs = Entity.objects.get(owner=bob, normalized_name="priya raman")
        assert list(Memory.objects.filter(entities=bobs).values_list("job_id", flat=True)) == [jobs[1].id]

    def test_a_name_starting_a_sentence_is_kept_where_its_own_space_knows_it(self, alice, bob):
        from memories.services.entities import entity_record
        from memories.services.spaces import space_create_default

        space = space_create_default(owner=alice)
        entity_record(owner_id=alice.id, space_id=space.id, name="Kestrel", type_="Product")
        jobs = _queued_together(
            (alice, "Kestrel needs a new battery."),
            (bob, "Kestrel needs a new battery."),
            (alice, "Harrow needs a new battery."),
        )

        # A batch is one owner's saves (lease.job_batch_claim): Alice's two, then Bob's alone.
        job_process(job_id=jobs[0].id)
        job_process(job_id=jobs[1].id)

        reloaded = _reloaded(jobs)
        assert [job.status for job in reloaded] == ["succeeded"] * 3 and _one_batch(
            [reloaded[0], reloaded[2]]
        )
        names = [
            sorted(Memory.objects.get(job=job).entities.values_list("normalized_name", flat=True))
            for job in jobs
        ]
        # Alice's space knows Kestrel; Bob's does not, and neither knows Harrow.
        assert names == [["kestrel"], [], []]

    def test_a_requeued_job_is_claimed_as_its_next_attempt_and_runs_alone(self, alice):
        jobs = _queued_together((alice, "My bank is Nordbank."), (alice, "My gym is Fit Lab."))
        Job.objects.filter(id=jobs[0].id).update(attempts=2)  # sent again after two tries

        job_process(job_id=jobs[0].id)

        first, second = _reloaded(jobs)
        assert (first.status, first.attempts) == ("succeeded", 3)
        assert (second.status, second.attempts) == ("queued", 0)

    def test_a_database_error_fails_the_whole_batch_and_its_members_run_again_alone(self, alice, monkeypatch):
        jobs = _queued_together(
            (alice, "My flat is on the fourth floor."), (alice, "My desk faces the window.")
        )
        real_store = store._store
        failed = []

        def store_failing_once(**kwargs: Any) -> Memory:
            if not failed and kwargs["job"].id == jobs[1].id:
                failed.append(True)
                raise OperationalError("server closed the connection unexpectedly")
            return real_store(**kwargs)

        monkeypatch.setattr(store, "_store", store_failing_once)
        Job.objects.filter(id__in=[job.id for job in jobs]).update(published_at=None)

        with pytest.raises(OperationalError):
            job_process(job_id=jobs[0].id)

        # Nothing of the batch was committed, and neither job is held any more.
        assert not Memory.objects.filter(owner=alice).exists()
        rows = _reloaded(jobs)
        assert all(row.status == "running" and row.lease_expires_at <= timezone.now() for row in rows)
        # The member's own message found it held and did nothing: it is sent again. The leader's
        # message is retried by the task (autoretry).
        assert (rows[0].published_at, rows[1].published_at is not None) == (None, True)
        for job in jobs:
            job_process(job_id=job.id)
        rows = _reloaded(jobs)
        assert [(row.status, row.attempts) for row in rows] == [("succeeded", 2), ("succeeded", 2)]
        assert Memory.objects.filter(owner=alice).count() == 2


def _in_thread(run: Any) -> tuple[threading.Thread, list[BaseException]]:
    """`run` on a thread of its own, with its own database connection (closed when it ends); what
    it raised is left in the list."""
    raised: list[BaseException] = []

    def body() -> None:
        try:
            run()
        except BaseException as exc:  # handed to the test's thread
            raised.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, raised


def _write_lock_waiters() -> int:
    """Sessions waiting for an owner's write lock now."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = %s",
            [store.OWNER_WRITE_LOCK],
        )
        return int(cursor.fetchone()[0])


@pytest.mark.usefixtures("no_worker_broker")
class TestOwnerWriteLocks:
    """A write runs under its owners' locks: one owner's batches and lone jobs one at a time,
    different owners' side by side (memories.worker.store.OWNER_WRITE_LOCK)."""

    # The model is loaded by the first batch before the second starts: a batch then takes well
    # under a second, this is only the bound for a machine busy with other work.
    SECOND_BATCH_WAIT = 60

    def _held_in_write(
        self, monkeypatch: pytest.MonkeyPatch, owner: Any
    ) -> tuple[threading.Event, threading.Event]:
        """Makes `owner`'s batch stop inside its write transaction, its locks taken, until released."""
        inside, release = threading.Event(), threading.Event()
        real_write = store.job_write

        def held(**kwargs: Any) -> None:
            if kwargs["job"].owner_id == owner.id:
                inside.set()
                assert release.wait(FIRST_BATCH_WAIT)
            real_write(**kwargs)

        monkeypatch.setattr(store, "job_write", held)
        return inside, release

    def test_another_owners_batch_writes_while_one_owners_batch_is_writing(self, alice, bob, monkeypatch):
        inside, release = self._held_in_write(monkeypatch, bob)
        bobs = _queued_together((bob, "My bike is a green Brompton."), (bob, "My car is a red Fiat."))
        bob_batch, bob_raised = _in_thread(lambda: job_process(job_id=bobs[0].id))
        try:
            assert inside.wait(FIRST_BATCH_WAIT), "bob's batch never reached its write"
            alices = _queued_together((alice, "My gym opens at six."), (alice, "My shop closes at eight."))
            alice_batch, alice_raised = _in_thread(lambda: job_process(job_id=alices[0].id))
            alice_batch.join(self.SECOND_BATCH_WAIT)
            written_meanwhile = not alice_batch.is_alive()
        finally:
            release.set()
            bob_batch.join(FIRST_BATCH_WAIT)

        assert written_meanwhile, "alice's batch waited for bob's"
        assert not alice_raised and not bob_raised, (alice_raised, bob_raised)
        assert [job.status for job in _reloaded(alices + bobs)] == ["succeeded"] * 4
        assert _one_batch(_reloaded(alices)) and _one_batch(_reloaded(bobs))
        assert Memory.objects.filter(owner=alice).count() == Memory.objects.filter(owner=bob).count() == 2

    def test_one_owners_second_batch_waits_for_the_first_to_commit(self, alice, monkeypatch):
        inside, release = self._held_in_write(monkeypatch, alice)
        first = _queued_together((alice, "My bike is a green Brompton."), (alice, "My car is a red Fiat."))
        first_batch, first_raised = _in_thread(lambda: job_process(job_id=first[0].id))
        try:
            assert inside.wait(FIRST_BATCH_WAIT), "the first batch never reached its write"
            inside.clear()
            second = _queued_together((alice, "My gym opens at six."), (alice, "My shop closes at eight."))
            second_batch, second_raised = _in_thread(lambda: job_process(job_id=second[0].id))
            deadline = time.monotonic() + self.SECOND_BATCH_WAIT
            while _write_lock_waiters() == 0:
                assert time.monotonic() < deadline, "the second batch never waited for the lock"
                assert second_batch.is_alive(), "the second batch wrote while the first held the lock"
                time.sleep(0.02)
            # Waiting for the lock, before its own write.
            assert not inside.is_set()
            assert [job.status for job in _reloaded(second)] == ["running"] * 2
        finally:
            release.set()
            first_batch.join(FIRST_BATCH_WAIT)
        second_batch.join(self.SECOND_BATCH_WAIT)

        assert not first_raised and not second_raised, (first_raised, second_raised)
        jobs = _reloaded(first + second)
        assert [job.status for job in jobs] == ["succeeded"] * 4
        # The second batch committed after the first.
        assert min(job.finished_at for job in jobs[2:]) > max(job.finished_at for job in jobs[:2])

    def test_two_lone_saves_of_one_owner_at_once_see_each_other(self, alice, monkeypatch):
        # Each save runs alone, in its own process, at the same moment (their messages reached two
        # pool processes together, so neither took the other into a batch). The first is held
        # after its write, before its commit: the second must wait for it, then supersede it.
        inside, release = threading.Event(), threading.Event()
        real_write = store.job_write
        (first,) = _queued_together((alice, "My phone number is 555-0101."))

        def held(**kwargs: Any) -> None:
            real_write(**kwargs)
            if kwargs["job"].id == first.id:
                inside.set()
                assert release.wait(FIRST_BATCH_WAIT)

        monkeypatch.setattr(store, "job_write", held)
        first_run, first_raised = _in_thread(lambda: job_process(job_id=first.id))
        try:
            assert inside.wait(FIRST_BATCH_WAIT), "the first save never reached its write"
            (second,) = _queued_together((alice, "My phone number changed to 555-0199."))
            second_run, second_raised = _in_thread(lambda: job_process(job_id=second.id))
            deadline = time.monotonic() + self.SECOND_BATCH_WAIT
            while second_run.is_alive() and _write_lock_waiters() == 0:
                assert time.monotonic() < deadline, "the second save neither waited nor finished"
                time.sleep(0.02)
        finally:
            release.set()
            first_run.join(FIRST_BATCH_WAIT)
        second_run.join(self.SECOND_BATCH_WAIT)

        assert not first_raised and not second_raised, (first_raised, second_raised)
        jobs = _reloaded([first, second])
        assert [job.status for job in jobs] == ["succeeded"] * 2
        assert len({job.started_at for job in jobs}) == 2  # each ran alone
        current = Memory.objects.filter(owner=alice, superseded_at__isnull=True)
        assert list(current.values_list("content", flat=True)) == ["My phone number changed to 555-0199."]
        earlier = Memory.objects.get(owner=alice, content="My phone number is 555-0101.")
        assert earlier.superseded_at is not None


def test_a_writes_locks_are_its_owners_in_one_order(alice, bob):
    keys = store.owner_write_keys([bob.id, alice.id, bob.id])
    assert keys == sorted(keys) and len(keys) == 2
    assert keys == store.owner_write_keys([alice.id, bob.id])
    assert keys != store.owner_write_keys([alice.id])


@pytest.mark.slow
@pytest.mark.usefixtures("celery_worker")
class TestBatchWithTheWorker:
    def test_two_owners_saving_at_once_each_get_their_own_rows_and_batches(self, alice, bob, child_env):
        jobs = _queued_together(
            (alice, "I live in Lisbon and work with Maya."),
            (bob, "I live in Oslo and work with Maya."),
            (alice, "My sister Lena is a pilot."),
            (bob, "My brother Jonas is a chef."),
        )
        jobs = [wait_for_job(job.id, timeout=FIRST_BATCH_WAIT) for job in jobs]
        assert [job.status for job in jobs] == ["succeeded"] * 4, [
            (j.error_code, j.error_message) for j in jobs
        ]
        # A batch holds one owner's saves (issue 43: its statements go to that owner's shard alone).
        alices, bobs = jobs[0::2], jobs[1::2]
        assert _one_batch(alices) and _one_batch(bobs)
        assert not {job.started_at for job in alices} & {job.started_at for job in bobs}
        for job, user in zip(jobs, [alice, bob, alice, bob], strict=True):
            # "I live in Lisbon and work with Maya." is two statements (issue 40: a compound is split).
            memories = list(Memory.objects.filter(job=job))
            assert memories
            for memory in memories:
                assert (memory.owner_id, memory.space_id) == (user.id, job.space_id)
                assert memory.space.owner_id == user.id
                owners = set(Evidence.objects.filter(memory=memory).values_list("owner_id", flat=True))
                assert owners == {user.id}
                assert {e.owner_id for e in memory.entities.all()} <= {user.id}
            assert {e.owner_id for m in memories for e in m.entities.all()} == {user.id}
        # Both named Maya: one entity each, never one shared.
        mayas = Entity.objects.filter(normalized_name="maya")
        assert sorted(mayas.values_list("owner_id", flat=True)) == sorted([alice.id, bob.id])
        recalled = pat_client(bob).post(
            "/api/v1/operations/recall", {"query": "Who lives in Lisbon?"}, format="json"
        )
        assert recalled.status_code == 200, recalled.json()
        assert "Lisbon" not in str(recalled.json())

    def test_a_poisoned_job_fails_alone_and_the_batch_is_stored(self, alice, child_env):
        jobs = _queued_together(
            (alice, "My gym opens at six."),
            (alice, "My train leaves at seven."),  # fails while storing
            (alice, "My shop closes at eight."),
            (alice, "My show starts at nine."),  # fails while extracting
            options={1: {"confidence": "very"}, 3: {"clocks": {"occurred_at": "not a date"}}},
        )
        jobs = [wait_for_job(job.id, timeout=FIRST_BATCH_WAIT) for job in jobs]
        assert _one_batch(jobs)
        assert [(job.status, job.error_code) for job in jobs] == [
            ("succeeded", ""),
            ("failed", "internal_error"),
            ("succeeded", ""),
            ("failed", "internal_error"),
        ]
        stored = Memory.objects.filter(owner=alice)
        assert sorted(stored.values_list("content", flat=True)) == [
            "My gym opens at six.",
            "My shop closes at eight.",
        ]
        poisoned = [jobs[1].source_id, jobs[3].source_id]
        assert not Evidence.objects.filter(source_id__in=poisoned).exists()

    def test_no_job_is_processed_twice(self, alice, child_env):
        notes = [
            f"Locker {n} holds my {thing}."
            for n, thing in enumerate(["racket", "towel", "shoes", "bag", "cap"])
        ]
        jobs = _queued_together(*[(alice, note) for note in notes])
        jobs = [wait_for_job(job.id, timeout=FIRST_BATCH_WAIT) for job in jobs]
        # Every member's own message reaches the worker after its batch; each must find it done.
        _broker_drained(Path(child_env["DEEPRECALL_BROKER_DIR"]) / "queue")

        jobs = _reloaded(jobs)
        assert [(job.status, job.attempts) for job in jobs] == [("succeeded", 1)] * len(notes)
        assert _one_batch(jobs)
        for job in jobs:
            assert Memory.objects.filter(job=job).count() == 1
            assert Evidence.objects.filter(source_id=job.source_id).count() == 1


@pytest.mark.usefixtures("no_worker_broker")
def test_a_batch_that_outlasts_its_lease_keeps_every_job(alice, monkeypatch):
    # The first batch of a fresh worker waits for the model to load (a minute on a busy machine):
    # the heartbeat must keep every job's lease, not only the one whose message it was.
    monkeypatch.setattr(lease, "LEASE", timedelta(seconds=1))
    monkeypatch.setattr(lease, "HEARTBEAT_EVERY", timedelta(seconds=0.2))
    real_embed = embeddings.embed

    def slow(texts: list[str]) -> list[list[float]]:
        time.sleep(2.5)
        return real_embed(texts)

    monkeypatch.setattr(embeddings, "embed", slow)
    jobs = _queued_together((alice, "My umbrella is yellow."), (alice, "My scarf is blue."))

    job_process(job_id=jobs[0].id)

    assert [(job.status, job.attempts) for job in _reloaded(jobs)] == [("succeeded", 1), ("succeeded", 1)]
