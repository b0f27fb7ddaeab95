"""A recall whose filters keep few memories ranks them by exact distance instead of walking the
HNSW index (memories.retrieval.recall.EXACT_VECTOR_ROWS): the same hits, chosen on the planner's
estimate of the rows the filters keep."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.retrieval import recall
from memories.retrieval.recall import DEFAULT_KNOBS, RecallRequest, _params, memory_recall, query_periods
from tests.memories.test_recall_rows import NOW, TEXTS, _space

pytestmark = pytest.mark.django_db


def _exact(owner, space, request: RecallRequest) -> bool:
    params = _params(
        owner=owner,
        space=space,
        request=request,
        knobs=DEFAULT_KNOBS,
        periods=query_periods(request.query, reference=NOW),
        now=NOW,
    )
    return recall._ranks_vectors_exactly(request, params)


def _analysed() -> None:
    # The decision rests on the planner's estimate, which needs the table's statistics.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")


def test_only_a_selective_filter_takes_the_exact_ranking(alice, monkeypatch):
    space = _space(alice, TEXTS)
    _analysed()
    with time_machine.travel(NOW, tick=False):
        assert _exact(alice, space, RecallRequest(query="Maya", tags=["work"])) is True
        assert _exact(alice, space, RecallRequest(query="Maya", kinds=["fact"])) is True
        # The current view, unfiltered: the space's own size decides, in the planner, as before.
        assert _exact(alice, space, RecallRequest(query="Maya")) is False
        # A time when few memories had started, or little had been recorded.
        assert _exact(alice, space, RecallRequest(query="Maya", at=NOW - timedelta(days=39))) is True
        assert (
            _exact(alice, space, RecallRequest(query="Maya", at=NOW, known_at=NOW - timedelta(days=39)))
            is True
        )
        # Keeping more rows than the limit (the fixture tags all 16 "travel") walks the index.
        monkeypatch.setattr(recall, "EXACT_VECTOR_ROWS", 3)
        assert _exact(alice, space, RecallRequest(query="Maya", tags=["travel"])) is False
        assert _exact(alice, space, RecallRequest(query="Maya", at=NOW)) is False


@pytest.mark.parametrize(
    "asked",
    [
        RecallRequest(query="What did I do with Tomas?", kinds=["episode", "fact"], tags=["travel"]),
        RecallRequest(query="What did I do with Tomas?", at=NOW - timedelta(days=30)),
    ],
    ids=["types+tags", "at"],
)
def test_the_exact_ranking_finds_the_hits_the_index_walk_finds(alice, monkeypatch, asked):
    space = _space(alice, TEXTS)
    with time_machine.travel(NOW, tick=False):
        with CaptureQueriesContext(connection) as exact_run:
            exact = memory_recall(owner=alice, space=space, request=asked).hits
        monkeypatch.setattr(recall, "EXACT_VECTOR_ROWS", 0)
        with CaptureQueriesContext(connection) as walk_run:
            walked = memory_recall(owner=alice, space=space, request=asked).hits
    statements = [q["sql"] for q in exact_run.captured_queries]
    assert any(sql.startswith("EXPLAIN (FORMAT JSON)") for sql in statements)
    assert any("::vector) + 0" in sql for sql in statements)
    assert not any("::vector) + 0" in sql for sql in (q["sql"] for q in walk_run.captured_queries))
    assert exact, "the fixture must give this request hits"
    ranked = [(h.memory.id, round(h.score, 9)) for h in exact]
    assert ranked == [(h.memory.id, round(h.score, 9)) for h in walked]
    if asked.kinds:
        assert all(h.memory.kind in ("episode", "fact") and "travel" in h.memory.tags for h in exact)


def test_the_world_start_index_follows_the_clock_rule():
    # The index that serves `at` must spell the start exactly as the clock rule does, or the
    # planner cannot use it (memories.as_of.MEMORY_START).
    from memories.as_of import MEMORY_START
    from memories.models import Memory

    index = next(i for i in Memory._meta.indexes if i.name == "memory_world_start")
    start = index.expressions[-1]
    assert tuple(e.name for e in start.get_source_expressions()) == MEMORY_START


def test_the_estimate_counts_only_the_callers_rows(alice, bob):
    # Another owner's many tagged memories do not make the caller's filter look less selective.
    _space(bob, TEXTS * 2)
    space = _space(alice, TEXTS[:4])
    with time_machine.travel(NOW, tick=False):
        request = RecallRequest(query="Maya", tags=["work"])
        hits = memory_recall(owner=alice, space=space, request=request).hits
    assert hits and all(h.memory.owner_id == alice.pk for h in hits)
