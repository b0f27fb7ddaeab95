"""Editing a memory and acting on several from the dashboard (Django's test client).

A revision is run by calling the worker's job function here (no worker process): the new
version goes through the real pipeline and supersedes the edited memory. Charlie, the
outsider, gets a 404 for Alice's memories, and every write needs the CSRF token.

Two edits of one memory (two tabs, or a quick second fix) are both queued against the version
the page showed; each must become a version of its own, the later one current, or fail where
the person sees it (issue 39): never be taken for evidence of the other.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, date, datetime

import pytest
from django.test import Client
from django.urls import reverse

from accounts.caller import Actor
from memories.models import AuditEvent, Entity, Evidence, Job, Memory, Source
from memories.services.memories import memory_hard_delete, memory_suppress
from memories.services.spaces import space_create
from memories.worker import lease
from memories.worker.run import job_process
from tests.helpers import link

pytestmark = pytest.mark.django_db


def _edit(client: Client, memory: Memory, **changes: str):
    data = {
        "content": memory.content,
        "kind": memory.kind,
        "tags": ", ".join(memory.tags),
        "occurred_on": "",
        "valid_from_on": "",
        "valid_until_on": "",
        "due_on": "",
        **changes,
    }
    return client.post(reverse("dashboard:memory-edit", args=[memory.id]), data)


class TestEdit:
    def test_it_saves_new_words_as_a_version_that_replaces_the_old_one(
        self, alice, alice_client, make_memory
    ):
        old = make_memory(alice, "Ana lives in Lisbon.", tags=["family"])
        response = _edit(alice_client, old, content="Ana lives in Porto.")
        job = Job.objects.get(owner=alice, source__content="Ana lives in Porto.")
        assert response.status_code == 302 and response["Location"] == reverse("dashboard:job", args=[job.id])
        job_process(job_id=job.id)
        new = Memory.objects.get(owner=alice, content="Ana lives in Porto.")
        old.refresh_from_db()
        assert old.superseded_by_id == new.id and old.superseded_at is not None
        assert new.superseded_at is None and new.tags == ["family"]
        # The old version is history: still there, with its evidence, and drawn on the new one's page.
        assert old.evidence.count() >= 1
        page = alice_client.get(reverse("dashboard:memory", args=[new.id])).content.decode()
        assert re.search(
            r'<h1 id="page-title"><span class="memory-heading">Ana lives in Porto.</span></h1>', page
        )
        chain = page[page.index('class="history-chain"') :]
        assert chain.index("Ana lives in Lisbon.") < chain.index("Ana lives in Porto.")
        assert "This version (current)" in chain

    def test_it_saves_the_kind_and_a_date_on_the_new_version(self, alice, alice_client, make_memory):
        old = make_memory(alice, "Dentist appointment.")
        _edit(alice_client, old, kind="foresight", due_on="2031-03-14")
        job_process(job_id=Job.objects.get(owner=alice).id)
        new = Memory.objects.get(owner=alice, superseded_at__isnull=True)
        assert new.id != old.id and new.kind == "foresight"
        assert new.due_at is not None and new.due_at.date() == date(2031, 3, 14)
        old.refresh_from_db()
        assert old.superseded_by_id == new.id

    def test_it_changes_tags_in_place_and_audits_it(self, alice, alice_client, make_memory):
        memory = make_memory(alice, "Likes green tea.", tags=["food"])
        response = _edit(alice_client, memory, tags="drinks, morning")
        assert response.status_code == 302 and response["Location"] == reverse(
            "dashboard:memory", args=[memory.id]
        )
        memory.refresh_from_db()
        assert memory.tags == ["drinks", "morning"] and memory.superseded_at is None
        assert not Job.objects.filter(owner=alice).exists()
        event = AuditEvent.objects.get(target_id=memory.id, action=AuditEvent.Action.UPDATED)
        assert event.detail == {"fields": ["tags"]}

    def test_it_says_when_nothing_changed(self, alice, alice_client, make_memory):
        memory = make_memory(alice, "Likes green tea.")
        response = _edit(alice_client, memory)
        assert response.status_code == 400
        assert "Nothing changed" in response.content.decode()

    def test_it_refuses_to_revise_a_replaced_version(self, alice, alice_client, make_memory):
        new = make_memory(alice, "Lives in Porto.")
        old = make_memory(alice, "Lives in Lisbon.", superseded_at=datetime.now(UTC), superseded_by=new)
        response = _edit(alice_client, old, content="Lives in Faro.")
        assert response.status_code == 400
        assert "A newer version replaced this one" in response.content.decode()
        assert not Source.objects.filter(content="Lives in Faro.").exists()

    def test_it_is_a_404_for_an_outsider(self, alice, charlie_client, make_memory):
        memory = make_memory(alice, "Ana lives in Lisbon.")
        assert charlie_client.get(reverse("dashboard:memory-edit", args=[memory.id])).status_code == 404
        assert _edit(charlie_client, memory, content="Hacked.").status_code == 404
        assert not Source.objects.filter(content="Hacked.").exists()

    def test_it_needs_the_csrf_token(self, alice, make_memory):
        memory = make_memory(alice, "Ana lives in Lisbon.")
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        assert _edit(client, memory, tags="x").status_code == 403
        memory.refresh_from_db()
        assert memory.tags == []


def _versions(owner) -> list[Memory]:
    """The owner's memories, oldest first."""
    return list(Memory.objects.filter(owner=owner).order_by("recorded_at", "id"))


def _assert_one_chain(owner, *contents: str) -> None:
    """Each version replaced by the next, the last one current, and each edit's words its own
    version, not evidence for another."""
    versions = _versions(owner)
    assert [m.content for m in versions] == list(contents)
    for older, newer in itertools.pairwise(versions):
        assert older.superseded_by_id == newer.id and older.superseded_at is not None
    assert versions[-1].superseded_at is None and versions[-1].status == "active"
    for job in Job.objects.filter(owner=owner):
        assert job.status == "succeeded"
        supported = Evidence.objects.filter(source=job.source, stance="supports")
        assert list(supported.values_list("memory__job_id", flat=True)) == [job.id]


# The second edit of each pair, as the update engine would judge it beside the first: a rewording
# (the same fact), the same words with a date, and something else (another fact beside it).
SECOND_EDITS = {
    "a rewording": ("I'm allergic to peanuts.", {"content": "I have a peanut allergy."}),
    "a date": ("Dentist appointment on Friday.", {"due_on": "2031-03-14"}),
    "other words": ("Ana lives in Porto.", {"content": "Ana teaches music at the conservatory."}),
}


class TestTwoEdits:
    @pytest.mark.parametrize("second", SECOND_EDITS.values(), ids=SECOND_EDITS.keys())
    def test_it_keeps_both_edits_made_before_either_is_saved(self, alice, alice_client, make_memory, second):
        first_words, changes = second
        old = make_memory(alice, "Old words about something.")
        # Two tabs on the same version, or the same page again before the first job ran.
        assert _edit(alice_client, old, content=first_words).status_code == 302
        assert _edit(alice_client, old, **{"content": first_words, **changes}).status_code == 302
        first, _ = Job.objects.filter(owner=alice).order_by("created_at")

        job_process(job_id=first.id)  # one batch: the second waits in the queue, so it is taken along

        second_words = changes.get("content", first_words)
        _assert_one_chain(alice, "Old words about something.", first_words, second_words)
        if "due_on" in changes:
            assert _versions(alice)[-1].due_at.date() == date(2031, 3, 14)

    @pytest.mark.parametrize("second", SECOND_EDITS.values(), ids=SECOND_EDITS.keys())
    def test_it_keeps_a_second_edit_made_while_the_first_is_being_saved(
        self, alice, alice_client, make_memory, monkeypatch, second
    ):
        first_words, changes = second
        old = make_memory(alice, "Old words about something.")
        _edit(alice_client, old, content=first_words)
        real_batch_claim = lease.job_batch_claim

        def second_edit_arrives(**kwargs):
            # The worker holds the first job, and looked for others to take along: the second edit
            # comes now, against the version still current, and is left for a job of its own.
            claimed = real_batch_claim(**kwargs)
            assert _edit(alice_client, old, **{"content": first_words, **changes}).status_code == 302
            return claimed

        monkeypatch.setattr(lease, "job_batch_claim", second_edit_arrives)
        first = Job.objects.get(owner=alice)
        job_process(job_id=first.id)
        monkeypatch.setattr(lease, "job_batch_claim", real_batch_claim)
        second_job = Job.objects.exclude(id=first.id).get(owner=alice)
        assert second_job.status == "queued"

        job_process(job_id=second_job.id)

        _assert_one_chain(
            alice, "Old words about something.", first_words, changes.get("content", first_words)
        )

    def test_it_refuses_an_edit_of_a_page_a_saved_edit_replaced(self, alice, alice_client, make_memory):
        old = make_memory(alice, "Ana lives in Lisbon.")
        _edit(alice_client, old, content="Ana lives in Porto.")
        job_process(job_id=Job.objects.get(owner=alice).id)
        # The other tab still shows the old version: its edit is refused where the person sees it.
        response = _edit(alice_client, old, content="Ana lives in Faro.")
        assert response.status_code == 400
        assert "A newer version replaced this one" in response.content.decode()
        assert not Source.objects.filter(content="Ana lives in Faro.").exists()

    @pytest.mark.parametrize("removal", ["deleted", "suppressed"])
    def test_it_fails_an_edit_visibly_when_the_memory_went_meanwhile(
        self, alice, alice_client, make_memory, removal
    ):
        old = make_memory(alice, "Ana lives in Lisbon.")
        _edit(alice_client, old, content="Ana lives in Porto.")
        job = Job.objects.get(owner=alice)
        if removal == "deleted":
            memory_hard_delete(actor=Actor.owner_acting(alice), memory_id=old.id)
        else:
            memory_suppress(actor=Actor.owner_acting(alice), memory_id=old.id)

        job_process(job_id=job.id)

        job.refresh_from_db()
        assert (job.status, job.error_code) == ("failed", "memory_not_current")
        assert not Memory.objects.filter(owner=alice, content="Ana lives in Porto.").exists()
        page = alice_client.get(reverse("dashboard:job", args=[job.id])).content.decode()
        assert f"was {removal} while this edit waited" in page


def _bulk(client: Client, memories: list[Memory], action: str, **extra: str):
    data: dict[str, object] = {"ids": [str(m.id) for m in memories], "action": action, **extra}
    return client.post(reverse("dashboard:memory-bulk"), data)


class TestBulk:
    def test_it_asks_first_then_suppresses_with_a_count(self, alice, alice_client, make_memory):
        rows = [make_memory(alice, f"Fact number {i}.") for i in range(3)]
        asked = _bulk(alice_client, rows, "suppress")
        assert asked.status_code == 200 and "Suppress 3 memories?" in asked.content.decode()
        assert Memory.objects.filter(owner=alice, status="suppressed").count() == 0
        done = _bulk(alice_client, rows, "suppress", confirmed="yes")
        assert done.status_code == 302
        assert Memory.objects.filter(owner=alice, status="suppressed").count() == 3
        shown = alice_client.get(done["Location"]).content.decode()
        assert "Suppressed 3 memories" in shown

    def test_it_moves_memories_and_their_entities_to_another_space(self, alice, alice_client, make_memory):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        memory = make_memory(alice, "Ana works at Acme.")
        entity = Entity.objects.create(
            owner=alice, space=memory.space, name="Acme", normalized_name="acme", type="Organization"
        )
        link(memory, entity)
        done = _bulk(alice_client, [memory], "move", space=str(work.id), confirmed="yes")
        assert done.status_code == 302
        memory.refresh_from_db()
        assert memory.space_id == work.id
        assert [(e.name, e.space_id) for e in memory.entities.all()] == [("Acme", work.id)]
        assert memory.source.space_id == work.id
        assert "Moved 1 memory into “Work”" in alice_client.get(done["Location"]).content.decode()

    def test_it_deletes_through_the_purge_path_after_the_typed_word(self, alice, alice_client, make_memory):
        rows = [make_memory(alice, f"Secret number {i}.") for i in range(2)]
        refused = _bulk(alice_client, rows, "delete", confirmed="yes", confirm="yes please")
        assert refused.status_code == 400 and Memory.objects.filter(owner=alice).count() == 2
        done = _bulk(alice_client, rows, "delete", confirmed="yes", confirm="delete")
        assert done.status_code == 302
        assert not Memory.objects.filter(owner=alice).exists()
        assert not Source.objects.filter(owner=alice).exists()
        assert AuditEvent.objects.filter(owner_id_snapshot=alice.id, action="hard_deleted").count() == 2
        assert "Deleted 2 memories permanently" in alice_client.get(done["Location"]).content.decode()

    def test_an_outsiders_id_in_the_selection_changes_nothing(
        self, alice, charlie, charlie_client, make_memory
    ):
        mine = make_memory(charlie, "Charlie's own note.")
        hers = make_memory(alice, "Alice's note.")
        response = _bulk(charlie_client, [mine, hers], "suppress", confirmed="yes")
        assert response.status_code == 404
        assert Memory.objects.filter(status="suppressed").count() == 0

    def test_it_needs_the_csrf_token(self, alice, make_memory):
        memory = make_memory(alice, "Ana lives in Lisbon.")
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        assert _bulk(client, [memory], "suppress", confirmed="yes").status_code == 403
        assert Memory.objects.get(id=memory.id).status == "active"

    def test_the_list_offers_a_checkbox_per_memory(self, alice, alice_client, make_memory):
        memory = make_memory(alice, "Likes tea.")
        html = alice_client.get(reverse("dashboard:memories")).content.decode()
        assert f'name="ids" value="{memory.id}" form="bulk-form"' in html
        assert 'id="bulk-form"' in html
