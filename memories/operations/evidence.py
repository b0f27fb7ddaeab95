"""The evidence profile (`/mcp/evidence`): facts versus claims, for agents that must say why.

- `resolve_entity`: which entity a name means, with match reasons;
- `facts_context`: what the service holds true now (or held true at `at`), with evidence and
  contradiction counts;
- `claims_and_sources_context`: what sources asserted, by whom, when, and which facts each supports
  or contradicts;
- `combined_context`: both, in separate fields.

Every answer is the same self-accounting envelope: `grain` (what one item is), `validity` (the clocks
it answers for), `freshness` (the newest item and saves still processing) and `negative` (why it is
empty, typed; null otherwise). Reads live in `memories.retrieval.evidence`; handlers only render.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from accounts.caller import SCOPE_READ, Caller
from memories.as_of import CURRENT_VIEW, View
from memories.limits import QUERY_MAX_LENGTH
from memories.models import Entity, Space
from memories.operations.core import AT
from memories.operations.registry import operation
from memories.operations.schemas import ALL, SOURCE_REF, SPACE_REF, UUID, clocks_schema, obj
from memories.representations import claim_dict, fact_dict
from memories.retrieval import evidence
from memories.retrieval.evidence import evidence_view
from memories.services.sources import claimant_of
from memories.services.spaces import space_for_caller
from memories.wire import Envelope, Freshness, NegativeAnswer, Validity, entity_ref, iso

PROFILES = ("evidence",)


READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


NULLABLE_STRING = {"type": ["string", "null"]}


NULLABLE_TIME = {"type": ["string", "null"], "format": "date-time"}


QUERY = {
    "type": "string",
    "minLength": 1,
    "maxLength": QUERY_MAX_LENGTH,
    "description": (
        f"What to look for, in plain language or a name (trimmed; 1-{QUERY_MAX_LENGTH:,} characters)."
    ),
}


# The contract's own schema for k (its facts_context example), on every context tool alike.
K = {
    "type": "integer",
    "minimum": 1,
    "maximum": 30,
    "default": 10,
    "description": "How many items to return at most (1-30).",
}


EVIDENCE_AT = {
    **AT,
    "description": (
        "World time, RFC 3339 with an offset: the facts that held then, as the service knows them now "
        "(an imported conversation can be asked about its own dates). Default: now (the current view)."
    ),
}


EVIDENCE_KNOWN_AT = {
    **AT,
    "description": (
        "System time, RFC 3339 with an offset: only what the service had recorded by then (facts as it "
        "believed them then, claims recorded by then). Alone, it also sets `at`: what the service "
        "believed at that moment about that moment. Default: everything known now."
    ),
}


ENTITY_REF = obj(
    {"id": UUID, "name": {"type": "string"}, "type": {"type": "string"}},
    required=ALL,
    closed=False,
)


VALIDITY_SCHEMA: dict[str, object] = obj(
    {
        "view": {
            "type": "string",
            "enum": ["current", "as_of"],
            "description": (
                "current: what holds now; as_of: what held at `world_time`, as known at `system_time`."
            ),
        },
        "at": {**NULLABLE_TIME, "description": "The world time asked for (null: now)."},
        "known_at": {**NULLABLE_TIME, "description": "The system time asked for (null: now)."},
        "world_time": {"type": "string", "format": "date-time", "description": "Facts held at this time."},
        "system_time": {
            "type": "string",
            "format": "date-time",
            "description": "Facts and claims the service had recorded by this time.",
        },
        "counts_as_of": {
            "type": "string",
            "format": "date-time",
            "description": "evidence_count, contradiction_count and status are as known at this time (now).",
        },
    },
    required=ALL,
    closed=False,
    description="The clocks this answer is for.",
)


FRESHNESS_SCHEMA: dict[str, object] = obj(
    {
        "pending_jobs": {"type": "integer", "minimum": 0},
        "note": {"type": "string"},
        "latest_recorded_at": {
            **NULLABLE_TIME,
            "description": "The newest recorded_at among the returned items (null when there are none).",
        },
    },
    required=ALL,
    closed=False,
)


NEGATIVE_SCHEMA: dict[str, object] = {
    "type": ["object", "null"],
    "description": "Null when there are results; otherwise why there are none.",
    "required": ["code", "message", "agent_action"],
    "properties": {
        "code": {"type": "string", "enum": list(evidence.NEGATIVE_CODES)},
        "message": {"type": "string"},
        "agent_action": {"type": "string"},
    },
}


FACT_SCHEMA: dict[str, object] = obj(
    {
        "id": UUID,
        "fact_type": {"type": "string", "enum": ["memory", "relation"]},
        "content": {
            "type": "string",
            "description": 'The memory, or the relation as "Alice lives_in Berlin".',
        },
        "kind": {**NULLABLE_STRING, "description": "fact, episode or foresight (memories only)."},
        "category": NULLABLE_STRING,
        "relation": {
            "type": ["object", "null"],
            "properties": {"type": {"type": "string"}, "subject": ENTITY_REF, "object": ENTITY_REF},
        },
        "entities": {"type": "array", "items": ENTITY_REF},
        "clocks": clocks_schema(),
        "status": {"type": "string", "enum": ["current", "superseded", "expired"]},
        "current": {"type": "boolean", "description": "Whether it still holds now."},
        "evidence_count": {
            "type": "integer",
            "minimum": 0,
            "description": "Distinct claimants (agents, tokens, the user, documents) that support it.",
        },
        "contradiction_count": {
            "type": "integer",
            "minimum": 0,
            "description": "Distinct claimants whose later sources contradict it.",
        },
        "relevance": {"type": "number", "description": "Cosine similarity to the query."},
        "confidence": {"type": ["number", "null"]},
        "source_id": NULLABLE_STRING,
        "space": SPACE_REF,
        "source": {
            **SOURCE_REF,
            "description": "Where it came from: a memory's source, or the first claim of a relation.",
        },
    },
    required="id fact_type content clocks status current evidence_count contradiction_count relevance space "
    "source",
    closed=False,
)


FACT_REF_SCHEMA: dict[str, object] = obj(
    {
        "id": UUID,
        "fact_type": {"type": "string", "enum": ["memory", "relation"]},
        "content": {"type": "string"},
        "current": {"type": "boolean"},
    },
    required=ALL,
    closed=False,
)


CLAIM_SCHEMA: dict[str, object] = obj(
    {
        "source_id": UUID,
        "space": SPACE_REF,
        "origin": {"type": "string"},
        "claimant": obj(
            {
                "kind": {"type": "string", "enum": ["agent", "token", "user", "document", "unknown"]},
                "id": NULLABLE_STRING,
                "name": NULLABLE_STRING,
                "label": {
                    "type": "string",
                    "description": 'Who said it, for people: an agent\'s name or "you".',
                },
                "is_caller": {
                    "type": "boolean",
                    "description": "Asserted by the very agent (or token) asking.",
                },
            },
            required=ALL,
            closed=False,
        ),
        "recorded_at": {"type": "string", "format": "date-time"},
        "excerpt": {"type": "string", "description": "The start of what was asserted, as saved."},
        "excerpt_status": {
            "type": "string",
            "enum": ["full", "truncated", "redacted", "withheld", "purged"],
            "description": (
                "redacted: a forgotten memory's text was cut out; withheld: it could not be cut out "
                "reliably, so nothing is shown; purged: the source's content was deleted."
            ),
        },
        "title": NULLABLE_STRING,
        "document": obj(
            {"kind": {"type": "string"}, "ref": {"type": "string"}, "version": {"type": "integer"}},
            closed=False,
            nullable=True,
        ),
        "session_id": NULLABLE_STRING,
        "supports": {"type": "array", "items": FACT_REF_SCHEMA},
        "contradicts": {"type": "array", "items": FACT_REF_SCHEMA},
    },
    required="source_id space origin claimant recorded_at excerpt excerpt_status supports contradicts",
    closed=False,
)


ENTITY_SCHEMA: dict[str, object] = obj(
    {
        "id": UUID,
        "name": {"type": "string"},
        "type": {"type": "string", "enum": list(Entity.Type.values)},
        "aliases": {"type": "array", "items": {"type": "string"}},
        "attributes": {"type": "object"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "match_reasons": {
            "type": "array",
            "items": {"type": "string", "enum": list(evidence.ENTITY_REASONS)},
            "description": "Why it matched, strongest first.",
        },
        "memory_count": {"type": "integer", "minimum": 0, "description": "Active memories that mention it."},
        "relation_count": {"type": "integer", "minimum": 0, "description": "Its current relations."},
    },
    required=["id", "name", "type", "aliases", "score", "match_reasons", "memory_count", "relation_count"],
    closed=False,
)


def _envelope_schema(grain: str, items: dict[str, Any]) -> dict[str, object]:
    return obj(
        {
            "grain": {"type": "string", "enum": [grain]},
            "validity": VALIDITY_SCHEMA,
            "freshness": FRESHNESS_SCHEMA,
            "negative": NEGATIVE_SCHEMA,
            **items,
        },
        required=["grain", "validity", "freshness", "negative", *items],
    )


def _input_schema(**extra: object) -> dict[str, object]:
    return obj({"query": QUERY, **extra}, required=["query"])


def _validity(*, view: View, now: datetime) -> Validity:
    return {
        "view": "current" if view.at is None else "as_of",
        "at": iso(view.at),
        "known_at": iso(view.known_at),
        "world_time": iso(view.at or now),
        "system_time": iso(view.known_at or now),
        "counts_as_of": iso(now),
    }


def _view(args: dict[str, Any]) -> View:
    return evidence_view(at=args.get("at"), known_at=args.get("known_at"))


def _freshness(*, pending: int, latest: datetime | None) -> Freshness:
    if pending:
        note = (
            f"{pending} save(s) are still being processed; what they contain is not in this answer yet. "
            "Poll their jobs or retry in a moment."
        )
    else:
        note = "All saves have been processed; this answer includes everything remembered so far."
    return {"pending_jobs": pending, "note": note, "latest_recorded_at": iso(latest)}


def _negative(negative: evidence.Negative | None) -> NegativeAnswer | None:
    if negative is None:
        return None
    return {"code": negative.code, "message": negative.message, "agent_action": negative.agent_action}


def _latest(*times: datetime | None) -> datetime | None:
    present = [t for t in times if t is not None]
    return max(present) if present else None


def _facts_part(result: evidence.EvidenceResult, space: Space) -> list[dict[str, object]]:
    return [fact_dict(fact, now=result.now, space=space) for fact in result.facts]


def _claims_part(result: evidence.EvidenceResult, caller: Caller, space: Space) -> list[dict[str, object]]:
    caller_claimant = claimant_of(caller)
    return [claim_dict(claim, caller_claimant=caller_claimant, space=space) for claim in result.claims]


def _envelope(grain: str, result: evidence.EvidenceResult) -> Envelope:
    """The envelope's head; the caller adds its items (under their own name) and their `total`."""
    latest = _latest(
        *(fact.recorded_at for fact in result.facts), *(claim.source.recorded_at for claim in result.claims)
    )
    return {
        "grain": grain,
        "validity": _validity(view=result.view, now=result.now),
        "freshness": _freshness(pending=result.pending, latest=latest),
        "negative": _negative(result.negative),
    }


TOTAL = {"type": "integer", "minimum": 0}


RESOLVE_INPUT: dict[str, object] = _input_schema(
    limit={
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
        "description": "How many candidates to return at most (1-50).",
    },
    type={
        "type": "string",
        "enum": list(Entity.Type.values),
        "description": "Only entities of this type.",
    },
)


RESOLVE_OUTPUT: dict[str, object] = _envelope_schema(
    "fact", {"entities": {"type": "array", "items": ENTITY_SCHEMA}, "total": TOTAL}
)


@operation("resolve_entity", PROFILES, SCOPE_READ, READ_ONLY, RESOLVE_INPUT, RESOLVE_OUTPUT)
def _resolve_entity(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Find which person, organisation, place or thing of the user's memory a name means. Returns candidate
    entities best first, each with its id, type, aliases, a score and the reasons it matched (exact_name,
    alias, prefix, name_in_query, word_overlap, substring ...). Use it to pick the right entity before
    asking about it.
    """
    space = space_for_caller(caller=caller)
    result = evidence.entity_resolve(
        owner=caller.user, space=space, query=args["query"], limit=args["limit"], entity_type=args.get("type")
    )
    entities = [
        {
            **entity_ref(match.entity),
            "aliases": list(match.entity.aliases),
            "attributes": dict(match.entity.attributes or {}),
            "score": round(match.score, 4),
            "match_reasons": match.reasons,
            "memory_count": match.memory_count,
            "relation_count": match.relation_count,
        }
        for match in result.matches
    ]
    envelope: Envelope = {
        "grain": "fact",
        "validity": _validity(view=CURRENT_VIEW, now=result.now),
        "freshness": _freshness(
            pending=result.pending, latest=_latest(*(m.entity.updated_at for m in result.matches))
        ),
        "negative": _negative(result.negative),
        "entities": entities,
        "total": len(entities),
    }
    return dict(envelope)


FACTS_INPUT: dict[str, object] = _input_schema(k=K, at=EVIDENCE_AT, known_at=EVIDENCE_KNOWN_AT)


FACTS_OUTPUT: dict[str, object] = _envelope_schema(
    "fact", {"facts": {"type": "array", "items": FACT_SCHEMA}, "total": TOTAL}
)


@operation("facts_context", PROFILES, SCOPE_READ, READ_ONLY, FACTS_INPUT, FACTS_OUTPUT)
def _facts_context(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """What the service holds true about something: the matching facts (memories, and relations of the
    entities the query names), each with its clocks, whether it still holds, how many distinct claimants
    support it (evidence_count) and how many contradict it (contradiction_count). Pass `at` to see what
    held at an earlier time. An empty answer says why in `negative`.
    """
    space = space_for_caller(caller=caller)
    result = evidence.fact_search(
        owner=caller.user, space=space, query=args["query"], k=args["k"], view=_view(args)
    )
    return dict(_fact_envelope(result, _facts_part(result, space)))


CLAIMS_INPUT: dict[str, object] = _input_schema(k=K, at=EVIDENCE_AT, known_at=EVIDENCE_KNOWN_AT)


CLAIMS_OUTPUT: dict[str, object] = _envelope_schema(
    "evidence", {"claims": {"type": "array", "items": CLAIM_SCHEMA}, "total": TOTAL}
)


@operation("claims_and_sources_context", PROFILES, SCOPE_READ, READ_ONLY, CLAIMS_INPUT, CLAIMS_OUTPUT)
def _claims_context(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """What was asserted about something, and by whom: the sources (saves, documents, relations) behind the
    matching facts and the facts they replaced, each with who said it (an agent's name, or you), when, an
    excerpt, and the facts it supports and contradicts. Sources are never edited; a later source that
    disagrees is listed as contradicting. Most relevant first, then most recent.
    """
    space = space_for_caller(caller=caller)
    result = evidence.claim_search(
        owner=caller.user, space=space, query=args["query"], k=args["k"], view=_view(args)
    )
    return dict(_claim_envelope(result, _claims_part(result, caller, space)))


COMBINED_INPUT: dict[str, object] = _input_schema(k=K, at=EVIDENCE_AT, known_at=EVIDENCE_KNOWN_AT)


# The contract's ContextBundle/v2: the two authorities as two complete envelopes, side by side,
# never merged into one list; the outer envelope says what the bundle as a whole was asked about.
CONTEXT_BUNDLE = "ContextBundle/v2"


COMBINED_OUTPUT: dict[str, object] = _envelope_schema(
    "composite",
    {
        "schema": {"type": "string", "enum": [CONTEXT_BUNDLE]},
        "claims_and_sources": CLAIMS_OUTPUT,
        "facts": FACTS_OUTPUT,
    },
)


@operation("combined_context", PROFILES, SCOPE_READ, READ_ONLY, COMBINED_INPUT, COMBINED_OUTPUT)
def _combined_context(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Facts and claims together for one query (a ContextBundle/v2): `claims_and_sources` is the complete
    evidence envelope (what sources asserted, by whom, when) and `facts` the complete fact envelope (what
    holds, with evidence and contradiction counts), each with its own grain, validity, freshness and
    negative. Use it when you must both answer and justify the answer.
    """
    space = space_for_caller(caller=caller)
    result = evidence.evidence_search(
        owner=caller.user, space=space, query=args["query"], k=args["k"], view=_view(args)
    )
    facts = _facts_part(result, space)
    claims = _claims_part(result, caller, space)
    bundle = _envelope("composite", result)
    bundle["schema"] = CONTEXT_BUNDLE
    bundle["claims_and_sources"] = _side(_claim_envelope(result, claims), claims)
    bundle["facts"] = _side(_fact_envelope(result, facts), facts)
    return dict(bundle)


def _fact_envelope(result: evidence.EvidenceResult, facts: list[dict[str, object]]) -> Envelope:
    envelope = _envelope("fact", result)
    envelope["facts"] = facts
    envelope["total"] = len(facts)
    return envelope


def _claim_envelope(result: evidence.EvidenceResult, claims: list[dict[str, object]]) -> Envelope:
    envelope = _envelope("evidence", result)
    envelope["claims"] = claims
    envelope["total"] = len(claims)
    return envelope


def _side(envelope: Envelope, items: list[dict[str, object]]) -> Envelope:
    """One authority of a bundle: the search's negative only where this side came back empty."""
    if items:
        envelope["negative"] = None
    return envelope
