"""`Knobs.change_by_meaning` end to end: a chat saved turn by turn through REST with its sessions'
dates, stored by the real worker, then asked through REST's recall at a later date. The in-process
cases (test_retrieval_quality.py, TestChangeByMeaning) hold each guard; this one shows the path an
agent takes: the vectors the rule weighs come back with the retrieval statement's rows."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from accounts.models import User
from memories.services.account import user_sign_up
from tests.helpers import pat_client, wait_for_job

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]

START = datetime(2026, 3, 2, 18, 30, tzinfo=UTC)


def _chat(client, sessions: list[list[str]]) -> None:
    """Each session's turns saved in order, a session three weeks after the one before."""
    for number, turns in enumerate(sessions):
        session = str(uuid.uuid4())
        for offset, content in enumerate(turns):
            when = START + timedelta(weeks=3 * number, minutes=offset)
            response = client.post(
                "/api/v1/memories",
                {"content": content, "occurred_at": when.isoformat(), "session_id": session},
                format="json",
            )
            assert response.status_code in (200, 201, 202), response.json()
            job = wait_for_job(response.json()["job"]["id"])
            assert job.status == "succeeded", (content, job.error_code, job.error_message)


def _first(client, query: str, at: datetime) -> str:
    response = client.post(
        "/api/v1/operations/recall", {"query": query, "top_k": 5, "at": at.isoformat()}, format="json"
    )
    assert response.status_code == 200, response.json()
    return str(response.json()["memories"][0]["content"])


def test_a_change_said_in_other_words_comes_first_through_rest_and_the_worker():
    user: User = user_sign_up(email="shelter@example.com", password="correct horse battery staple")
    client = pat_client(user)
    now = (
        "User: Long week. They were short of helpers for walking the rescue dogs, so I've taken on"
        " Thursdays as well. Two afternoons a week now."
    )
    _chat(
        client,
        [
            [
                "User: I volunteer at the animal shelter one afternoon a week.",
                "Assistant: That's a lovely way to spend an afternoon.",
            ],
            ["User: What's a good stretch for a stiff neck?", "Assistant: Slow chin tucks help."],
            [now, "Assistant: That's a big commitment, well done."],
            [
                "User: The kittens at the animal shelter are adorable and one of them follows me"
                " around. How young can they be adopted?",
                "Assistant: Usually from about eight weeks.",
            ],
        ],
    )
    asked = START + timedelta(weeks=12)
    assert _first(client, "How often do I volunteer at the animal shelter?", asked) == now
    # Asked about the earlier state, the first value leads.
    then = _first(client, "How often did I volunteer at the animal shelter at first?", asked)
    assert then == "User: I volunteer at the animal shelter one afternoon a week."
