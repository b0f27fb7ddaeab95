"""A relation keeps the embedding of its sentence, so the evidence tools need no model run for it.

`relate` stores it; a relation made before the column existed (embedding null) is embedded on
the fly with the query, and both rank the same.
"""

from __future__ import annotations

import math

import pytest

from accounts.caller import ALL_SCOPES, Caller
from memories import embeddings
from memories.models import Relation
from memories.retrieval import evidence
from memories.services.relations import relation_record
from memories.services.spaces import space_create_default

pytestmark = pytest.mark.django_db


def _cosine(a, b) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_relate_stores_the_embedding_of_the_relation_sentence(alice):
    caller = Caller(user=alice, scopes=ALL_SCOPES, via="session")
    relation = relation_record(
        caller=caller, source_name="Mara Lind", target_name="Paris", relation_type="lives_in"
    ).relation
    stored = Relation.objects.get(id=relation.id).embedding
    assert stored is not None
    assert _cosine(stored, embeddings.embed(["Mara Lind lives in Paris"])[0]) > 0.999


def test_a_relation_without_a_stored_embedding_ranks_as_one_with_it(alice):
    caller = Caller(user=alice, scopes=ALL_SCOPES, via="session")
    relation_record(caller=caller, source_name="Mara Lind", target_name="Paris", relation_type="lives_in")
    space = space_create_default(owner=alice)
    query = "Where does Mara Lind live?"
    with_stored = evidence.fact_search(owner=alice, space=space, query=query)
    Relation.objects.filter(owner=alice).update(embedding=None)
    on_the_fly = evidence.fact_search(owner=alice, space=space, query=query)
    assert [f.id for f in with_stored.facts] == [f.id for f in on_the_fly.facts]
    assert len(on_the_fly.facts) == 1 and on_the_fly.facts[0].relation is not None
    assert on_the_fly.facts[0].relevance == pytest.approx(with_stored.facts[0].relevance, abs=1e-4)
