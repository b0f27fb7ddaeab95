"""A newcomer's walk of the service (stop 51), kept as a test: three notes about their own life in
their own words, saved through REST and stored by the real worker, then the everyday questions they
asked. Each of the three below was answered wrong before stop 52; "Where do I live?" is mended, the
two about work are open:

- "Where do I work now?" named the old employer: "I'm now a data engineer at Solvia" had no slot and
  replaced nothing. The rule built for it in stop 52 hid true facts under attack and was taken out;
  since stop 58 a role at a named place said as what holds now ("I'm now a ... at Solvia") names the
  work relation, and the change replaces the old note (mended: "Where do I work now?" and the old
  employer as history pass);
- "Where do I live?" put "Before that I lived in Dresden" first, which shares "live" with it, above
  "I moved to Leipzig last spring", the update engine's `user:lives_in` (`slot_holders_first`);
- "What do I do for a living?" did not count "Correction: I left Freightline ..." as the person's
  own: recall read "Correction" as a speaker's name (`language.NOT_SPEAKER_WORDS`, mended). It
  still answers with the old employer: the person's answers to it by words are the notes about
  where they live ("living" and "lived" share a stem), so neither the work note nor its change is
  among them.
"""

from __future__ import annotations

import pytest

from tests.helpers import pat_client
from tests.memories.test_recall import _save, e2e

pytestmark = e2e

NOTES = (
    "I moved to Leipzig last spring and rent a small flat near the Karl-Heine canal. Before that I lived in"
    " Dresden for six years.",
    "I work as a data engineer at a logistics company called Freightline; mostly pipelines and a lot of"
    " on-call. My sister Jana is allergic to hazelnuts and also to cats, so no cat visits at her place.",
    "Correction: I left Freightline in October, I'm now a data engineer at Solvia, a solar startup."
    " Weekends I climb at the bouldering gym with my brother Tomas.",
)


# Open: "What do I do for a living?" finds the notes about where the person lives ("living", "lived").
_OPEN = pytest.mark.xfail(
    strict=True, reason="open: 'for a living' shares a stem with 'lived': the home notes are its answers"
)


@pytest.fixture
def walked(alice):
    client = pat_client(alice)
    for note in NOTES:
        _save(client, note)
    return client


def _first(client, question: str) -> str:
    response = client.post("/api/v1/operations/recall", {"query": question, "top_k": 3}, format="json")
    assert response.status_code == 200, response.json()
    hits = response.json()["memories"]
    assert hits, question
    return str(hits[0]["content"])


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("Where do I work now?", "Solvia"),
        pytest.param("What do I do for a living?", "Solvia", marks=_OPEN),
        ("What is my sister allergic to?", "hazelnuts"),
        ("Who do I go climbing with?", "Tomas"),
    ],
)
def test_the_newcomers_questions_are_answered_by_what_holds_now(walked, question, first):
    assert first in _first(walked, question)


def test_the_home_held_now_ranks_above_the_one_before_it(walked):
    # "I rent a small flat near the Karl-Heine canal" answers it too, and may rank first.
    response = walked.post(
        "/api/v1/operations/recall", {"query": "Where do I live?", "top_k": 5}, format="json"
    )
    assert response.status_code == 200, response.json()
    contents = [hit["content"] for hit in response.json()["memories"]]
    leipzig = next(i for i, content in enumerate(contents) if "Leipzig" in content)
    dresden = next((i for i, content in enumerate(contents) if "Dresden" in content), len(contents))
    assert leipzig < dresden
    assert leipzig <= 1


def test_the_old_employer_is_history(walked):
    response = walked.post("/api/v1/operations/recall", {"query": "Freightline", "top_k": 10}, format="json")
    assert response.status_code == 200, response.json()
    held = [hit["content"] for hit in response.json()["memories"]]
    assert not any(content.startswith("I work as a data engineer at a logistics company") for content in held)
