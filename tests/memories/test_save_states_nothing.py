"""A save whose text states nothing (punctuation, symbols, emoji, a speaker's name with nothing said)
is refused when it is saved, with the one error shape, and writes nothing: it used to be accepted
and end as a failed job, `nothing_to_remember` (4 of 8,736 LoCoMo turns, issue 44). The worker's
segmenter decides, at the save (memories.services.memories._check_content)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memories.dashboard.forms import NoteForm
from memories.models import Job, Source
from tests.helpers import error_of, pat_client

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("no_worker_broker")]

STATES_NOTHING = ["...", ":)", "!!! ??? ***", "\U0001f602\U0001f602", "Caroline:", "Melanie:   ", "- -"]


@pytest.mark.parametrize("content", STATES_NOTHING)
@pytest.mark.parametrize("path", ["/api/v1/memories", "/api/v1/operations/remember"])
def test_text_that_states_nothing_is_refused_at_the_save(alice, path, content):
    response = pat_client(alice).post(path, {"content": content}, format="json")
    assert response.status_code == 422, response.json()
    error = error_of(response)
    assert error["code"] == "nothing_to_remember" and error["details"] == {"field": "content"}
    assert error["retryable"] is False and "words" in error["agent_action"]
    assert not Source.objects.exists() and not Job.objects.exists()


@pytest.mark.parametrize("content", ["ok", "Caroline: yes.", "Hi!", "lol"])
def test_a_few_words_are_still_a_save(alice, content):
    response = pat_client(alice).post("/api/v1/memories", {"content": content}, format="json")
    assert response.status_code == 202, response.json()
    assert Job.objects.filter(owner=alice, status=Job.Status.QUEUED).count() == 1


def test_the_dashboard_says_why_on_the_form(alice, client):
    client.force_login(alice)
    space = NoteForm(owner=alice).fields["space"].initial
    response = client.post(reverse("dashboard:save"), {"content": "Caroline:", "space": space})
    assert response.status_code in (400, 422)
    assert "states nothing to remember" in response.content.decode()
    assert not Job.objects.exists()
