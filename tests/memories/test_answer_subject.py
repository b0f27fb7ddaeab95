"""Issue 40, section 3: the answerer answers about the person asked about, through REST and the
real worker: "What is my uncle's email?" is never answered with the aunt's or the person's own."""

from __future__ import annotations

from typing import Any

import pytest

from memories.retrieval.answer import NO_EVIDENCE
from tests.helpers import pat_client
from tests.memories.test_recall import _save, e2e

pytestmark = e2e


def _answer(client: Any, question: str) -> str:
    response = client.post("/api/v1/operations/answer", {"question": question}, format="json")
    assert response.status_code == 200, response.json()
    return str(response.json()["answer"])


@pytest.mark.parametrize(
    ("saved", "question", "expected", "never"),
    [
        (
            ["My aunt's email is rosa.aunt@example.org.", "My email is me.myself@example.org."],
            "What is my uncle's email?",
            NO_EVIDENCE,
            ("rosa.aunt", "me.myself"),
        ),
        (
            [
                "My aunt's email is rosa.aunt@example.org.",
                "My email is me.myself@example.org.",
                "My uncle's email is tom.uncle@example.org.",
            ],
            "What is my uncle's email?",
            "tom.uncle@example.org",
            ("rosa.aunt", "me.myself"),
        ),
        (
            ["My aunt's email is rosa.aunt@example.org.", "My email is me.myself@example.org."],
            "What is my email?",
            "me.myself@example.org",
            ("rosa.aunt",),
        ),
        (
            ["Mi tía vive en Sevilla.", "Mi tío vive en Bilbao."],
            "¿Dónde vive mi tío?",
            "Bilbao",
            ("Sevilla",),
        ),
    ],
)
def test_it_answers_about_the_person_asked_about(alice, saved, question, expected, never):
    client = pat_client(alice)
    for content in saved:
        _save(client, content)
    answer = _answer(client, question)
    assert expected in answer, answer
    for other in never:
        assert other not in answer, answer
