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
from memories.pipeline.worker import job_process
from memories.services.memories import remember
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
