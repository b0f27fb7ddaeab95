"""Grounded answers from recalled memories, with every citation checked.

Two answerers, one contract: the answer cites memories as [1], [2] ... numbered in the order of
`sources`, every cited memory is one that was retrieved, and every cited sentence is supported by
the memory it cites. With nothing to support an answer it says `NO_EVIDENCE` and cites nothing.

- Extractive (the default, no model): the sentences of the retrieved memories that best match the
  question, each quoted with its memory's date and its citation.
- LLM (when LLM_BASE_URL is set): an OpenAI-compatible chat model answers from the numbered
  memories. Its answer is then checked sentence by sentence: a citation that points at no retrieved
  memory, or at one that does not support the sentence, is removed; a sentence left without a valid
  citation is removed. Nothing unchecked is passed on.

Support (`supports`) is measured two ways and either may carry it, because paraphrase defeats word
overlap and short factual claims defeat embeddings:
- word overlap: the share of the sentence's content words (stop words dropped, crude suffix
  stemming) found in the memory's text, the memory's date included;
- meaning: the cosine similarity of the two embeddings (all-MiniLM-L6-v2).
A sentence is supported when overlap >= 0.5, or cosine >= 0.6, or overlap >= 0.3 and cosine >= 0.45.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from memories import embeddings
from memories.as_of import is_current, world_start
from memories.models import Memory
from memories.outbound import OutboundError, post_json
from memories.pipeline.language import STOP_WORDS, split_sentences, split_speaker
from memories.pipeline.lexicon import relations_asked
from memories.pipeline.supersede import said_at
from memories.pipeline.update import (
    PEOPLE,
    Verdict,
    asks_about_self,
    frame_of,
    judge,
    relative_of,
    relatives_named,
)
from memories.retrieval.recall import Hit
from memories.selectors.memories import memory_replaced_list

logger = logging.getLogger(__name__)

NO_EVIDENCE = "I don't have any memory about that."
MAX_TOKENS = 4096
DEFAULT_LLM_MAX_TOKENS = 512
# The built-in answerer has no tokenizer; English runs about four characters per token.
CHARS_PER_TOKEN = 4
EXTRACTIVE_MODEL = "deeprecall-extractive"

# Support of a sentence by a memory (see the module docstring).
OVERLAP_ALONE = 0.5
COSINE_ALONE = 0.6
OVERLAP_WITH_COSINE = (0.3, 0.45)

# Relevance of a memory sentence to the question, for the extractive answerer. A question and its
# answer share less wording than a claim and its evidence, so the bars are lower; a sentence that
# matches only by the question's names has overlap <= 0.5 and a low cosine and stays out.
RELEVANT_COSINE_ALONE = 0.5
RELEVANT_WITH_OVERLAP = (0.3, 0.34)
# The top-ranked memory has won on words, meaning and context already; a paraphrase ("I moved to
# Berlin" for "where do I live?") may then pass on meaning alone with a lower bar.
RELEVANT_TOP_HIT_COSINE = 0.35
# A sentence naming the relation the question asks about ranks above one that only sounds alike.
SLOT_BONUS = 0.5
EXTRACT_FROM_TOP = 8
MAX_EXTRACTED_SENTENCES = 3

_TERM_RE = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")
_CITATION_RE = re.compile(r"\[(\s*\d{1,3}(?:\s*[,;]\s*\d{1,3})*\s*)\]")
_LEADING_CITATIONS_RE = re.compile(r"^((?:\s*\[\s*\d{1,3}(?:\s*[,;]\s*\d{1,3})*\s*\])+)\s*")


@dataclass
class Answer:
    text: str
    sources: list[Hit] = field(default_factory=list)
    model: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    checks: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Support:
    overlap: float
    cosine: float
    # Values the claim states (numbers, codes, years) that the evidence does not contain.
    missing_values: int = 0

    @property
    def ok(self) -> bool:
        # "Your passport number is X1234567", cited to "My passport is in the drawer": the words agree,
        # the value is invented. A value must be in the evidence, whatever else matches.
        if self.missing_values:
            return False
        return (
            self.overlap >= OVERLAP_ALONE
            or self.cosine >= COSINE_ALONE
            or (self.overlap >= OVERLAP_WITH_COSINE[0] and self.cosine >= OVERLAP_WITH_COSINE[1])
        )


def _stem(word: str) -> str:
    # Crude on purpose: the same function runs on both sides, so it only has to be consistent.
    if word.endswith(("'s", "\u2019s")):
        word = word[:-2]
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + keep
    return word


def content_terms(text: str) -> set[str]:
    """The stemmed content words of `text` (stop words and question words dropped)."""
    return {_stem(w) for w in _TERM_RE.findall(text.casefold()) if w not in STOP_WORDS}


def overlap(claim: str, evidence: str) -> float:
    """Share of the claim's content words that the evidence contains (1.0 for a claim without any)."""
    wanted = content_terms(claim)
    if not wanted:
        return 0.0
    return len(wanted & content_terms(evidence)) / len(wanted)


_VALUE_RE = re.compile(r"[^\W_]*\d[^\W_]*(?:[.,:/-]\d+)*")


def missing_values(claim: str, evidence: str) -> int:
    """How many of the values the claim states (words with a digit: "4711", "X1234567", "2031",
    "11:00") the evidence does not contain."""
    found = _VALUE_RE.findall(evidence)
    have = {v.casefold() for v in found} | {_digits(v) for v in found}
    # "3pm" is the "3 pm" of the evidence; "X1234567" is not a "1234" it does not contain.
    return sum(
        1
        for v in dict.fromkeys(_VALUE_RE.findall(claim))
        if v.casefold() not in have and _digits(v) not in have
    )


def _digits(value: str) -> str:
    return "".join(ch for ch in value if ch.isdigit())


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _date_words(moment: datetime | None) -> str:
    return f"{moment.day} {moment.strftime('%B %Y')}" if moment is not None else ""


def when_of(memory: Memory) -> str:
    """The memory's world time in words ("7 May 2023"), or "" when it has none."""
    return _date_words(memory.occurred_at or memory.due_at or memory.valid_from)


def evidence_text(memory: Memory) -> str:
    """What a memory attests, for checking a claim: its content and its date."""
    when = when_of(memory)
    return f"{memory.content} ({when})" if when else memory.content


def supports(claims: Sequence[str], memories: Sequence[Memory]) -> list[Support]:
    """Support of claims[i] by memories[i], for each pair (one embedding batch for all)."""
    if not claims:
        return []
    texts = [evidence_text(m) for m in memories]
    vectors = embeddings.embed([*claims, *texts])
    claim_vectors, memory_vectors = vectors[: len(claims)], vectors[len(claims) :]
    return [
        Support(overlap(claim, text), _cosine(cv, mv), missing_values(claim, text))
        for claim, text, cv, mv in zip(claims, texts, claim_vectors, memory_vectors, strict=True)
    ]


def _no_evidence(model: dict[str, Any], usage: dict[str, Any], checks: dict[str, Any]) -> Answer:
    return Answer(text=NO_EVIDENCE, sources=[], model=model, usage=usage, checks=checks)


# --- conflicts and qualifiers: the same check before either answerer ------------------------------


@dataclass
class Resolved:
    """The hits an answer may state as holding, and the history each of them replaced."""

    hits: list[Hit]
    history: dict[Any, list[Memory]] = field(default_factory=dict)
    # What a stated hit becomes later: the change to come that replaces it ("Starting in March I'll
    # be at Acme" for "I work at Initech", asked before March), said after it, never instead of it.
    upcoming: dict[Any, list[Memory]] = field(default_factory=dict)
    dropped_for_qualifier: int = 0
    conflicts: int = 0


_QUALIFIED_RE = re.compile(r"\b(?P<qualifier>[a-z-]+)\s+(?P<name>(?-i:[A-Z][\w'\u2019-]+))", re.IGNORECASE)


def _qualifiers(text: str) -> dict[str, set[str]]:
    """Who is named with which relation: "my cousin Alex" -> {"alex": {"cousin"}}."""
    found: dict[str, set[str]] = {}
    for match in _QUALIFIED_RE.finditer(text):
        qualifier = match.group("qualifier").lower()
        if qualifier in PEOPLE:
            found.setdefault(match.group("name").lower(), set()).add(qualifier)
    return found


def _qualifier_conflict(question: str, content: str) -> bool:
    """The question asks about "my cousin Alex" and the memory is about "my colleague Alex"."""
    asked = _qualifiers(question)
    if not asked:
        return False
    said = _qualifiers(content)
    return any(name in said and not (said[name] & wanted) for name, wanted in asked.items())


def _subject_conflict(question: str, content: str) -> bool:
    """The question is about one person and the memory about another: "What is my uncle's email?"
    is not answered by the aunt's email nor by the speaker's own, and "What is my email?" not by a
    relative's. A memory that names the asked relative as the speaker's stays ("I emailed my
    uncle"), and so does the speaker's own when the question asks about them too ("my sister and
    my garden")."""
    asked = relatives_named(question)
    about = relative_of(content)
    if "*" in asked:
        return False  # "my family": any relative, and the speaker
    if asked:
        if relatives_named(content) & asked:
            return False
        return about not in asked if about else not asks_about_self(question)
    return bool(about) and asks_about_self(question)


def resolve(question: str, hits: Sequence[Hit], *, at: datetime | None = None) -> Resolved:
    """What the answer may state. A memory about another person of the same name ("colleague Alex"
    for "my cousin Alex"), or about another person than the one asked about (`_subject_conflict`),
    is left out. Two retrieved memories that disagree (the update engine's
    judgement, `memories.pipeline.update.judge`) are not stated side by side: the one said later
    holds and the other becomes its history; so does every memory a retrieved one superseded (but
    not a forgotten one).

    `at` is the time asked about (now when None). A retrieved memory that starts after it (a change
    to come) replaces nothing then: it is told beside the memory it will replace (`upcoming`)."""
    moment = at or timezone.now()
    kept = [
        hit
        for hit in hits
        if not _qualifier_conflict(question, hit.memory.content)
        and not _subject_conflict(question, hit.memory.content)
    ]
    resolved = Resolved(hits=[], dropped_for_qualifier=len(hits) - len(kept))
    by_said = sorted(kept, key=lambda hit: said_at(hit.memory), reverse=True)
    frames = {hit.memory.id: frame_of(hit.memory.content) for hit in kept}
    # Hits are loaded without their vectors; one query brings them for the pairs to judge.
    vectors: dict[Any, Sequence[float] | None] = (
        dict(
            Memory.objects.filter(
                owner_id=kept[0].memory.owner_id, id__in=[hit.memory.id for hit in kept]
            ).values_list("id", "embedding")
        )
        if kept
        else {}
    )
    replaced: set[Any] = set()
    later: dict[Any, Memory] = {hit.memory.id: hit.memory for hit in kept if world_start(hit.memory) > moment}
    for hit in kept:
        successor = later.get(hit.memory.superseded_by_id)
        if successor is not None and hit.memory.id not in later:
            resolved.upcoming.setdefault(hit.memory.id, []).append(successor)
            replaced.add(successor.id)
    for index, newer in enumerate(by_said):
        if newer.memory.id in replaced or newer.memory.id in later:
            continue
        for older in by_said[index + 1 :]:
            new_vector, old_vector = vectors.get(newer.memory.id), vectors.get(older.memory.id)
            if (
                older.memory.id in replaced
                or older.memory.id in later
                or new_vector is None
                or old_vector is None
            ):
                continue
            verdict = judge(
                frames[newer.memory.id],
                frames[older.memory.id],
                similarity=_cosine(new_vector, old_vector),
                new_kind=newer.memory.kind,
                old_kind=older.memory.kind,
            )
            if verdict in (Verdict.UPDATE, Verdict.NEGATION):
                replaced.add(older.memory.id)
                resolved.history.setdefault(newer.memory.id, []).append(older.memory)
                resolved.conflicts += 1
    resolved.hits = [hit for hit in kept if hit.memory.id not in replaced]
    if resolved.hits:
        ids = [hit.memory.id for hit in resolved.hits]
        # Never a forgotten memory: it is nobody's history.
        for old in memory_replaced_list(owner_id=resolved.hits[0].memory.owner_id, memory_ids=ids):
            if is_current(old, moment):
                continue  # it still holds then: replaced later, not history yet
            resolved.history.setdefault(old.superseded_by_id, []).append(old)
    return resolved


def history_words(memories: Sequence[Memory]) -> str:
    """ "before that: "I prefer tea." (1 March 2024)" for what a memory replaced, latest first."""
    parts = []
    for old in memories[:2]:
        when = when_of(old)
        parts.append(f"\u201c{old.content.strip()}\u201d" + (f" ({when})" if when else ""))
    return "before that: " + "; ".join(parts) if parts else ""


def upcoming_words(memories: Sequence[Memory]) -> str:
    """ "from 1 March 2027: "Starting in March I'll be at Acme."" for a change to come."""
    parts = [f"from {when_of(new) or 'later'}: \u201c{new.content.strip()}\u201d" for new in memories[:2]]
    return "; ".join(parts)


def answer_question(
    *, question: str, hits: Sequence[Hit], max_tokens: int | None = None, at: datetime | None = None
) -> Answer:
    """Answer `question` from `hits` (best first), citing only hits that support what is said.

    Both answerers see the same resolved hits (`resolve`): no other person of the same name, and of
    two memories that disagree only the one that holds, with the other as its history.
    """
    resolved = resolve(question, hits, at=at)
    answer = _answer(question=question, resolved=resolved, max_tokens=max_tokens)
    answer.checks["left_out_other_person"] = resolved.dropped_for_qualifier
    answer.checks["conflicts_resolved"] = resolved.conflicts
    return answer


def _answer(*, question: str, resolved: Resolved, max_tokens: int | None) -> Answer:
    hits = resolved.hits
    if settings.LLM_BASE_URL and hits:
        try:
            return llm_answer(
                question=question,
                hits=hits,
                max_tokens=max_tokens,
                history=resolved.history,
                upcoming=resolved.upcoming,
            )
        except OutboundError as exc:
            # The answer model is optional: without it the built-in answerer still answers, and
            # says so in `model`, rather than the whole call failing.
            logger.warning("answer model unavailable (%s); answering extractively", exc)
            answer = extractive_answer(
                question=question,
                hits=hits,
                max_tokens=max_tokens,
                history=resolved.history,
                upcoming=resolved.upcoming,
            )
            answer.model["fallback_reason"] = "the answer model is unavailable"
            return answer
    return extractive_answer(
        question=question,
        hits=hits,
        max_tokens=max_tokens,
        history=resolved.history,
        upcoming=resolved.upcoming,
    )


# --- extractive ----------------------------------------------------------------------------------


def _sentences_of(memory: Memory) -> list[str]:
    """The memory's sentences, each keeping the speaker of a conversation turn ("Ann: ...").

    Questions are left out: "Did you move?" attests nothing.
    """
    speaker, body = split_speaker(memory.content)
    sentences = [s for s in split_sentences(body) if content_terms(s) and not s.rstrip().endswith("?")]
    return [f"{speaker}: {s}" if speaker else s for s in sentences]


def extractive_answer(
    *,
    question: str,
    hits: Sequence[Hit],
    max_tokens: int | None = None,
    history: dict[Any, list[Memory]] | None = None,
    upcoming: dict[Any, list[Memory]] | None = None,
) -> Answer:
    """The best-matching sentences of the top memories, each with its date and citation."""
    model = {"mode": "extractive", "name": EXTRACTIVE_MODEL}
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    candidates = [
        (hit, sentence) for hit in hits[:EXTRACT_FROM_TOP] for sentence in _sentences_of(hit.memory)
    ]
    checks: dict[str, Any] = {"memories_considered": len(hits), "sentences_considered": len(candidates)}
    if not candidates:
        return _no_evidence(model, usage, checks)
    vectors = embeddings.embed([question, *(sentence for _, sentence in candidates)])
    question_vector, sentence_vectors = vectors[0], vectors[1:]
    scored: list[tuple[float, int, Hit, str]] = []
    asked = relations_asked(question)
    for order, ((hit, sentence), vector) in enumerate(zip(candidates, sentence_vectors, strict=True)):
        cosine = _cosine(question_vector, vector)
        share = overlap(question, f"{sentence} {when_of(hit.memory)}")
        # "I moved to Porto" answers "Where do I live?" and "Which city am I in?" whatever the
        # words: it names the relation asked about (the lexicon's), and the subject already matches.
        slot = bool(asked & frame_of(sentence).relations)
        relevant = (
            slot
            or cosine >= RELEVANT_COSINE_ALONE
            or (cosine >= RELEVANT_WITH_OVERLAP[0] and share >= RELEVANT_WITH_OVERLAP[1])
            or (hit is hits[0] and cosine >= RELEVANT_TOP_HIT_COSINE)
        )
        if relevant:
            scored.append((cosine + 0.5 * share + SLOT_BONUS * slot, order, hit, sentence))
    if not scored:
        return _no_evidence(model, usage, checks)
    best = sorted(scored, key=lambda row: (-row[0], row[1]))[:MAX_EXTRACTED_SENTENCES]
    budget = (max_tokens or MAX_TOKENS) * CHARS_PER_TOKEN
    sources: list[Hit] = []
    lines: list[str] = []
    used = 0
    for _, _, hit, sentence in sorted(best, key=lambda row: row[1]):
        if hit not in sources:
            sources.append(hit)
        number = sources.index(hit) + 1
        when = when_of(hit.memory)
        earlier = history_words((history or {}).get(hit.memory.id, []))
        coming = upcoming_words((upcoming or {}).get(hit.memory.id, []))
        note = "; ".join(part for part in (when, earlier, coming) if part)
        line = f"{sentence} ({note}) [{number}]" if note else f"{sentence} [{number}]"
        if lines and used + len(line) + 1 > budget:
            break
        if not lines and len(line) > budget:
            # Even the first sentence is over budget: cut it, but keep its citation.
            line = line[: max(budget - len(f" [{number}]") - 1, 1)].rstrip() + f"… [{number}]"
        lines.append(line)
        used += len(line) + 1
    cited = {int(n) for line in lines for n in re.findall(r"\[(\d+)\]$", line)}
    sources = [hit for i, hit in enumerate(sources, start=1) if i in cited]
    checks["sentences_used"] = len(lines)
    return Answer(text="\n".join(lines), sources=sources, model=model, usage=usage, checks=checks)


# --- LLM -----------------------------------------------------------------------------------------

SYSTEM_PROMPT = """You answer questions about the user from their saved memories.
Use only the numbered memories given; never add facts they do not state.
End every sentence with the number(s) of the memories that support it, like [1] or [2][3].
A memory marked "no longer holds" is history: say it as the past ("you used to ..."), never as current.
If the memories do not answer the question, reply exactly: I don't have any memory about that."""


def _numbered(
    hits: Sequence[Hit],
    history: dict[Any, list[Memory]] | None = None,
    upcoming: dict[Any, list[Memory]] | None = None,
) -> str:
    lines = []
    for number, hit in enumerate(hits, start=1):
        memory = hit.memory
        when = when_of(memory)
        label = f"{memory.kind}, {when}" if when else memory.kind
        earlier = history_words((history or {}).get(memory.id, []))
        # History is shown as history, so the model can say "you used to ..." and never states it as current.
        suffix = f" (no longer holds, {earlier})" if earlier else ""
        # A change to come is said as the future ("from March you will ..."), the memory as current.
        coming = upcoming_words((upcoming or {}).get(memory.id, []))
        suffix += f" (holds until it changes, {coming})" if coming else ""
        lines.append(f"[{number}] ({label}) {memory.content}{suffix}")
    return "\n".join(lines)


def _claims(text: str) -> list[tuple[str, list[int]]]:
    """(sentence without citations, cited numbers) for each sentence of the model's answer.

    Markers written after the full stop ("... Paris. [1]") belong to the sentence before them.
    """
    pieces = [p.strip() for line in text.splitlines() for p in split_sentences(line) if p.strip()]
    claims: list[tuple[str, list[int]]] = []
    for piece in pieces:
        leading = _LEADING_CITATIONS_RE.match(piece)
        if leading and claims:
            claims[-1][1].extend(
                int(n) for group in _CITATION_RE.findall(leading.group(1)) for n in re.split(r"[,;]", group)
            )
            piece = piece[leading.end() :]
        numbers = [int(n) for group in _CITATION_RE.findall(piece) for n in re.split(r"[,;]", group)]
        sentence = " ".join(_CITATION_RE.sub(" ", piece).split())
        sentence = re.sub(r"\s+([.!?,;:])", r"\1", sentence)
        if sentence:
            claims.append((sentence, numbers))
    return claims


def _with_citations(sentence: str, numbers: Sequence[int]) -> str:
    markers = "".join(f"[{n}]" for n in numbers)
    if sentence and sentence[-1] in ".!?":
        return f"{sentence[:-1]} {markers}{sentence[-1]}"
    return f"{sentence} {markers}"


def llm_answer(
    *,
    question: str,
    hits: Sequence[Hit],
    max_tokens: int | None = None,
    history: dict[Any, list[Memory]] | None = None,
    upcoming: dict[Any, list[Memory]] | None = None,
) -> Answer:
    """The chat model's answer from the numbered hits, keeping only checked, supported citations."""
    response = post_json(
        f"{settings.LLM_BASE_URL}/chat/completions",
        {
            "model": settings.LLM_MODEL,
            "temperature": 0,
            "max_tokens": max_tokens or DEFAULT_LLM_MAX_TOKENS,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {
                    "role": "user",
                    "content": f"Memories:\n{_numbered(hits, history, upcoming)}\n\nQuestion: {question}",
                },
            ],
        },
        api_key=settings.LLM_API_KEY,
    )
    try:
        text = str(response["choices"][0]["message"]["content"] or "")
    except (KeyError, IndexError, TypeError):
        raise OutboundError("the answer model replied in an unexpected shape", transient=False) from None
    raw_usage = response.get("usage") if isinstance(response, dict) else None
    usage = {
        key: int(raw_usage[key])
        for key in ("prompt_tokens", "completion_tokens", "total_tokens")
        if isinstance(raw_usage, dict) and isinstance(raw_usage.get(key), int)
    }
    model = {"mode": "llm", "name": str(response.get("model") or settings.LLM_MODEL)}

    claims = _claims(text)
    pairs = [
        (index, number)
        for index, (_, numbers) in enumerate(claims)
        for number in dict.fromkeys(numbers)
        if 1 <= number <= len(hits)
    ]
    unknown = sum(
        1 for _, numbers in claims for number in dict.fromkeys(numbers) if not 1 <= number <= len(hits)
    )
    results = supports([claims[i][0] for i, _ in pairs], [hits[n - 1].memory for _, n in pairs])
    valid: dict[int, list[int]] = {}
    for (index, number), support in zip(pairs, results, strict=True):
        if support.ok:
            valid.setdefault(index, []).append(number)
    checks = {
        "citations_checked": len(pairs) + unknown,
        "citations_removed": unknown + sum(1 for s in results if not s.ok),
        "sentences_removed": sum(1 for i in range(len(claims)) if i not in valid),
    }
    if not valid:
        return _no_evidence(model, usage, checks)

    # Renumber in order of first citation, so [n] is the n-th entry of `sources`.
    renumber: dict[int, int] = {}
    sentences = []
    for index, (sentence, _) in enumerate(claims):
        if index not in valid:
            continue
        for number in valid[index]:
            renumber.setdefault(number, len(renumber) + 1)
        sentences.append(_with_citations(sentence, [renumber[n] for n in valid[index]]))
    sources = [hits[number - 1] for number in renumber]
    return Answer(text=" ".join(sentences), sources=sources, model=model, usage=usage, checks=checks)
