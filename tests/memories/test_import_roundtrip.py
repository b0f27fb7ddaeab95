"""The round trip of our own export (issue 44): a person with a varied history exports it through
REST, purges everything (the account's own deletion), comes back and imports the file through REST
with the real worker, and has the same memories, history, states and relations again. And an
outsider: Bob importing Alice's file gets only what the file says, in his own account, and Alice's
data is untouched.

What is compared, and why (ids are not: a purge removes them and an import makes new ones):
- every memory, current or replaced, by its space's name, words, kind, category, tags and entity
  names: what the person said and how they labelled it;
- its world clocks (occurred_at, valid_from, valid_until, due_at, stated_at, starts_by): when it
  held, which the engine derives again from the time each source referred to;
- its transaction clocks (recorded_at, superseded_at) and the words of what replaced it: the
  history as the person lived it ("told on 3 March, replaced on 10 June by ..."); an import that
  dated it all to the day of the import would lose that;
- its states: pinned, and forgotten (status, reason, note, when) -- a forgotten memory must stay
  forgotten, never current for an agent;
- every relation by its space, subject, type and object names, its clocks, what replaced it and
  whether an agent retired it (invalidated, with the reason).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.utils.html import strip_tags

from accounts.caller import Actor
from accounts.models import User
from memories.models import Entity, Evidence, Import, Job, Memory, MemoryEntity, Relation, Source, Space
from memories.pipeline.import_formats import import_parse
from memories.services.account import account_delete, user_sign_up
from memories.worker import restore
from tests.helpers import pat_client, wait_for_job, words_of
from tests.memories.import_fixtures import LIMITS, post_file

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]

PASSWORD = "correct horse battery staple"
MEMORY_CLOCKS = ("occurred_at", "valid_from", "valid_until", "due_at", "stated_at", "starts_by")
RELATION_CLOCKS = ("valid_from", "valid_until", "recorded_at", "superseded_at")
FORGOTTEN = "My old bank PIN is 4821."


def _at(month: int, day: int) -> str:
    return datetime(2024, month, day, 9, 0, tzinfo=UTC).isoformat()


def _save(client: Any, content: str, **fields: Any) -> list[Memory]:
    response = client.post("/api/v1/memories", {"content": content, **fields}, format="json")
    assert response.status_code in (201, 202), response.json()
    job = wait_for_job(response.json()["job"]["id"])
    assert job.status == "succeeded", (content, job.error_code, job.error_message)
    return list(Memory.objects.filter(owner_id=job.owner_id, job_id=job.id).order_by("recorded_at"))


def _forget(client: Any, memory: Memory, reason: str) -> None:
    response = client.post(f"/api/v1/memories/{memory.id}/suppress", {"reason_code": reason}, format="json")
    assert response.status_code == 200, response.json()


def _operation(client: Any, name: str, **arguments: Any) -> dict[str, Any]:
    response = client.post(f"/api/v1/operations/{name}", arguments, format="json")
    assert response.status_code == 200, response.json()
    body: dict[str, Any] = response.json()
    return body


def _history_of(user: User) -> Any:
    """A varied history, made through REST as a person and their agent would: facts changed over
    time, an episode, a plan, tags, two spaces, a pinned and two forgotten memories (one said again
    after), a manual edit in the dashboard, relations from `relate` (one replaced by a later one,
    one retired by the agent)."""
    client = pat_client(user)
    work = client.post("/api/v1/spaces", {"name": "Work"}, format="json").json()["id"]
    _save(client, "I live in Paris with my sister.", occurred_at=_at(1, 10), tags=["home"])
    _save(client, "My favourite food is ramen.", occurred_at=_at(1, 11), category="preference")
    _save(client, "Yesterday I went hiking with Marta in the Alps.", occurred_at=_at(2, 3))
    passport = _save(client, "My passport number is X1234567.", occurred_at=_at(2, 4))
    forgotten = _save(client, FORGOTTEN, occurred_at=_at(2, 5))
    _save(client, "I moved to Berlin last week.", occurred_at=_at(6, 10), tags=["home", "move"])
    _save(client, "I will fly to Tokyo next Friday.", occurred_at=_at(6, 12))
    _save(client, "I work at Siemens as an engineer.", occurred_at=_at(1, 15), space=work, tags=["job"])
    _save(client, "My manager is Claire Dubois.", occurred_at=_at(1, 16), space=work)
    _save(client, "I am allergic to peanuts.", occurred_at=_at(3, 1))
    _save(client, "I have a peanut allergy.", occurred_at=_at(3, 2))
    assert client.post(f"/api/v1/memories/{passport[0].id}/pin").status_code == 200
    _forget(client, forgotten[0], "private")
    # Forgotten, then said again: the words said again are a new memory (a forgotten one takes no
    # part in any judgement), and only the first stays forgotten.
    _forget(client, _save(client, "I drink coffee every morning.", occurred_at=_at(3, 10))[0], "outdated")
    _save(client, "I drink coffee every morning.", occurred_at=_at(3, 20))
    # A manual edit in the dashboard: a new version with a date the person set, replacing the old.
    manager = Memory.objects.get(owner=user, content="My manager is Claire Dubois.")
    dashboard = Client()
    dashboard.force_login(user)
    edit = {
        "content": "My manager is Claire Martin.",
        "kind": "fact",
        "tags": "team",
        "valid_from_on": "2024-04-01",
    }
    assert dashboard.post(f"/memories/{manager.id}/edit", edit).status_code == 302
    revision = Job.objects.filter(owner=user).order_by("-created_at").first()
    assert revision is not None and wait_for_job(revision.id).status == "succeeded"
    _operation(client, "relate", source="Alex", target="Paris", relation_type="lives_in")
    _operation(client, "relate", source="Alex", target="Berlin", relation_type="lives_in")
    wants = _operation(client, "relate", source="Alex", target="a sailing boat", relation_type="wants")
    _operation(client, "invalidate", memory_id=wants["relation"]["id"], reason="bought one already")
    return client


def _space_name(space: Space) -> str:
    # The default space is the account's own (its name is the account's); the others by name.
    return "(default)" if space.is_default else space.name


def _memories(owner: User) -> list[tuple[Any, ...]]:
    names: dict[Any, list[str]] = {}
    for link in MemoryEntity.objects.filter(owner=owner).select_related("entity"):
        names.setdefault(link.memory_id, []).append(link.entity.name)
    rows = Memory.objects.filter(owner=owner).select_related("space", "superseded_by")
    return sorted(
        (
            _space_name(m.space),
            m.content,
            m.kind,
            m.category,
            tuple(m.tags),
            tuple(sorted(names.get(m.id, []))),
            *(getattr(m, clock) for clock in MEMORY_CLOCKS),
            m.recorded_at,
            m.superseded_at,
            m.superseded_by.content if m.superseded_by else None,
            m.pinned,
            (m.status, m.suppressed_at, m.suppressed_reason, m.suppressed_note),
        )
        for m in rows
    )


def _relations(owner: User) -> list[tuple[Any, ...]]:
    rows = Relation.objects.filter(owner=owner).select_related(
        "space", "subject", "object", "superseded_by__subject", "superseded_by__object"
    )
    return sorted(
        (
            _space_name(r.space),
            r.sentence(),
            *(getattr(r, clock) for clock in RELATION_CLOCKS),
            r.superseded_by.sentence() if r.superseded_by else None,
            (r.invalidated_at, r.invalidated_note),
        )
        for r in rows
    )


def _state(owner: User) -> dict[str, Any]:
    spaces = sorted(_space_name(space) for space in Space.objects.filter(owner=owner))
    return {"spaces": spaces, "memories": _memories(owner), "relations": _relations(owner)}


def _export(client: Any) -> bytes:
    response = client.get("/api/v1/export")
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def _import(client: Any, data: bytes) -> dict[str, Any]:
    response = post_file(client, data, "deeprecall-export.jsonl")
    assert response.status_code == 202, response.json()
    made = response.json()["import"]
    job = wait_for_job(made["job_id"], timeout=180)
    assert job.status == "succeeded", (job.error_code, job.error_message)
    body: dict[str, Any] = client.get(f"/api/v1/imports/{made['id']}").json()["import"]
    assert body["format"] == "deeprecall"
    return body


def _counts(owner: User) -> tuple[int, ...]:
    return tuple(
        model.objects.filter(owner=owner).count()
        for model in (Memory, Relation, Evidence, Source, Entity, MemoryEntity, Space)
    )


def _shown(client: Any, query: str) -> str:
    """Everything an agent's recall answers to `query`, as text."""
    return words_of(_operation(client, "recall", query=query))


def _restored_on_page(owner: User, import_id: str) -> str | None:
    """What the dashboard's page of the import says it restored, as text, or None when it says
    nothing of it."""
    browser = Client()
    browser.force_login(owner)
    page = browser.get(f"/imports/{import_id}/")
    assert page.status_code == 200
    found = re.search(r"<section[^>]*data-import-restored>(.*?)</section>", page.content.decode(), re.S)
    return " ".join(strip_tags(found.group(1)).split()) if found else None


class TestRoundTrip:
    def test_export_purge_import_gives_the_same_memories_history_states_and_relations(self, alice):
        client = _history_of(alice)
        before = _state(alice)
        # The fixture must really hold what the comparison is about.
        assert any(row[-4] for row in before["memories"]), "a replaced memory"
        assert any(row[-2] for row in before["memories"]), "a pinned memory"
        assert any(row[-1][0] == "suppressed" for row in before["memories"]), "a forgotten memory"
        assert {row[0] for row in before["memories"]} == {"(default)", "Work"}
        assert any(row[-2] for row in before["relations"]) and any(row[-1][0] for row in before["relations"])
        export = _export(client)

        account_delete(actor=Actor.owner_acting(alice))
        assert not Memory.objects.exists() and not Relation.objects.exists() and not Source.objects.exists()
        again = user_sign_up(email="alice@example.com", password=PASSWORD)
        client = pat_client(again)
        made = _import(client, export)

        assert _state(again) == before
        restored = {"spaces_created": 1, "relations": len(before["relations"]), "not_rebuilt": 0}
        assert made["restored"] == {**restored, "memories": len(before["memories"])}
        assert made["items"]["failed"] == 0, made
        # The dashboard's page of the import says, in words, what came back beside the memories.
        shown = _restored_on_page(again, made["id"])
        assert shown is not None
        memories, relations = len(before["memories"]), len(before["relations"])
        assert f"{memories} memories as you had kept them: pinned or forgotten" in shown, shown
        assert "1 space you did not have, created for what was said in it." in shown, shown
        assert f"{relations} relations your agents recorded" in shown, shown
        assert "not made again" not in shown, shown
        # An attempt that finds the state applied (a worker killed after it, before the job ended)
        # applies it again, with the worker's own functions: nothing changes.
        job, imported = Job.objects.get(id=made["job_id"]), Import.objects.get(id=made["id"])
        state = import_parse(data=export, filename="export.jsonl", limits=LIMITS).state
        assert state is not None
        with transaction.atomic():
            spaces = restore.spaces_made(job=job, made=imported, state=state)
            again_applied = restore.state_apply(job=job, made=imported, state=state, spaces=spaces)
        assert again_applied["relations"] == 0 and _state(again) == before
        forgotten = Memory.objects.get(owner=again, content=FORGOTTEN)
        assert forgotten.status == "suppressed"
        assert "4821" not in _shown(client, "What is my bank PIN?")

        # The same file again adds nothing.
        counts = _counts(again)
        twice = _import(client, export)
        assert twice["items"]["stored"] == 0
        assert twice["restored"] == {"spaces_created": 0, "relations": 0, "memories": 0, "not_rebuilt": 0}
        assert (_counts(again), _state(again)) == (counts, before)
        # Nothing restored, nothing said of it.
        assert _restored_on_page(again, twice["id"]) is None

        # Undo removes what the import added: its memories, relations, sources and the space it made.
        undone = client.post(f"/api/v1/imports/{made['id']}/undo")
        assert undone.status_code == 200, undone.json()
        assert _counts(again) == (0, 0, 0, 0, 0, 0, 1)
        assert Import.objects.get(id=made["id"]).undone_at is not None
        # Undone, what it restored is gone: the page shows the receipt, not the restored counts.
        assert _restored_on_page(again, made["id"]) is None


class TestOutsider:
    def test_bob_importing_alices_export_gets_only_what_the_file_says_in_his_own_account(self, alice, bob):
        alice_client = _history_of(alice)
        export = _export(alice_client)
        alice_before = (_state(alice), _counts(alice))
        bob_client = pat_client(bob)
        _save(bob_client, "My cat is called Biscuit.", occurred_at=_at(4, 1))
        bob_before = _state(bob)

        made = _import(bob_client, export)

        assert (_state(alice), _counts(alice)) == alice_before
        bob_after = _state(bob)
        # Bob's own memory stays; everything else he now holds is what Alice's file says.
        assert set(bob_before["memories"]) <= set(bob_after["memories"])
        added = sorted(set(bob_after["memories"]) - set(bob_before["memories"]))
        assert added == alice_before[0]["memories"]
        assert bob_after["relations"] == alice_before[0]["relations"]
        assert bob_after["spaces"] == alice_before[0]["spaces"]
        # Nothing of Bob's points at a row of Alice's.
        for model in (Memory, Relation, Source, Entity):
            assert not model.objects.filter(owner=bob, space__owner=alice).exists()
        alice_ids = {str(space.id) for space in Space.objects.filter(owner=alice)}
        assert not Space.objects.filter(owner=bob, id__in=alice_ids).exists()
        # Alice cannot see or undo Bob's import; Bob's undo leaves him what he had, and Alice hers.
        assert alice_client.get(f"/api/v1/imports/{made['id']}").status_code == 404
        assert alice_client.post(f"/api/v1/imports/{made['id']}/undo").status_code == 404
        assert bob_client.post(f"/api/v1/imports/{made['id']}/undo").status_code == 200
        assert _state(bob) == bob_before
        assert (_state(alice), _counts(alice)) == alice_before
