"""A save's statements are embedded while the rules run: the worker learns their words first
(extract_contents), embeds them on another thread, and stores the vectors of exactly those words."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from accounts.caller import ALL_SCOPES, Caller
from memories import embeddings
from memories.models import Job, Memory
from memories.pipeline.extract import extract, extract_contents
from memories.services.memories import remember
from memories.worker.run import job_process

# Notes as people and agents save them: one statement or several, a conversation's turns, a date
# stated at the start, a tags line, lists, stray spaces, a question, Markdown, text with no words.
TEXTS = [
    "I live in Porto.",
    "I live in Porto. My cat is Tom.",
    "  I moved to Lisbon last month and I love the coffee there.  ",
    "- I live in Porto\n- My cat is Tom\n- I work at Acme",
    "I live in Porto.\n\nMy cat is Tom and my dog is Rex.",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Wow, love that painting! So cool you found such a helpful group. What's it done for you? ",
    "Caroline: Hey Mel!\nMelanie: Hi Caroline, how was the weekend?\nCaroline: Great, I went hiking.",
    "On 8 May 2023: we signed the lease. The rent is 900 euros.",
    "2023-05-08: Dinner with Priya at Nando's.",
    "Remind me to call Jonas about the finance budget next Friday.\ntags: work, calls",
    "Did I tell you that my sister Lena is getting married next June in Oslo?",
    "| Book | Author |\n|---|---|\n| Dune | Herbert |",
    "```\npip install deeprecall\n```\nThat is how I installed it.",
    "I prefer window seats; my partner prefers the aisle. We fly to Osaka in March.",
    "...",
    "ok",
]
REFERENCE = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


class TestExtractContents:
    @pytest.mark.parametrize("text", TEXTS)
    def test_the_words_are_those_of_the_rules_candidates_whatever_the_space_knows(self, text):
        contents = extract_contents(text, reference=REFERENCE)
        for known, kind in [
            (frozenset(), None),
            (frozenset({"Porto", "Tom", "Lena"}), "fact"),
            (frozenset(), "plan"),
        ]:
            _, candidates = extract(text, reference=REFERENCE, known=known, kind=kind)
            if contents is None:
                # Markdown: the document reader splits it, and the worker embeds after the rules.
                assert text.startswith(("|", "```"))
            else:
                assert contents == [c.content for c in candidates]

    def test_several_statements_are_several_contents(self):
        assert extract_contents("I live in Porto. My cat is Tom.", reference=REFERENCE) == [
            "I live in Porto.",
            "My cat is Tom.",
        ]


class TestTheWorker:
    def test_a_saves_statements_are_embedded_once_on_another_thread_and_stored(
        self, alice, no_worker_broker, monkeypatch
    ):
        calls: list[tuple[list[str], threading.Thread]] = []
        real_embed = embeddings.embed

        def embed(texts: list[str]) -> list[list[float]]:
            calls.append((list(texts), threading.current_thread()))
            return real_embed(texts)

        monkeypatch.setattr(embeddings, "embed", embed)
        text = "I live in Porto. My cat is Tom. I work at Acme."
        job = remember(caller=Caller(user=alice, scopes=ALL_SCOPES), content=text)
        job_process(job_id=job.id)
        job.refresh_from_db()
        assert job.status == Job.Status.SUCCEEDED
        stored = {m.content: np.asarray(m.embedding) for m in Memory.objects.filter(job=job)}
        assert sorted(stored) == ["I live in Porto.", "I work at Acme.", "My cat is Tom."]
        # One model call, for the three statements, not on the job's own thread.
        assert [texts for texts, _ in calls] == [["I live in Porto.", "My cat is Tom.", "I work at Acme."]]
        assert calls[0][1] is not threading.current_thread()
        for content, vector in stored.items():
            assert np.allclose(vector, real_embed([content])[0], atol=1e-6)

    def test_a_document_is_embedded_after_its_rules(self, alice, no_worker_broker, monkeypatch):
        from memories.services.documents import document_ingest

        threads: list[Any] = []
        real_embed = embeddings.embed

        def embed(texts: list[str]) -> list[list[float]]:
            threads.append(threading.current_thread())
            return real_embed(texts)

        monkeypatch.setattr(embeddings, "embed", embed)
        _, job, _ = document_ingest(
            caller=Caller(user=alice, scopes=ALL_SCOPES),
            filename="notes.md",
            data=b"# Notes\n\n- I live in Porto.\n- My cat is Tom.\n",
        )
        job_process(job_id=job.id)
        job.refresh_from_db()
        assert job.status == Job.Status.SUCCEEDED
        assert threads == [threading.current_thread()]
