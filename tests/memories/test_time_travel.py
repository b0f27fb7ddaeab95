"""Time travel: `at` is world time, for history imported today with its own dates and for live saves.

Every reader is asked the same questions: the REST list, recall and answer (REST operations), the
graph profile's get_context and the evidence profile's facts_context (through the operations
registry, the code every MCP tool call runs). `known_at` is the separate system-time question.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from accounts.caller import ALL_SCOPES, Caller
from memories.models import Memory
from memories.operations.registry import run
from tests.helpers import pat_client, wait_for_job

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]


def _save(client, content: str, **extra) -> list[Memory]:
    response = client.post("/api/v1/memories", {"content": content, **extra}, format="json")
    assert response.status_code in (201, 202), response.json()
    job = wait_for_job(response.json()["job"]["id"])
    assert job.status == "succeeded", (job.error_code, job.error_message)
    return list(Memory.objects.filter(job=job))


def _listed(client, **params) -> list[str]:
    response = client.get("/api/v1/memories", params)
    assert response.status_code == 200, response.json()
    return [m["content"] for m in response.json()["results"]]


def _recalled(client, query: str, **args) -> list[str]:
    response = client.post("/api/v1/operations/recall", {"query": query, **args}, format="json")
    assert response.status_code == 200, response.json()
    return [hit["content"] for hit in response.json()["memories"]]


def _answered(client, query: str, **args) -> dict:
    response = client.post("/api/v1/operations/answer", {"question": query, **args}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def _facts(user, query: str, **args) -> list[str]:
    result = run("facts_context", Caller(user=user, scopes=ALL_SCOPES), {"query": query, **args})
    return [fact["content"] for fact in result["facts"]]


def _context(user, name: str, **args) -> list[str]:
    result = run("get_context", Caller(user=user, scopes=ALL_SCOPES), {"entity_name": name, **args})
    return [m["content"] for m in result["memories"]]


IMPORTED = datetime(2024, 3, 1, 18, 0, tzinfo=UTC)


class TestImportedHistory:
    """A conversation from 2024 imported today: its own dates are its world time."""

    def test_every_reader_answers_about_its_own_past(self, alice):
        client = pat_client(alice)
        _save(client, "I live in Lisbon.", occurred_at=IMPORTED.isoformat())
        _save(client, "I'm planning a trip to Kyoto.", occurred_at=IMPORTED.isoformat())
        _save(client, "I live in Porto.", occurred_at=(IMPORTED + timedelta(days=60)).isoformat())
        march = (IMPORTED + timedelta(days=1)).isoformat()
        june = (IMPORTED + timedelta(days=90)).isoformat()
        before = (IMPORTED - timedelta(days=1)).isoformat()

        assert any("Lisbon" in c for c in _listed(client, at=march))
        assert not any("Porto" in c for c in _listed(client, at=march))
        assert _listed(client, at=before) == []
        assert any("Porto" in c for c in _listed(client, at=june))
        assert not any("Lisbon" in c for c in _listed(client))

        assert any("Lisbon" in c for c in _recalled(client, "where do I live", at=march))
        assert not any("Porto" in c for c in _recalled(client, "where do I live", at=march))
        assert any("Porto" in c for c in _recalled(client, "where do I live"))

        answer = _answered(client, "Where do I live?", at=march)
        assert "Lisbon" in answer["answer"] and "Porto" not in answer["answer"]
        assert "Porto" in _answered(client, "Where do I live?")["answer"]

        assert any("Lisbon" in c for c in _facts(alice, "where do I live", at=march))
        assert not any("Porto" in c for c in _facts(alice, "where do I live", at=march))
        # What the service knew on that 2024 day: nothing, it was imported today.
        assert _facts(alice, "where do I live", known_at=march) == []

        assert any("Lisbon" in c for c in _context(alice, "Lisbon", at=march))
        assert _context(alice, "Porto", at=june)

    def test_a_plan_imported_with_its_date_holds_from_that_date(self, alice):
        client = pat_client(alice)
        [plan] = _save(client, "I'm going to learn to sail next summer.", occurred_at=IMPORTED.isoformat())
        assert plan.kind == "foresight" and plan.stated_at == IMPORTED
        assert "I'm going to learn to sail next summer." in _listed(
            client, at=(IMPORTED + timedelta(days=2)).isoformat()
        )
        assert _listed(client, at=(IMPORTED - timedelta(days=2)).isoformat()) == []

    def test_an_older_conversation_imported_later_does_not_replace_the_newer_one(self, alice):
        client = pat_client(alice)
        _save(client, "I work at Stripe.", occurred_at=(IMPORTED + timedelta(days=200)).isoformat())
        _save(client, "I work at Shopify.", occurred_at=IMPORTED.isoformat())
        assert [c for c in _listed(client) if "work" in c] == ["I work at Stripe."]
        then = (IMPORTED + timedelta(days=10)).isoformat()
        assert [c for c in _listed(client, at=then) if "work" in c] == ["I work at Shopify."]


class TestDatedChanges:
    def test_a_move_dated_last_month_replaces_a_home_stated_during_that_month(self, alice):
        client = pat_client(alice)
        said_paris = datetime(2024, 3, 10, 12, 0, tzinfo=UTC)
        [paris] = _save(client, "I live in Paris.", occurred_at=said_paris.isoformat())
        [berlin] = _save(
            client, "I moved to Berlin last month.", occurred_at=(said_paris + timedelta(days=30)).isoformat()
        )
        paris.refresh_from_db()
        berlin.refresh_from_db()
        assert paris.superseded_by_id == berlin.id and berlin.superseded_at is None
        assert berlin.starts_by is not None
        assert paris.valid_until is not None and said_paris < paris.valid_until < berlin.starts_by
        assert _recalled(client, "where do I live")[0] == "I moved to Berlin last month."
        assert "I live in Paris." in _listed(client, at=(said_paris + timedelta(days=1)).isoformat())
        assert "I moved to Berlin last month." in _listed(
            client, at=datetime(2024, 4, 5, tzinfo=UTC).isoformat()
        )
        [earlier] = client.get(f"/api/v1/memories/{berlin.id}").json()["history"]
        assert earlier["id"] == str(paris.id) and earlier["superseded_by"] == str(berlin.id)
        assert earlier["valid_until"] == paris.valid_until.isoformat()
        assert earlier["valid_from"] == said_paris.isoformat() and earlier["source_id"] == str(
            paris.source_id
        )

    def test_live_saves_travel_by_the_time_they_were_said(self, alice):
        client = pat_client(alice)
        _save(client, "I prefer tea.")
        between = timezone.now()
        _save(client, "Actually I now prefer coffee.")
        assert [c for c in _listed(client) if "prefer" in c] == ["Actually I now prefer coffee."]
        assert [c for c in _listed(client, at=between.isoformat()) if "prefer" in c] == ["I prefer tea."]
        known = _listed(client, known_at=between.isoformat())
        assert [c for c in known if "prefer" in c] == ["I prefer tea."]
        assert _recalled(client, "what do I like to drink")[0] == "Actually I now prefer coffee."
