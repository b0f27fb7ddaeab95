"""Hybrid recall: the ranked memories of one owner's space for a query. Nothing here writes.

One SQL statement does the retrieval (see docs/retrieval.md for the why of each step):

1. candidates: the `vector_pool` nearest memories by cosine distance (pgvector HNSW, filters inside
   the index scan, iterative scans on so a selective filter does not come back short) and the
   `text_pool` best full-text matches, where the text query is an OR of the query's words over the
   'english' configuration, ranked by BM25 (binary term frequency, no length normalisation, IDF
   from the space itself);
2. score: reciprocal rank fusion of the two ranked lists blended with the relative scores
   (cosine similarity plus the BM25 score scaled to the best candidate), because RRF alone throws
   away how much better the first hit is than the tenth;
3. boosts: a memory said by someone the query names ("Caroline: ..." for "what did Caroline
   ..."), a memory whose world time falls in a period the query names ("in May 2023",
   "last week"), pinned memories, and with `expand_entities` the memories linked to the entities
   named in the query or carried by the top hits;
4. conversation context: the memory saved right after (and, less so, right before) a strong hit in
   the same space and session inherits part of its score, because in a conversation the answer is
   usually the turn after the matching question.

Filters (owner, space, active status, kinds, tags, session, the clock rules of `at`) are applied
inside every part of the statement, never after it, so a filtered recall is never short.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

import numpy as np
from django.db import connections
from django.utils import timezone

from accounts.models import User
from config.replicas import read_alias
from memories import embeddings
from memories.as_of import View, active_sql, held_sql, held_sql_params, started_sql
from memories.models import FTS_CONFIG, Memory, Space
from memories.pipeline.entities import COMMON_WORDS, FIRST_NAMES
from memories.pipeline.language import (
    NOT_SPEAKER_WORDS,
    REQUEST_WORDS,
    ROLE_SPEAKERS,
    STOP_WORDS,
    USER_ROLES,
    fold,
    split_sentences,
    split_speaker,
    stem,
)
from memories.pipeline.lexicon import (
    Lexicon,
    asks_earlier,
    detect,
    lexicon,
    persons,
    slot_words,
    slots_asked_in,
    value_asked,
)
from memories.pipeline.timeparse import resolve_times
from memories.pipeline.update import frame_of, is_question, is_tentative, names_someone
from memories.pipeline.values import DATE, MONEY, NAME, NUMBER, PLACE, QUANTITY, TIME, WEEKDAY, values_of
from memories.retrieval.rows import hit_columns_sql, hit_joins_sql, memory_from_row
from memories.selectors.jobs import PENDING_SAVES_SQL


@dataclass(frozen=True)
class Knobs:
    """The tunable constants of ranking; `DEFAULT_KNOBS` is what the service uses.

    Measured on the LoCoMo development split (benchmarks/locomo.py); docs/retrieval.md lists what
    each one does and what moving it costs.
    """

    vector_pool: int = 100
    text_pool: int = 100
    # HNSW candidate list; must be at least vector_pool for the first pass to fill the pool. 400, not
    # 200: among 100,000 other memories in a space the walk at 200 missed 13 of the 45 evidence turns
    # LoCoMo lost, true top-10 neighbours by exact cosine; at 400 R@10 there 0.718 -> 0.727 (26 and 41
    # up, 30 level), clean unchanged on each conversation, +0.6 ms p50 / +1.6 ms p95 per recall at
    # 100,000 memories (docs/retrieval.md, "Distractors").
    ef_search: int = 400
    rrf_k: int = 10
    # Share of reciprocal rank fusion in the base score; the rest is the relative-score blend.
    rrf_share: float = 0.25
    # Weight of the (best-candidate-scaled) BM25 score next to the cosine similarity.
    text_weight: float = 0.5
    bm25_k1: float = 1.2
    # No length normalisation: BM25's measures a memory's length against the candidates' average,
    # so a space that also holds many short notes pushed its longer memories (conversation turns)
    # down, and what else the space holds changed the order of the same memories. With 0 the text
    # score is the sum of the matched words' IDF. LoCoMo's development split: R@10 0.801 at 0.3 and
    # 0.800 at 0 clean; among 100,000 other memories 0.727 -> 0.755, up on each conversation
    # (docs/retrieval.md, "Distractors").
    bm25_b: float = 0.0
    # IDF comes from a sample of this many memories of the space (exact in smaller spaces).
    df_sample: int = 1000
    # Words in more than this share of the sample pick no text candidates (they still score);
    # in spaces bigger than the sample only words below `rare_share` do, so the text scan stays
    # bounded, and it reads at most `text_scan` rows.
    common_share: float = 0.25
    # 0.02: a word found in 2 % of the sample matches about 2,000 memories of a 100,000-memory space,
    # what the scan reads (`text_scan`); rarer words fit it whole. At 0.005 a person's name in a
    # space crowded with other memories picked nothing (LoCoMo conversation 26 among 20,000 other
    # memories: R@10 0.673 at 0.005, 0.699 at 0.02, as with an exact count).
    rare_share: float = 0.02
    text_scan: int = 2000
    speaker_boost: float = 0.3
    # A question in the first person ("Where do I live?", "my sister") is about the person: what the
    # person said (a save with no speaker, or a "User:" turn) gets this boost; one in the second
    # person ("What did you suggest?") is about the agent, and the assistant's turns get it. The
    # speaker is read off the save (the source), so every statement of a long turn carries it, not
    # only its first. 0 turns it off.
    own_boost: float = 0.6
    # Whether the "you" of a request made to the agent ("Can you suggest ...", "What do you think?")
    # makes the question one about the agent. False: such a question is about the person's taste
    # and plans, and only the person's words get `own_boost`; LongMemEval's preference questions
    # (docs/retrieval.md).
    requests_ask_agent: bool = False
    # Whether the frame of a request for advice ("Can you suggest ...", "Any advice?", "What do you
    # think?") is left out of the text side's words: "advice" matched every "Thanks for the advice!"
    # of a long chat, and with `own_boost` those filled the top of "My cookies need something
    # extra. Any advice?" (cosine 0.05-0.22 to it). The vector side still embeds the whole query
    # (embedding it without the frame lost preference R@20 0.25). LongMemEval preference R@10
    # 0.67 -> 0.92, chosen on its first 18 questions and confirmed on the next 18; no LoCoMo
    # question has such a frame (docs/retrieval.md, 6 December 2026, third round).
    drop_request_frame: bool = True
    # The n-th memory of one save in the ranking counts sibling_share^(n-1) of its score: a long
    # turn split into a dozen statements fills the top k with one turn otherwise, and fewer distinct
    # saves reach the caller. 1 turns it off.
    sibling_share: float = 0.5
    time_boost: float = 0.2
    # The share of a question's weight a word of the everyday slot it asks about has on the text
    # side (lexicon `slots`: "Where do I live?" -> "moved", "flat", "lease"). 0 turns it off.
    slot_weight: float = 0.5
    # "<n> weeks ago" names a point said roughly: its window is centred on it and grows with the unit
    # (query_periods). Off: the window of any other phrase, the rule before December 2026.
    centred_ago: bool = True
    # "This year", "last month", "this week" name a calendar unit: its window starts on 1 January, the
    # 1st, the Monday of the moment the phrase resolves to. Off: a window that starts a day before
    # that moment, the rule before December 2026, under which "How many books have I read this
    # year?" asked in July looked at the year to come.
    calendar_periods: bool = True
    # A memory with no world time of its own ("I love the new pottery studio": no episode, no
    # validity) counts for a period the query names when it was said in it (its `stated_at`, the
    # save's date): "What did I talk about last Saturday?" is about what was said that day.
    period_said: bool = False
    # A question about how things stand now ("currently", "these days", "so far", "still": `asks_now`)
    # prefers the newer of the memories it matches: among the candidates, the one said last gets this
    # boost, the one said first none, the others in between by their rank in time ("Where do I keep
    # my sneakers now?" after a move; "How many have I added so far?" after several counts).
    recency_boost: float = 0.3
    # The same preference, at this boost, for a question asked in the present tense with no word of
    # "now" ("How many trips have I taken my camera on?", "How often do I see my therapist?"): it asks
    # how things stand at the time it is asked. Not for one in the past tense ("did", "was"), one about
    # an earlier state (`asks_then`), or one that names a period (the period ranks then).
    present_recency: float = 0.0
    # A question that asks for a time ("When did ...?", "How long ago ...?") prefers a memory that
    # places itself in time: its text names one ("yesterday", "last Fri", "for four years", "last
    # summer"; Memory.names_time, set at save time by timeparse.mentions_time), whatever kind the
    # rules gave it. "I went to the support group yesterday" answers "When did she go?"; "The
    # support group was great" does not. 0.4 was chosen on every leave-one-conversation-out fold
    # of LoCoMo (docs/retrieval.md).
    dated_boost: float = 0.4
    pinned_boost: float = 0.25
    # Conversation context: shares of a hit's score passed to the next / previous memory.
    context_next: float = 0.3
    context_previous: float = 0.1
    # 10 was chosen on every leave-one-conversation-out fold once context reached five turns (30
    # spread it from too many parents and flooded the top with their neighbours).
    context_from_top: int = 10
    context_gap: timedelta = timedelta(hours=1)
    # The next `context_window` memories of the conversation (and as many before) take a share,
    # multiplied by `context_decay` for each step further away (0: the nearest one only).
    # 5 and 0.5: R@10 on LoCoMo's development split +0.011 (single-hop +0.03, multi-hop -0.02),
    # better on each of its three conversations; a plateau from 0.3 to 0.7 (docs/retrieval.md).
    context_window: int = 5
    context_decay: float = 0.5
    # expand_entities: a memory linked to an entity of a top hit gets this share of that hit's
    # score (of the best score for an entity the query names), so it ranks right behind it.
    entity_share: float = 0.8
    expansion_from_top: int = 5
    expansion_pool: int = 50
    # The relevance floor: a memory is a hit of its own only if it shares a word with the query or its
    # cosine similarity reaches this. With the shipped model, nonsense and off-topic queries score
    # 0.05-0.17 against ordinary statements and top out near 0.31 over 2,000 chat turns, while an answer
    # that shares no word with its question ("Where do I live?" / "I moved to Berlin.") scores 0.33-0.6;
    # docs/retrieval.md says how it was chosen. Context and entity neighbours of a hit that clears the
    # floor still come with it.
    semantic_floor: float = 0.3
    # The floor for what the person said, asked in the first person (the agent's turns, asked in the
    # second): "What company am I with?" / "I switched over to Wayne Enterprises last spring." share no
    # word and sit under 0.3, and in a person's own notes that is the answer, while off-topic pairs
    # stay under 0.17. 0.2 on the everyday slot questions (benchmarks/slots.py: found in the top 5
    # 0.71 -> 0.82, answered alone 0.89 -> 0.96; 0.25 gave 0.79, 0.93). Only with `own_boost` on.
    own_floor: float = 0.2
    # A strong hit (one of the `restated_from_top` best) of the person's own (as for `own_boost`) said
    # again later in another of their saves, as close in meaning as `restated_similarity` (the same
    # claim with a new value: "I've used my Fitbit for 6 months" and, months later, "for 9 months
    # now"), is an older state of one thing and ranks at `restated_share` of its score; for a
    # question about an earlier state (`asks_then`: "initially", "at first") the later one does.
    # 1 turns it off: LongMemEval had too few questions to choose it on (docs/retrieval.md).
    restated_share: float = 1.0
    restated_similarity: float = 0.8
    restated_from_top: int = 30
    # With include_history, a row that no longer holds ranks at this share of its score, so what holds
    # now comes first.
    history_share: float = 0.5
    # Newest said first (`newest_said_first`): among the hits the person said themselves, those with
    # a sentence that holds at least this share of the question's words (and two of them) answer it;
    # they keep the places they ranked at, but the one said last takes the first of those places, and
    # so on (oldest first for a question about an earlier state: `asks_then`). A new value is often
    # said in passing inside a longer message ("... which brings my total species count to 32"), so
    # it ranks below the older, plainer statement on meaning. Every other hit keeps its place, and
    # the top k holds as many answers as before (which ones can change where they straddle k). 0
    # turns it off. LongMemEval's 27 knowledge-update questions: newest evidence first 12 -> 22
    # (23 with `newest_said_frame`), recall at 10 and 20 unchanged on all 57 questions held
    # (docs/retrieval.md).
    newest_said_share: float = 0.5
    # ... and at least this many of them (all of them when the question has fewer): a question of one
    # word besides its frame ("How many cats do I have?") is answered by a sentence with that word
    # ("we adopted a third cat"); two, and one of them alone is too loose ("Who is the designer at
    # Google?" is not answered by "Our team designs mobile apps").
    newest_said_words: int = 2
    # Whether the words that ask for a quantity ("how many", "how much", "how often") are left out of
    # the question's words there: they ask for the value, and the statement that gives it need not
    # say them ("How many cats do I have?" / "we adopted a third cat").
    newest_said_frame: bool = True
    # How many of the best hits it looks at, whatever `top_k` asks for, so that a short recall puts
    # first the same memory a long one does.
    newest_said_window: int = 20
    # Whether, for a short first-person question of an everyday slot ("Where do I live?"), the
    # person's memories the update engine holds as that slot's value (`Memory.slot`, e.g.
    # "user:lives_in" for "I moved to Leipzig last spring") count as its answers too, and come before
    # the others: they may share no word with the question, while "Before that I lived in Dresden"
    # shares one.
    slot_holders_first: bool = True
    # Whether the person's newest memory that says a change of what the question asks about goes just
    # above the answers when it was said after all of them (`_says_change`): a sentence that states a
    # change with a value in its language (a change verb, a strong cue or a cue word: "switched",
    # "no longer", "now", "jetzt", "ahora"), itself or the statement before it holding a content
    # word of the question; not a wish, a plan, a question, a negated change, a value said to hold,
    # nor someone else's change for a question about the person's own. "How many plants do I have?"
    # / "the storm knocked two pots over, so I'm down to ten plants now" after "I have 12 plants": a
    # new value is often said in other words, so it is no answer by words. Only the one moves, and
    # only up: what ranked between it and the first answer moves down one place (a swap would drop
    # an answer far down). Not for a question about an earlier state.
    newest_said_change: bool = True
    # Whether a question about an earlier state (`asks_then`: "What was my rent before the
    # increase?", "Which team was I on before the reorg?") also looks at what no longer holds, as
    # `include_history` does, without ranking it below what holds: the update engine superseded the
    # old value when the new one came, and the old value is what the question asks for. Each such
    # hit says it no longer holds (its status and clocks).
    then_history: bool = True
    # Whether the person's turns that only ask (`only_asks`: every sentence a question holding no
    # value, a greeting or a thanks aside: "Do podcast episodes do better if they're under an
    # hour?") go below the other hits of the window (`newest_said_window`) and count as no answer of
    # "newest said first": they share the question's words but state nothing, and the person asks
    # about a topic long after the value that holds was said, so the newest of them led a question
    # about now. A question that tells a value ("... my wife, who just turned 40?") stays. Not for a
    # question about what the person asked or about the conversation with the agent.
    asking_below: bool = True
    # Whether a value that is one of the question's own values (`frame_of(query).values`: "my
    # brother", "my GP") counts as told in such a question: "Can family visit soldiers where my
    # brother is stationed?" names the topic of "Where is my brother stationed?" and tells nothing
    # new of it; "Can you suggest a gift for my wife, who just turned 40?" tells 40. Off (any value
    # keeps a question in place): a helper's attack (update_order_attack55.json) showed it hiding the
    # newest value in 3 of 7 questions whose new value the engine does not read ("Is it normal for
    # my wife to be this exhausted after retraining as a night nurse?"), and the sixth blind set did
    # not move (docs/retrieval.md, "Update order, seventh round").
    asking_own_values: bool = False
    # Whether a later change counts as about the question's topic when it names a name of an answer
    # the person gave before (`newest_said_change`, `_referents`): the old value it replaces or the
    # one who holds it ("Vendí la Honda, ahora llevo una Yamaha" after "Tengo una moto Honda CB500",
    # "we meet Thursdays, not Wednesdays"), and a value besides. A correction names what it
    # corrects more often than the words of the question. Names only: a number said again is as
    # often a coincidence. Off: the attack (update_order_attack55.json) showed it lifting a later
    # change of something else that names the same name ("Gareth moved to a new flat in Leeds now")
    # above the value that holds in 8 of 18 questions, for 1 of 8 true changes gained, and the
    # sixth blind set did not move.
    change_by_referent: bool = False
    # Whether a later turn of the person's that says a change in words other than the question's
    # ("Busy few weeks. ... They lost two volunteers, so I've picked up Saturdays as well. Three now."
    # for "How many shifts am I doing at the hospice shop?") counts as the change of what the
    # question asks about when it is at least this close in meaning (cosine of the two memories) to
    # one of the answers, was said after each answer it is that close to, and no answer already says
    # a change of the topic (then the newest value is among them: "Saw the Honda dealer, they now sell
    # Yamahas" is not a change of "I ride a Honda CB500 these days"). `_changes_by_meaning`. 0 turns
    # it off. 0.4 chosen on the ninth update-order set (newest first 12, 11, 10 of 29 at 0.4, 0.45,
    # 0.5 before the shared-words guard; 9 -> 11 as shipped), the guards on the attacks of stops 55
    # and 60; confirmed on the first eight sets (newest first 124 -> 141 of 289 over the nine, none
    # lower), blind on the tenth (9 -> 11 of 29), level on LongMemEval (docs/retrieval.md, "Update
    # order, tenth round").
    change_by_meaning: float = 0.4
    # Whether, among the answers of "newest said first", those that only ask, wish or plan about
    # the topic and hold no value of the kind the question asks for (`value_asked`: a count for
    # "how many", an amount, a time, a name, a place; `holds_kind`, `states_about`) go after the
    # others: "Is 42 minutes too long for the album?" after "We've finished ten songs" for "How
    # many songs have we finished?". Off: measured in its broad form (every answer without such a
    # value after those with one) and this narrow one, it helped little on the blind sets and the
    # broad form hid the value that holds whenever it was said in words no reader types ("a
    # couple", "half ten", "in a shoe rack"): docs/retrieval.md, "Update order, eighth round".
    typed_answers_first: bool = False
    # Whether, for a question about the person's own (no other person in it, neither a relative nor
    # a name, and not "who"), the person's turns that speak of the topic only as someone else's
    # ("My cousin Ravi did his honeymoon in the Maldives" for "Where are we going on our
    # honeymoon?", "My friend Harriet has a bell tent" for "Which tent do we have?") go below the
    # other hits of the window and count as no answer, as turns that only ask do (`asking_below`):
    # each of their sentences that holds a word of the question has another person as its subject
    # (the update engine's `frame_of(...).subject`).
    others_below: bool = True


DEFAULT_KNOBS = Knobs()


MAX_QUERY_WORDS = 32


# Saves looked at to find a hit's neighbour: a save that left no memory of its own (its content was
# a duplicate) is skipped, but the walk stays short.
CONTEXT_SCAN = 3


MAX_NAME_TOKENS = 64


_WORD_RE = re.compile(r"[^\W_]+")
_NAME_TOKEN_RE = re.compile(r"[^\W_]+(?:['\u2019.-][^\W_]+)*")

# What an apostrophe leaves of a word when `_WORD_RE` splits it there: "what's", "I've", "we'll",
# "you're", and the elisions of French ("l'abonnement", "d'Alice", "j'ai"), a letter each.
_SPLIT_TAILS = frozenset({"ll", "re", "ve"})


def _content_word(word: str) -> bool:
    """Whether a case-folded word can say what a text is about: not a stop word, nor what an
    apostrophe leaves (a single letter, or one of `_SPLIT_TAILS`). "What's the monthly payment on our sofa?"
    counted "s" as one of its four words, and every "Geoff's" or "it's" as holding it."""
    return len(word) > 1 and word not in STOP_WORDS and word not in _SPLIT_TAILS


@dataclass(frozen=True)
class RecallRequest:
    """What to look for and the filters. The clocks are those of `memories.as_of`:
    `at=None` is the current view; `known_at` limits it to what the service had recorded by then
    (asked explicitly, as the evidence profile does)."""

    query: str
    top_k: int = 20
    kinds: Sequence[str] = ()
    tags: Sequence[str] = ()
    expand_entities: bool = False
    at: datetime | None = None
    known_at: datetime | None = None
    session_id: uuid.UUID | str | None = None
    # Also rows that no longer hold (superseded, ended), ranked below what holds.
    include_history: bool = False

    @property
    def view(self) -> View:
        return View(at=self.at, known_at=self.known_at)


@dataclass
class Hit:
    memory: Memory
    # The ranking score (only comparable within one recall) and the cosine similarity to the query.
    score: float
    similarity: float = 0.0
    # The query's words this memory contains (as written in the memory), for highlighting.
    matched_words: list[str] = field(default_factory=list)
    # Whether it holds in the recall's view (False only for history asked for with include_history).
    held: bool = True


# How well the best hits match: "strong" (a close meaning, or most of the query's words), "weak"
# (only loosely related), "none" (nothing cleared the relevance floor).
STRONG = "strong"


WEAK = "weak"


NONE = "none"


# A hit this similar to the query matches it strongly whatever its words.
STRONG_SIMILARITY = 0.5


@dataclass
class RecallResult:
    at: datetime
    hits: list[Hit] = field(default_factory=list)
    # The space's saves still queued or running, when the recall was asked to count them.
    pending: int | None = None

    @property
    def match(self) -> str:
        """ "strong", "weak" or "none": what a person or an agent should make of the hits."""
        if not self.hits:
            return NONE
        return STRONG if any(_strong(hit) for hit in self.hits[:5]) else WEAK


def _strong(hit: Hit) -> bool:
    return hit.similarity >= STRONG_SIMILARITY or len(hit.matched_words) >= 2


# The frame of a request for advice: the words that ask the agent to help ("Can you suggest ...",
# "Any advice?", "What do you think?"), not what the help is about. As text they match every turn
# that asked or thanked for advice ("Thanks for the advice!"), whatever its topic.
_REQUEST_FRAME_RE = re.compile(
    r"\b(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:suggest|recommend|give\s+me|tell\s+me|share"
    r"|provide|list|help\s+me(?:\s+(?:with|find|choose|pick))?)"
    r"|what\s+do\s+you\s+(?:think|suggest|recommend)"
    r"|(?:do\s+you\s+have\s+)?any\s+(?:advice|suggestions?|recommendations?|tips|ideas)"
    r"|do\s+you\s+think)\b",
    re.IGNORECASE,
)


def query_words(query: str, *, drop_request_frame: bool = False) -> list[str]:
    """The distinct words of the query for the text side, request words removed, in order; with
    `drop_request_frame`, also the words of a request's frame ("Can you suggest", "Any advice?")."""
    if drop_request_frame:
        query = _REQUEST_FRAME_RE.sub(" ", query)
    # Case-folded but not accent-folded: the 'english' configuration keeps accents ("café").
    words = [w for w in _WORD_RE.findall(query.casefold()) if w not in REQUEST_WORDS]
    return list(dict.fromkeys(words))[:MAX_QUERY_WORDS]


# A question that asks for a slot's holder names little else ("Who is my boss?", "Where do I live
# these days?"); a longer one that mentions a slot word on its way ("Can you suggest activities for
# my commute to work?", "... the workshop on communication in the workplace?") asks something else.
SLOT_QUESTION_MAX_WORDS = 8


def asks_slot(query: str, knobs: Knobs) -> bool:
    """Whether the slot's words join the query's: a short question, not a request to the agent."""
    return (
        knobs.slot_weight > 0
        and len(_WORD_RE.findall(query)) <= SLOT_QUESTION_MAX_WORDS
        and not _REQUEST_TO_AGENT_RE.search(query)
    )


def _text_words(query: str, knobs: Knobs) -> dict[str, list[Any]]:
    """The text side's words: the query's, then (at `slot_weight` each) those its everyday slot is
    often said with, so "Where do I live?" finds "We moved into the new flat in Lisbon"."""
    words = query_words(query, drop_request_frame=knobs.drop_request_frame)
    slot = [w for w in slot_words(query) if w not in words] if asks_slot(query, knobs) else []
    return {"words": words + slot, "word_weights": [1.0] * len(words) + [knobs.slot_weight] * len(slot)}


def matched_words(content: str, words: Sequence[str]) -> list[str]:
    """The words of `content` (as written) that share a stem with one of the query's `words`, stop
    words left out: why a hit matched, for highlighting."""
    wanted = {stem(w) for w in words if _content_word(w)}
    found = [
        word
        for word in _WORD_RE.findall(content)
        if _content_word(word.casefold()) and stem(word.casefold()) in wanted
    ]
    return list(dict.fromkeys(found))


def query_names(query: str, *, fold_accents: bool = False) -> list[str]:
    """Lower-cased 1-3 word phrases of the query: the keys to match speakers and entity names against.

    Entity names are stored accent-folded (`normalized_name`), speakers as written; `fold_accents`
    picks the form.
    """
    text = fold(query) if fold_accents else query.casefold()
    tokens = [t.strip(".") for t in _NAME_TOKEN_RE.findall(text)][:MAX_NAME_TOKENS]
    tokens = [t[:-2] if t.endswith(("'s", "\u2019s")) else t for t in tokens]
    names: list[str] = []
    for size in (1, 2, 3):
        names.extend(" ".join(tokens[i : i + size]) for i in range(len(tokens) - size + 1))
    return list(dict.fromkeys(n for n in names if n))


# Questions that ask for a time: English question grammar, matched at the start of the question.
_ASKS_WHEN_RE = re.compile(
    r"^\W*(?:\w+,\s+)?(?:when|since\s+when|until\s+when|how\s+long|how\s+many\s+(?:days|weeks|months|years)"
    r"|(?:(?:in|on|at|during)\s+)?(?:what|which)\s+(?:year|month|day|date|week|season|time))\b(?!-)",
    re.IGNORECASE,
)


# Speakers that are the agent's side of a conversation ("Assistant: ..."); the person's are USER_ROLES.
AGENT_ROLES = tuple(sorted(ROLE_SPEAKERS - USER_ROLES - {"system"}))


# The second person of a request made to the agent ("Can you suggest ...", "What do you think?",
# "Do you have any tips ..."): it asks the agent to do something now, it does not ask about what the
# agent said. "Can you recommend a show for me tonight?" is about the person's taste.
_REQUEST_TO_AGENT_RE = re.compile(
    r"\b(?:(?:can|could|would|will)\s+you|if\s+you\s+(?:can|could|would)|do\s+you\s+(?:think|have|know)"
    r"|what\s+do\s+you\s+(?:think|suggest|recommend)|thank\s+you|you\s+know)\b",
    re.IGNORECASE,
)


# A question about the conversation with the agent: "remind me", "our previous chat".
_ABOUT_THE_CONVERSATION_RE = re.compile(
    r"\bremind\s+me\b|\bour\s+(?:\w+\s+)?(?:conversation|chat|discussion|talk)s?\b", re.IGNORECASE
)


def asks_about(query: str, *, requests_ask_agent: bool = False) -> tuple[bool, bool]:
    """(about the person, about the agent): whether the query speaks in the first person ("Where
    do I live?") and about the agent: the second person outside a request made to it ("What did
    you suggest?", not "Can you suggest ...?"), or the conversation with it ("remind me").
    The persons' words are the lexicon's (`persons`); `requests_ask_agent` counts a request's "you"
    too (the rule before December 2026)."""
    about_person, _ = persons(query)
    unrequested = query if requests_ask_agent else _REQUEST_TO_AGENT_RE.sub(" ", query)
    _, addressed = persons(unrequested)
    return about_person, addressed or _ABOUT_THE_CONVERSATION_RE.search(query) is not None


# Questions about how things stand now, or about a total up to now.
_ASKS_NOW_RE = re.compile(
    r"\b(?:current|currently|now|nowadays|these\s+days|at\s+the\s+moment|right\s+now|still|latest"
    r"|most\s+recent|most\s+recently|anymore|any\s+more|so\s+far|to\s+date|up\s+to\s+now|since)\b",
    re.IGNORECASE,
)


def asks_now(query: str) -> bool:
    """Whether the query asks how things stand now ("Where do I currently keep ...", "so far")."""
    return _ASKS_NOW_RE.search(query) is not None


# A question's tense, by its auxiliaries: present ("do I", "have I taken", "is my", "are on") and past.
# "'s" is "is" only after a question word or a pronoun ("What's", "it's"; "my sister's" is whose).
_PRESENT_RE = re.compile(
    r"\b(?:do|does|am|is|are|have|has)\b|\w['\u2019](?:ve|m|re)\b"
    r"|\b(?:what|where|who|how|which|when|that|there|it|he|she)['\u2019]s\b",
    re.IGNORECASE,
)
_PAST_RE = re.compile(r"\b(?:did|was|were|had|used)\b|\w['\u2019]d\b", re.IGNORECASE)


def asks_present(query: str) -> bool:
    """Whether the query is asked in the present tense and not in the past, nor about an earlier
    state ("How many coins do I have?", "How long have I been using it?"; not "When did I ...")."""
    return _PRESENT_RE.search(query) is not None and _PAST_RE.search(query) is None and not asks_then(query)


# Questions about an earlier state of something that changed since.
_ASKS_THEN_RE = re.compile(
    r"\b(?:initially|originally|at\s+first|at\s+the\s+(?:start|beginning)|in\s+the\s+beginning|previously"
    r"|formerly|used\s+to|did\s+\w+\s+use\s+to|earlier|in\s+the\s+first\s+(?:\w+\s+)?(?:days?|weeks?|months?|years?))\b",
    re.IGNORECASE,
)


def asks_then(query: str) -> bool:
    """Whether the query asks about an earlier state ("Where did I initially keep ...", "at first",
    "in the first three months"; the lexicons' `earlier` words: "before the move", "my previous
    job", "früher"). The lexicons' words name an earlier thing on the way as often ("Where does my
    former manager work now?", "our previous conversation", "How many days before I bought it
    ...?"), so they count only in a question that asks neither about now (`asks_now`), nor for a
    count of days between events, nor about the conversation with the agent."""
    if _ASKS_THEN_RE.search(query) is not None:
        return True
    return (
        asks_earlier(query)
        and not asks_now(query)
        and not _ASKS_DAYS_RE.search(query)
        and not _ABOUT_THE_CONVERSATION_RE.search(query)
    )


# "How many days before I bought it did I ...": the time between two events, not an earlier state.
_ASKS_DAYS_RE = re.compile(r"^\W*how\s+many\s+(?:days|weeks|months|years)\b", re.IGNORECASE)


def asks_when(query: str) -> bool:
    """Whether the query asks for a time ("When did ...", "How long ago ...", "What year ...")."""
    return _ASKS_WHEN_RE.search(query) is not None


# "<n> <unit>s ago" is a point in time, said roughly: the window is centred on it and grows with the
# unit ("10 days ago" the day either side, "four weeks ago" half a week, "a month ago" ten days).
_AGO_RE = re.compile(r"\b(day|week|month|year)s?\s+ago\b", re.IGNORECASE)


_AGO_SLACK = {
    "day": timedelta(days=1),
    "week": timedelta(days=4),
    "month": timedelta(days=10),
    "year": timedelta(days=60),
}


def _period(
    phrase: str, moment: datetime, *, centred_ago: bool = True, calendar: bool = True
) -> tuple[datetime, datetime]:
    """The span a resolved time phrase stands for: its day, week, month or year; around the moment
    for "... ago" (`centred_ago`; off: as any other phrase, the rule before December 2026); with
    `calendar`, the calendar week, month or year the moment falls in, a day of slack either side."""
    lowered = phrase.lower()
    ago = _AGO_RE.search(lowered)
    if ago and centred_ago:
        slack = _AGO_SLACK[ago.group(1)]
        return moment - slack, moment + slack
    day = timedelta(days=1)
    midnight = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if calendar and re.search(r"\bweek\b", lowered):
        monday = midnight - timedelta(days=midnight.weekday())
        return monday - day, monday + timedelta(days=7) + day
    if calendar and re.search(r"\byear\b", lowered):
        first = midnight.replace(month=1, day=1)
        return first - day, first.replace(year=first.year + 1) + day
    if calendar and re.search(r"\bmonth\b", lowered):
        first = midnight.replace(day=1)
        following = (
            first.replace(year=first.year + 1, month=1)
            if first.month == 12
            else first.replace(month=first.month + 1)
        )
        return first - day, following + day
    if "week" in lowered or "weekend" in lowered:
        return moment - timedelta(days=1), moment + timedelta(days=8)
    if re.search(r"\byear\b|^(?:in |during )?(?:19|20)\d{2}$", lowered):
        return moment - timedelta(days=1), moment + timedelta(days=367)
    if "month" in lowered or not re.search(
        r"(?<!\d)\d{1,2}(?!\d)|day|yesterday|today|tomorrow|night", lowered
    ):
        return moment - timedelta(days=1), moment + timedelta(days=32)
    return moment - timedelta(days=1), moment + timedelta(days=1)


def query_periods(
    query: str, *, reference: datetime, centred_ago: bool = True, calendar: bool = True
) -> list[tuple[datetime, datetime]]:
    """World-time periods the query names ("last week", "in May 2023"), resolved at `reference`."""
    try:
        found = resolve_times(query, reference=reference)
    except ValueError:
        return []
    return [_period(phrase, moment, centred_ago=centred_ago, calendar=calendar) for phrase, moment in found][
        :4
    ]


def _vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def _space_filter(alias: str) -> str:
    """The active memories of the recall's space, whatever the request's other filters."""
    return f"{alias}.owner_id = %(owner)s AND {alias}.space_id = %(space)s AND {active_sql(alias)}"


def _filters(request: RecallRequest, alias: str = "m") -> str:
    """The WHERE clause every part of the statement shares. Values travel as parameters only."""
    clauses = [
        _space_filter(alias),
        # The clocks: current, or what held at `at` (memories.as_of, the rule every
        # reader shares); with include_history, everything that had started by then.
        (started_sql if request.include_history else held_sql)(request.view, alias=alias),
    ]
    if request.kinds:
        clauses.append(f"{alias}.kind = ANY(%(kinds)s::varchar[])")
    if request.tags:
        clauses.append(f"{alias}.tags @> %(tags)s::varchar[]")
    if request.session_id is not None:
        clauses.append(f"{alias}.session_id = %(session)s::uuid")
    return " AND ".join(clauses)


def _bm25_norm(length: str, average: str) -> str:
    """BM25's term-frequency part for a matched term seen once, for a memory of `length` lexemes
    among memories of `average` lexemes. In float8: the constants would otherwise be numeric, and
    numeric arithmetic over a few thousand text matches cost milliseconds."""
    k1, b = "%(k1)s::float8", "%(b)s::float8"
    return f"({k1} + 1) / (1 + {k1} * (1 - {b} + {b} * {length} / greatest({average}, 1)))"


# A recall with `types`, `tags`, `session_id`, `at` or `known_at` whose filters keep at most this
# many memories (the planner's estimate) ranks them exactly instead of walking the HNSW index; each
# of those filters has an index to read the rows it keeps through (`at`: memory_world_start). At
# `at` = a time when 5 % of the space had started, exact p50 22-25 ms against 39-43 for the walk,
# which missed 3 % of the true top 20. The walk visits about
# vector_pool / (share that passes) rows before its pool is full, the exact ranking reads every row
# that passes once: with 5 % of a 100,000-memory space passing (5,000 rows), the exact ranking took
# p50 20 ms and at most 30, the walk p50 28 ms and up to 580 ms on the odd query, and found 89 % of
# the true top 20 (docs/retrieval.md). At 10,000 rows the exact ranking costs about 40 ms.
EXACT_VECTOR_ROWS = 10_000


def _ranks_vectors_exactly(request: RecallRequest, params: dict[str, Any]) -> bool:
    """Whether the request's filters are selective enough to rank the rows they keep exactly."""
    narrowed = request.kinds or request.tags or request.session_id is not None
    # `known_at` comes with `at` (memories.as_of.View).
    if not (narrowed or request.at is not None):
        return False
    with connections[read_alias()].cursor() as cursor:
        # Only the estimate: EXPLAIN without ANALYZE plans the filter and runs nothing (~0.3 ms).
        cursor.execute(
            f"EXPLAIN (FORMAT JSON) SELECT 1 FROM memories_memory m WHERE {_filters(request)}",  # noqa: S608
            params,
        )
        plan = cursor.fetchone()[0]
    if isinstance(plan, str):
        import json

        plan = json.loads(plan)
    return bool(plan[0]["Plan"]["Plan Rows"] <= EXACT_VECTOR_ROWS)


def _text_side_sql(request: RecallRequest) -> str:
    """The text side of the retrieval statement, as CTEs: `weighted` (the query's words with their
    IDF in the space) and `text_ranked` (the text_pool best full-text matches, ranked by BM25).

    None of it needs the query's vector, so recall runs it as a statement of its own
    (`_text_statement`) while the model embeds the query, and passes its result to the retrieval
    statement (`_TEXT_SIDE_GIVEN`); with the vector already known it is inlined instead."""
    where = _filters(request)
    return f"""
terms AS (
    -- A word of the question weighs 1; a word of the slot it asks about (`slot_words`) its share.
    SELECT DISTINCT ON (tq::text) tq AS q, w.weight
    FROM unnest(%(words)s::text[], %(word_weights)s::float8[]) AS w(word, weight),
         plainto_tsquery('{FTS_CONFIG}', w.word) AS tq
    WHERE numnode(tq) > 0
    ORDER BY tq::text, w.weight DESC
),
sample AS MATERIALIZED (
    -- Document frequencies come from (up to) df_sample memories of the space: exact in spaces
    -- that small, an estimate in bigger ones, at a fixed cost either way. The first in id order,
    -- read off an index: ids are random UUIDs, so it is a uniform sample; the first rows in the
    -- table's own order were the oldest saves, one conversation's words counted as common.
    -- The space's active memories, not only those the request's filters and clock keep: how
    -- rare a word is describes the space, and the sample then costs the same for every recall
    -- (1,000 rows off the (owner, space, status, id) index); drawn from the filtered rows it
    -- meant reading and sorting all of them (35 ms with types + tags in a 100,000-memory space).
    SELECT m.search_vector FROM memories_memory m WHERE {_space_filter("m")}
    ORDER BY m.id LIMIT %(df_sample)s
),
sample_size AS (SELECT count(*) AS n FROM sample),
weighted AS MATERIALIZED (
    SELECT t.q, d.df, s.n, t.weight * ln(1 + (s.n - d.df + 0.5::float8) / (d.df + 0.5::float8)) AS idf
    FROM terms t, sample_size s,
         LATERAL (SELECT count(*) AS df FROM sample x WHERE x.search_vector @@ t.q) d
),
selective AS (
    -- The words that pick text candidates: not near-stop words of this space, and in a space
    -- bigger than the sample only the rare ones, so the scan below stays short. Every word
    -- still scores the candidates it finds.
    SELECT string_agg(q::text, ' | ')::tsquery AS q
    FROM weighted
    WHERE df <= %(common_share)s * n AND (n < %(df_sample)s OR df <= %(rare_share)s * n)
),
text_matches AS MATERIALIZED (
    SELECT m.id, length(m.search_vector) AS dl,
           (SELECT sum(w.idf) FROM weighted w WHERE m.search_vector @@ w.q) AS idf_sum
    FROM memories_memory m, selective s
    WHERE {where} AND s.q IS NOT NULL AND m.search_vector @@ s.q
    LIMIT %(text_scan)s
),
text_avgdl AS (SELECT avg(dl)::float8 AS value FROM text_matches),
text_ranked AS (
    SELECT tm.id, row_number() OVER (
        ORDER BY tm.idf_sum * {_bm25_norm("tm.dl", "a.value")} DESC, tm.id
    ) AS rank
    FROM text_matches tm, text_avgdl a
    ORDER BY rank LIMIT %(text_pool)s
)"""  # noqa: S608


def _text_statement(request: RecallRequest) -> str:
    """The text side alone, as one row: the words' tsqueries and IDFs (in the same order) and the
    text candidates' ids, best first: the parameters `term_qs`, `term_idfs` and `text_ids` of
    `_TEXT_SIDE_GIVEN`. A tsquery's text form reads back as the same tsquery."""
    return f"""WITH {_text_side_sql(request)}
SELECT (SELECT array_agg(q::text ORDER BY q::text) FROM weighted),
       (SELECT array_agg(idf ORDER BY q::text) FROM weighted),
       (SELECT array_agg(id ORDER BY rank) FROM text_ranked)
"""  # noqa: S608 - the module's own CTEs; values are parameters


# The text side's two CTEs rebuilt from `_text_statement`'s row.
_TEXT_SIDE_GIVEN = """
weighted AS MATERIALIZED (
    SELECT w.q::tsquery AS q, w.idf
    FROM unnest(%(term_qs)s::text[], %(term_idfs)s::float8[]) AS w(q, idf)
),
text_ranked AS (SELECT t.id, t.rank FROM unnest(%(text_ids)s::uuid[]) WITH ORDINALITY AS t(id, rank))"""


def _statement(
    request: RecallRequest,
    *,
    has_periods: bool,
    exact_vectors: bool = False,
    text_given: bool = False,
    collapse: bool = False,
    with_vectors: bool = False,
) -> str:
    """The retrieval statement. With `text_given`, the text side comes from the parameters of
    `_text_statement`'s row, run before it; without, it is part of the statement. With
    `with_vectors`, each of the person's best `%(vectors_window)s` rows carries its vector (NULL in
    the column otherwise: no window to compute for a question that cannot use it)."""
    where = _filters(request)
    # `+ 0` makes the order one the HNSW index cannot serve, so the planner reads the rows the
    # filters keep (through their own indexes) and sorts them by distance: exact, and cheaper when
    # few pass. The same distance either way.
    vector_order = "m.embedding <=> %(qvec)s::vector"
    if exact_vectors:
        vector_order = f"({vector_order}) + 0"
    where_c = _filters(request, alias="c")
    held_now = held_sql(request.view, alias="c") if request.include_history else "true"
    period_match = (
        """EXISTS (SELECT 1 FROM unnest(%(period_starts)s::timestamptz[], %(period_ends)s::timestamptz[])
                   AS p(s, e)
                   WHERE coalesce(c.occurred_at, c.valid_from, c.due_at, said_at.value) >= p.s
                     AND coalesce(c.occurred_at, c.valid_from, c.due_at, said_at.value) < p.e)"""
        if has_periods
        else "false"
    )
    # Phase 1 scores the vector and text candidates; phase 2 (expand_entities) brings the memories
    # linked to the query's entities and to the top hits' entities; then conversation context
    # spreads scores to the neighbours of the best ones.
    # Only constant fragments of this module are spliced into the text (the filters, the
    # period test); every value travels as a parameter.
    text_side = _TEXT_SIDE_GIVEN if text_given else _text_side_sql(request)
    sql = f"""
WITH
{text_side},
vector_pool AS MATERIALIZED (
    SELECT m.id, m.embedding <=> %(qvec)s::vector AS distance
    FROM memories_memory m
    WHERE {where} AND m.embedding IS NOT NULL
    ORDER BY {vector_order}
    LIMIT %(vector_pool)s
),
vector_ranked AS (
    SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank FROM vector_pool
),
candidates AS (SELECT id FROM vector_ranked UNION SELECT id FROM text_ranked),
candidate_rows AS MATERIALIZED (
    SELECT c.id,
           -- The vector pool's distance where it has one: no second pass over those vectors.
           coalesce(1 - v.distance, 1 - (c.embedding <=> %(qvec)s::vector), 0) AS cosine,
           length(c.search_vector) AS dl,
           coalesce((SELECT sum(w.idf) FROM weighted w WHERE c.search_vector @@ w.q), 0) AS idf_sum,
           -- float8 throughout: a numeric 1.0 would make every score after it numeric arithmetic.
           coalesce(1.0::float8 / (%(rrf_k)s + v.rank), 0)
           + coalesce(1.0::float8 / (%(rrf_k)s + t.rank), 0) AS rrf,
           -- "Name: ..." said by someone the query names: the text before a colon within the first
           -- 61 characters, with no line break in it. strpos, not a regular expression: the
           -- bounded repetition of '^([^:\\n]{{1,60}}):' cost about 20 us a row, most of this CTE.
           (sp.speaker = ANY(%(names)s::text[])) AS spoken,
           ((%(first_person)s AND by_person.value)
            OR (%(second_person)s AND sp.speaker = ANY(%(agent_roles)s::text[]))) AS own,
           by_person.value AS by_person,
           {period_match} AS in_period,
           (%(asks_when)s AND c.names_time) AS dated,
           {held_now} AS held,
           -- 0 for the candidate said first, 1 for the one said last.
           percent_rank() OVER (ORDER BY coalesce(c.stated_at, c.recorded_at), c.id) AS newness,
           coalesce(c.stated_at, c.recorded_at) AS said,
           coalesce(c.source_id, c.id) AS save
    FROM memories_memory c
    JOIN candidates USING (id)
    -- The save's speaker (lower-cased, '' for none): every statement of a turn was said by it.
    LEFT JOIN LATERAL (
        SELECT left(src.content, 61) AS head FROM memories_source src
        WHERE src.owner_id = %(owner)s AND src.id = c.source_id
    ) said ON true
    CROSS JOIN LATERAL (SELECT coalesce(said.head, left(c.content, 61)) AS head) h
    -- With `period_said`, a memory with no world time of its own is placed when it was said.
    CROSS JOIN LATERAL (SELECT CASE WHEN %(period_said)s THEN c.stated_at END AS value) said_at
    CROSS JOIN LATERAL (SELECT strpos(h.head, ':') AS colon) spc
    -- A label is no speaker ("Correction: I left ...", "Update: ...", "Note: ..."): its first word
    -- is one of `language.NOT_SPEAKER_WORDS`, as `is_speaker_name` reads it.
    CROSS JOIN LATERAL (
        SELECT CASE WHEN spc.colon > 1 AND strpos(left(h.head, spc.colon - 1), E'\\n') = 0
                         AND NOT rtrim(split_part(lower(left(h.head, spc.colon - 1)), ' ', 1), '.')
                                 = ANY(%(label_words)s::text[])
                         -- As `language.split_speaker` reads one: a space after the colon ("at 6:30"
                         -- names no one), and a role or one to three capitalised words before it
                         -- ("Chaos at home: ..." is a note's own words). The regular expression runs
                         -- only on the rows these cheaper tests leave.
                         AND substr(h.head, spc.colon + 1, 1) IN (' ', E'\\t')
                         AND (lower(btrim(left(h.head, spc.colon - 1))) = ANY(%(speaker_roles)s::text[])
                              OR btrim(left(h.head, spc.colon - 1))
                                 ~ '^[[:upper:]][^[:space:]]*([ \\t][[:upper:]][^[:space:]]*){{0,2}}$')
                    THEN lower(btrim(left(h.head, spc.colon - 1))) ELSE '' END AS speaker
    ) sp
    -- Said by the person: a save with no speaker (their own note) or a "User:" turn.
    CROSS JOIN LATERAL (
        SELECT sp.speaker = '' OR sp.speaker = ANY(%(user_roles)s::text[]) AS value
    ) by_person
    LEFT JOIN vector_ranked v USING (id)
    LEFT JOIN text_ranked t USING (id)
    -- The text candidates may come from a statement of their own, run a moment before this one:
    -- a memory changed in between (suppressed, superseded) is checked again here.
    WHERE {where_c}
),
avgdl AS (SELECT avg(dl)::float8 AS value FROM candidate_rows),
text_scores AS (
    SELECT r.*, r.idf_sum * {_bm25_norm("r.dl", "avgdl.value")} AS bm25
    FROM candidate_rows r, avgdl
),
best AS (SELECT greatest(max(bm25), 1e-9) AS bm25 FROM text_scores),
boosted AS MATERIALIZED (
    SELECT s.id, s.said, s.save, s.own,
           (%(rrf_share)s * s.rrf * (%(rrf_k)s + 1) / 2
            + (1 - %(rrf_share)s) * (s.cosine + %(text_weight)s * s.bm25 / best.bm25))
           * (CASE WHEN s.spoken THEN 1 + %(speaker_boost)s ELSE 1 END)
           * (CASE WHEN s.own THEN 1 + %(own_boost)s ELSE 1 END)
           * (1 + %(recency_boost)s * s.newness)
           * (CASE WHEN s.in_period THEN 1 + %(time_boost)s ELSE 1 END)
           * (CASE WHEN s.dated THEN 1 + %(dated_boost)s ELSE 1 END)
           * (CASE WHEN s.held THEN 1 ELSE %(history_share)s END) AS base
    FROM text_scores s, best
    -- The relevance floor: a word in common, or a close enough meaning.
    WHERE s.idf_sum > 0
       OR s.cosine >= (CASE WHEN s.own THEN %(own_floor)s ELSE %(semantic_floor)s END)
),
restated_top AS MATERIALIZED (
    SELECT b.id, b.said, b.save, m.embedding
    FROM (SELECT * FROM boosted ORDER BY base DESC, id LIMIT %(restated_from_top)s) b
    JOIN memories_memory m ON m.owner_id = %(owner)s AND m.id = b.id
    WHERE b.own
),
restated AS (
    -- What the person said, asked about in the first person, and said again later in another save
    -- (the same claim, close in meaning: "I've used my Fitbit for 6 months" and, months later, "...
    -- for 9 months now") is the older state of one thing of theirs: it ranks at `restated_share`
    -- behind the newer. A question about an earlier state ("initially", "at first") turns it
    -- round: the later restatement ranks behind. Not for what others said in a chat: two people
    -- saying alike things is a conversation, not an update.
    SELECT DISTINCT a.id
    FROM restated_top a JOIN restated_top b ON a.save <> b.save
    WHERE (CASE WHEN %(asks_then)s THEN b.said < a.said ELSE b.said > a.said END)
      AND 1 - (a.embedding <=> b.embedding) >= %(restated_similarity)s
),
scored AS MATERIALIZED (
    SELECT b.id, b.base * (CASE WHEN r.id IS NULL THEN 1 ELSE %(restated_share)s END) AS base
    FROM boosted b LEFT JOIN restated r USING (id)
),"""  # noqa: S608
    sql += """
context_sources AS (
    SELECT a.id, a.base, m.recorded_at, m.source_id, s.recorded_at AS saved_at,
           s.session_id AS source_session, s.agent_id AS source_agent
    FROM (SELECT * FROM scored ORDER BY base DESC, id LIMIT %(context_from_top)s) a
    JOIN memories_memory m ON m.owner_id = %(owner)s AND m.id = a.id
    JOIN memories_source s ON s.owner_id = %(owner)s AND s.id = m.source_id
),
context AS (
    -- The memories said right after a top hit in the same conversation (its own source's later
    -- memories, then the next saves of the same session or agent within context_gap) take a share
    -- of its score, the first most; those said right before it, a smaller share.
    SELECT n.id, cs.base * %(context_next)s * power(%(context_decay)s, n.step - 1) AS base
    FROM context_sources cs
    CROSS JOIN LATERAL (
        SELECT x.id, row_number() OVER (ORDER BY x.saved, x.said, x.id) AS step
        FROM (
            SELECT m2.id, cs.saved_at AS saved, m2.recorded_at AS said FROM memories_memory m2
            WHERE m2.owner_id = %(owner)s AND m2.source_id = cs.source_id
              AND (m2.recorded_at, m2.id) > (cs.recorded_at, cs.id)
            UNION ALL
            SELECT m2.id, s2.recorded_at, m2.recorded_at
            FROM (
                SELECT s2.id, s2.recorded_at FROM memories_source s2
                WHERE s2.owner_id = %(owner)s AND s2.space_id = %(space)s
                  AND s2.recorded_at > cs.saved_at AND s2.recorded_at <= cs.saved_at + %(context_gap)s
                  AND s2.session_id IS NOT DISTINCT FROM cs.source_session
                  AND s2.agent_id IS NOT DISTINCT FROM cs.source_agent
                  -- Saves by a person (the dashboard, a token) with no session are separate notes.
                  AND (cs.source_session IS NOT NULL OR cs.source_agent IS NOT NULL)
                ORDER BY s2.recorded_at LIMIT %(context_scan)s
            ) s2
            JOIN memories_memory m2 ON m2.owner_id = %(owner)s AND m2.source_id = s2.id
        ) x
        ORDER BY x.saved, x.said, x.id LIMIT %(context_window)s
    ) n
    UNION ALL
    SELECT p.id, cs.base * %(context_previous)s * power(%(context_decay)s, p.step - 1)
    FROM context_sources cs
    CROSS JOIN LATERAL (
        SELECT x.id, row_number() OVER (ORDER BY x.saved DESC, x.said DESC, x.id DESC) AS step
        FROM (
            SELECT m2.id, cs.saved_at AS saved, m2.recorded_at AS said FROM memories_memory m2
            WHERE m2.owner_id = %(owner)s AND m2.source_id = cs.source_id
              AND (m2.recorded_at, m2.id) < (cs.recorded_at, cs.id)
            UNION ALL
            SELECT m2.id, s2.recorded_at, m2.recorded_at
            FROM (
                SELECT s2.id, s2.recorded_at FROM memories_source s2
                WHERE s2.owner_id = %(owner)s AND s2.space_id = %(space)s
                  AND s2.recorded_at < cs.saved_at AND s2.recorded_at >= cs.saved_at - %(context_gap)s
                  AND s2.session_id IS NOT DISTINCT FROM cs.source_session
                  AND s2.agent_id IS NOT DISTINCT FROM cs.source_agent
                  AND (cs.source_session IS NOT NULL OR cs.source_agent IS NOT NULL)
                ORDER BY s2.recorded_at DESC LIMIT %(context_scan)s
            ) s2
            JOIN memories_memory m2 ON m2.owner_id = %(owner)s AND m2.source_id = s2.id
        ) x
        ORDER BY x.saved DESC, x.said DESC, x.id DESC LIMIT %(context_window)s
    ) p
),
combined AS MATERIALIZED (
    SELECT id, sum(base) AS score
    FROM (SELECT id, base FROM scored UNION ALL SELECT id, base FROM context WHERE id IS NOT NULL) parts
    GROUP BY id
),"""
    if request.expand_entities:
        sql += f"""
expansion_entities AS (
    -- An entity of a top hit passes on that hit's score; an entity the query names, the best one.
    SELECT me.entity_id, max(top.score) AS parent
    FROM (SELECT id, score FROM combined ORDER BY score DESC, id LIMIT %(expansion_from_top)s) top
    JOIN memories_memory_entities me ON me.owner_id = %(owner)s AND me.memory_id = top.id
    GROUP BY me.entity_id
    UNION ALL
    SELECT e.id, (SELECT max(score) FROM combined)
    FROM memories_entity e
    WHERE e.owner_id = %(owner)s AND e.space_id = %(space)s
      AND e.normalized_name = ANY(%(entity_names)s::text[])
      AND EXISTS (SELECT 1 FROM combined)
),
expansion AS (
    SELECT c.id, %(entity_share)s * max(x.parent) AS inherited
    FROM memories_memory c
    JOIN memories_memory_entities me ON me.owner_id = %(owner)s AND me.memory_id = c.id
    JOIN expansion_entities x ON x.entity_id = me.entity_id
    WHERE {where_c}
    GROUP BY c.id
    ORDER BY inherited DESC, min(c.embedding <=> %(qvec)s::vector), c.id
    LIMIT %(expansion_pool)s
),
final AS (
    -- Inheritance is a floor, not a bonus: a linked memory ranks at most just behind its parent.
    SELECT id, greatest(combined.score, expansion.inherited) AS score
    FROM combined FULL JOIN expansion USING (id)
)"""  # noqa: S608
    else:
        sql += """
final AS (SELECT id, score FROM combined)"""
    if collapse:
        # One save's statements after its best count less each (`sibling_share`), pinned boost
        # included in the order; the final SELECT then reads the adjusted score as is.
        sql += """,
pinned AS (
    SELECT f.id, f.score * (CASE WHEN m.pinned THEN 1 + %(pinned_boost)s ELSE 1 END) AS score,
           coalesce(m.source_id, m.id) AS save, m.recorded_at
    FROM final f JOIN memories_memory m ON m.owner_id = %(owner)s AND m.id = f.id
),
collapsed AS (
    SELECT id, score * power(%(sibling_share)s::float8, row_number() OVER (
        PARTITION BY save ORDER BY score DESC, recorded_at DESC, id) - 1) AS score
    FROM pinned
)"""
        score, source = "collapsed.score", "collapsed"
    else:
        score = "final.score * (CASE WHEN c.pinned THEN 1 + %(pinned_boost)s ELSE 1 END)"
        source = "final"
    vector_column = (
        f"""CASE WHEN coalesce(said_by.by_person, false)
                 AND row_number() OVER (ORDER BY {score} DESC, c.recorded_at DESC, c.id)
                     <= %(vectors_window)s
            THEN c.embedding::real[] END"""
        if with_vectors
        else "NULL::real[]"
    )
    sql += f"""
SELECT {score} AS score,
       coalesce(1 - (c.embedding <=> %(qvec)s::vector), 0) AS similarity,
       {held_now} AS held,
       -- Whether the person said it (what `newest_said_first` reorders); false for a memory that
       -- only came as a neighbour or a linked one, which matched nothing of the query itself.
       coalesce(said_by.by_person, false) AS by_person,
       -- The vectors of the person's best rows when `newest_said_first` may weigh how close two of
       -- them are (Knobs.change_by_meaning; `vectors_window` 0 otherwise): the hits carry none.
       {vector_column} AS vector,
       {hit_columns_sql("c")}
FROM {source} JOIN memories_memory c ON c.owner_id = %(owner)s AND c.id = {source}.id
LEFT JOIN candidate_rows said_by ON said_by.id = c.id
{hit_joins_sql("c")}
WHERE {where_c}
ORDER BY score DESC, c.recorded_at DESC, c.id
LIMIT %(rows)s
"""  # noqa: S608
    return sql


# The words of a question that ask for a quantity rather than name what it is about.
_QUANTITY_FRAME = frozenset({"many", "much", "often"})


def _answering_words(content: str, wanted: frozenset[str]) -> int:
    """How many of the question's word stems (`wanted`) the memory's best sentence holds."""
    _, text = split_speaker(content)
    best = 0
    for sentence in split_sentences(text) or [text]:
        found = {stem(w) for w in _WORD_RE.findall(sentence.casefold()) if _content_word(w)}
        best = max(best, len(found & wanted))
    return best


def _said_at(hit: Hit) -> datetime:
    """When the memory was said: its save's world time (a conversation's date), not the moment the
    worker stored it. The statements of one conversation share it, so they keep their ranked order:
    an update is a later conversation, not a later line of the same one."""
    return hit.memory.stated_at or hit.memory.recorded_at


# The label words as the SQL's text[] parameter, sorted once.
_LABEL_WORDS = sorted(NOT_SPEAKER_WORDS)


# The everyday slots of a question (the lexicon's `slots`) whose value the update engine keeps as a
# memory's slot (`extract.slot_of`), by the engine's name.
_HELD_SLOTS = {"home": "lives_in", "work": "works_at", "job": "works_at"}


def _slots_held(query: str, knobs: Knobs, *, then: bool) -> frozenset[str]:
    """The memory slots of the person's that answer a short first-person slot question ("Where do I
    live?" -> {"user:lives_in"}); none when `slot_holders_first` is off or the question is no such.
    `then`: the question asks about an earlier state (`asks_then`)."""
    # "Where does my (older) sister live?" is first person ("my") but about the sister: not the
    # person's slot. Any word for another person keeps it off. So does a question about an earlier
    # state ("Where did I live before the move?"): the slot's holder is what holds now.
    if not knobs.slot_holders_first or then or not asks_slot(query, knobs) or names_someone(query):
        return frozenset()
    return frozenset(f"user:{_HELD_SLOTS[slot]}" for slot in slots_asked_in(query) if slot in _HELD_SLOTS)


# The value types that answer each kind of question (`value_asked`); a count is read apart.
_KIND_TYPES = {
    "count": frozenset({NUMBER}),
    "amount": frozenset({MONEY, QUANTITY, NUMBER}),
    "time": frozenset({TIME, WEEKDAY, DATE}),
    "name": frozenset({NAME, PLACE}),
    "place": frozenset({PLACE, NAME}),
}


def holds_kind(content: str, kind: str, query: str, wanted: frozenset[str]) -> bool:
    """Whether a memory holds a value of the kind a question asks for (`value_asked`) that is not one
    of the question's own: for a count a whole number, a rank past the first ("a third cat") or a
    quantity in a unit the question names (`wanted`, stems: "How many hours ..." / "40 hours"); for
    the others a value of their types (`_KIND_TYPES`). "How many solar panels are on our roof?" is
    not answered by "Our panels made 41 kWh on Sunday", nor "Which days is practice?" by "we won
    3-1"."""
    asked = {value.norm for value in values_of(query)}
    _, text = split_speaker(content)
    lex = lexicon(detect(text))
    for sentence in split_sentences(text) or [text]:
        for value in values_of(sentence):
            if value.norm in asked:
                continue
            if kind != "count" and value.type in _KIND_TYPES[kind]:
                return True
            if kind == "count" and (
                (value.type == NUMBER and "." not in value.norm)
                or (value.type == QUANTITY and stem(value.norm.split()[-1]) in wanted)
            ):
                return True
        if kind == "count":
            words = {word.casefold() for word in _WORD_RE.findall(sentence)}
            if words & (lex.ordinals.keys() | lexicon("en").ordinals.keys()):
                return True
    return False


def states_about(content: str, wanted: frozenset[str]) -> bool:
    """Whether a memory states something of what the question asks about: a sentence that holds a
    word of the question (`wanted`, stems) and is no question, wish, plan or someone's words
    (`is_tentative`). "We've got a couple now" states, in words no value reader takes for a count;
    "Is 42 minutes too long for the album?" and "I'm thinking of selling some of my baseballs" do
    not."""
    _, text = split_speaker(content)
    for sentence in split_sentences(text) or [text]:
        if not {stem(w) for w in _WORD_RE.findall(sentence.casefold())} & wanted:
            continue
        if not is_tentative(sentence, lexicon(detect(sentence))):
            return True
    return False


def _at_places(hits: Sequence[Hit], ordered: Sequence[Hit]) -> list[Hit]:
    """`ordered` (a reordering of `hits`) with each hit taking the score of the place it now holds,
    so that the scores still fall from first to last for a caller that sorts by them."""
    return [replace(hit, score=hits[place].score) for place, hit in enumerate(ordered)]


def newest_said_first(
    hits: list[Hit],
    by_person: Sequence[bool],
    query: str,
    knobs: Knobs,
    *,
    periods: Sequence[tuple[datetime, datetime]] = (),
    vectors: Mapping[uuid.UUID, Sequence[float]] | None = None,
) -> list[Hit]:
    """`hits` with the person's answers to `query` in the order they were said, newest first (oldest
    first when the query asks about an earlier state), each in a place one of them ranked at
    (Knobs.newest_said_share). "How many coins do I have?": "I've added a 1915 quarter to my 37
    pre-1920 coins, so 38 now" said after "I have 37 pre-1920 American coins" comes first even when it
    ranked below it. A question that names periods (`periods`, resolved against its `at`) is about
    what was said in them: "How many books have I read this year?" orders the answers said this year,
    and one said before or after stays where it ranked. A pinned memory keeps the place its boost
    gave it: the person said it matters most. History (`include_history`) is not an answer about
    now and keeps its place below what holds."""
    if knobs.newest_said_share <= 0:
        return hits
    wanted = frozenset(
        stem(w)
        for w in query_words(query, drop_request_frame=knobs.drop_request_frame)
        if _content_word(w) and (not knobs.newest_said_frame or w not in _QUANTITY_FRAME)
    )
    if not wanted:
        return hits
    need = max(min(knobs.newest_said_words, len(wanted)), knobs.newest_said_share * len(wanted))
    then = asks_then(query)
    held_slots = _slots_held(query, knobs, then=then)
    eligible = [
        place
        for place, (hit, person) in enumerate(zip(hits, by_person, strict=True))
        if person
        # What no longer holds is an answer about an earlier state, never about now.
        and (hit.held or then)
        and not hit.memory.pinned
        and (not periods or any(start <= _said_at(hit) < end for start, end in periods))
    ]
    places = [
        place
        for place in eligible
        if hits[place].memory.slot in held_slots
        or _answering_words(hits[place].memory.content, wanted) >= need
    ]
    changed: int | None = None
    if knobs.newest_said_change and places and not then:
        # "Where does my sister work?", "Where does Priya work?" ask about someone: their changes are what
        # they ask for.
        own = asks_own(query)
        newest = max(_said_at(hits[place]) for place in places)
        referents = (
            _referents((hits[place].memory.content for place in places), wanted)
            if knobs.change_by_referent
            else frozenset()
        )
        later = [
            place
            for place in eligible
            if place not in places
            and _said_at(hits[place]) > newest
            and _says_change(hits[place], wanted, own=own, referents=referents)
        ]
        if (
            not later
            and knobs.change_by_meaning > 0
            and vectors
            and not any(_says_change(hits[place], wanted, own=own) for place in places)
        ):
            later = _changes_by_meaning(
                hits, eligible, places, own=own, least=knobs.change_by_meaning, vectors=vectors
            )
        if later:
            changed = max(later, key=lambda place: _said_at(hits[place]))
    if len(places) < 2 and changed is None:
        return hits
    # Stable: answers said at the same moment keep their ranked order. The slot's holders first, then
    # the answers that hold a value of the kind asked for (Knobs.typed_answers_first).
    kind = value_asked(query) if knobs.typed_answers_first and not then else None
    answers = sorted((hits[place] for place in places), key=_said_at, reverse=not then)
    answers.sort(
        key=lambda hit: (
            hit.memory.slot not in held_slots,
            kind is not None
            and not holds_kind(hit.memory.content, kind, query, wanted)
            and not states_about(hit.memory.content, wanted),
        )
    )
    ordered = list(hits)
    for place, hit in zip(places, answers, strict=True):
        ordered[place] = hit
    if changed is not None and changed > places[0]:
        # The change goes just above the first answer; what ranked between moves down one place.
        moved = ordered.pop(changed)
        ordered.insert(places[0], moved)
    return _at_places(hits, ordered)


# A question about what the person asked: their question turns are what it looks for.
_ASKS_ABOUT_ASKING_RE = re.compile(
    r"\b(?:ask|asks|asked|asking|question\w*|wonder(?:s|ed|ing)?|inquired|enquired"
    r"|fragte|gefragt|frage|fragen|pregunt\w*|demand\w*)\b",
    re.IGNORECASE,
)


def only_asks(content: str, topic: frozenset[str] = frozenset()) -> bool:
    """Whether a turn only asks and states nothing: each of its sentences a question (but for a
    greeting or a thanks of two words or fewer: "Thanks!", "Quick question:") that holds no value as
    the update engine reads one (`frame_of`: a number, a name, a place). "Do podcast episodes do
    better if they're under an hour?" only asks; "We just put out our ninth episode. Any tips?"
    states something, and so does "Can you suggest a gift for my wife, who just turned 40?": people
    tell a new value inside a question as often as not. A value in `topic` (the question's own, as
    `frame_of` reads them: "my brother") is no value told: it names what the question is about."""
    _, text = split_speaker(content)
    asked = False
    for sentence in split_sentences(text) or [text]:
        if is_question(sentence):
            if frame_of(sentence).values - topic:
                return False
            asked = True
        elif len(_WORD_RE.findall(sentence)) > 2:
            return False
    return asked


def asking_hits(
    hits: Sequence[Hit], by_person: Sequence[bool], query: str, knobs: Knobs
) -> frozenset[uuid.UUID]:
    """The ids of the person's hits that only ask (`only_asks`) among the window's, for a question
    that asks neither about what the person asked nor about the agent (Knobs.asking_below); none
    otherwise."""
    if not knobs.asking_below or _ASKS_ABOUT_ASKING_RE.search(query) or asks_about(query)[1]:
        return frozenset()
    window = knobs.newest_said_window
    topic = frame_of(query).values if knobs.asking_own_values else frozenset()
    return frozenset(
        hit.memory.id
        for hit, person in zip(hits[:window], by_person[:window], strict=True)
        if person and only_asks(hit.memory.content, topic)
    )


# English first-person words, read in every language's sentence as the lexicons read English too.
_EN_SELF = lexicon("en").self_words


def about_others(content: str, wanted: frozenset[str]) -> bool:
    """Whether a turn speaks of the question's topic (`wanted`, stems) only as someone else's: it has
    a sentence holding a word of the question, each such sentence has another person as its subject
    as the update engine reads one ("My cousin Ravi did his honeymoon in the Maldives", "Mi amigo
    Rubén pasa el verano en un pueblo"), not the speaker with them ("My wife and I ..."), and no
    sentence of it states a value of the speaker's own ("My sister loved her honeymoon. We're off
    to Japan for ours.")."""
    speaker, text = split_speaker(content)
    prefix = f"{speaker}: " if speaker else ""
    about = False
    for sentence in split_sentences(text) or [text]:
        words = _WORD_RE.findall(sentence.casefold())
        lex = lexicon(detect(sentence))
        frame = frame_of(prefix + sentence)
        # "My partner and I": the speaker is one of the subjects; "My neighbour sold me his old
        # bike, so that's a third one now": the speaker is in it besides the subject's "my".
        with_me = any(a in lex.joiners and b in lex.subjects for a, b in itertools.pairwise(words)) or bool(
            set(words[1:]) & (lex.self_words | _EN_SELF)
        )
        # Another person: a relative or a word for one ("my cousin", "mi amigo", "the neighbour"),
        # or a first name; the engine takes any capitalised first word for a name ("Prices went
        # up ...").
        other = frame.subject.startswith("user:") and (
            names_someone(sentence) or frame.subject.rsplit(":", 1)[-1] in FIRST_NAMES
        )
        own = with_me or not other
        if own and frame.values and not frame.tentative:
            return False
        if {stem(w) for w in words} & wanted:
            if own:
                return False
            about = True
    return about


# Asked by others_hits and newest_said_first of one recall's query: read once.
@lru_cache(maxsize=256)
def asks_own(query: str) -> bool:
    """Whether a question asks about the person's own (where they live, how many cats they have),
    not someone else's: it names no relative and no one by name, does not ask "who", and the update
    engine reads the person as its subject. "Where does Priya work?" and "Who is my mentor?" ask
    about someone: a change of theirs is what they ask for."""
    return not (
        names_someone(query)
        or any(value.type == NAME for value in values_of(query))
        or value_asked(query) == "name"
        or frame_of(query).subject != "user"
    )


def others_hits(
    hits: Sequence[Hit], by_person: Sequence[bool], query: str, knobs: Knobs
) -> frozenset[uuid.UUID]:
    """The ids of the person's hits among the window's that speak of the topic only as someone
    else's (`about_others`), for a question about the person's own (Knobs.others_below); none
    otherwise."""
    if not knobs.others_below or not asks_own(query):
        return frozenset()
    wanted = frozenset(
        stem(w) for w in query_words(query, drop_request_frame=knobs.drop_request_frame) if _content_word(w)
    )
    window = knobs.newest_said_window
    return frozenset(
        hit.memory.id
        for hit, person in zip(hits[:window], by_person[:window], strict=True)
        if person and about_others(hit.memory.content, wanted)
    )


def asking_last(hits: list[Hit], asking: frozenset[uuid.UUID], window: int) -> list[Hit]:
    """`hits` with those in `asking` moved to the end of the first `window`, in the order they
    ranked; the scores stay with the places."""
    if not asking:
        return hits
    head = hits[:window]
    ordered = [hit for hit in head if hit.memory.id not in asking]
    ordered += [hit for hit in head if hit.memory.id in asking]
    ordered += hits[window:]
    return _at_places(hits, ordered)


def replaced_first(hits: list[Hit]) -> list[Hit]:
    """For a question about an earlier state: each hit that no longer holds goes just above the
    hit that replaced it (`Memory.superseded_by`, the update engine's own link) when that one ranked
    higher. "What was my rent before the increase?": "I pay 900 euros rent" above "My rent went up
    to 950 euros", whatever words each shares with the question. Scores stay with the places."""
    ordered = list(hits)
    for hit in hits:
        successor = hit.memory.superseded_by_id
        if hit.held or successor is None:
            continue
        place = ordered.index(hit)
        above = next((i for i, other in enumerate(ordered) if other.memory.id == successor), None)
        if above is not None and above < place:
            ordered.insert(above, ordered.pop(place))
    return _at_places(hits, ordered)


def _names_in(sentence: str) -> frozenset[str]:
    """The names a sentence says, as word stems: its capitalised words but for grammar words and
    common ones, and its language's weekdays and months however written. "Vendí la Honda" ->
    {"honda"}; "we meet Thursdays, not Wednesdays" -> {"thursday", "wednesday"}. In a language
    that capitalises its nouns (German) its nouns count too: "Leon", but also "Training"."""
    lex = lexicon(detect(sentence))
    found: set[str] = set()
    for written in _NAME_TOKEN_RE.findall(sentence):
        token = written.strip(".").removesuffix("'s").removesuffix("\u2019s")
        lowered = token.casefold()
        if (
            lowered in lex.weekdays
            or lowered in lex.months
            or lowered.rstrip("s") in lex.weekdays
            or (
                token[:1].isupper()
                and "'" not in lowered
                and "\u2019" not in lowered
                and lowered not in STOP_WORDS
                and lowered not in COMMON_WORDS
                and lowered not in lex.stop
                and lowered not in lex.cues
                and lowered not in lex.self_words
            )
        ):
            found.add(stem(fold(lowered)))
    return frozenset(found)


def _referents(answers: Iterable[str], wanted: frozenset[str]) -> frozenset[str]:
    """The names (`_names_in`) in the sentences of the person's answers that hold a word of the
    question (`wanted`, stems): the thing, place or person a later change of the same fact names
    again ("Vendí la Honda"). Not numbers: a number said again is as often a coincidence as a
    reference. Not the other sentences of a long answer: they are about other things."""
    found: set[str] = set()
    for content in answers:
        _, text = split_speaker(content)
        for sentence in split_sentences(text) or [text]:
            if {stem(w) for w in _WORD_RE.findall(sentence.casefold())} & wanted:
                found.update(_names_in(sentence))
    return frozenset(found - wanted)


def _new_value(sentence: str, lex: Lexicon, names: frozenset[str]) -> bool:
    """Whether a sentence that names an earlier answer's name says a value besides: another name
    (`names`, those left), a number in digits or a number word but "one" (as often a pronoun or an
    article: "the back one"). In a language that capitalises its nouns, a capitalised word is no
    name by itself: there only an abbreviation ("SV Lindenau") or a value the update engine reads
    (`frame_of`) counts."""
    if re.search(r"\d", sentence):
        return True
    tokens = _NAME_TOKEN_RE.findall(sentence)
    if any(lex.number_words.get(token.casefold(), "1") != "1" for token in tokens):
        return True
    if not lex.nouns_capitalised:
        return bool(names)
    abbreviations = {stem(fold(token.casefold())) for token in tokens if len(token) > 1 and token.isupper()}
    return bool(names & abbreviations) or bool(frame_of(sentence).values)


def _says_change(
    hit: Hit, wanted: frozenset[str], *, own: bool, referents: frozenset[str] = frozenset()
) -> bool:
    """Whether the memory says a change of what the question asks about: a sentence that states a
    change with a value in its language (one of the lexicon's change verbs, strong cues or cue words;
    a value as the update engine reads one: a number, a name, a person), itself or the sentence
    before it holding a word of the question (`wanted`, stems). Not a wish, a plan, someone's words,
    a quote or a question (`is_tentative`), nor a negated change ("I haven't changed banks"); for a
    question about the person's own (`own`), not a change of someone else's ("my sister moved").
    A sentence that names one of `referents` (names in the person's earlier answers: "Vendí la
    Honda, ahora llevo una Yamaha") and a value besides is about the question too."""
    _, text = split_speaker(hit.memory.content)
    sentences = split_sentences(text) or [text]
    lexes = [lexicon(detect(sentence)) for sentence in sentences]
    words = [set(_WORD_RE.findall(sentence.casefold())) for sentence in sentences]
    # The shared word is what the sentence is about: neither its cue ("What is my current rate?" is
    # not answered by any sentence that says "currently") nor a word of its language's grammar
    # ("ich", "habe").
    shared = [
        bool({stem(w) for w in said - lex.cues - lex.stop if _content_word(w)} & wanted)
        for said, lex in zip(words, lexes, strict=True)
    ]
    stated = [not is_tentative(sentence, lex) for sentence, lex in zip(sentences, lexes, strict=True)]
    for i, (sentence, lex) in enumerate(zip(sentences, lexes, strict=True)):
        # "Had brunch with Aisha on Sunday. She moved over to product management ...": the change
        # often names its subject in the sentence before, when that one is a statement too ("Should
        # I move the plants in? It hit 3 degrees." is about the weather).
        if not stated[i]:
            continue
        frame = frame_of(sentence)
        if shared[i] or (i > 0 and shared[i - 1] and stated[i - 1]):
            # An ending needs no new value: "Dad handed in his notice and he's retired" is the answer
            # to "Is my dad still working at the post office?".
            valued = bool(frame.values) or frame.ending
        else:
            # Named by what an earlier answer named, it must name something besides: "Sold the
            # Triumph, it's a Ducati now" does, "The Triumph needs new tyres now" does not.
            names = _names_in(sentence)
            if not names & referents:
                continue
            valued = _new_value(sentence, lex, names - referents - wanted)
        # "My rent hasn't changed since March" says a value holds (the lexicon's continuity cues).
        if not valued or frame.continuity or (own and (names_someone(sentence) or ":" in frame.subject)):
            continue
        changed = bool(lex.change.search(sentence)) and not lex.negation.search(sentence)
        if changed or lex.strong_cue.search(sentence) or words[i] & lex.cues:
            return True
    return False


def _stems(content: str) -> frozenset[str]:
    """The stems of a memory's content words."""
    return frozenset(stem(w) for w in _WORD_RE.findall(content.casefold()) if _content_word(w))


def _weighs_closeness(query: str, knobs: Knobs) -> bool:
    """Whether `newest_said_first` may look for a change by meaning (Knobs.change_by_meaning) for
    `query`, so that the retrieval statement returns the vectors of the person's best rows."""
    return (
        knobs.change_by_meaning > 0
        and knobs.newest_said_change
        and knobs.newest_said_share > 0
        and not asks_then(query)
    )


def _changes_by_meaning(
    hits: list[Hit],
    eligible: list[int],
    places: list[int],
    *,
    own: bool,
    least: float,
    vectors: Mapping[uuid.UUID, Sequence[float]],
) -> list[int]:
    """The places of the person's statements (`eligible`, not answers) that are at least `least` close
    in meaning to an answer (`places`), were said after each answer that close, and say a change of
    what they share with those (`_says_change` with the words in common as the topic; not the
    question's: a new value is often said in other words) (Knobs.change_by_meaning).
    `vectors`: the hits' embeddings by memory id, as the retrieval statement returned them."""
    first = min(_said_at(hits[place]) for place in places)
    candidates = [
        place
        for place in eligible
        if place not in places and _said_at(hits[place]) > first and hits[place].memory.id in vectors
    ]
    answers = [place for place in places if hits[place].memory.id in vectors]
    if not candidates or not answers:
        return []
    unit = np.asarray([vectors[hits[place].memory.id] for place in candidates + answers], dtype=np.float64)
    unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    closeness = unit[: len(candidates)] @ unit[len(candidates) :].T
    found = []
    for row, place in enumerate(candidates):
        close = [answer for column, answer in enumerate(answers) if closeness[row, column] >= least]
        if not close or any(_said_at(hits[answer]) >= _said_at(hits[place]) for answer in close):
            continue
        # The topic is what it shares with the answers it is close to: a change said in a sentence
        # that names none of it ("Should I move the plants in? It hit 3 degrees.") is of something else.
        topic = _stems(hits[place].memory.content) & frozenset().union(
            *(_stems(hits[answer].memory.content) for answer in close)
        )
        if topic and _says_change(hits[place], topic, own=own):
            found.append(place)
    return found


def _recency(query: str, knobs: Knobs, periods: list[tuple[datetime, datetime]]) -> float:
    """How much the newest of the candidates is preferred (Knobs.recency_boost, present_recency)."""
    if asks_now(query):
        return knobs.recency_boost
    if knobs.present_recency and not periods and asks_present(query):
        return knobs.present_recency
    return 0.0


def _params(
    *,
    owner: User,
    space: Space,
    request: RecallRequest,
    knobs: Knobs,
    periods: list[tuple[datetime, datetime]],
    now: datetime,
) -> dict[str, Any]:
    """The parameters of `_statement` for one recall, but the query's vector (`qvec`), which
    recall adds once the model has it."""
    first_person, second_person = asks_about(request.query, requests_ask_agent=knobs.requests_ask_agent)
    return {
        "owner": owner.pk,
        "space": space.pk,
        **held_sql_params(request.view, now=now),
        "kinds": list(request.kinds),
        "tags": list(request.tags),
        "session": str(request.session_id) if request.session_id is not None else None,
        **_text_words(request.query, knobs),
        "names": query_names(request.query),
        "entity_names": query_names(request.query, fold_accents=True),
        "period_starts": [start for start, _ in periods],
        "period_ends": [end for _, end in periods],
        "top_k": request.top_k,
        # The rows fetched: more than asked for when `newest_said_first` reorders the best of them.
        "rows": max(request.top_k, knobs.newest_said_window if knobs.newest_said_share > 0 else 0),
        "vectors_window": knobs.newest_said_window if _weighs_closeness(request.query, knobs) else 0,
        "vector_pool": max(knobs.vector_pool, request.top_k),
        "text_pool": max(knobs.text_pool, request.top_k),
        "df_sample": knobs.df_sample,
        "common_share": knobs.common_share,
        "rare_share": knobs.rare_share,
        "text_scan": knobs.text_scan,
        "k1": knobs.bm25_k1,
        "b": knobs.bm25_b,
        "rrf_k": knobs.rrf_k,
        "rrf_share": knobs.rrf_share,
        "text_weight": knobs.text_weight,
        "speaker_boost": knobs.speaker_boost,
        "own_boost": knobs.own_boost,
        "first_person": knobs.own_boost > 0 and first_person,
        "second_person": knobs.own_boost > 0 and second_person,
        "user_roles": sorted(USER_ROLES),
        "label_words": _LABEL_WORDS,
        "speaker_roles": sorted(ROLE_SPEAKERS),
        "agent_roles": list(AGENT_ROLES),
        "sibling_share": knobs.sibling_share,
        "period_said": knobs.period_said,
        "recency_boost": _recency(request.query, knobs, periods),
        "time_boost": knobs.time_boost,
        "dated_boost": knobs.dated_boost,
        "asks_when": asks_when(request.query) and knobs.dated_boost > 0,
        "pinned_boost": knobs.pinned_boost,
        "entity_share": knobs.entity_share,
        "expansion_from_top": knobs.expansion_from_top,
        "expansion_pool": knobs.expansion_pool,
        "context_next": knobs.context_next,
        "context_previous": knobs.context_previous,
        "context_from_top": knobs.context_from_top,
        "context_gap": knobs.context_gap,
        # Without decay only the nearest neighbour takes a share (a zero share would still make
        # the others candidates).
        "context_window": knobs.context_window if knobs.context_decay > 0 else 1,
        "context_decay": knobs.context_decay,
        "context_scan": CONTEXT_SCAN + knobs.context_window,
        "semantic_floor": knobs.semantic_floor,
        "own_floor": knobs.own_floor,
        "history_share": knobs.history_share,
        "restated_share": knobs.restated_share,
        "restated_similarity": knobs.restated_similarity,
        # 0 when off: the self-join then has nothing to compare.
        "restated_from_top": knobs.restated_from_top if knobs.restated_share < 1 else 0,
        "asks_then": asks_then(request.query),
    }


def memory_recall(
    *,
    owner: User,
    space: Space,
    request: RecallRequest,
    knobs: Knobs = DEFAULT_KNOBS,
    query_vector: Sequence[float] | None = None,
    count_pending: bool = False,
) -> RecallResult:
    """The owner's best memories in `space` for `request.query`, best first.

    One round trip: the two SET LOCALs for the HNSW scan and the retrieval statement, which also
    returns every hit's row, entities and annotations (with `types`, `tags`, `session_id`, `at` or
    `known_at`, the planner's estimate of the rows they keep comes first, to pick the vector scan).
    Two when the query's vector is not cached and no other recall is running in the process: the
    text side first, as a statement of its own, while another thread embeds the query.
    `query_vector` skips embedding the query (tests and benchmarks that already have it).
    `count_pending` also counts the space's saves still being processed (`RecallResult.pending`),
    in the same message: what every recall tool reports as its freshness, without a round trip of
    its own.
    """
    with _alone() as alone:
        return _recall(
            owner=owner,
            space=space,
            request=request,
            knobs=knobs,
            query_vector=query_vector,
            count_pending=count_pending,
            overlap=alone,
        )


# How many recalls this process is running now: a recall overlaps its query's embedding with the
# text side only when it is the only one. Under load the cores are busy anyway, and the overlap's
# extra statement and thread handoff cost about 1 ms of CPU a recall for nothing (16 clients:
# 98-99 recalls/s with it always on, 104-106 without; docs/decisions.md).
_running = 0
_running_lock = threading.Lock()


@contextlib.contextmanager
def _alone() -> Iterator[bool]:
    """Counts this recall as running; yields whether it is the only one in the process."""
    global _running
    with _running_lock:
        _running += 1
        alone = _running == 1
    try:
        yield alone
    finally:
        with _running_lock:
            _running -= 1


def _recall(
    *,
    owner: User,
    space: Space,
    request: RecallRequest,
    knobs: Knobs,
    query_vector: Sequence[float] | None,
    count_pending: bool,
    overlap: bool,
) -> RecallResult:
    now = timezone.now()
    at = request.at or now
    then_history = knobs.then_history and not request.include_history and asks_then(request.query)
    if then_history:
        request = replace(request, include_history=True)
        knobs = replace(knobs, history_share=1.0)
    # The model embeds the query on another thread while this one asks the database for the text
    # side, which needs no vector: on two cores the two overlap (docs/retrieval.md). A known or
    # cached vector leaves nothing to overlap, and the text side is then part of the one statement.
    vector_soon: Future[Sequence[float]]
    if query_vector is None and overlap:
        vector_soon = embeddings.embed_query_soon(request.query)  # type: ignore[assignment]
    else:
        vector_soon = Future()
        vector_soon.set_result(
            query_vector if query_vector is not None else embeddings.embed_query(request.query)
        )
    text_given = not vector_soon.done()
    periods = query_periods(
        request.query, reference=at, centred_ago=knobs.centred_ago, calendar=knobs.calendar_periods
    )
    params = _params(owner=owner, space=space, request=request, knobs=knobs, periods=periods, now=now)
    sql = _statement(
        request,
        has_periods=bool(periods),
        exact_vectors=_ranks_vectors_exactly(request, params),
        text_given=text_given,
        collapse=knobs.sibling_share < 1,
        with_vectors=params["vectors_window"] > 0,
    )
    ef_search = max(knobs.ef_search, params["vector_pool"], knobs.expansion_pool)
    pending = None
    with connections[read_alias()].cursor() as cursor:
        # The pending saves are counted before anything retrieval reads: under READ COMMITTED each
        # statement has its own snapshot, and a save that finished in between is then counted as
        # pending and maybe found (harmless: "may not be in it yet"), never missed while the
        # freshness note says everything is in.
        counting = PENDING_SAVES_SQL + ";" if count_pending else ""
        if text_given:
            cursor.execute(counting + _text_statement(request), params)
            if count_pending:
                pending = int(cursor.fetchone()[0])
                if not cursor.nextset():
                    raise RuntimeError("the text side returned no result")
            term_qs, term_idfs, text_ids = cursor.fetchone()
            params.update(term_qs=term_qs or [], term_idfs=term_idfs or [], text_ids=text_ids or [])
            counting = ""
        params["qvec"] = _vector_literal(vector_soon.result())
        # The SET LOCALs and the statement travel as one message, which PostgreSQL runs as one
        # implicit transaction (outside an atomic block too), so the options hold for the retrieval
        # statement and end with it: they never leak into a pooled connection's next request, and
        # no BEGIN/COMMIT round trips are needed. Django's psycopg cursor binds parameters
        # client-side, which is what allows several statements in one execute. relaxed_order lets
        # a filtered HNSW scan keep going until it has found enough rows that pass the filters
        # (pgvector >= 0.8). SET LOCAL statements, not set_config(): Citus sends a transaction's SET
        # LOCALs on to the nodes that run its shards (citus.propagate_set_commands = 'local'), a
        # function call it runs on the coordinator only (docs/scale.md). SET takes no parameter:
        # ef_search is an int of ours, written in.
        cursor.execute(
            "SET LOCAL hnsw.iterative_scan = relaxed_order;"
            f" SET LOCAL hnsw.ef_search = {int(ef_search)};" + counting + sql,
            params,
        )
        # Past the second SET's result: the first is the one the cursor stands on.
        if not cursor.nextset():
            raise RuntimeError("the HNSW settings returned no result")
        if counting:
            if not cursor.nextset():
                raise RuntimeError("the pending saves' count returned no result")
            pending = int(cursor.fetchone()[0])
        if not cursor.nextset():
            raise RuntimeError("the retrieval statement returned no result")
        rows = cursor.fetchall()
    hits = []
    by_person = []
    vectors: dict[uuid.UUID, Any] = {}
    for score, similarity, held, person, vector, *columns in rows:
        memory = memory_from_row(columns, space=space)
        if vector is not None:
            vectors[memory.id] = vector
        hits.append(
            Hit(
                memory=memory,
                score=float(score),
                similarity=float(similarity),
                matched_words=matched_words(memory.content, params["words"]),
                held=bool(held),
            )
        )
        by_person.append(bool(person))
    # A turn that only asks is no statement of the person's: no answer to put first, and it goes
    # below what was stated (Knobs.asking_below).
    asking = asking_hits(hits, by_person, request.query, knobs)
    # So is a turn about someone else's, for a question about the person's own (Knobs.others_below).
    asking |= others_hits(hits, by_person, request.query, knobs)
    stated = [person and hit.memory.id not in asking for hit, person in zip(hits, by_person, strict=True)]
    hits = newest_said_first(hits, stated, request.query, knobs, periods=periods, vectors=vectors)
    hits = asking_last(hits, asking, knobs.newest_said_window)
    if then_history:
        hits = replaced_first(hits)
    return RecallResult(at=at, hits=hits[: request.top_k], pending=pending)
