"""The update engine's judgement: how a new statement relates to one the space already holds.

For every new memory the worker finds the prior statements it may be about (the nearest current
memories of the space by meaning, and the rivals of its slot) and asks `judge` about each pair.
The answer is one of:

- `same`: the same fact again in other words ("I'm allergic to peanuts" / "I have a peanut
  allergy"): more evidence for the prior memory, not a new row;
- `update`: a change or a correction of the same thing ("I prefer tea" / "Actually I now prefer
  coffee", "my sister is called Anne, not Anna"): the new memory supersedes the prior one, which is
  kept as history;
- `negation`: the same statement, denied ("I like mushrooms" / "I don't like mushrooms anymore"):
  the denial supersedes it;
- `add`: something else, or something more (a second pet, another trip, another person's taste):
  both stay current.

How it decides, from a statement's *frame* (`frame_of`): who it is about (the speaker, "my sister",
"Alex", "my cousin Alex"), whether it is denied, whether it is hypothetical, reported or a question,
whether it carries a correction cue ("actually", "now", "instead", "no longer", "not X", "changed",
"sorry"), and its content words, stemmed. Two statements about different subjects never interact.
Hypotheticals, questions and quotes never replace anything. Episodes are events: two of them are the
same only when they say the same thing about the same day, and one corrects another only when it
names the value it rejects ("it was Rome, not Paris"). For facts, the words the two statements share
are their relation ("prefer", "live", "birthday") and the words only one has are their values.
A relation that holds one value at a time (`SINGLE_VALUED`: where one lives, works, one's name,
birthday, partner, favourite, preference) is updated by a different value; one that holds many
(likes, pets, places visited) only by an explicit correction ("instead", "no longer", "not X").

Meaning (the cosine similarity of the two embeddings) gates every decision, so two statements that
share a word but not a topic ("I prefer tea" / "I prefer aisle seats") do not interact. The
thresholds are named constants below and are measured by the scenario suite
(`tests/memories/test_update_engine.py`, which reports precision and recall of supersession and of
deduplication).

Two statements are compared only when each has at most `MAX_DIFFERENT` content words the other
lacks; the worker replaces only single statements (`memories.pipeline.supersede.judge_priors`), so
a correction of one part of a long turn leaves the turn current beside it (the answerers then state
the later one, `memories.retrieval.answer.resolve`). Known limits: English only; rules over words,
not a parse; synonyms of a relation ("based in" / "live in") are the slot patterns' job. With
`LLM_BASE_URL` set the model judges the same pairs (`memories/pipeline/judge_llm.py`), and these
rules answer whenever it cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from memories.pipeline.entities import COMMON_WORDS, FIRST_NAMES, extract_entities
from memories.pipeline.language import STOP_WORDS, speaker_subject, split_speaker, stem, word_set

EPISODIC = "episode"


class Verdict(StrEnum):
    SAME = "same"
    UPDATE = "update"
    NEGATION = "negation"
    ADD = "add"


# Cosine similarity (all-MiniLM-L6-v2) below which two statements are about different things.
RELATED = 0.45
# An explicit correction ("instead", "no longer", "not X") may be phrased further from what it corrects.
LOOSELY_RELATED = 0.3
# Rewordings: the same words (after stemming) need only be related; different words with the same
# values need to be this close in meaning to be the same fact.
REWORDED = 0.82
# A correction of a many-valued relation, or a cue without a shared relation word, must be this close.
CORRECTED = 0.6
# At most this many content words of one statement missing from the other (each way) for the two
# to be the same fact, a change or a denial of it.
MAX_DIFFERENT = 3


@dataclass(frozen=True)
class Frame:
    """What a statement is about and how it says it (see the module docstring)."""

    subject: str
    words: frozenset[str]
    values: frozenset[str]
    rejected: frozenset[str]
    negated: bool
    cue: bool
    strong_cue: bool
    tentative: bool
    # "my shoe size is 42", "pizza is my favourite food", "my partner is Sam": the attribute named,
    # which holds one value at a time ("" when the statement is not of that form).
    attribute: str = ""
    # "I moved", "I switched", "I left", "I sold": an event that changes how things are.
    change: bool = False
    # "I also have a cat", "I speak Spanish too": an addition, whatever else it shares.
    additive: bool = False


# People a statement can be about ("my sister likes tea" is about the sister, not the speaker).
PEOPLE = word_set(
    """
    sister brother mother mom mum father dad wife husband partner spouse boyfriend girlfriend fiance
    fiancee son daughter kid kids child children cousin aunt uncle niece nephew grandma grandmother grandpa
    grandfather granddad grandson granddaughter friend colleague coworker co-worker boss manager neighbor
    neighbour roommate flatmate teacher doctor dentist therapist coach mentor landlord parents twin
    stepmother stepfather stepson stepdaughter bestie buddy
    """
)

# Relations that hold one value at a time (compared by stem).
SINGLE_VALUED = word_set(
    """
    live lives living based reside resid locat move moved reloc work works working employ employer job
    company birthday born age old partner husband wife boyfriend girlfriend
    married marri favorit favourit fav prefer prefers prefered preferred email phone number address diet
    salary titl role position posit manag boss timezon pronoun height weight hometown nationality
    citizen drive car
    """
)

# Cue words that mark a correction or a change; stripped from the content words.
CUES = word_set(
    """
    actually now instead anymore longer changed change switched switch sorry correction corrected rather
    nowadays currently meant mean wrong mistake oops nope updated update new newly recently since lately
    """
)
# The cues that say outright that an earlier value no longer holds.
STRONG_CUES_RE = re.compile(
    r"\b(?:instead|no\s+longer|not\s+anymore|any\s*more|rather\s+than|switched|changed|swapped|replaced"
    r"|used\s+to|correction|i\s+meant|sorry|wrong|mistake|not\s+\w+\s+any\s*more)\b",
    re.IGNORECASE,
)
_NEGATION_RE = re.compile(
    r"\b(?:not|never|no\s+longer|don['\u2019]?t|doesn['\u2019]?t|didn['\u2019]?t|isn['\u2019]?t"
    r"|aren['\u2019]?t|wasn['\u2019]?t|won['\u2019]?t|can['\u2019]?t|cannot|haven['\u2019]?t"
    r"|hasn['\u2019]?t|stopped|quit|gave\s+up|no\s+more)\b",
    re.IGNORECASE,
)
_IDIOMS_RE = re.compile(r"\b(?:can['\u2019]?t|cannot)\s+wait\b|\bno\s+(?:problem|worries|way|doubt)\b", re.I)
# Opposites folded onto one word with a denial: "I hate sushi" denies "I love sushi".
_AGAINST_RE = re.compile(r"\b(?:hate|hates|dislike|dislikes|detest|detests|can['\u2019]?t\s+stand)\b", re.I)
_FOR_WORDS = {"love": "like", "loves": "like", "enjoy": "like", "enjoys": "like", "adore": "like"}
# "Anne, not Anna", "not Anna but Anne", "instead of Anna", "rather than Anna": the rejected value.
_REJECTED_RE = re.compile(
    r"(?:,\s*|\s+)(?:and\s+)?not\s+(?:in\s+|at\s+|on\s+|the\s+|a\s+|an\s+)?(?P<a>[\w'\u2019-]+(?:\s+\d+)?)"
    r"(?=\s*(?:[.,;!?)]|$|but\b))"
    r"|\bnot\s+(?P<b>[\w'\u2019-]+)\s+but\b"
    r"|\b(?:instead\s+of|rather\s+than)\s+(?:the\s+|a\s+|an\s+)?(?P<c>[\w'\u2019-]+)",
    re.IGNORECASE,
)
_TENTATIVE_RE = re.compile(
    r"\b(?:if|would|wouldn['\u2019]?t|might|maybe|perhaps|could|wish|imagine|suppose|hypothetically"
    r"|thinking\s+(?:about|of)|considering|dream\s+of|someday|what\s+if)\b|\?\s*$",
    re.IGNORECASE,
)
_REPORTED_RE = re.compile(
    r"[\"\u201c\u201d]|\b(?:said|says|told\s+me|asked|claims?|claimed|thinks?|believes?)\s+(?:that\s+)?",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"[\w'\u2019-]+")
_SUBJECT_RE = re.compile(
    r"^\s*(?:(?:so|and|but|well|oh|actually|also|btw|ok|okay|now|sorry|yes|no|correction|update)[,:\s]+)*"
    r"(?:(?P<my>my|our)\s+(?P<who>[\w-]+)(?:\s+(?P<name>(?-i:[A-Z][\w'\u2019-]*)))?"
    r"|(?P<self>i|i['\u2019]m|i['\u2019]ve|i['\u2019]d|i['\u2019]ll|we|me)\b"
    r"|(?P<proper>(?-i:[A-Z][\w'\u2019-]+))(?:['\u2019]s\b)?)",
    re.IGNORECASE,
)
_ATTRIBUTE_RE = re.compile(
    r"^\s*(?:(?:so|and|but|well|oh|actually|also|btw|ok|okay|now|sorry|correction)[,:\s]+)*"
    r"(?:my|our)\s+(?P<attr>(?:[\w'\u2019-]+\s+){0,2}?[\w'\u2019-]+)\s+(?:is|['\u2019]s|was)\s+"
    r"(?:(?:now|actually|still|currently|really|definitely)\s+)*(?:(?P<naming>called|named)\s+)?(?P<value>\S.*)$",
    re.IGNORECASE,
)
_ATTRIBUTE_AFTER_RE = re.compile(
    r"^\s*(?P<value>[\w'\u2019 -]{1,40}?)\s+(?:is|are)\s+(?:now\s+|still\s+)?(?:my|our)\s+"
    r"(?P<attr>(?:all[- ]time\s+|new\s+)?(?:favou?rite|fave|fav)\s+[\w-]+)\b",
    re.IGNORECASE,
)
_CHANGE_RE = re.compile(
    r"\b(?:moved|relocated|switched|changed|replaced|swapped|left|quit|resigned|sold|joined|started"
    r"|became|got\s+(?:married|divorced|engaged|a\s+new)|broke\s+up|retired|cancell?ed|upgraded"
    r"|turned|renamed|stopped)\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "first": "1", "second": "2", "third": "3",
}  # fmt: skip
# One word per relative: "my mom" and "my mother" are the same person.
_KIN = {
    "mom": "mother", "mum": "mother", "mommy": "mother", "mama": "mother", "dad": "father",
    "daddy": "father", "papa": "father", "grandma": "grandmother", "granny": "grandmother",
    "grandpa": "grandfather", "granddad": "grandfather", "kids": "children", "kid": "child",
    "hubby": "husband", "bf": "boyfriend", "gf": "girlfriend", "neighbour": "neighbor",
    "co-worker": "coworker", "bestie": "friend", "buddy": "friend", "fiancee": "fiance",
}  # fmt: skip
_ORDINAL_RE = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_SELF_NEXT_RE = re.compile(r",?\s+(?:i|i['\u2019]m|i['\u2019]ve|we|my|our)\b", re.IGNORECASE)
# "also", "too", "as well", "another": the statement adds to what is known.
_ADDITIVE_RE = re.compile(r"\b(?:also|too|as\s+well|another|again|both|in\s+addition)\b", re.IGNORECASE)
# Words that carry no value of their own in a statement about oneself, and the thanks and greetings
# of chat ("Thanks!" states no fact that "Thanks for having my back" could confirm or extend).
_LIGHT = STOP_WORDS | word_set(
    """
    i'm im i've ive i'd id i'll ill don't dont doesn't doesnt didn't didnt isn't isnt aren't wasn't won't
    can't cant cannot never no not stopped quit gave give up anymore longer really definitely honestly
    totally pretty quite still always usually these days get got one thing things lot
    thanks thank thx ty bye goodbye hello cheers welcome congrats congratulations yay lol haha hahaha
    """
)


def _subject(speaker: str, body: str) -> tuple[str, set[str]]:
    """(who the statement is about, the words that named them)."""
    base = speaker_subject(speaker)
    match = _SUBJECT_RE.match(body)
    if match is None or match.group("self"):
        return base, set()
    if match.group("my"):
        who = match.group("who").lower()
        who = _KIN.get(who, who)
        if who in PEOPLE:
            name = match.group("name")
            key = f"{base}:{who}" + (f":{name.lower()}" if name else "")
            return key, {who, *([name.lower()] if name else [])}
        return base, set()  # "my birthday is ...": an attribute of the speaker
    proper = match.group("proper")
    if _ATTRIBUTE_AFTER_RE.match(body):
        return base, set()  # "Pizza is my favourite food": about the speaker
    # "Originally I'm from Lyon", "Yesterday we met": a first word before the speaker's own "I" is
    # not who the statement is about.
    before_self = _SELF_NEXT_RE.match(body, match.end())
    if proper and not before_self and _is_person(proper, body):
        return f"{base}:{proper.lower()}", {proper.lower()}
    return base, set()


def _is_person(word: str, body: str) -> bool:
    """Whether a capitalised first word names a person ("Anna moved") rather than a thing ("Bee
    stings make me ill", "Pizza is ..."): a known first name, or a Person to the entity rules."""
    lowered = word.lower()
    if lowered in COMMON_WORDS or lowered in STOP_WORDS:
        return False
    return lowered in FIRST_NAMES or (word, "Person") in extract_entities(body)


# A save judges each new statement against up to eight nearby memories, and the same memories come
# up again and again (PRIORS): their frames are read once per process. Frames are immutable.
@lru_cache(maxsize=4096)
def frame_of(text: str) -> Frame:
    """The frame of one statement (a memory's content)."""
    speaker, body = split_speaker(text.strip())
    subject, subject_words = _subject(speaker, body)
    rejected = frozenset(
        stem(w.lower())
        for m in _REJECTED_RE.finditer(body)
        for w in (m.group("a") or m.group("b") or m.group("c")).split()
    )
    without_rejected = _REJECTED_RE.sub(" ", body)
    # "I can't stand cilantro" is one denial of liking it, not two; "I can't wait" is eagerness, and
    # "I won't quit" two denials that affirm: what counts is whether the denials are odd in number.
    against = bool(_AGAINST_RE.search(without_rejected))
    plain = _IDIOMS_RE.sub(" ", _AGAINST_RE.sub(" ", without_rejected))
    negated = (len(_NEGATION_RE.findall(plain)) % 2 == 1) != against
    tokens = _WORD_RE.findall(_AGAINST_RE.sub(" like ", without_rejected))
    words: set[str] = set()
    values: set[str] = set()
    for index, token in enumerate(tokens):
        lowered = token.lower().strip("'\u2019-")
        lowered = _FOR_WORDS.get(lowered, lowered)
        ordinal = _ORDINAL_RE.match(lowered)
        lowered = ordinal.group(1) if ordinal else _NUMBER_WORDS.get(lowered, lowered)
        lowered = _KIN.get(lowered, lowered)
        if not lowered or lowered in _LIGHT or lowered in CUES or lowered in subject_words:
            continue
        root = stem(lowered)
        words.add(root)
        # Values: numbers, names, and people ("with my brother" / "with my sister" differ in who).
        if (
            any(ch.isdigit() for ch in lowered)
            or lowered in PEOPLE
            or (index > 0 and token[:1].isupper() and lowered not in COMMON_WORDS)
        ):
            values.add(root)
    cue_words = {t.lower() for t in tokens} & CUES
    return Frame(
        subject=subject,
        words=frozenset(words),
        values=frozenset(values),
        rejected=rejected,
        negated=negated,
        cue=bool(cue_words) or bool(rejected) or bool(STRONG_CUES_RE.search(body)),
        strong_cue=bool(rejected) or bool(STRONG_CUES_RE.search(body)),
        tentative=bool(_TENTATIVE_RE.search(body)) or bool(_REPORTED_RE.search(body)),
        attribute=_attribute(body, subject_words),
        # "I won't quit" reports no change.
        change=bool(_CHANGE_RE.search(plain)) and not _NEGATION_RE.search(plain),
        additive=bool(_ADDITIVE_RE.search(body)),
    )


def _attribute(body: str, subject_words: set[str]) -> str:
    """The single-valued attribute a "my X is Y" statement names, by its stems ("" if none)."""
    match = _ATTRIBUTE_RE.match(body) or _ATTRIBUTE_AFTER_RE.match(body)
    if match is None:
        return ""
    words = [w.lower() for w in _WORD_RE.findall(match.group("attr"))]
    if words and words[-1] in PEOPLE:
        # "my partner is Sam", "my sister is called Anna": who that person is. "My sister is a nurse"
        # says something else about her, so it is not this attribute.
        value = match.group("value").strip()
        naming = "naming" in match.groupdict() and match.group("naming")
        if not (naming or value[:1].isupper()):
            return ""
        return ":".join(stem(w) for w in words) + ":who"
    return ":".join(stem(w) for w in words if w not in STOP_WORDS or w == "name")


@lru_cache(maxsize=1)
def _single_valued_stems() -> frozenset[str]:
    return frozenset(stem(word) for word in SINGLE_VALUED)


def _same_word(a: str, b: str) -> bool:
    # Stems of one family: "allerg" (allergic) and "allergi" (allergy).
    return a == b or (min(len(a), len(b)) >= 5 and (a.startswith(b) or b.startswith(a)))


def _difference(left: frozenset[str], right: frozenset[str]) -> set[str]:
    """The words of `left` with no word of its family in `right`."""
    return {word for word in left if not any(_same_word(word, other) for other in right)}


def judge(
    new: Frame,
    old: Frame,
    *,
    similarity: float,
    new_kind: str,
    old_kind: str,
    same_day: bool = True,
) -> Verdict:
    """How `new` (just said) relates to `old` (held now), given how close they are in meaning."""
    if new.subject != old.subject or new.tentative or old.tentative:
        return Verdict.ADD
    if similarity < (LOOSELY_RELATED if new.strong_cue else RELATED) or not new.words or not old.words:
        # Unrelated, or nothing said to compare (";)", "Bye!").
        return Verdict.ADD
    only_new = _difference(new.words, old.words)
    only_old = _difference(old.words, new.words)
    shared = new.words - only_new
    rejects_old = any(_same_word(r, w) for r in new.rejected for w in old.words)
    if rejects_old and (shared or similarity >= CORRECTED):
        # "Anne, not Anna": the prior statement said what this one rejects, about the same thing.
        return Verdict.UPDATE
    # Two statements are about the same thing only when they differ in a few words: a long turn of
    # chat shares words with many others, and sharing them makes it neither the same nor a change.
    close = len(only_new) <= MAX_DIFFERENT and len(only_old) <= MAX_DIFFERENT
    if new.negated != old.negated:
        # The same statement, affirmed and denied: the later one holds.
        events_apart = EPISODIC in (new_kind, old_kind) and not same_day
        # "I don't have a cat anymore" ends "I have a cat named Milo", though it says less.
        denies = not only_old or new.strong_cue or similarity >= CORRECTED
        if shared and close and denies and not events_apart:
            return Verdict.NEGATION
        return Verdict.ADD
    if new_kind == EPISODIC and old_kind == EPISODIC:
        # Events: another trip is another memory; the same words about the same day are the same one.
        reworded = not only_new and not only_old
        return Verdict.SAME if reworded and same_day else Verdict.ADD
    if old_kind == EPISODIC or (new_kind == EPISODIC and not new.change):
        # A fact is not replaced by an event, unless the event is a change ("I moved", "I sold it").
        return Verdict.ADD
    if not only_new and not only_old:
        return Verdict.SAME
    if new.attribute and new.attribute == old.attribute:
        # "My shoe size is 42" / "My shoe size is 43": one attribute, another value.
        return Verdict.UPDATE
    if (new.additive and not new.strong_cue) or not close:
        return Verdict.ADD
    numbers_new = {w for w in only_new if any(ch.isdigit() for ch in w)}
    numbers_old = {w for w in only_old if any(ch.isdigit() for ch in w)}
    if numbers_new and numbers_old and only_new == numbers_new and only_old == numbers_old:
        # Everything else the same, another number: "my son is 7" / "my son is 8 now".
        return Verdict.UPDATE if similarity >= CORRECTED else Verdict.ADD
    # What the two say in common beyond names and numbers: the relation a confirmation must share.
    relation = shared - new.values - old.values
    if not only_new:
        # The new statement says less than the prior one: it confirms it, if it names the relation.
        return Verdict.SAME if similarity >= CORRECTED and relation else Verdict.ADD
    if not only_old:
        # It says everything the prior one said, and more. One extra ordinary word at nearly the same
        # meaning is a rewording ("my sister Emma is a doctor" / "... works as a doctor"); anything
        # more (a name, a number, a second thing) makes it the fuller statement, which replaces it.
        if len(only_new) == 1 and not only_new & new.values and similarity >= REWORDED:
            return Verdict.SAME
        return Verdict.UPDATE if similarity >= CORRECTED else Verdict.ADD
    values_differ = bool((only_new | only_old) & (new.values | old.values))
    if relation and not values_differ and similarity >= REWORDED:
        # Other words for the same thing, no name or number different: "I'm based in" / "I live in".
        return Verdict.SAME
    if shared & _single_valued_stems():
        return Verdict.UPDATE
    if (new.strong_cue or new.change) and (shared or similarity >= CORRECTED):
        return Verdict.UPDATE
    if new.cue and shared and similarity >= CORRECTED:
        return Verdict.UPDATE
    return Verdict.ADD
