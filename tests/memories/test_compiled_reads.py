"""Querysets compiled once and run again with other values (config.compiled), and the
hot reads built on them: a job's claim read, the batch claim, the caller's space, a personal
token's lookup, and a save's reads of the memories it may repeat or change. Each must answer what
the queryset it was compiled from answers, for every value."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.db.models.functions import Length, Now
from django.utils import timezone

from accounts.authentication import pat_authenticate
from accounts.caller import ALL_SCOPES, Actor, Caller
from accounts.services import pat_create
from config.compiled import compile_once, compiled_rows, model_order
from memories import embeddings
from memories.models import GrantSpace, Job, Memory, Source, Space
from memories.pipeline.dedupe import fingerprint_of
from memories.pipeline.supersede import nearest_prior_rows, nearest_priors
from memories.selectors.jobs import job_with_source
from memories.selectors.spaces import space_granted_or_default
from memories.services.memories import remember
from memories.services.spaces import space_create
from memories.worker import lease, run, store

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_worker_broker")]


def _orm_claim_read(owner_id: Any, job_id: Any) -> tuple[Any, ...] | None:
    # What job_claim read before its read was compiled once.
    return (
        Job.objects.filter(owner_id=owner_id, id=job_id)
        .annotate(held_source=lease.held_source())
        .annotate(
            source_chars=Length("held_source__content"),
            batchable=lease._batchable_flag(),
            leased=lease._leased(),
        )
        .values_list("id", "status", "attempts", "batchable", "leased", "claimed_by", "lease_expires_at")
        .first()
    )


class TestCompileOnce:
    def test_every_value_gets_the_answer_of_its_own_queryset(self, alice, bob):
        saves = [
            remember(caller=Caller(user=user, scopes=ALL_SCOPES), content=content)
            for user, content in [(alice, "I live in Porto."), (bob, "x" * 5000), (alice, "My cat is Tom.")]
        ]
        Job.objects.filter(id=saves[2].id).update(
            status=Job.Status.RUNNING,
            claimed_by="elsewhere:1",
            lease_expires_at=timezone.now() + timedelta(minutes=1),
        )
        compiled = lease._claim_read()
        for owner_id, job_id in [*((job.owner_id, job.id) for job in saves), (alice.pk, uuid.uuid4())]:
            rows = compiled_rows(compiled, owner_id=owner_id, job_id=job_id)
            assert (rows[0] if rows else None) == _orm_claim_read(owner_id, job_id)
        # Another owner's job is not read.
        assert compiled_rows(compiled, owner_id=bob.pk, job_id=saves[0].id) == []
        # A short save, a long one, a leased one: the rows differ, so the values did reach them.
        answers = [compiled_rows(compiled, owner_id=job.owner_id, job_id=job.id)[0] for job in saves]
        assert [row[3] for row in answers] == [True, False, True]
        assert [row[4] for row in answers] == [None, None, True]

    def test_the_database_clock_is_read_at_each_run_not_when_compiled(self, alice):
        job = remember(caller=Caller(user=alice, scopes=ALL_SCOPES), content="I live in Porto.")
        compiled = compile_once(
            lambda job_id: (
                Job.objects.filter(id=job_id).annotate(live=lease._leased()).values_list("live", flat=True)
            ),
            job_id=uuid.uuid4(),
        )
        Job.objects.filter(id=job.id).update(lease_expires_at=Now() + timedelta(seconds=30))
        assert compiled_rows(compiled, job_id=job.id) == [(True,)]
        Job.objects.filter(id=job.id).update(lease_expires_at=Now() - timedelta(seconds=1))
        assert compiled_rows(compiled, job_id=job.id) == [(False,)]

    def test_a_value_used_twice_fills_both_places(self, alice, bob):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        compiled = compile_once(
            lambda owner: (
                Space.objects.filter(
                    owner_id=owner, name__in=Space.objects.filter(owner_id=owner).values("name")
                )
                .order_by("name")
                .values_list("name", flat=True)
            ),
            owner=uuid.uuid4(),
        )
        assert len(compiled.slots["owner"]) == 2
        assert [name for (name,) in compiled_rows(compiled, owner=alice.id)] == sorted(
            Space.objects.filter(owner=alice).values_list("name", flat=True)
        )
        assert work.name in [name for (name,) in compiled_rows(compiled, owner=alice.id)]
        assert work.name not in [name for (name,) in compiled_rows(compiled, owner=bob.id)]

    def test_a_converted_column_reads_as_the_orm_reads_it(self, alice):
        job = remember(
            caller=Caller(user=alice, scopes=ALL_SCOPES),
            content="I live in Porto.",
            tags=["home", "porto"],
            category="profile",
        )
        compiled = compile_once(
            lambda job_id: Job.objects.filter(id=job_id).values_list("id", "options", "progress", "status"),
            job_id=uuid.uuid4(),
        )
        rows = compiled_rows(compiled, job_id=job.id)
        assert rows == list(Job.objects.filter(id=job.id).values_list("id", "options", "progress", "status"))
        # The JSON columns are decoded, not the driver's text.
        assert isinstance(rows[0][1], dict) and rows[0][1]["tags"] == ["home", "porto"]

    def test_a_missing_sample_is_refused(self):
        with pytest.raises(ValueError, match="not among"):
            compile_once(
                lambda job_id: Job.objects.filter(status="queued").values_list("id"), job_id=uuid.uuid4()
            )

    def test_model_order_is_the_order_from_db_reads_and_knows_only_concrete_fields(self):
        assert model_order(Memory, ("content", "id", "kind")) == ("id", "kind", "content")
        with pytest.raises(ValueError, match="no concrete fields"):
            model_order(Memory, ("id", "entities"))

    def test_every_slot_must_be_given(self):
        compiled = lease._claim_read()
        with pytest.raises(TypeError):
            compiled.params()
        with pytest.raises(TypeError):
            compiled.params(job_id=uuid.uuid4(), other=1)


class TestTheHotReads:
    def test_the_batch_claim_takes_the_owners_oldest_queued_short_saves_and_no_other(self, alice, bob):
        caller_a, caller_b = Caller(user=alice, scopes=ALL_SCOPES), Caller(user=bob, scopes=ALL_SCOPES)
        leader = remember(caller=caller_a, content="I live in Porto.")
        short = [
            remember(caller=caller, content=f"Note {n} about Lisbon.")
            for n, caller in enumerate([caller_b, caller_a, caller_b])
        ]
        long = remember(caller=caller_a, content="word " * 1000)
        retried = remember(caller=caller_b, content="I was tried before.")
        Job.objects.filter(id=retried.id).update(attempts=1)
        # One owner's: Alice's short saves but the leader (Bob's wait for a batch of his own).
        claims = lease.job_batch_claim(owner_id=alice.pk, exclude=str(leader.id), limit=2)
        taken = {claim.job_id for claim in claims}
        assert taken == {short[1].id}
        assert all(claim.attempt == 1 and claim.batchable and claim.owner_id == alice.pk for claim in claims)
        rows = {
            job.id: job
            for job in Job.objects.filter(id__in=[leader.id, *(j.id for j in short), long.id, retried.id])
        }
        for job_id in taken:
            assert rows[job_id].status == Job.Status.RUNNING
            assert rows[job_id].claimed_by == lease._me()
            assert rows[job_id].lease_expires_at > timezone.now()
        for job in (leader, short[0], short[2], long, retried):
            assert rows[job.id].status == Job.Status.QUEUED
        bobs = lease.job_batch_claim(owner_id=bob.pk, exclude=leader.id, limit=2)
        assert {c.job_id for c in bobs} == {short[0].id, short[2].id}
        for owner in (alice, bob):
            assert lease.job_batch_claim(owner_id=owner.pk, exclude=leader.id, limit=15) == []

    def test_the_callers_space_follows_its_grant_and_never_another_owners(self, alice, bob):
        token, _ = pat_create(user=alice, name="agent", scopes=["memory:read"])
        other, _ = pat_create(user=alice, name="other agent", scopes=["memory:read"])
        default = space_granted_or_default(user=alice, personal_token_id=token.id)
        assert default is not None and default.is_default and default.owner_id == alice.id
        assert space_granted_or_default(user=alice) == default
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        GrantSpace.objects.create(owner=alice, personal_token=token, space=work)
        chosen = space_granted_or_default(user=alice, personal_token_id=token.id)
        assert chosen == work and chosen.name == "Work" and chosen.owner == alice
        assert space_granted_or_default(user=alice, personal_token_id=other.id) == default
        # Bob's account: never Alice's spaces, whatever token id is asked with.
        bobs = space_granted_or_default(user=bob, personal_token_id=token.id)
        assert bobs is None or bobs.owner_id == bob.id

    def test_a_personal_token_is_found_with_its_user_and_only_by_its_own_text(self, alice, bob):
        _, raw_a = pat_create(user=alice, name="a", scopes=["memory:read"])
        _, raw_b = pat_create(user=bob, name="b", scopes=["memory:read", "memory:write"])
        found_a, found_b = pat_authenticate(raw_a), pat_authenticate(raw_b)
        assert found_a is not None and found_a.user == alice and found_a.user.email == alice.email
        assert (
            found_b is not None
            and found_b.user == bob
            and found_b.scope_set == {"memory:read", "memory:write"}
        )
        assert pat_authenticate(raw_a[:-1] + ("x" if raw_a[-1] != "x" else "y")) is None


def _stored(user: Any, contents: list[str]) -> list[Memory]:
    caller = Caller(user=user, scopes=ALL_SCOPES)
    jobs = [remember(caller=caller, content=content) for content in contents]
    for job in jobs:
        run.job_process(job_id=job.id)
    return [Memory.objects.get(job_id=job.id) for job in jobs]


_PRIOR_COLUMNS = ("id", "content", "kind", "occurred_at", "stated_at", "recorded_at")


class TestTheSavesReads:
    """A save's reads of the memories it may repeat (same fingerprint) or judge (nearest priors)."""

    def test_the_priors_read_gives_nearest_priors_memories_and_distances(self, alice, bob):
        mine = _stored(
            alice,
            [
                "I prefer window seats on long flights.",
                "Yesterday I had lunch with Maya from the design team.",
                "My sister Lena is getting married next June in Oslo.",
                "I moved to Lisbon last month and I love the coffee there.",
                "I prefer aisle seats on short flights.",
                "My favourite band is Radiohead.",
            ],
        )
        (bobs,) = _stored(bob, ["I prefer window seats on long flights, always."])
        # Rows that nearest_priors leaves out: superseded, past their end, suppressed.
        Memory.objects.filter(id=mine[4].id).update(superseded_at=timezone.now())
        Memory.objects.filter(id=mine[5].id).update(valid_until=timezone.now() - timedelta(days=1))
        Memory.objects.filter(id=mine[1].id).update(status=Memory.Status.SUPPRESSED)
        questions = ["I now prefer aisle seats on flights.", "Lunch with Maya", "coffee in Lisbon", "Oslo"]
        answered = 0
        for vector in embeddings.embed(questions):
            for owner, space in [
                (alice.id, mine[0].space_id),
                (bob.id, mine[0].space_id),
                (bob.id, bobs.space_id),
            ]:
                expected = [
                    (*(getattr(m, name) for name in _PRIOR_COLUMNS), m.distance)
                    for m in nearest_priors(owner_id=owner, space_id=space, vector=vector)
                ]
                got = [
                    (*(getattr(m, name) for name in _PRIOR_COLUMNS), m.distance)
                    for m in nearest_prior_rows(owner_id=owner, space_id=space, vector=vector)
                ]
                assert got == expected
                answered += len(got)
        assert answered  # the questions did find priors
        found = {
            m.id
            for v in embeddings.embed(questions)
            for m in nearest_prior_rows(owner_id=alice.id, space_id=mine[0].space_id, vector=v)
        }
        assert found and found <= {mine[0].id, mine[2].id, mine[3].id}

    def test_the_same_fingerprint_read_gives_the_current_memories_oldest_first_locked(self, alice, bob):
        first, second, other = _stored(alice, ["I live in Porto.", "My cat is Tom.", "I work at Acme."])
        (bobs,) = _stored(bob, ["I live in Porto."])
        # A second current row with first's fingerprint (an event said again on another day), and a
        # superseded one that the read must leave out.
        later = Memory.objects.get(id=second.id)
        Memory.objects.filter(id=later.id).update(fingerprint=first.fingerprint)
        Memory.objects.filter(id=other.id).update(fingerprint=first.fingerprint, superseded_at=timezone.now())
        compiled = store._same_fingerprint()
        for owner, space, fingerprint in [
            (alice.id, first.space_id, first.fingerprint),
            (bob.id, first.space_id, first.fingerprint),
            (bob.id, bobs.space_id, first.fingerprint),
            (alice.id, first.space_id, fingerprint_of("nothing said")),
        ]:
            orm = list(
                Memory.objects.filter(
                    owner_id=owner,
                    space_id=space,
                    fingerprint=fingerprint,
                    superseded_at__isnull=True,
                )
                .order_by("recorded_at")
                .values_list(*store._SAME_FIELDS)
            )
            with transaction.atomic():
                assert compiled_rows(compiled, owner_id=owner, space_id=space, fingerprint=fingerprint) == orm
        with transaction.atomic():
            rows = compiled_rows(
                compiled, owner_id=alice.id, space_id=first.space_id, fingerprint=first.fingerprint
            )
        assert [row[0] for row in rows] == [first.id, second.id]
        assert "FOR UPDATE" in compiled.sql

    def test_a_jobs_read_gives_the_job_its_source_and_its_owner_as_the_orm_does(self, alice, bob):
        caller = Caller(user=alice, scopes=ALL_SCOPES)
        kept = remember(caller=caller, content="I live in Porto.", tags=["home"], category="profile")
        orphan = remember(caller=Caller(user=bob, scopes=ALL_SCOPES), content="My cat is Tom.")
        Source.objects.filter(id=orphan.source_id).delete()
        for job_id in (kept.id, str(kept.id), orphan.id):
            got = job_with_source(job_id=job_id, owner_id=Job.objects.get(id=job_id).owner_id)
            orm = Job.objects.select_related("source", "owner").get(id=job_id)
            for field in Job._meta.concrete_fields:
                assert getattr(got, field.attname) == getattr(orm, field.attname), field.name
            if orm.source is None:
                assert got.source is None
            else:
                for field in Source._meta.concrete_fields:
                    assert getattr(got.source, field.attname) == getattr(orm.source, field.attname), (
                        field.name
                    )
            assert got.owner.pk == orm.owner.pk
        assert job_with_source(job_id=kept.id, owner_id=alice.pk).options["tags"] == ["home"]
        with pytest.raises(Job.DoesNotExist):
            job_with_source(job_id=uuid.uuid4(), owner_id=alice.pk)
        with pytest.raises(Job.DoesNotExist):
            job_with_source(job_id=kept.id, owner_id=bob.pk)  # another owner's job is not found
