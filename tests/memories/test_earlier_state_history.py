"""An earlier-state question finds the value the update engine superseded (`Knobs.then_history`),
end to end: saved through REST, stored and superseded by the real worker, recalled through REST."""

from __future__ import annotations

import pytest

from memories.models import Memory
from tests.helpers import pat_client
from tests.memories.test_correction_reach import _one
from tests.memories.test_recall import _save, e2e

pytestmark = e2e

RECALL = "/api/v1/operations/recall"


def _contents(client, query: str) -> list[str]:
    response = client.post(RECALL, {"query": query, "top_k": 5}, format="json")
    assert response.status_code == 200, response.json()
    return [hit["content"] for hit in response.json()["memories"]]


def test_the_superseded_rent_answers_what_it_was_before_the_increase(alice):
    client = pat_client(alice)
    old = _one(_save(client, "I pay 900 euros rent a month for my flat."))
    new = _one(_save(client, "My rent went up to 950 euros a month."))
    old.refresh_from_db()
    # The update engine replaced the old value: it no longer holds.
    assert old.superseded_by_id == new.id
    assert _contents(client, "How much rent do I pay a month?")[0] == new.content
    assert old.content not in _contents(client, "How much rent do I pay a month?")
    before = _contents(client, "What was my rent before the increase?")
    assert before[0] == old.content
    assert new.content in before


def test_an_outsider_finds_no_history_of_the_owners(alice, bob):
    alice_client, bob_client = pat_client(alice), pat_client(bob)
    _one(_save(alice_client, "I pay 900 euros rent a month for my flat."))
    _one(_save(alice_client, "My rent went up to 950 euros a month."))
    assert Memory.objects.filter(owner=alice).count() == 2
    assert _contents(bob_client, "What was my rent before the increase?") == []


@pytest.mark.parametrize("question", ["What was my rent at first?", "How much was my rent originally?"])
def test_other_earlier_state_phrasings_find_it_too(alice, question):
    client = pat_client(alice)
    old = _one(_save(client, "I pay 900 euros rent a month for my flat."))
    _one(_save(client, "My rent went up to 950 euros a month."))
    assert old.content in _contents(client, question)


def test_a_forgotten_old_value_stays_forgotten(alice):
    # History is what no longer holds, never what the person asked to forget.
    client = pat_client(alice)
    old = _one(_save(client, "I pay 900 euros rent a month for my flat."))
    new = _one(_save(client, "My rent went up to 950 euros a month."))
    response = client.post("/api/v1/operations/forget", {"memory_id": str(old.id)}, format="json")
    assert response.status_code == 200, response.json()
    before = _contents(client, "What was my rent before the increase?")
    assert old.content not in before
    assert new.content in before
