"""Issue 40, section 0: what a newcomer sees in the first five minutes, through REST and the real
worker. A compound statement changed in one part ends that part only: the move ends the old home,
and the job said in the same sentence stays current and is answered."""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import Memory
from memories.retrieval.answer import NO_EVIDENCE
from tests.helpers import pat_client
from tests.memories.test_recall import _save, e2e

pytestmark = e2e


def _answer(client: Any, question: str) -> dict[str, Any]:
    response = client.post("/api/v1/operations/answer", {"question": question}, format="json")
    assert response.status_code == 200, response.json()
    return dict(response.json())


def _current(client: Any) -> list[str]:
    response = client.get("/api/v1/memories")
    assert response.status_code == 200, response.json()
    return [row["content"] for row in response.json()["results"] if row.get("superseded_at") is None]


def test_it_keeps_the_job_when_only_the_home_changes(alice):
    client = pat_client(alice)
    first = _save(client, "I live in Lisbon and work as a product designer at Fieldnote.")
    second = _save(client, "I moved to Porto last month; the commute to Fieldnote is now by train.")
    home, job = Memory.objects.filter(id__in=first).order_by("span_start")
    home.refresh_from_db()
    job.refresh_from_db()
    # The home ended, replaced by the move; the job said beside it did not.
    assert "Lisbon" in home.content and str(home.superseded_by_id) in second
    assert "Fieldnote" in job.content and job.superseded_at is None
    listed = _current(client)
    assert any("Fieldnote" in text and "designer" in text for text in listed), listed
    assert not any("Lisbon" in text for text in listed), listed
    for question, expected in (
        ("Where do I work?", "Fieldnote"),
        ("What is my job?", "product designer"),
    ):
        body = _answer(client, question)
        assert body["answer"] != NO_EVIDENCE and expected in body["answer"], (question, body["answer"])
        assert "Lisbon" not in body["answer"].split("before that")[0], (question, body["answer"])


@pytest.mark.parametrize(
    ("note", "kept"),
    [
        ("I live in Lisbon and work as a product designer at Fieldnote.", "designer at Fieldnote"),
        ("Je vis à Lyon et travaille chez Renault.", "chez Renault"),
    ],
)
def test_each_fact_of_a_compound_statement_is_its_own_memory(alice, note, kept):
    client = pat_client(alice)
    ids = _save(client, note)
    rows = Memory.objects.filter(id__in=ids).order_by("span_start")
    contents = list(rows.values_list("content", flat=True))
    assert len(contents) == 2, contents
    assert kept in contents[1] and kept not in contents[0], contents


def test_a_newcomer_is_answered_about_home_work_and_partner(alice):
    # Section 0 as a user says it: two notes and a partner, then the everyday questions, over REST.
    client = pat_client(alice)
    _save(client, "I live in Lisbon and work as a product designer at Fieldnote.")
    _save(client, "I moved to Porto last month; the commute to Fieldnote is now by train.")
    _save(client, "My partner Sam is a nurse at the city hospital.")
    for question, expected, never in (
        ("Where do I live?", "Porto", "Lisbon"),
        ("Which city am I in?", "Porto", "Lisbon"),
        ("Where do I work?", "Fieldnote", "Lisbon"),
        ("What is my job?", "product designer", "nurse"),
        ("Who is my partner?", "Sam", "Fieldnote"),
    ):
        answer = _answer(client, question)["answer"]
        assert answer != NO_EVIDENCE and expected in answer, (question, answer)
        assert never not in answer.split("before that")[0], (question, answer)
