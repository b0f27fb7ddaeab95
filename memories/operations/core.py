"""The read operations agents call every turn: `recall` (search) and `answer` (grounded answer).

Handlers stay thin: resolve the caller's space, call retrieval / answering, render. `agent_id` is a
legacy input: it is accepted so old clients keep working, and ignored, because who is asking comes
from the token, never from the request body.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings

from accounts.caller import SCOPE_READ, SCOPE_WRITE, Caller
from accounts.throttles import user_throttle
from memories.limits import QUERY_MAX_LENGTH, TAG_MAX_LENGTH, TAGS_MAX
from memories.models import Memory
from memories.operations.registry import (
    DELETES,
    EVERY_PROFILE,
    READ_ONLY,
    WRITES,
    operation,
)
from memories.operations.schemas import ALL, SOURCE_REF, UUID, clocks_schema, obj
from memories.representations import hit_dict
from memories.retrieval import answer as answering
from memories.retrieval.recall import NONE, STRONG, WEAK, RecallRequest, RecallResult, memory_recall
from memories.services.memories import memory_hard_delete, memory_suppress, remember
from memories.services.spaces import space_for_caller
from memories.wire import iso

AT = {
    "type": "string",
    "format": "date-time",
    "description": (
        "Evaluation time, RFC 3339 with an offset (2024-05-08T14:00:00+02:00): what held then in "
        "the world, as the service knows it now, so a memory superseded later is seen as it was, "
        "and a conversation saved today with its real dates can be asked about its own past. "
        "Default: now."
    ),
}


SESSION_ID = {**UUID, "description": "Only memories saved with this session id."}


AGENT_ID = {
    **UUID,
    "description": "Legacy, ignored: the calling agent is known from its token and cannot be overridden.",
}


# The clock and session filters recall and answer share (agent_id: accepted, and ignored).
WHEN_AND_WHO: dict[str, object] = {"at": AT, "session_id": SESSION_ID, "agent_id": AGENT_ID}


MEMORY_SCHEMA: dict[str, object] = obj(
    {
        "id": UUID,
        "content": {"type": "string"},
        "kind": {"type": "string", "enum": Memory.Kind.values},
        "tags": {"type": "array", "items": {"type": "string"}},
        "entities": {
            "type": "array",
            "items": obj({"id": UUID, "name": {"type": "string"}, "type": {"type": "string"}}, closed=False),
        },
        "clocks": clocks_schema(),
        "score": {"type": "number", "description": "Ranking score; compare only within one response."},
        "similarity": {"type": "number", "description": "Cosine similarity of the memory to the query."},
        "matched_words": {
            "type": "array",
            "items": {"type": "string"},
            "description": "The query's words this memory contains, as written in it: why it matched.",
        },
        "pinned": {"type": "boolean"},
        "status": {"type": "string"},
        "confidence": {"type": "number"},
        "space": obj({"id": UUID, "name": {"type": "string"}}, closed=False),
        "source": SOURCE_REF,
        "provenance": obj(
            {
                "source_id": {"type": ["string", "null"]},
                "job_id": {"type": ["string", "null"]},
                "agent": {"type": ["object", "null"]},
                "session_id": {"type": ["string", "null"]},
            },
            closed=False,
        ),
        "evidence_count": {"type": "integer"},
        "image_url": {
            "type": "string",
            "description": "Only on a memory read from an uploaded image: a private link to the "
            "picture that works for one hour. Recall again for a fresh one; never store or share it.",
        },
    },
    required="id content kind tags entities clocks score pinned space source provenance",
    closed=False,
)


FRESHNESS_SCHEMA: dict[str, object] = obj(
    {"pending_jobs": {"type": "integer", "minimum": 0}, "note": {"type": "string"}},
    required=ALL,
    closed=False,
)


def freshness(result: RecallResult) -> dict[str, object]:
    """How fresh a recall is: saves of its space still being processed are not in it yet (counted
    by the recall itself, `count_pending`)."""
    pending = result.pending
    if pending is None:
        raise RuntimeError("the recall did not count the pending saves")
    if pending:
        note = (
            f"{pending} save(s) are still being processed; what they contain is not recallable yet. "
            "Poll their jobs or retry in a moment."
        )
    else:
        note = "All saves have been processed; this result includes everything remembered so far."
    return {"pending_jobs": pending, "note": note}


RECALL_INPUT: dict[str, object] = obj(
    {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": QUERY_MAX_LENGTH,
            "description": (
                f"What to look for, in plain language (trimmed; 1-{QUERY_MAX_LENGTH:,} characters)."
            ),
        },
        "top_k": {
            "type": "integer",
            "minimum": 1,
            "maximum": 50,
            "default": 20,
            "description": "How many memories to return at most (1-50).",
        },
        "types": {
            "type": "array",
            "uniqueItems": True,
            "items": {"type": "string", "enum": Memory.Kind.values},
            "default": [],
            "description": "Only these kinds of memory; empty means all.",
        },
        "tags": {
            "type": "array",
            "maxItems": TAGS_MAX,
            "uniqueItems": True,
            "items": {"type": "string", "minLength": 1, "maxLength": TAG_MAX_LENGTH},
            "default": [],
            "description": (
                f"Only memories carrying all of these tags (up to {TAGS_MAX}, 1-{TAG_MAX_LENGTH} characters)."
            ),
        },
        "expand_entities": {
            "type": "boolean",
            "default": False,
            "description": (
                "Also bring memories linked to the people, places and things named in the query "
                "or in the top hits."
            ),
        },
        **WHEN_AND_WHO,
    },
    required=["query"],
)


MATCH_SCHEMA: dict[str, object] = {
    "type": "string",
    "enum": [STRONG, WEAK, NONE],
    "description": (
        "How well the memories match: strong (a close meaning or several of the query's words), weak "
        "(loosely related only: treat with care), none (nothing in memory matches; say so, do not guess)."
    ),
}


# What an agent reads first: whether there is anything to go on.
MATCH_NOTES = {
    STRONG: "These memories match the query.",
    WEAK: "Only loosely related memories were found; they may not answer the query.",
    NONE: "Nothing in memory matches this query.",
}


RECALL_OUTPUT: dict[str, object] = obj(
    {
        "at": {"type": "string", "format": "date-time"},
        "memories": {"type": "array", "items": MEMORY_SCHEMA},
        "total": {"type": "integer", "minimum": 0},
        "match": MATCH_SCHEMA,
        "match_note": {"type": "string"},
        "freshness": FRESHNESS_SCHEMA,
    },
    required=ALL,
)


def _recalled(caller: Caller, args: dict[str, Any], query: str, **filters: Any) -> RecallResult:
    """Recall in the caller's space with the clock and session filters recall and answer share,
    counting the space's pending saves for `freshness`."""
    space = space_for_caller(caller=caller)
    when: dict[str, Any] = {"at": args.get("at"), "session_id": args.get("session_id")}
    request = RecallRequest(query=query, top_k=args["top_k"], **when, **filters)
    return memory_recall(owner=caller.user, space=space, request=request, count_pending=True)


@operation("recall", EVERY_PROFILE, SCOPE_READ, READ_ONLY, RECALL_INPUT, RECALL_OUTPUT)
def _recall(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Search the user's long-term memory. Returns the most relevant memories (facts, episodes, plans) with
    their dates, entities, score and provenance. Use it before answering anything that may depend on what
    the user told you before. `at` looks at the past: what held at that time.
    """
    filters = {"kinds": args["types"], "tags": args["tags"], "expand_entities": args["expand_entities"]}
    return recall_rendered(caller, args, **filters)


def recall_rendered(caller: Caller, args: dict[str, Any], **filters: Any) -> dict[str, object]:
    """A recall of `args["query"]` (`top_k`, optional `at` and `session_id`) in the caller's space,
    as every recall tool answers it (RECALL_OUTPUT): active, current memories only, unless `at`."""
    result = _recalled(caller, args, args["query"], **filters)
    return {
        "at": iso(result.at),
        "memories": [hit_dict(hit) for hit in result.hits],
        "total": len(result.hits),
        "match": result.match,
        "match_note": MATCH_NOTES[result.match],
        "freshness": freshness(result),
    }


ANSWER_INPUT: dict[str, object] = obj(
    {
        "question": {
            "type": "string",
            "minLength": 1,
            "maxLength": 4000,
            "description": "The question (trimmed; 1-4,000 characters).",
        },
        "top_k": {
            "type": "integer",
            "minimum": 1,
            "maximum": 50,
            "default": 30,
            "description": "How many memories to retrieve and answer from (1-50).",
        },
        "max_tokens": {
            "type": "integer",
            "minimum": 1,
            "maximum": answering.MAX_TOKENS,
            "description": (
                f"Upper bound on the answer's length in tokens (1-{answering.MAX_TOKENS}; about four "
                "characters each for the built-in answerer)."
            ),
        },
        **WHEN_AND_WHO,
    },
    required=["question"],
)


ANSWER_OUTPUT: dict[str, object] = obj(
    {
        "answer": {"type": "string"},
        "at": {"type": "string", "format": "date-time"},
        "based_on": {"type": "array", "items": UUID},
        "sources": {"type": "array", "items": MEMORY_SCHEMA},
        "retrieved": {"type": "integer", "minimum": 0},
        "model": {"type": "object"},
        "usage": {"type": "object"},
        "checks": {"type": "object"},
        "freshness": FRESHNESS_SCHEMA,
    },
    required=["answer", "at", "based_on", "sources", "model", "usage"],
)


@operation("answer", EVERY_PROFILE, SCOPE_READ, READ_ONLY, ANSWER_INPUT, ANSWER_OUTPUT)
def _answer(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Answer a question from the user's long-term memory, citing the memories it rests on as [1], [2] ... in
    the order of `based_on`. Every citation is checked against the retrieved memories; when nothing
    supports an answer it says so instead of guessing.
    """
    result = _recalled(caller, args, args["question"])
    answer = answering.answer_question(
        question=args["question"], hits=result.hits, max_tokens=args.get("max_tokens"), at=result.at
    )
    return {
        "answer": answer.text,
        "at": iso(result.at),
        "based_on": [str(hit.memory.id) for hit in answer.sources],
        "sources": [hit_dict(hit) for hit in answer.sources],
        "retrieved": len(result.hits),
        "model": answer.model,
        "usage": answer.usage,
        "checks": answer.checks,
        "freshness": freshness(result),
    }


REMEMBER_INPUT: dict[str, Any] = obj(
    {
        "content": {
            "type": "string",
            "minLength": 1,
            "maxLength": settings.REMEMBER_MAX_CHARS,
            "description": (
                "What to remember, in plain language "
                f"(trimmed; 1-{settings.REMEMBER_MAX_CHARS:,} characters)."
            ),
        },
    },
    required=["content"],
)


REMEMBER_OUTPUT: dict[str, object] = obj(
    {"job_id": UUID, "status": {"type": "string", "enum": ["queued"]}}, required=ALL
)


@operation("remember", EVERY_PROFILE, SCOPE_WRITE, WRITES, REMEMBER_INPUT, REMEMBER_OUTPUT)
def _remember(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Save something worth remembering about the user: a fact, an event, a plan, or a whole conversation.
    Returns at once with a job id; the memories become recallable when the job succeeds (usually within a
    second).
    """
    user_throttle(limit="save", user=caller.user)
    # Content only, as the contract says; REST saves take the structured fields (docs/api.md).
    job = remember(caller=caller, content=args["content"])
    return {"job_id": str(job.id), "status": job.status}


FORGET_INPUT: dict[str, object] = obj(
    {
        "memory_id": {**UUID, "description": "The id of a memory, as returned by recall."},
        "hard": {"type": "boolean", "default": False, "description": "Permanent deletion."},
        "reason_code": {
            "type": "string",
            "enum": Memory.SuppressReason.for_callers(),
            "default": Memory.SuppressReason.OTHER.value,
        },
    },
    required=["memory_id"],
)


FORGET_OUTPUT: dict[str, object] = obj(
    {
        "action": {"type": "string", "enum": ["suppressed", "hard_deleted"]},
        "memory_id": UUID,
        "message": {"type": "string"},
        "receipt": {"type": "object"},
    },
    required=["action", "memory_id", "message"],
    closed=False,
)


@operation("forget", EVERY_PROFILE, SCOPE_WRITE, DELETES, FORGET_INPUT, FORGET_OUTPUT)
def _forget(caller: Caller, args: dict[str, Any]) -> dict[str, object]:
    """Forget one of the user's memories. By default it is suppressed (hidden, restorable by the user). Use
    hard=true only when the user explicitly asks for permanent deletion.
    """
    memory_id: uuid.UUID = args["memory_id"]
    if args["hard"]:
        receipt = memory_hard_delete(actor=caller.actor(), memory_id=memory_id, reason=args["reason_code"])
        return {
            "action": "hard_deleted",
            # The canonical spelling, whatever letter case the caller sent.
            "memory_id": str(memory_id),
            "message": "The memory and everything derived from it were permanently deleted.",
            "receipt": receipt,
        }
    memory_suppress(actor=caller.actor(), memory_id=memory_id, reason=args["reason_code"])
    return {
        "action": "suppressed",
        "memory_id": str(memory_id),
        "message": (
            "The memory is hidden from recall and answers; the user can restore it from the dashboard."
        ),
    }
