"""A correction that names no subject ("Sorry, I meant Wednesday") is about the last thing the person
said (issue 40): through REST and the real worker it replaces that statement, never an older one with
a value of the same type, and never another owner's latest statement."""

from __future__ import annotations

from memories.models import Memory
from tests.helpers import pat_client
from tests.memories.test_recall import _save, e2e

pytestmark = e2e


def _one(ids: list[str]) -> Memory:
    assert len(ids) == 1, ids
    return Memory.objects.get(id=ids[0])


def test_it_corrects_the_latest_statement_and_not_an_older_one(alice):
    client = pat_client(alice)
    plumber = _one(_save(client, "The plumber is coming on Tuesday."))
    yoga = _one(_save(client, "My yoga class is on Friday."))
    correction = _one(_save(client, "Sorry, I meant Thursday."))
    plumber.refresh_from_db()
    yoga.refresh_from_db()
    assert yoga.superseded_by_id == correction.id
    assert plumber.superseded_at is None


def test_it_corrects_nothing_when_the_latest_statement_has_no_such_value(alice):
    client = pat_client(alice)
    plumber = _one(_save(client, "The plumber is coming on Tuesday."))
    _save(client, "I adopted a grey cat called Miso.")
    _save(client, "Sorry, I meant Thursday.")
    plumber.refresh_from_db()
    assert plumber.superseded_at is None


def test_another_owners_latest_statement_is_never_the_one_corrected(alice, bob):
    alice_client, bob_client = pat_client(alice), pat_client(bob)
    mine = _one(_save(alice_client, "My piano lesson is on Monday."))
    theirs = _one(_save(bob_client, "My dentist visit is on Wednesday."))
    correction = _one(_save(alice_client, "Wait, no, I meant Tuesday."))
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert theirs.superseded_at is None
    assert mine.superseded_by_id == correction.id
