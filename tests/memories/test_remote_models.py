"""The optional remote models: an OpenAI-compatible LLM for extraction and an embeddings endpoint.

A hosted LLM is the one third-party service we cannot run here, so a small HTTP
server on loopback plays it, speaking the OpenAI wire format. Everything of
ours is real: the job, the pipeline, the database rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from accounts.caller import ALL_SCOPES, Caller
from memories.models import Memory
from memories.services.memories import remember
from memories.worker.run import job_process
from tests.fake_openai import fake_openai_server

pytestmark = pytest.mark.django_db


class FakeOpenAI:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.chat_answer: str = "{}"
        self.status = 200


@pytest.fixture
def fake_openai() -> Iterator[tuple[str, FakeOpenAI]]:
    state = FakeOpenAI()

    def respond(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        state.requests.append((path, body))
        if path.endswith("/embeddings"):
            data = [
                {"index": i, "embedding": [float((len(text) + i) % 7 + 1)] + [0.5] * 383}
                for i, text in enumerate(body["input"])
            ]
            return state.status, {"data": data}
        return state.status, {"choices": [{"message": {"role": "assistant", "content": state.chat_answer}}]}

    with fake_openai_server(respond) as url:
        yield url, state


def _job(user, content: str):
    caller = Caller(user=user, scopes=ALL_SCOPES)
    return remember(caller=caller, content=content)


class TestLLMExtraction:
    def test_it_stores_the_models_memories_as_the_same_rows(self, alice, settings, fake_openai):
        url, state = fake_openai
        settings.LLM_BASE_URL = url
        state.chat_answer = json.dumps(
            {
                "memories": [
                    {
                        "content": "The user lives in Porto.",
                        "kind": "fact",
                        "valid_from": "2024-01-01T00:00:00+00:00",
                        "entities": [{"name": "Porto", "type": "Location"}],
                        "tags": ["home"],
                        "slot": "user:lives_in",
                        "slot_value": "porto",
                    }
                ]
            }
        )
        job = _job(alice, "btw I live in Porto these days")
        job_process(job_id=job.id)
        memory = Memory.objects.get(owner=alice)
        assert (memory.content, memory.kind, memory.slot, memory.tags) == (
            "The user lives in Porto.",
            "fact",
            "user:lives_in",
            ["home"],
        )
        assert [e.name for e in memory.entities.all()] == ["Porto"]
        assert memory.embedding is not None
        path, request = state.requests[0]
        assert (
            path.endswith("/chat/completions") and "btw I live in Porto" in request["messages"][1]["content"]
        )

    def test_it_falls_back_to_the_rules_when_the_answer_is_unusable(self, alice, settings, fake_openai):
        url, state = fake_openai
        settings.LLM_BASE_URL = url
        state.chat_answer = "Sure! Here are your memories: ..."
        job = _job(alice, "I live in Porto.")
        job_process(job_id=job.id)
        job.refresh_from_db()
        assert job.status == "succeeded"
        assert Memory.objects.get(owner=alice).content == "I live in Porto."

    def test_a_rejected_request_fails_the_job_with_a_stable_code(self, alice, settings, fake_openai):
        from memories.outbound import OutboundError
        from memories.tasks import process_job

        url, state = fake_openai
        settings.LLM_BASE_URL = url
        state.status = 401
        job = _job(alice, "I live in Porto.")
        with pytest.raises(OutboundError):
            job_process(job_id=job.id)
        process_job.apply(args=[str(job.id)])  # the task maps it to a permanent failure
        job.refresh_from_db()
        assert job.status == "failed" and job.error_code == "remote_service_error"
        assert "127.0.0.1" not in job.error_message and "401" not in job.error_message


class TestRemoteEmbeddings:
    def test_it_embeds_through_the_endpoint_and_normalises(self, alice, settings, fake_openai):
        url, state = fake_openai
        settings.EMBEDDINGS_URL = url
        job = _job(alice, "I keep bees.")
        job_process(job_id=job.id)
        memory = Memory.objects.get(owner=alice)
        norm = sum(x * x for x in memory.embedding) ** 0.5
        assert abs(norm - 1.0) < 1e-5
        assert state.requests[0][0].endswith("/embeddings")


class TestLLMJudgement:
    """With LLM_BASE_URL, the model judges the update engine's pairs; the rules answer otherwise."""

    @pytest.fixture
    def chat(self, settings):
        self.judge_answer = json.dumps({"decisions": []})
        self.judge_status = 200
        self.judge_requests: list[dict[str, Any]] = []

        def respond(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            system = body["messages"][0]["content"]
            if "consistent" in system:
                self.judge_requests.append(body)
                content = self.judge_answer
                return self.judge_status, {
                    "choices": [{"message": {"role": "assistant", "content": content}}]
                }
            text = body["messages"][1]["content"].split("\n\n", 1)[1]
            row = {"content": text, "kind": "fact", "entities": [], "tags": [], "slot": "", "slot_value": ""}
            memories = json.dumps({"memories": [row]})
            return 200, {"choices": [{"message": {"role": "assistant", "content": memories}}]}

        with fake_openai_server(respond) as judge_url:
            settings.LLM_BASE_URL = judge_url
            yield

    def _save(self, user, content: str) -> Memory:
        job = _job(user, content)
        job_process(job_id=job.id)
        job.refresh_from_db()
        assert job.status == "succeeded", (job.error_code, job.error_message)
        return Memory.objects.get(job=job)

    def test_the_models_update_supersedes_what_the_rules_would_keep(self, alice, chat):
        tea = self._save(alice, "I drink tea every morning.")
        self.judge_answer = json.dumps({"decisions": [{"statement": 1, "memory": 1, "decision": "update"}]})
        coffee = self._save(alice, "Mornings are for coffee now.")
        tea.refresh_from_db()
        assert tea.superseded_by_id == coffee.id
        prompt = self.judge_requests[-1]["messages"][1]["content"]
        assert (
            "NEW 1: Mornings are for coffee now." in prompt
            and "memory 1: I drink tea every morning." in prompt
        )

    def test_the_models_same_is_evidence_not_a_new_row(self, alice, chat):
        first = self._save(alice, "I keep bees.")
        self.judge_answer = json.dumps({"decisions": [{"statement": 1, "memory": 1, "decision": "same"}]})
        job = _job(alice, "Beekeeping is my hobby.")
        job_process(job_id=job.id)
        assert list(Memory.objects.filter(owner=alice)) == [first]
        assert first.evidence.count() == 2

    @pytest.mark.parametrize(
        "answer,status", [("not json at all", 200), ('{"decisions": "x"}', 200), ("{}", 400)]
    )
    def test_an_unusable_or_failed_judgement_leaves_it_to_the_rules(self, alice, chat, answer, status):
        liked = self._save(alice, "I like mushrooms.")
        self.judge_answer, self.judge_status = answer, status
        denied = self._save(alice, "I don't like mushrooms anymore.")
        liked.refresh_from_db()
        assert liked.superseded_by_id == denied.id
        assert self.judge_requests

    def test_a_decision_about_a_memory_it_was_not_shown_is_ignored(self, alice, chat):
        first = self._save(alice, "I keep bees.")
        self.judge_answer = json.dumps({"decisions": [{"statement": 1, "memory": 7, "decision": "update"}]})
        self._save(alice, "I keep bees and two goats.")
        first.refresh_from_db()
        # The rules judged it: the fuller statement replaces the one it contains.
        assert first.superseded_at is not None
