"""What the Graph page draws: the owner's current relations and the entities they join, and the
evidence behind one relation (the sources that assert it, and the memories read from them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from accounts.models import User
from memories.as_of import superseded_q
from memories.models import Evidence, Memory, Relation, Source
from memories.parsing import RowId
from memories.selectors.graph import relation_get, relation_list
from memories.selectors.memories import memory_list

# A drawing of more edges than this is a hairball, not a picture; the table lists them all.
GRAPH_MAX_EDGES = 300
EXCERPT_CHARS = 400


def graph_relations(*, owner: User) -> QuerySet[Relation]:
    """The owner's current relations (not replaced by a newer one), newest first, ends loaded."""
    return relation_list(owner=owner).exclude(superseded_q())


def graph_payload(*, owner: User) -> dict[str, object]:
    """Nodes and edges for the drawing: the newest GRAPH_MAX_EDGES current relations and their ends."""
    relations = list(graph_relations(owner=owner)[: GRAPH_MAX_EDGES + 1])
    truncated = len(relations) > GRAPH_MAX_EDGES
    relations = relations[:GRAPH_MAX_EDGES]
    nodes: dict[str, dict[str, Any]] = {}
    edges = []
    for relation in relations:
        for entity in (relation.subject, relation.object):
            nodes.setdefault(str(entity.id), {"id": str(entity.id), "name": entity.name, "type": entity.type})
        edges.append(
            {
                "id": str(relation.id),
                "source": str(relation.subject_id),
                "target": str(relation.object_id),
                "type": relation.type,
                "label": relation.type.replace("_", " "),
                "sentence": relation.sentence(),
            }
        )
    return {"nodes": list(nodes.values()), "edges": edges, "truncated": truncated}


@dataclass(frozen=True)
class RelationEvidence:
    """One source asserting (or contradicting) a relation, with the owner's memories read from it."""

    source: Source
    stance: str
    excerpt: str
    memories: list[Memory]


def relation_evidence(*, owner: User, relation_id: RowId) -> tuple[Relation, list[RelationEvidence]]:
    """A relation and its evidence, newest first. Raises `relation_not_found` (404) for an unknown id
    or another account's relation."""
    relation = relation_get(owner=owner, relation_id=relation_id)
    rows = list(
        Evidence.objects.filter(owner=owner, relation=relation)
        .select_related("source", "source__agent")
        .defer("source__raw")
        .order_by("-recorded_at", "id")
    )
    source_ids = [row.source_id for row in rows]
    by_source: dict[Any, list[Memory]] = {}
    for memory in memory_list(owner=owner).filter(source_id__in=source_ids).order_by("recorded_at", "id"):
        by_source.setdefault(memory.source_id, []).append(memory)
    evidence = [
        RelationEvidence(
            source=row.source,
            stance=row.stance,
            excerpt=row.source.content[:EXCERPT_CHARS],
            memories=by_source.get(row.source_id, []),
        )
        for row in rows
    ]
    return relation, evidence
