"""A change of employer said with a role ("My wife is a nurse at Kaiser now"), through REST and the
real worker: it should replace the earlier statement of where the same person works although the two
are far apart in meaning (cosine 0.28 here), and it must replace nothing of another person's or
another owner's. The rule that did the first was taken out the day it was built, because an attack
showed it hid true facts (batch 52b; docs/decisions.md): the first test is what is missing."""

from __future__ import annotations

import pytest

from tests.helpers import pat_client
from tests.memories.test_correction_reach import _one
from tests.memories.test_recall import _save, e2e

pytestmark = e2e


@pytest.mark.xfail(
    strict=True,
    reason="open: a change of employer said as a role at an employer is not read (the rule built for it "
    "in stop 52 hid true facts and was taken out)",
)
def test_another_employer_said_with_a_role_replaces_the_earlier_one(alice):
    client = pat_client(alice)
    google = _one(_save(client, "My wife works at Google."))
    mine = _one(_save(client, "I work at Freightline."))
    kaiser = _one(_save(client, "My wife is a nurse at Kaiser now."))
    google.refresh_from_db()
    mine.refresh_from_db()
    assert google.superseded_by_id == kaiser.id
    assert mine.superseded_at is None
    response = client.post(
        "/api/v1/operations/recall", {"query": "Where does my wife work?", "top_k": 5}, format="json"
    )
    assert response.status_code == 200, response.json()
    contents = [hit["content"] for hit in response.json()["memories"]]
    assert "My wife is a nurse at Kaiser now." in contents
    assert "My wife works at Google." not in contents


def test_a_past_job_or_another_owners_statement_is_not_replaced(alice, bob):
    alice_client, bob_client = pat_client(alice), pat_client(bob)
    google = _one(_save(alice_client, "My wife works at Google."))
    _save(alice_client, "My wife was a nurse at Kaiser before that.")
    _save(bob_client, "My wife is a nurse at Kaiser now.")
    google.refresh_from_db()
    assert google.superseded_at is None
