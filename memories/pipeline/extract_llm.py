"""Optional LLM extraction through an OpenAI-compatible chat endpoint (LLM_BASE_URL).

It yields the same Candidate rows as the built-in rules, so the rest of the
pipeline cannot tell which one ran. If the model's answer is unusable, the
rules take over for that save: a bad model answer must not lose a memory.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime

from django.conf import settings

from memories.models import Entity, Memory
from memories.outbound import post_json
from memories.pipeline.extract import Candidate, extract

logger = logging.getLogger(__name__)

# What a model's answer may use: exactly what the columns accept.
KINDS = frozenset(Memory.Kind.values)
ENTITY_TYPES = frozenset(Entity.Type.values)

SYSTEM_PROMPT = """You turn text a user saved into memories for a long-term memory service.
Answer with JSON only: {"memories": [{"content": str, "kind": "fact"|"episode"|"foresight",
"occurred_at": ISO-8601|null, "valid_from": ISO-8601|null, "due_at": ISO-8601|null,
"entities": [{"name": str, "type": "Person"|"Organization"|"Product"|"Amount"|"Date"|"Location"|"Concept"}],
"tags": [str], "slot": str, "slot_value": str}]}.
One memory per standing fact, event or plan; keep the speaker's name in the content; resolve relative
dates against the reference time; slot is "<subject>:<attribute>" for single-valued facts
(lives_in, works_at, name, age, relationship_status, diet, favorite:<thing>) else ""."""


def _when(value: object, reference: datetime) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=reference.tzinfo)


def _candidate(row: object, reference: datetime) -> Candidate | None:
    if not isinstance(row, dict):
        return None
    content = str(row.get("content") or "").strip()
    kind = row.get("kind")
    if not content or kind not in KINDS:
        return None
    entities = [
        (str(e["name"]).strip(), e["type"])
        for e in row.get("entities") or []
        if isinstance(e, dict) and e.get("type") in ENTITY_TYPES and str(e.get("name", "")).strip()
    ]
    tags = [str(t).strip().lower()[:100] for t in row.get("tags") or [] if str(t).strip()]
    return Candidate(
        content=content,
        kind=kind,
        occurred_at=_when(row.get("occurred_at"), reference),
        valid_from=_when(row.get("valid_from"), reference) or (reference if kind == "fact" else None),
        due_at=_when(row.get("due_at"), reference),
        entities=entities,
        tags=list(dict.fromkeys(tags)),
        slot=str(row.get("slot") or "")[:200],
        slot_value=str(row.get("slot_value") or "").strip().lower()[:200],
    )


def llm_extract(text: str, *, reference: datetime) -> list[Candidate]:
    """Candidates from the chat model; the built-in rules when its answer is unusable."""
    answer = post_json(
        f"{settings.LLM_BASE_URL}/chat/completions",
        {
            "model": settings.LLM_MODEL,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": f"Reference time: {reference.isoformat()}\n\n{text}"},
            ],
        },
        api_key=settings.LLM_API_KEY,
    )
    try:
        payload = json.loads(answer["choices"][0]["message"]["content"])
        rows = payload["memories"]
    except (KeyError, IndexError, TypeError, ValueError):
        logger.warning("LLM extraction answer unusable; using the built-in rules")
        return extract(text, reference=reference)[1]
    candidates = [c for c in (_candidate(row, reference) for row in rows) if c is not None]
    if not candidates:
        logger.warning("LLM extraction returned no usable memory; using the built-in rules")
        return extract(text, reference=reference)[1]
    return candidates
