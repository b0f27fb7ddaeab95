"""The cue words of the update engine, one data file per language (`en.json`, `de.json`, ...).

A file holds what a statement's frame is read with in that language: its stop words (which also tell
the languages apart), first-person words, possessives and relatives, the cues of a change, a
correction, an addition, an ending ("quit", "nicht mehr", "dejé de"), a denial, a hypothetical or a
report, the words that open a new statement inside a note ("btw", "oh and"), the words of the
everyday relations (where one lives, works, earns), the elided words ("j'"), and the words a value
is typed by (months, weekdays, units, currencies). Regular expression fragments are matched as
whole words, case-insensitively. The code reads them here and nowhere else: a new language is a
new file, not new code.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import snowballstemmer

_HERE = Path(__file__).resolve().parent
ENGLISH = "en"
_WORD_RE = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")
# Snowball's name for each language a file exists for.
_STEMMERS = {"en": "english", "de": "german", "es": "spanish", "fr": "french"}


def _alternation(fragments: list[str]) -> re.Pattern[str]:
    if not fragments:
        return re.compile(r"(?!x)x")  # matches nothing
    return re.compile(r"(?<![\w'\u2019])(?:" + "|".join(fragments) + r")(?![\w'\u2019])", re.IGNORECASE)


@dataclass(frozen=True)
class Lexicon:
    """One language's cues, compiled."""

    code: str
    stop: frozenset[str]
    self_words: frozenset[str]
    possessive: frozenset[str]
    kin: dict[str, str]
    # "siblings" -> {"brother", "sister"}; "family" -> {"*"} (any relative).
    kin_groups: dict[str, frozenset[str]]
    cues: frozenset[str]
    strong_cue: re.Pattern[str]
    negation: re.Pattern[str]
    idioms: re.Pattern[str]
    against: re.Pattern[str]
    tentative: re.Pattern[str]
    reported: re.Pattern[str]
    change: re.Pattern[str]
    additive: re.Pattern[str]
    ending: re.Pattern[str]
    # "the rent stays the same", "bleibt gleich", "sigue igual", "reste le même": the value holds;
    # such a statement confirms what is held and never replaces it.
    continuity: re.Pattern[str]
    # A question about an earlier state of something that changed, beyond recall's English words
    # ("initially", "at first", "used to"): "before the move", "my previous job", "back when",
    # "früher", "al principio", "mon ancien travail" (`asks_earlier`).
    earlier: re.Pattern[str]
    # "Starting in March", "from next month", "ab Mai", "a partir de septiembre", "à partir
    # d'octobre": when what the statement says starts to hold, a time to come. Such a statement
    # states a change (it has a start), and the time is when, not a value of what changes.
    start: re.Pattern[str]
    # Words elided onto the next ("j'habite" is "habite" said by "je").
    elided: frozenset[str]
    opener: re.Pattern[str]
    # word -> the relation it names ("salary", "earn" -> "pay"); the same relation whatever the verb.
    relations: dict[str, str]
    place_preps: frozenset[str]
    months: frozenset[str]
    weekdays: frozenset[str]
    units: frozenset[str]
    currencies: frozenset[str]
    number_words: dict[str, str]
    # "next month", "yesterday": when, not what; left out of a statement's frame.
    time_words: frozenset[str]
    # "so", "and", "but": a comma and one of these before a new subject ("..., so my manager is Ben")
    # join two statements.
    joiners: frozenset[str]
    # Verbs of relations that hold many values at once (likes, pets, languages, places visited):
    # another name beside them is more, not a change.
    many: frozenset[str]
    # The words for the speaker as a subject ("ich", "je", "j'"): what a split compound carries to its
    # second fact, always in the sentence's own language.
    subjects: frozenset[str] = frozenset()
    # How a verb said by the speaker ends ("juego", "toco"; "spiele", "lese"): a lowercase word after
    # "y" / "und" / "et" ending so, like the first clause's verb, opens a second fact.
    verb_endings: frozenset[str] = frozenset()
    # German writes nouns with a capital: a lowercase word after "und" is no noun.
    nouns_capitalised: bool = False
    # "Anne, not Anna", "10 Uhr, nicht 9 Uhr", "el jueves, no el martes": the value a correction
    # rejects, as each pattern's group `v`.
    rejected: tuple[re.Pattern[str], ...] = ()
    # The words a statement points back with ("it", "es", "eso", "ça"): "No, it's 42" names nothing
    # of its own, so it is about what was said last.
    pronouns: frozenset[str] = frozenset()
    # The words that address the other side ("you", "du", "tú", "vous"); the speaker's own are
    # `self_words`.
    addressee: frozenset[str] = frozenset()
    # Words a question asks for a relation with without naming it ("which city", "what company"):
    # word -> relation, beside `relations`.
    asks: dict[str, str] = field(default_factory=dict)
    # Where the time resolver (English) does not read the language: its month names (-> 1..12) and
    # its words for a week, a month and a year, for the time a `start` names ("ab Mai").
    # "is", "ist", "es", "est" (singular only: "my car and my bike are blue" is one subject of two
    # nouns): after "and our landlord" they make a statement of its own ("The building was sold and
    # our landlord is now Ms. Ito").
    copulas: frozenset[str] = frozenset()
    # The everyday slots a person asks their agent about (home, work, family, health, plans ...): the
    # words a question asks one with, and the words a statement of it is often said with ("We moved
    # into the new flat" is a home, with no word of "Where do I live?"). Retrieval's only: the update
    # engine's relations (`relations`) decide what replaces what, and must stay narrow.
    slots_asked: dict[str, str] = field(default_factory=dict)
    slots_said: dict[str, tuple[str, ...]] = field(default_factory=dict)
    month_numbers: dict[str, int] = field(default_factory=dict)
    # "second", "dritte", "tercera": a rank, and for a count what it reaches ("we adopted a third
    # cat" says there are three). Not values of their own: "the second floor" is no count.
    ordinals: dict[str, str] = field(default_factory=dict)
    # The words a question asks for a kind of value with ("how many" a count, "how much" an
    # amount, "when" a time, "who" a name, "where" a place), by kind (`asks_value`).
    asks_value: dict[str, re.Pattern[str]] = field(default_factory=dict)
    period_words: dict[str, str] = field(default_factory=dict)

    def stem(self, word: str) -> str:
        """The word's Snowball stem in this language."""
        return _stem(self.code, word)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.lower().split())


@cache
def lexicon(code: str) -> Lexicon:
    """The lexicon of one language (by its ISO 639-1 code)."""
    data = json.loads((_HERE / f"{code}.json").read_text(encoding="utf-8"))
    relations = {word.lower(): name for name, words in data["relations"].items() for word in words.split()}
    # Word lists and pattern lists by their field (and the file's key where the two differ).
    words = {field: _words(data[field]) for field in _WORD_FIELDS}
    patterns = {field: _alternation(data[_KEYS.get(field, field)]) for field in _PATTERN_FIELDS}
    return Lexicon(
        code=code,
        self_words=_words(data["self"]),
        kin={word.lower(): who for word, who in data["kin"].items()},
        kin_groups={word.lower(): _words(who) for word, who in data["kin_groups"].items()},
        opener=re.compile(
            r"^\s*(?:" + "|".join(data["opener"]) + r")(?![\w'\u2019])[\s,:!.-]*", re.IGNORECASE
        ),
        relations=relations,
        number_words=dict(data["number_words"]),
        nouns_capitalised=bool(data["nouns_capitalised"]),
        rejected=tuple(re.compile(pattern, re.IGNORECASE) for pattern in data.get("rejected", ())),
        pronouns=_words(data.get("pronouns", "")),
        addressee=_words(data.get("addressee", "")),
        asks={word.lower(): name for name, words in data.get("asks", {}).items() for word in words.split()},
        slots_asked={
            word.lower(): slot
            for slot, words in data.get("slots", {}).items()
            for word in words["asked"].split()
        },
        slots_said={
            slot: tuple(words["said"].lower().split()) for slot, words in data.get("slots", {}).items()
        },
        month_numbers={word.lower(): int(number) for word, number in data.get("month_numbers", {}).items()},
        period_words={word.lower(): period for word, period in data.get("period_words", {}).items()},
        ordinals={word.lower(): number for word, number in data.get("ordinals", {}).items()},
        asks_value={kind: _alternation(fragments) for kind, fragments in data.get("asks_value", {}).items()},
        **words,  # type: ignore[arg-type]
        **patterns,  # type: ignore[arg-type]
    )


_WORD_FIELDS = (
    "stop",
    "possessive",
    "cues",
    "elided",
    "place_preps",
    "months",
    "weekdays",
    "units",
    "currencies",
    "time_words",
    "joiners",
    "many",
    "subjects",
    "verb_endings",
    "copulas",
)
_PATTERN_FIELDS = (
    "strong_cue", "negation", "idioms", "against", "tentative", "reported", "change", "additive", "ending",
    "continuity", "start", "earlier",
)  # fmt: skip
_KEYS = {"strong_cue": "strong_cues"}


@cache
def languages() -> list[str]:
    """The codes of the languages with a lexicon file, English first."""
    codes = sorted(path.stem for path in _HERE.glob("*.json"))
    return [ENGLISH, *(code for code in codes if code != ENGLISH)]


# The share of a text's words that must be another language's stop words (and more of them than
# English ones) for the text to be read in that language: short notes carry few of them.
_MIN_FOREIGN_STOPS = 1


@lru_cache(maxsize=8192)
def detect(text: str) -> str:
    """The language a statement is most likely in, by its stop words and relatives; English when
    nothing says otherwise (the model and the other rules are English first)."""
    words = [w.lower() for w in _WORD_RE.findall(text)]
    if not words:
        return ENGLISH
    scores: dict[str, int] = {}
    for code in languages():
        lex = lexicon(code)
        known = _known(code)
        # Its cues count too: "Bajé a 75 kilos" has no stop word of its own.
        cues = len(lex.change.findall(text)) + len(lex.strong_cue.findall(text))
        scores[code] = sum(1 for w in words if w in known) + cues
    best = max(scores, key=lambda code: (scores[code], code == ENGLISH))
    if best != ENGLISH and scores[best] >= _MIN_FOREIGN_STOPS and scores[best] > scores[ENGLISH]:
        return best
    return ENGLISH


@lru_cache(maxsize=4096)
def is_cue(text: str) -> bool:
    """Whether a short text is only a cue of some language's lexicon: a correction ("Korrektur",
    "Corrección", "Wait, no") or an opener ("Btw"), never a speaker's name before a colon."""
    return any(
        pattern.fullmatch(text.strip())
        for code in languages()
        for pattern in (lexicon(code).strong_cue, lexicon(code).opener)
    )


def relations_asked(text: str) -> frozenset[str]:
    """The relations a question asks about, by the words of its language and English's: "Where do I
    live?" and "Which city am I in?" -> {"home"}, "What company am I with?" -> {"work"}."""
    code = detect(text)
    lexes = [lexicon(code)] if code == ENGLISH else [lexicon(code), lexicon(ENGLISH)]
    words = [word.lower() for word in _WORD_RE.findall(text)]
    return frozenset(
        relation
        for lex in lexes
        for word in words
        if (relation := lex.relations.get(word) or lex.asks.get(word))
    )


def _slots_asked(question: str) -> list[tuple[Lexicon, str]]:
    """(lexicon, slot) for every word of a first-person question that asks an everyday slot, in the
    question's language and English's, in the order of the words."""
    if not persons(question)[0]:
        return []
    code = detect(question)
    lexes = [lexicon(code)] if code == ENGLISH else [lexicon(code), lexicon(ENGLISH)]
    words = [word.lower() for word in _WORD_RE.findall(question)]
    return [(lex, slot) for lex in lexes for word in words if (slot := lex.slots_asked.get(word)) is not None]


def asks_earlier(question: str) -> bool:
    """Whether a question asks about an earlier state by any lexicon's `earlier` words ("What was my
    rent before the increase?", "¿Qué coche tenía antes?"). Every language's: a question is short, so
    its language is often not told ("¿Qué coche tenía antes?" reads as English), and these words are
    no other language's."""
    return any(lexicon(code).earlier.search(question) for code in languages())


# The kinds of value a question can ask for, in the order they are tried: "How much time do I
# spend ...?" asks an amount, not a time.
VALUE_KINDS = ("count", "amount", "time", "name", "place")


def value_asked(question: str) -> str | None:
    """The kind of value a question asks for (one of `VALUE_KINDS`) by any lexicon's `asks_value`
    words ("How many cats do I have?" -> "count", "¿Con quién corro?" -> "name"); None for a
    question that asks for a thing by its sort ("Which vet do we take Bramble to?") or no value.
    Every language's, as for `asks_earlier`: a short question's language is often not told."""
    for kind in VALUE_KINDS:
        if any(
            (pattern := lexicon(code).asks_value.get(kind)) is not None and pattern.search(question)
            for code in languages()
        ):
            return kind
    return None


def slots_asked_in(question: str) -> frozenset[str]:
    """The everyday slots a first-person question asks about ("Where do I live?" -> {"home"}); none
    for a question about someone else."""
    return frozenset(slot for _, slot in _slots_asked(question))


def slot_words(question: str) -> list[str]:
    """The words statements of the everyday slots a first-person question asks about are often said
    with ("Where do I live?" -> "moved", "flat", "lease", ...), in the question's language and
    English's; none for a question about someone else or asking no slot."""
    said: dict[str, None] = {}
    for lex, slot in _slots_asked(question):
        said.update(dict.fromkeys(lex.slots_said[slot]))
    return list(said)


def persons(text: str) -> tuple[bool, bool]:
    """(speaks of the speaker, addresses the other side): whether a text has a first-person word ("I",
    "my", "ich", "mi", "j'") and a second-person one ("you", "du", "tu"), by the words of its
    language's lexicon and English's (a question in another language often keeps English words)."""
    code = detect(text)
    lexes = [lexicon(code)] if code == ENGLISH else [lexicon(code), lexicon(ENGLISH)]
    tokens: set[str] = set()
    for word in _WORD_RE.findall(text):
        lowered = word.lower().replace("\u2019", "'")
        head, apostrophe, _ = lowered.partition("'")
        # "j'habite", "t'appelles": the elided pronoun is its own word.
        tokens.update((lowered, f"{head}'") if apostrophe else (lowered,))
    first = any(tokens & lex.self_words for lex in lexes)
    second = any(tokens & lex.addressee for lex in lexes)
    return first, second


@cache
def _known(code: str) -> frozenset[str]:
    # The words that tell a language: its stop words, first-person words, relatives and relations.
    lex = lexicon(code)
    return lex.stop | lex.self_words | frozenset(lex.kin) | frozenset(lex.relations)


# A Snowball stemmer keeps the word it is stemming on itself (memories.pipeline.language.stem says
# why that matters): one per language per thread.
_stemmers = threading.local()


@lru_cache(maxsize=16384)
def _stem(code: str, word: str) -> str:
    stemmers: dict[str, Any] = getattr(_stemmers, "by_code", None) or {}
    _stemmers.by_code = stemmers
    stemmer = stemmers.get(code)
    if stemmer is None:
        stemmer = stemmers[code] = snowballstemmer.stemmer(_STEMMERS.get(code, "english"))
    return str(stemmer.stemWord(word))
