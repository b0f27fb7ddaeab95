"""Optional LLM judgement of updates through an OpenAI-compatible chat endpoint (LLM_BASE_URL).

The model is asked the update engine's question (`memories.pipeline.update`) over the same
candidates the rules see: for each new statement of a save and each current memory it may be
about, is it the same fact, an update, a contradiction or an addition? One call per save, made
before the write transaction (no lock is held while a remote model thinks). Any pair the model
does not answer usably, and every pair when the call fails, is judged by the rules: a bad or
missing model answer must not lose or hide a memory.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from django.conf import settings

from memories.outbound import OutboundError, post_json
from memories.pipeline.update import Verdict

logger = logging.getLogger(__name__)

SYSTEM_PROMPT = """You keep a person's long-term memory consistent.
You get NEW statements, each with the numbered memories it may be about.
For every pair decide one of:
"same": the same fact again, in any words;
"update": a change or correction of that memory (the new statement replaces it);
"contradict": the new statement denies that memory;
"add": anything else (another fact, another person, another event, a hypothetical, a quote, an addition).
Answer with JSON only: {"decisions": [{"statement": <number>, "memory": <number>,
"decision": "same"|"update"|"contradict"|"add"}]}."""

_VERDICTS = {
    "same": Verdict.SAME,
    "update": Verdict.UPDATE,
    "contradict": Verdict.NEGATION,
    "add": Verdict.ADD,
}


def llm_judge(statements: Sequence[str], priors: Sequence[Sequence[str]]) -> dict[tuple[int, int], Verdict]:
    """{(statement index, prior index): verdict} for the pairs the model answered usably."""
    pairs = [(i, j) for i, texts in enumerate(priors) for j in range(len(texts))]
    if not pairs:
        return {}
    lines = []
    for i, statement in enumerate(statements):
        if not priors[i]:
            continue
        lines.append(f"NEW {i + 1}: {statement}")
        lines.extend(f"  memory {j + 1}: {text}" for j, text in enumerate(priors[i]))
    try:
        answer = post_json(
            f"{settings.LLM_BASE_URL}/chat/completions",
            {
                "model": settings.LLM_MODEL,
                "temperature": 0,
                "response_format": {"type": "json_object"},
                "messages": [
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": "\n".join(lines)},
                ],
            },
            api_key=settings.LLM_API_KEY,
        )
        rows = json.loads(answer["choices"][0]["message"]["content"])["decisions"]
    except OutboundError as exc:
        logger.warning("update model unavailable (%s); the rules judge", exc)
        return {}
    except (KeyError, IndexError, TypeError, ValueError):
        logger.warning("update model answer unusable; the rules judge")
        return {}
    decided: dict[tuple[int, int], Verdict] = {}
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        number, memory_number, decision = row.get("statement"), row.get("memory"), row.get("decision")
        if type(number) is not int or type(memory_number) is not int or decision not in _VERDICTS:
            continue
        key = (number - 1, memory_number - 1)
        if key in pairs:
            decided[key] = _VERDICTS[decision]
    return decided
