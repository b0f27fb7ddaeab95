"""Recall returns its hits' rows from the retrieval statement itself: the same hits, in the same
order, with the same scores, rendered exactly as the memory selectors render them, in one
statement, and without leaving its HNSW settings on the pooled connection."""

from __future__ import annotations

import hashlib
import uuid
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from memories import embeddings
from memories.models import Entity, Evidence, Memory, Source, Space
from memories.representations import hit_dict
from memories.retrieval import recall
from memories.retrieval.recall import (
    DEFAULT_KNOBS,
    Hit,
    RecallRequest,
    _params,
    _statement,
    _vector_literal,
    matched_words,
    memory_recall,
    newest_said_first,
    query_periods,
)
from memories.selectors.memories import STATUS_ALL, memory_search_list
from memories.services.spaces import space_create_default
from tests.helpers import link, oauth_app

pytestmark = pytest.mark.django_db

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)


def _source(owner, space: Space, content: str, **fields) -> Source:
    return Source.objects.create(
        owner=owner,
        space=space,
        origin=fields.pop("origin", "remember"),
        content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
        **fields,
    )


def _space(owner, texts: list[str]) -> Space:
    """A space with a bit of everything recall renders: sessions (so context neighbours score),
    entities, several claimants, a picture, an agent, pins, tags, a superseded memory."""
    space = space_create_default(owner=owner)
    agent = oauth_app("Notes agent", user=owner)
    session = uuid.uuid4()
    people = {
        name: Entity.objects.create(
            owner=owner, space=space, name=name, normalized_name=name.lower(), type="Person"
        )
        for name in ("Maya", "Tomas", "Aiko")
    }
    rows = []
    for i, (text, vector) in enumerate(zip(texts, embeddings.embed(texts), strict=True)):
        said = NOW - timedelta(days=40) + timedelta(minutes=i)
        source = _source(
            owner,
            space,
            text,
            session_id=session if i % 3 else None,
            agent=agent if i % 4 == 0 else None,
            recorded_at=said,
        )
        memory = Memory.objects.create(
            owner=owner,
            space=space,
            source=source,
            session_id=source.session_id,
            agent=source.agent,
            kind=("fact", "episode", "foresight")[i % 3],
            content=text,
            embedding=vector,
            tags=["travel"] if i % 2 else ["work", "travel"],
            pinned=i % 7 == 0,
            occurred_at=said - timedelta(days=i % 5),
            recorded_at=said,
            span_start=0 if i % 2 else None,
            span_end=len(text) if i % 2 else None,
        )
        Evidence.objects.create(owner=owner, source=source, memory=memory, recorded_at=said)
        link(memory, *[entity for name, entity in people.items() if name in text])
        rows.append(memory)
    # A second claimant for one memory, a picture that said another again.
    again = _source(owner, space, "Maya said it too", claimant="agent:other")
    Evidence.objects.create(owner=owner, source=again, memory=rows[1], recorded_at=NOW)
    picture = _source(owner, space, "a photo", origin=Source.Origin.IMAGE, image_name="photo.png")
    Evidence.objects.create(owner=owner, source=picture, memory=rows[2], recorded_at=NOW)
    # Superseded ten days ago: absent from the current view, present at a time before that.
    Memory.objects.filter(id=rows[3].id).update(superseded_at=NOW - timedelta(days=10))
    return space


TEXTS = [
    "Maya moved to Lisbon last spring and loves the light there.",
    "Maya works at Spotify as a designer.",
    "Tomas and I went hiking near Porto on Saturday.",
    "My favourite food is ramen, especially in Osaka.",
    "Aiko is allergic to peanuts.",
    "Remind me to call Tomas about the Atlas project next Monday.",
    "I had dinner with Maya at a small place in Lisbon.",
    "The Atlas project deadline moved to 14 June.",
    "Aiko lives in Kyoto and is learning pottery.",
    "We booked a trip to Oslo in August to go kayaking.",
    "I bought a new tent for camping from a shop in Berlin.",
    "The meeting with Nokia about Beacon went well; Tomas presented.",
    "I prefer cycling over running on weekends.",
    "Maya and I went to a concert in Vienna in May.",
    "I plan to start yoga lessons with Aiko in September.",
    "Tomas is a nurse at the hospital in Porto.",
]


REQUESTS = [
    RecallRequest(query="Where does Maya live?"),
    RecallRequest(query="What did I do with Tomas?", top_k=3),
    RecallRequest(query="Atlas project deadline", kinds=["foresight", "fact"], tags=["travel"]),
    RecallRequest(query="Tell me about Aiko", expand_entities=True),
    RecallRequest(query="favourite food", at=NOW - timedelta(days=20)),
    RecallRequest(query="ramen Osaka", at=NOW - timedelta(days=20), include_history=True),
    RecallRequest(query="When did I go to Vienna in May 2024?"),
]


def _statement_then_orm(owner, space: Space, request: RecallRequest) -> list[tuple]:
    """Recall as it was: the retrieval statement alone, then the rows through the memory selector."""
    now = NOW
    vector = embeddings.embed([request.query])[0]
    periods = query_periods(request.query, reference=request.at or now)
    params = _params(
        owner=owner,
        space=space,
        request=request,
        knobs=DEFAULT_KNOBS,
        periods=periods,
        now=now,
    )
    params["qvec"] = _vector_literal(vector)
    ef_search = max(DEFAULT_KNOBS.ef_search, params["vector_pool"], DEFAULT_KNOBS.expansion_pool)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
            " set_config('hnsw.ef_search', %s, true)",
            [str(ef_search)],
        )
        cursor.execute(
            _statement(request, has_periods=bool(periods), with_vectors=params["vectors_window"] > 0), params
        )
        # (score, similarity, held, by_person, vector), then the memory's stored columns, the primary
        # key first.
        ranked = [(row[5], row[0], row[1], row[2], row[3], row[4]) for row in cursor.fetchall()]
    rows = {
        memory.id: memory
        for memory in memory_search_list(owner=owner, status=STATUS_ALL, include_superseded=True).filter(
            id__in=[row[0] for row in ranked]
        )
    }
    hits = [
        Hit(
            memory=rows[memory_id],
            score=float(score),
            similarity=float(similarity),
            matched_words=matched_words(rows[memory_id].content, params["words"]),
            held=bool(held),
        )
        for memory_id, score, similarity, held, _, _ in ranked
    ]
    by_person = [bool(row[4]) for row in ranked]
    vectors = {row[0]: row[5] for row in ranked if row[5] is not None}
    hits = newest_said_first(hits, by_person, request.query, DEFAULT_KNOBS, periods=periods, vectors=vectors)
    hits = hits[: request.top_k]
    return [(hit.memory.id, hit.score, hit.similarity, hit.held, hit_dict(hit)) for hit in hits]


def _recalled(owner, space: Space, request: RecallRequest, *, text_apart: bool | None = None) -> list[tuple]:
    """memory_recall's hits. With `text_apart` True the query is new to the model, so the text side
    runs as a statement of its own while the model embeds it; with False the query's vector is
    cached and the text side is part of the retrieval statement. Either is checked."""
    if text_apart is not None:
        embeddings.query_cache_clear()
        if not text_apart:
            embeddings.embed_query(request.query)
    with CaptureQueriesContext(connection) as captured:
        hits = memory_recall(owner=owner, space=space, request=request).hits
    if text_apart is not None:
        text_statements = [q for q in captured.captured_queries if "text_ranked" in q["sql"]]
        assert len(text_statements) == (2 if text_apart else 1)
    return [(hit.memory.id, hit.score, hit.similarity, hit.held, hit_dict(hit)) for hit in hits]


class TestSameResults:
    @pytest.mark.parametrize("request_index", range(len(REQUESTS)))
    def test_it_returns_the_statements_hits_in_its_order_with_its_scores(self, alice, request_index):
        space = _space(alice, TEXTS)
        request = REQUESTS[request_index]
        # Frozen: both runs see the same "now" (the current view) and sign the same image links.
        with time_machine.travel(NOW, tick=False):
            before = _statement_then_orm(alice, space, request)
            apart = _recalled(alice, space, request, text_apart=True)
            inline = _recalled(alice, space, request, text_apart=False)
        assert before, "the fixture space must give this request some hits"
        for after in (apart, inline):
            assert [row[:4] for row in after] == [row[:4] for row in before]
            assert [row[4] for row in after] == [row[4] for row in before]

    def test_it_renders_entities_claimants_pictures_and_agents_as_the_selectors_do(self, alice):
        space = _space(alice, TEXTS)
        with time_machine.travel(NOW, tick=False):
            rendered = {
                row[0]: row[4] for row in _recalled(alice, space, RecallRequest(query="Maya", top_k=50))
            }
        by_content = {data["content"]: data for data in rendered.values()}
        # The fixture's special rows are among the hits, so the comparison above covers them.
        assert by_content[TEXTS[1]]["evidence_count"] == 2
        assert by_content[TEXTS[0]]["provenance"]["agent"]["name"] == "Notes agent"
        assert [e["name"] for e in by_content[TEXTS[13]]["entities"]] == ["Maya"]
        with time_machine.travel(NOW, tick=False):
            tomas = {
                row[4]["content"]: row[4]
                for row in _recalled(alice, space, RecallRequest(query="hiking Porto"))
            }
        assert "image_url" in tomas[TEXTS[2]]

    def test_it_never_returns_or_links_another_owners_rows(self, alice, bob):
        space = _space(alice, TEXTS)
        bobs = _space(bob, TEXTS)
        # Bob's entity linked to Alice's memory: the database refuses the link (its foreign keys join
        # on the owner, migration 0029), and recall shows no entity of his either.
        stray = Entity.objects.create(
            owner=bob, space=bobs, name="Maya B", normalized_name="maya b", type="Person"
        )
        with pytest.raises(IntegrityError), transaction.atomic():
            link(Memory.objects.get(owner=alice, content=TEXTS[0]), stray)
            connection.cursor().execute("SET CONSTRAINTS ALL IMMEDIATE")
        hits = memory_recall(owner=alice, space=space, request=RecallRequest(query="Maya Lisbon")).hits
        assert hits
        assert {hit.memory.owner_id for hit in hits} == {alice.pk}
        assert all(entity.owner_id == alice.pk for hit in hits for entity in hit.memory.entities.all())
        assert stray.id not in {entity.id for hit in hits for entity in hit.memory.entities.all()}


class TestOneStatement:
    @pytest.mark.parametrize("query_is_new", [False, True], ids=["vector cached", "new query"])
    def test_it_renders_the_hits_without_another_query(self, alice, query_is_new):
        space = _space(alice, TEXTS)
        embeddings.query_cache_clear()
        if not query_is_new:
            embeddings.embed_query("Maya")
        with CaptureQueriesContext(connection) as captured:
            hits = memory_recall(owner=alice, space=space, request=RecallRequest(query="Maya", top_k=50)).hits
            rendered = [hit_dict(hit) for hit in hits]
        assert len(rendered) >= 5
        # A new query's text side runs as a statement of its own, while the model embeds the query.
        assert len(captured.captured_queries) == (2 if query_is_new else 1)

    def test_a_new_query_takes_one_statement_while_another_recall_runs(self, alice):
        """Under load the cores are busy anyway: a recall overlaps only when it is alone."""
        space = _space(alice, TEXTS)
        embeddings.query_cache_clear()
        request = RecallRequest(query="Maya", top_k=50)
        with recall._alone() as alone:  # another recall, running in this process
            assert alone
            with CaptureQueriesContext(connection) as busy:
                during = memory_recall(owner=alice, space=space, request=request).hits
        assert len(busy.captured_queries) == 1
        assert embeddings.query_cache_info()["misses"] == 1  # it embedded the query all the same
        embeddings.query_cache_clear()
        with CaptureQueriesContext(connection) as idle:
            alone_hits = memory_recall(owner=alice, space=space, request=request).hits
        assert len(idle.captured_queries) == 2
        assert [(h.memory.id, h.score) for h in during] == [(h.memory.id, h.score) for h in alone_hits]


@pytest.mark.django_db(transaction=True)
class TestSettingsEndWithTheStatement:
    def test_it_leaves_no_hnsw_setting_on_the_connection(self, alice):
        space = _space(alice, TEXTS)
        with connection.cursor() as cursor:
            cursor.execute("SHOW hnsw.ef_search")
            before = cursor.fetchone()[0]
            assert connection.get_autocommit()
            hits = memory_recall(
                owner=alice, space=space, request=RecallRequest(query="Where does Maya live?")
            ).hits
            cursor.execute("SHOW hnsw.ef_search")
            after = cursor.fetchone()[0]
            cursor.execute("SHOW hnsw.iterative_scan")
            scan = cursor.fetchone()[0]
        assert hits
        assert before != str(max(DEFAULT_KNOBS.ef_search, DEFAULT_KNOBS.vector_pool))
        assert after == before
        assert scan == "off"


class TestAChangeBetweenTheTwoStatements:
    def test_a_memory_suppressed_while_the_model_runs_counts_for_nothing(self, alice, monkeypatch):
        """A new query's text side is read a moment before the retrieval statement, in another
        snapshot. A memory suppressed in between must neither come back nor lift the others (its
        score would spread to its conversation's neighbours): the hits are those of a recall run
        after the change, in the same order."""
        space = _space(alice, TEXTS)
        request = RecallRequest(query="Atlas project deadline Lisbon", top_k=20)
        # The best text match of the query, and the memory suppressed in the middle.
        gone = Memory.objects.get(content="The Atlas project deadline moved to 14 June.")
        vector = embeddings.embed_query(request.query)
        embeddings.query_cache_clear()
        real_soon = embeddings.embed_query_soon

        class ChangedWhileEmbedding(Future):
            def result(self, timeout=None):
                Memory.objects.filter(id=gone.id).update(status=Memory.Status.SUPPRESSED)
                return vector

        def soon(text: str) -> Future:
            assert text == request.query
            return ChangedWhileEmbedding()  # not done: the text side runs on its own first

        with time_machine.travel(NOW, tick=False):
            monkeypatch.setattr(embeddings, "embed_query_soon", soon)
            with CaptureQueriesContext(connection) as captured:
                during = _recalled(alice, space, request)
            monkeypatch.setattr(embeddings, "embed_query_soon", real_soon)
            after = _recalled(alice, space, request, text_apart=False)
        assert len([q for q in captured.captured_queries if "text_ranked" in q["sql"]]) == 2
        assert gone.id not in [row[0] for row in during]
        # The same memories in the same order. Not the same scores to the last digit: the text
        # side's ranks and IDF sample were read before the change.
        assert [row[0] for row in during] == [row[0] for row in after]


class TestAwkwardQueriesOnBothPaths:
    """Queries whose text side is empty or odd go through the two-statement path (a new query) and
    the one-statement path (a cached vector) alike: no error, the same hits."""

    @pytest.mark.parametrize(
        "query",
        [
            "the and of what when",  # stop words only: no text terms at all
            "?!... --- ***",  # no words
            "Maya Maya MAYA maya",  # one word, repeated
            "O'Brien's co-op café naïve",  # apostrophes, hyphens, accents
            "zzqxv flibbertigibbet",  # words no memory has
            "Lisbon " * 40,  # more words than a query keeps
        ],
        ids=["stop words", "punctuation", "repeated", "odd words", "unknown words", "long"],
    )
    def test_both_paths_agree(self, alice, query):
        space = _space(alice, TEXTS)
        request = RecallRequest(query=query, top_k=20)
        with time_machine.travel(NOW, tick=False):
            apart = _recalled(alice, space, request, text_apart=True)
            inline = _recalled(alice, space, request, text_apart=False)
        assert [row[:4] for row in apart] == [row[:4] for row in inline]
