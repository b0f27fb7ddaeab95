"""A memory's text score does not depend on what else the space holds: many short notes that share a
question's word do not reorder the memories that answer it (memories.retrieval.recall, `bm25_b`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memories.models import Memory
from memories.retrieval.recall import DEFAULT_KNOBS, RecallRequest, memory_recall
from memories.selectors.spaces import space_default
from tests.helpers import pat_client
from tests.memories.test_recall import _save

QUESTION = "Which shelter does Maria volunteer at?"
LONG = (
    "Maria: I recently gave a few talks at the homeless shelter downtown where I volunteer every "
    "week, and the residents asked such good questions afterwards."
)
SHORT = "Maria: Volunteering feels great."
ITEMS = ["lamps", "socks", "maps", "tea", "rice", "paint", "seeds", "rope"]
PLACES = ["Oslo", "Lima", "Quito", "Hanoi", "Perth", "Accra", "Riga"]
# Short notes that share no word with the question: they only change the space's mix of lengths.
CROWD = [f"Bought {item} in {place}." for item in ITEMS for place in PLACES]


def _order(owner, space, knobs) -> list[str]:
    hits = memory_recall(
        owner=owner, space=space, request=RecallRequest(query=QUESTION, top_k=50), knobs=knobs
    ).hits
    return [h.memory.content for h in hits]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("celery_worker")
def test_short_notes_that_share_a_word_do_not_push_a_longer_answer_down(alice):
    client = pat_client(alice)
    for text in (LONG, SHORT):
        _save(client, text)
    space = space_default(owner=alice)
    old = replace(DEFAULT_KNOBS, bm25_b=0.3)
    before = {"now": _order(alice, space, DEFAULT_KNOBS), "old": _order(alice, space, old)}
    for text in CROWD:
        _save(client, text)
    after = {"now": _order(alice, space, DEFAULT_KNOBS), "old": _order(alice, space, old)}
    # The notes are separate memories (not paraphrases merged into one), so they do crowd the space.
    assert Memory.objects.filter(owner=alice, status="active").count() == 2 + len(CROWD)
    assert before["now"][:2] == [LONG, SHORT]
    assert after["now"][:2] == [LONG, SHORT]
    # Scaled by its length against the other candidates' (BM25's b 0.3, the old default), the longer
    # answer falls behind the shorter memory once short notes fill the space: the test can fail.
    assert before["old"][:2] == [LONG, SHORT]
    assert after["old"][:2] == [SHORT, LONG]
