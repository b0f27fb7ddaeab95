"""Reads behind the evidence profile: entities by name, facts with their evidence, and claims.

Two layers, never mixed:
- facts: what the service holds true now (or held true at `at`): active Memory rows, found by hybrid
  recall with its clock rules, and Relations whose subject or object is an entity the query names;
- claims: the Sources (immutable testimony) that support or contradict those facts, with who asserted
  them and when.

Counts are of distinct claimants (`Source.claimant`), as everywhere: two agents saying a thing are two
pieces of evidence, one agent saying it twice is one. A suppressed memory is hidden here as in recall,
and its text is cut out of (or withholds) the excerpt of any source that said it.

Every function is keyword-only, takes the owner and the space explicitly, and writes nothing.
"""

from __future__ import annotations

from memories.retrieval.evidence.claims import claim_search, evidence_search
from memories.retrieval.evidence.common import (
    ENTITY_REASONS,
    NEGATIVE_CODES,
    Claim,
    EntityMatch,
    EntityResult,
    EvidenceResult,
    Fact,
    FactRef,
    Negative,
    evidence_view,
)
from memories.retrieval.evidence.entities import entity_resolve
from memories.retrieval.evidence.facts import fact_search

__all__ = [
    "ENTITY_REASONS",
    "NEGATIVE_CODES",
    "Claim",
    "EntityMatch",
    "EntityResult",
    "EvidenceResult",
    "Fact",
    "FactRef",
    "Negative",
    "claim_search",
    "entity_resolve",
    "evidence_search",
    "evidence_view",
    "fact_search",
]
