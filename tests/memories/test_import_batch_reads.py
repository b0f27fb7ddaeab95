"""An import reads a batch's duplicates and entities once (memories.worker.store.BatchReads) and writes
the entities it changed once: the rows must be those that saving the same statements one by one
leaves, whether the statements that depend on each other share a batch or not."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import override_settings

from accounts.caller import ALL_SCOPES, Caller
from memories.models import Entity, Evidence, Memory, MemoryEntity
from memories.services.memories import remember
from memories.worker.run import job_process
from tests.helpers import pat_client
from tests.memories import import_fixtures as fx

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("no_worker_broker")]


def _at(day: int) -> datetime:
    return datetime(2024, 3, day, 9, 0, tzinfo=UTC)


# Each line leans on an earlier one: an exact repeat (evidence), a move that replaces the first
# home, the first home said again after it was replaced (a new memory, not evidence for the closed
# one), names mentioned again with other spellings and types (votes, aliases), a new name late, and
# a bare correction, which replaces the statement said just before it (an item of the same import).
STATEMENTS = [
    ("I live in Paris.", _at(1)),
    ("My sister Anna works at Siemens.", _at(2)),
    ("I live in Paris.", _at(3)),
    ("I moved to Berlin.", _at(4)),
    ("Anna visited the Siemens AG office in Munich.", _at(5)),
    ("I live in Paris.", _at(6)),
    ("My favourite food is ramen.", _at(7)),
    ("My favourite food is ramen.", _at(8)),
    ("Anna and Lukas went hiking near Munich.", _at(9)),
    ("My favourite food is sushi now.", _at(10)),
    ("The plumber is coming on Tuesday.", _at(11)),
    ("Sorry, I meant Wednesday.", _at(12)),
    # A name said first inside a sentence, then starting one in a later batch (at size 3): a name that
    # starts a sentence is taken for one only if the space knows it, so the later batch, read while
    # the one before was being written, must be read again once it is (imports._refresh).
    ("I had lunch with my neighbour Tomasz.", _at(13)),
    ("The weather was lovely today.", _at(14)),
    ("I bought new running shoes.", _at(15)),
    ("Tomasz got a new job.", _at(16)),
]


def _rows(owner: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Everything the two paths must agree on, told apart by content, not by id or time."""
    memories = Memory.objects.filter(owner=owner)
    return {
        "current": sorted(
            (m,) for m in memories.filter(superseded_at__isnull=True).values_list("content", flat=True)
        ),
        "history": sorted(
            memories.filter(superseded_by__isnull=False).values_list("content", "superseded_by__content")
        ),
        "memories": sorted(memories.values_list("content", "kind", "slot", "slot_value")),
        "evidence": sorted(
            Evidence.objects.filter(owner=owner).values_list(
                "memory__content", "relation_id", "source__content", "stance"
            )
        ),
        "entities": sorted(
            (e.normalized_name, e.name, e.type, e.attributes, sorted(e.aliases))
            for e in Entity.objects.filter(owner=owner)
        ),
        "links": sorted(
            MemoryEntity.objects.filter(owner=owner).values_list("memory__content", "entity__normalized_name")
        ),
    }


@pytest.mark.parametrize("batch", [256, 3])
def test_an_import_leaves_the_rows_of_saving_one_by_one(alice, bob, batch):
    with override_settings(IMPORT_BATCH=batch):
        response = pat_client(alice).post(
            "/api/v1/imports", {"file": _upload(fx.mem0_json(STATEMENTS))}, format="multipart"
        )
        assert response.status_code == 202, response.json()
        job_process(job_id=response.json()["import"]["job_id"])
    caller = Caller(user=bob, scopes=ALL_SCOPES)
    for text, at in STATEMENTS:
        job_process(job_id=remember(caller=caller, content=text, occurred_at=at).id)
    imported, saved = _rows(alice), _rows(bob)
    # The fixture exercises what the batch's reads must keep true: a repeat as evidence, a replaced
    # home, the replaced home's words said again, an entity named with several spellings, and a bare
    # correction of the item before.
    assert saved["history"], "nothing was replaced"
    assert saved["current"].count(("I live in Paris.",)) == 1
    assert any(aliases for *_, aliases in saved["entities"]), "no entity has a second spelling"
    assert ("The plumber is coming on Tuesday.", "Sorry, I meant Wednesday.") in saved["history"]
    assert imported == saved


def _upload(data: bytes) -> Any:
    upload = io.BytesIO(data)
    upload.name = "mem0.json"
    return upload
