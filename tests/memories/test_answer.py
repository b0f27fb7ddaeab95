"""answer end to end: REST operations endpoint -> recall -> answerer -> checked citations.

The hosted chat model is the one part we cannot run here, so a small OpenAI-compatible HTTP server
on loopback plays it; everything else (worker, database, embeddings, checks) is real.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import jsonschema
import pytest

import memories.operations.core  # noqa: F401 - registers recall and answer
from memories.operations import registry
from memories.retrieval.answer import NO_EVIDENCE
from tests.fake_openai import fake_openai_server
from tests.helpers import assert_bad_request, pat_client
from tests.memories.test_recall import _ids, _recall, _save, e2e

URL = "/api/v1/operations/answer"


def _answer(client, **args) -> dict:
    response = client.post(URL, args, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def _assert_citations_are_retrieved(client, body: dict, question: str, **args) -> None:
    retrieved = set(_ids(_recall(client, query=question, top_k=args.get("top_k", 30), **args)))
    assert set(body["based_on"]) <= retrieved
    assert [source["id"] for source in body["sources"]] == body["based_on"]
    numbers = {int(n) for n in re.findall(r"\[(\d+)\]", body["answer"])}
    assert numbers == set(range(1, len(body["based_on"]) + 1))


class FakeChatModel:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply: Callable[[dict[str, Any]], str] = lambda request: NO_EVIDENCE
        self.status = 200


@pytest.fixture
def chat_model(settings) -> Iterator[FakeChatModel]:
    state = FakeChatModel()

    def respond(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        state.requests.append(body)
        return state.status, {
            "model": "stub-chat-1",
            "choices": [{"message": {"role": "assistant", "content": state.reply(body)}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
        }

    with fake_openai_server(respond) as url:
        settings.LLM_BASE_URL = url
        settings.LLM_MODEL = "stub-chat-1"
        yield state


def _number_of(request: dict[str, Any], needle: str) -> int:
    """The number the service gave the memory containing `needle` in the prompt."""
    prompt = request["messages"][-1]["content"]
    match = re.search(rf"^\[(\d+)\] .*{re.escape(needle)}", prompt, re.MULTILINE)
    assert match, prompt
    return int(match.group(1))


class TestInputRules:
    pytestmark = pytest.mark.django_db

    @pytest.mark.parametrize(
        "body,code,field",
        [
            ({"question": ""}, "value_too_short", "question"),
            ({"question": "   "}, "value_too_short", "question"),
            ({"question": "x" * 4001}, "value_too_long", "question"),
            ({}, "missing_field", "question"),
            ({"question": "x", "top_k": 0}, "value_out_of_range", "top_k"),
            ({"question": "x", "top_k": 51}, "value_out_of_range", "top_k"),
            ({"question": "x", "top_k": True}, "wrong_type", "top_k"),
            ({"question": "x", "max_tokens": 0}, "value_out_of_range", "max_tokens"),
            ({"question": "x", "max_tokens": 4097}, "value_out_of_range", "max_tokens"),
            ({"question": "x", "max_tokens": "100"}, "wrong_type", "max_tokens"),
            ({"question": "x", "max_tokens": False}, "wrong_type", "max_tokens"),
            ({"question": "x", "at": "2024-05-08 14:00"}, "invalid_format", "at"),
            ({"question": "x", "session_id": "abc"}, "invalid_format", "session_id"),
            ({"question": "x", "agent_id": "abc"}, "invalid_format", "agent_id"),
            ({"question": "x", "model": "gpt"}, "unknown_field", None),
        ],
    )
    def test_it_rejects_each_bad_value_with_a_stable_code(self, alice, body, code, field):
        assert_bad_request(pat_client(alice).post(URL, body, format="json"), code, field)

    def test_an_empty_store_gives_the_no_evidence_answer(self, alice):
        body = _answer(pat_client(alice), question="What is my sister's name?", top_k=50, max_tokens=4096)
        assert body["answer"] == NO_EVIDENCE
        assert body["based_on"] == [] and body["sources"] == []
        assert body["model"]["mode"] == "extractive"
        datetime.fromisoformat(body["at"])


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("celery_worker")
class TestExtractiveAnswer:
    def test_every_citation_is_a_retrieved_memory_that_supports_the_answer(self, alice):
        client = pat_client(alice)
        (porto,) = _save(client, "My sister lives in Porto.")
        _save(client, "I keep bees in my garden.")
        _save(client, "My favourite food is ramen.")
        question = "Where does my sister live?"
        body = _answer(client, question=question)
        assert body["based_on"][0] == porto
        assert "Porto" in body["answer"] and "[1]" in body["answer"]
        assert "ramen" not in body["answer"] and "bees" not in body["answer"]
        _assert_citations_are_retrieved(client, body, question)
        assert body["sources"][0]["content"] == "My sister lives in Porto."
        # Bees and ramen have nothing to do with the question: below the relevance floor.
        assert 1 <= body["retrieved"] <= 3
        assert body["usage"]["total_tokens"] == 0
        jsonschema.validate(body, registry.get_operation("answer").output_schema)

    def test_a_question_nothing_supports_gets_the_no_evidence_answer(self, alice):
        client = pat_client(alice)
        _save(client, "I keep bees in my garden.")
        body = _answer(client, question="What is my passport number?")
        assert body["answer"] == NO_EVIDENCE and body["based_on"] == []

    def test_suppressed_memories_are_never_cited(self, alice):
        client = pat_client(alice)
        # A code no time, id or count in the answer can hold by chance ("4711" was once found in a
        # timestamp's microseconds).
        (code,) = _save(client, "My locker code is KX-4711.")
        assert _answer(client, question="What is my locker code?")["based_on"] == [code]
        client.post(f"/api/v1/memories/{code}/suppress", {}, format="json")
        body = _answer(client, question="What is my locker code?")
        assert body["answer"] == NO_EVIDENCE and body["based_on"] == []
        assert "KX-4711" not in json.dumps(body)

    def test_an_outsider_gets_nothing_of_the_owners(self, alice, charlie):
        _save(pat_client(alice), "My locker code is KX-4711.")
        body = _answer(pat_client(charlie), question="What is the locker code?")
        assert body["answer"] == NO_EVIDENCE and body["based_on"] == []
        assert "KX-4711" not in json.dumps(body)

    def test_at_answers_from_what_was_known_then(self, alice):
        client = pat_client(alice)
        (paris,) = _save(client, "I live in Paris.")
        between = datetime.now(UTC).isoformat()
        (berlin,) = _save(client, "I moved to Berlin.")
        now = _answer(client, question="Where do I live?")
        assert now["based_on"] == [berlin]
        then = _answer(client, question="Where do I live?", at=between)
        assert then["based_on"] == [paris] and "Paris" in then["answer"]
        assert then["at"] == datetime.fromisoformat(between).isoformat()
        _assert_citations_are_retrieved(client, then, "Where do I live?", at=between)

    def test_max_tokens_bounds_the_answer(self, alice):
        client = pat_client(alice)
        _save(
            client,
            "My sister lives in Porto, in a blue house by the river with a garden full of lemon trees.",
        )
        body = _answer(client, question="Where does my sister live?", max_tokens=5)
        assert len(body["answer"]) <= 5 * 4 and body["answer"].endswith("[1]")
        assert len(body["based_on"]) == 1

    def test_the_session_filter_and_a_foreign_agent_id_apply_as_in_recall(self, alice):
        client = pat_client(alice)
        session = str(uuid.uuid4())
        _save(client, "My sister lives in Porto.")
        (lisbon,) = _save(client, "My brother lives in Lisbon.", session_id=session)
        body = _answer(
            client, question="Where do my siblings live?", session_id=session, agent_id=str(uuid.uuid4())
        )
        assert body["based_on"] == [lisbon]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("celery_worker")
class TestLLMAnswer:
    def test_it_removes_citations_of_unretrieved_memories_and_unsupported_sentences(self, alice, chat_model):
        client = pat_client(alice)
        (porto,) = _save(client, "My sister lives in Porto.")
        _save(client, "I keep bees in my garden.")
        # Retrieved (it names the sister) but says nothing of where she lives.
        _save(client, "My sister's favourite food is ramen.")

        def reply(request: dict[str, Any]) -> str:
            n = _number_of(request, "Porto")
            return (
                f"Your sister lives in Porto [{n}][9]. She works as an airline pilot [{n}]. "
                "Your sister has a cat named Tom [9]."
            )

        chat_model.reply = reply
        question = "Where does my sister live?"
        body = _answer(client, question=question, max_tokens=200)
        assert body["answer"] == "Your sister lives in Porto [1]."
        assert body["based_on"] == [porto]
        _assert_citations_are_retrieved(client, body, question)
        assert body["checks"] == {
            "citations_checked": 4,
            "citations_removed": 3,
            "sentences_removed": 2,
            "left_out_other_person": 0,
            "conflicts_resolved": 0,
        }
        assert body["model"] == {"mode": "llm", "name": "stub-chat-1"}
        assert body["usage"] == {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
        (request,) = chat_model.requests
        assert request["max_tokens"] == 200 and request["model"] == "stub-chat-1"
        prompt = request["messages"][-1]["content"]
        assert prompt.endswith(f"Question: {question}") and "My sister's favourite food is ramen." in prompt

    def test_citations_written_after_the_full_stop_are_checked_too(self, alice, chat_model):
        client = pat_client(alice)
        (porto,) = _save(client, "My sister lives in Porto.")
        (bees,) = _save(client, "I keep bees in my garden.")
        chat_model.reply = lambda request: (
            f"Your sister lives in Porto. [{_number_of(request, 'Porto')}] "
            f"You also keep bees in your garden. [{_number_of(request, 'bees')}]"
        )
        body = _answer(client, question="Tell me about my sister and my garden")
        assert body["answer"] == "Your sister lives in Porto [1]. You also keep bees in your garden [2]."
        assert body["based_on"] == [porto, bees]

    def test_nothing_supported_gives_the_no_evidence_answer(self, alice, chat_model):
        client = pat_client(alice)
        _save(client, "I keep bees in my garden. My passport is in the desk drawer.")
        chat_model.reply = lambda request: "Your passport number is X1234567 [1]. It expires in 2031 [4]."
        body = _answer(client, question="What is my passport number?")
        assert body["answer"] == NO_EVIDENCE and body["based_on"] == [] and body["sources"] == []
        assert body["checks"]["sentences_removed"] == 2

    def test_an_uncited_answer_is_not_passed_on(self, alice, chat_model):
        client = pat_client(alice)
        _save(client, "My sister lives in Porto.")
        chat_model.reply = lambda request: "Your sister lives in Porto."
        body = _answer(client, question="Where does my sister live?")
        assert body["answer"] == NO_EVIDENCE and body["based_on"] == []

    def test_a_failing_model_falls_back_to_the_extractive_answer(self, alice, chat_model):
        client = pat_client(alice)
        (porto,) = _save(client, "My sister lives in Porto.")
        chat_model.status = 401
        body = _answer(client, question="Where does my sister live?")
        assert body["based_on"] == [porto] and "Porto" in body["answer"]
        assert body["model"]["mode"] == "extractive" and body["model"]["fallback_reason"]

    def test_an_empty_store_does_not_call_the_model(self, alice, chat_model):
        body = _answer(pat_client(alice), question="Where does my sister live?")
        assert body["answer"] == NO_EVIDENCE and chat_model.requests == []


class TestConflicts:
    """What holds now is stated as holding, history as history; another Alex is not my cousin Alex."""

    pytestmark = e2e

    def test_a_changed_preference_is_answered_with_its_history_and_never_the_old_one_as_current(self, alice):
        client = pat_client(alice)
        _save(client, "I prefer tea.")
        _save(client, "Actually I now prefer coffee.")
        body = _answer(client, question="What do I prefer to drink?")
        text = body["answer"]
        assert "Actually I now prefer coffee." in text
        # Tea appears only as what came before.
        assert "before that: \u201cI prefer tea.\u201d" in text
        assert text.count("I prefer tea.") == 1
        _assert_citations_are_retrieved(client, body, "What do I prefer to drink?")

    def test_two_current_memories_that_disagree_are_not_stated_side_by_side(self, alice):
        from memories.models import Memory

        client = pat_client(alice)
        [old] = _save(client, "I like mushrooms.")
        [new] = _save(client, "I don't like mushrooms anymore.")
        # As if the update engine had missed it: both current.
        Memory.objects.filter(id=old).update(superseded_at=None, superseded_by=None, valid_until=None)
        body = _answer(client, question="Do I like mushrooms?")
        assert body["based_on"] == [new]
        assert "I don't like mushrooms anymore." in body["answer"]
        assert "before that: \u201cI like mushrooms.\u201d" in body["answer"]

    def test_the_qualifier_in_the_question_picks_the_person(self, alice):
        client = pat_client(alice)
        [cousin] = _save(client, "My cousin Alex lives in Rome.")
        [colleague] = _save(client, "My colleague Alex lives in Oslo.")
        body = _answer(client, question="Where does my cousin Alex live?")
        assert "Rome" in body["answer"] and "Oslo" not in body["answer"]
        assert colleague not in body["based_on"] and cousin in body["based_on"]
        other = _answer(client, question="Where does my colleague Alex live?")
        assert "Oslo" in other["answer"] and "Rome" not in other["answer"]

    def test_the_llm_answerer_gets_the_same_resolved_memories(self, alice, chat_model):
        client = pat_client(alice)
        _save(client, "My cousin Alex lives in Rome.")
        _save(client, "My colleague Alex lives in Oslo.")
        _save(client, "I prefer tea.")
        _save(client, "Actually I now prefer coffee.")
        _answer(client, question="Where does my cousin Alex live?")
        prompt = chat_model.requests[-1]["messages"][-1]["content"]
        assert "Rome" in prompt and "Oslo" not in prompt
        _answer(client, question="What do I prefer to drink?")
        prompt = chat_model.requests[-1]["messages"][-1]["content"]
        assert "I now prefer coffee. (no longer holds, before that: \u201cI prefer tea.\u201d" in prompt


@pytest.mark.parametrize(
    "claim,evidence,missing",
    [
        ("Your passport number is X1234567.", "My passport is in the desk drawer.", 1),
        ("Your locker code is 4711.", "My locker code is 4711.", 0),
        ("The meeting is at 3pm.", "The meeting is at 3 pm on Friday.", 0),
        ("It expires in 2031.", "My passport expires in 2030.", 1),
        ("Your sister lives in Porto.", "My sister lives in Porto.", 0),
    ],
)
def test_a_claim_must_not_state_a_value_its_evidence_lacks(claim, evidence, missing):
    from memories.retrieval.answer import missing_values

    assert missing_values(claim, evidence) == missing
