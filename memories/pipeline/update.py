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

Typed values (issue 40): `memories.pipeline.values` finds a statement's values by type (money,
quantities, times, dates, weekdays, phones, emails, URLs, numbers, names, places). Another value of
a type the prior has, in the same frame (`same_frame`: one relation, the same words around the
values, a change that repeats part of the frame, or masked texts close in meaning, measured by the
worker for candidates only), is a change, whatever the verbs ("I earn 85k" / "My salary went up to
92k"). The words of every cue, relation and relative are each language's lexicon
(`memories/pipeline/lexicon/`): English, German, Spanish and French are read alike.

Two statements are compared only when each has at most `MAX_DIFFERENT` content words the other
lacks; the worker replaces only single statements (`memories.pipeline.supersede.judge_priors`), so
a correction of one part of a long turn leaves the turn current beside it (the answerers then state
the later one, `memories.retrieval.answer.resolve`); a note is split into its statements first
(`memories.pipeline.segment`). Known limits: rules over words, not a parse; four languages; a change
said in the future tense is not yet one. With `LLM_BASE_URL` set the model judges the same pairs
(`memories/pipeline/judge_llm.py`), and these rules answer whenever it cannot.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from memories.pipeline.entities import COMMON_WORDS, FIRST_NAMES, extract_entities
from memories.pipeline.language import (
    STOP_WORDS,
    fold,
    in_own_words,
    speaker_subject,
    split_speaker,
    stem,
    word_set,
)
from memories.pipeline.lexicon import ENGLISH, Lexicon, detect, lexicon
from memories.pipeline.values import by_type, masked, pronoun_one, values_of

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
    # The typed values (memories.pipeline.values) by type, and the relations the statement names
    # ("earn", "salary" -> "pay"), so that "I earn 85k" and "My salary went up to 92k" are one
    # attribute with two values whatever the verbs.
    typed: tuple[tuple[str, frozenset[str]], ...] = ()
    relations: frozenset[str] = frozenset()
    # The content words around the values (the frame they sit in), and the frame as text.
    frame_words: frozenset[str] = frozenset()
    masked: str = ""
    # The frame words of each clause that holds a value, when the statement has several clauses:
    # "They reassigned me, my parking spot is now <number>" -> ({"park", "spot"},).
    value_clauses: tuple[tuple[frozenset[str], frozenset[str]], ...] = ()
    # The frame words of a clause that says something still holds: "I moved to Utrecht but still
    # work at the port" -> {"rel:work", "port"}; a prior of that frame is not what changed.
    held: frozenset[str] = frozenset()
    # Words that qualify a relation word ("office" in "my office number"): another attribute.
    qualifiers: frozenset[str] = frozenset()
    # It names a relation that holds many values ("I like", "I have"): a name beside is more.
    many: bool = False
    # "I quit", "I gave up", "no longer": the statement ends something.
    ending: bool = False
    # The stems of its cue, change and ending words ("quit", "cancelled", "switched").
    event_words: frozenset[str] = frozenset()
    # "my rent stays the same", "sigue igual": the statement says a value holds (the lexicon's
    # continuity cues); it confirms, never replaces.
    continuity: bool = False
    # "No, it's 42 not 24", "Sorry, I meant Wednesday", "Attends, non, c'est vendredi": a correction
    # that names a value and nothing it is a value of, nor a change ("désormais je commence à 9h30"
    # says one); it corrects what the person said last.
    bare: bool = False


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

# The cues of a correction, a change, a denial, a hypothetical, a report and an addition are each
# language's lexicon (memories/pipeline/lexicon/<language>.json); English's are read here once.
_EN = lexicon(ENGLISH)
CUES = _EN.cues
STRONG_CUES_RE = _EN.strong_cue
# A quote or a question reports or asks rather than states, in every language.
_QUOTED_RE = re.compile(r"[\"\u201c\u201d\u00ab\u00bb\u201e]")
# A sentence that asks: its last "?" followed by nothing but spaces, punctuation, brackets or an
# emoji ("Should I switch?", "is that mad?!", "(any tips?)", "right? 😅").
_QUESTION_RE = re.compile(r"\?[^\w]*$")


def is_question(text: str) -> bool:
    """Whether a sentence asks (it ends in a question mark, whatever punctuation or emoji follows)."""
    return bool(_QUESTION_RE.search(text))


def is_tentative(text: str, lex: Lexicon) -> bool:
    """Whether a statement says no fact of what holds: a wish or a plan ("I'm thinking of selling
    it"), someone else's words ("she said ..."), a quote, or a question ("Should I switch?").
    Neither a change nor the value it brings."""
    return bool(
        lex.tentative.search(text)
        or lex.reported.search(text)
        or _QUOTED_RE.search(text)
        or is_question(text)
    )


_FOR_WORDS = {"love": "like", "loves": "like", "enjoy": "like", "enjoys": "like", "adore": "like"}
_WORD_RE = re.compile(r"[\w'\u2019-]+")
_SUBJECT_RE = re.compile(
    r"^\s*(?:(?:so|and|but|well|oh|actually|also|btw|ok|okay|now|sorry|yes|no|correction|update)[,:\s]+)*"
    r"(?:(?P<my>my|our)\s+(?:(?:new|current|former|old|other)\s+)?(?P<who>[\w-]+)"
    r"(?:\s+(?P<name>(?-i:[A-Z][\w'\u2019-]*)))?"
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
_NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "first": "1", "second": "2", "third": "3",
}  # fmt: skip
# One word per relative: "my mom" and "my mother" are the same person.
_KIN = {
    "mom": "mother", "mum": "mother", "mommy": "mother", "mama": "mother", "dad": "father",
    "daddy": "father", "papa": "father", "grandma": "grandmother", "granny": "grandmother",
    "grandpa": "grandfather", "granddad": "grandfather", "grandad": "grandfather", "gran": "grandmother",
    "kids": "children", "kid": "child",
    "hubby": "husband", "bf": "boyfriend", "gf": "girlfriend", "neighbour": "neighbor",
    "co-worker": "coworker", "bestie": "friend", "buddy": "friend", "fiancee": "fiance",
}  # fmt: skip
# The familiar names of parents and grandparents in the other languages (each lexicon's `kin` says
# whose): said alone at the start, they name the relative.
_FAMILIAR_PARENTS = frozenset(
    {"mama", "papa", "mamá", "papá", "maman", "mamie", "papi", "papy", "oma", "opa", "abuela", "abuelo"}
)
_ORDINAL_RE = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
# A person a statement does not name ("He's with Adecco now"): the subject key of anyone's
# statement with one of these for its subject, so that it replaces nothing of the speaker's.
SOMEONE = "someone"
_SOMEONE_PRONOUNS = frozenset({"he", "she", "he's", "she's", "he'd", "she'd", "he'll", "she'll"})
_SELF_NEXT_RE = re.compile(
    r",?\s+(?:i|i['\u2019]m|i['\u2019]ve|we|my|our)\b|\s+and\s+(?:i|me)\b", re.IGNORECASE
)
# A second capitalised word after a name: a surname ("Tom Hanks"), or a name after a title ("Mother
# Teresa"); not the speaker's "I".
_SURNAME_RE = re.compile(r"(?-i:\s+(?!I\b)([A-Z][\w\u2019'-]+))")
# Words that carry no value of their own in a statement about oneself, and the thanks and greetings
# of chat ("Thanks!" states no fact that "Thanks for having my back" could confirm or extend).
_LIGHT = STOP_WORDS | word_set(
    """
    i'm im i've ive i'd id i'll ill don't dont doesn't doesnt didn't didnt isn't isnt aren't wasn't won't
    can't cant cannot never no not stopped quit gave give up anymore longer really definitely honestly
    totally pretty quite still always usually these days get got one thing things lot every each
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
            # "My friend Dana's favourite ..." is about Dana, as "Dana's favourite ..." is.
            name = match.group("name") and re.sub(r"['\u2019]s$", "", match.group("name"))
            key = f"{base}:{who}" + (f":{fold(name.lower())}" if name else "")
            return key, {who, *([name.lower()] if name else [])}
        return base, set()  # "my birthday is ...": an attribute of the speaker
    proper = match.group("proper")
    # "Tom's favourite colour" is about Tom.
    proper = proper and re.sub(r"['\u2019]s$", "", proper)
    if _ATTRIBUTE_AFTER_RE.match(body):
        return base, set()  # "Pizza is my favourite food": about the speaker
    # "Originally I'm from Lyon", "Yesterday we met", "Mum and I moved": a first word before the
    # speaker's own "I" is not who the statement is about.
    before_self = _SELF_NEXT_RE.match(body, match.end())
    if proper and not before_self:
        lowered = proper.lower()
        if lowered in _SOMEONE_PRONOUNS:
            # "She moved to Leeds": someone the statement does not name, never the speaker.
            return f"{base}:{SOMEONE}", set()
        who = _KIN.get(lowered, lowered)
        # "Tom Hanks", "Mother Teresa": a full name is not the "Tom" or the mother of "my boss Tom",
        # "my mother".
        surname = _SURNAME_RE.match(body, match.end())
        if surname is not None and (who in PEOPLE or _is_person(proper, body)):
            full = f"{lowered} {surname.group(1).lower()}"
            return f"{base}:{fold(full)}", {lowered, surname.group(1).lower()}
        # "Mum moved to Leeds", "Dad traded the Passat in": the word for a person said as a name.
        if who in PEOPLE:
            return f"{base}:{who}", {lowered, who}
        if _is_person(proper, body):
            return f"{base}:{fold(lowered)}", {lowered}
    return base, set()


_NOTE_AS_WRITTEN_RE = re.compile(r"^(?:[Tt]he\s+)?[Uu]ser(?:s\b|\b(?!:))")
_THING_MOVED_RE = re.compile(
    r"^(?:the|my|our|his|her|their|its)\s+(?!(?:family|household)\b)[a-z]+(?:\s+\w+){0,3}?\s+"
    r"(?:moved|relocated|moving|relocating)\b",
    re.IGNORECASE,
)
_FIRST_PERSON_RE = re.compile(r"\b(?:I|we|us|me)\b|\bI['\u2019]|\bwe['\u2019]", re.IGNORECASE)
_REACH_ME_RE = re.compile(r"\b(?:reach\s+me|I['\u2019]m\s+(?:best\s+)?reached)\s+(?:at|on)\b", re.IGNORECASE)
_ROLE_AT_RE = re.compile(
    r"\bI(?:['\u2019]m|\s+am)\s+(?:now\s+|currently\s+)?(?:a|an)\s+(?P<role>(?:[a-z-]+\s+){1,3}?)"
    r"(?:at|for)\s+(?:the\s+)?[A-Z0-9]"
)
# A role at a place that is no job there.
_NOT_ROLES = word_set(
    "regular member volunteer customer client patient student pupil guest fan visitor subscriber resident"
    " tourist passenger donor supporter trainee intern"
)


def _role_at(body: str) -> bool:
    """Whether the statement says the person holds a role at a named place ("I'm now a nurse at
    Kaiser"), not that they are a member, a client or a volunteer there."""
    return any(not set(m.group("role").split()) & _NOT_ROLES for m in _ROLE_AT_RE.finditer(body))


_REMINDED_RE = re.compile(
    r"^(?:(?:my|our)\s+)?[\w'\u2019]+\s+(?:reminded|assured|reassured)\s+me\s+(?:that\s+)?(?=\S)",
    re.IGNORECASE,
)
_ACTS_ON_MINE_RE = re.compile(
    r"\b(?:raised|lowered|increased|reduced|cut|moved|changed|switched|put|upped|bumped|dropped|doubled"
    r"|halved|rescheduled|extended|shortened)\s+my\s+(?P<thing>[a-z]+)",
    re.IGNORECASE,
)


def _acts_on_mine(body: str) -> bool:
    """Whether someone's change is made to the speaker's own thing ("raised my sertraline"), not to
    a person of the speaker's ("moved my mum into a care home")."""
    return any(m.group("thing").lower() not in PEOPLE for m in _ACTS_ON_MINE_RE.finditer(body))


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
    """The frame of one statement (a memory's content), read with the lexicon of its language."""
    speaker, said = split_speaker(text.strip())
    # An assistant's note ("User moved to Munich.") is read as the person's own words.
    said = said if speaker else in_own_words(said)
    lex = lexicon(detect(said))
    english = lex.code == ENGLISH
    # "Let me correct that: my sister's birthday is May 13": the lead says how (its cues count),
    # the rest what, and whom about.
    body = _without_lead(lex, said)
    if english:
        # "Dad reminded me Mum's birthday is the 4th": what the person was reminded of is the statement.
        reminded = _REMINDED_RE.sub("", body, count=1)
        if reminded and reminded != body:
            body = reminded[:1].upper() + reminded[1:]
    # "Starting Monday my manager will be Luis": the start is when the change holds, so the statement
    # is read without it (its subject is "my manager", its date no value) and says a change.
    scheduled = bool(lex.start.search(body))
    if scheduled:
        body = _LEADING_PUNCTUATION_RE.sub("", lex.start.sub(" ", body)).strip() or body
    subject, subject_words = _subject(speaker, body) if english else _subject_in(lex, speaker, body)
    if not speaker and _NOTE_AS_WRITTEN_RE.match(said):
        # "User groups moved to Munich", "User reported a rent of ...": a note in_own_words could not
        # read as the person's own statement is about something else.
        subject = f"{subject}:user"
    # "Anne, not Anna", "es ist 10 Uhr, nicht 9 Uhr": the value rejected (each lexicon's patterns).
    rejected = frozenset(
        lex.stem(w.lower())
        for pattern in lex.rejected
        for m in pattern.finditer(body)
        for w in m.group("v").split()
    )
    without_rejected = body
    for pattern in lex.rejected:
        without_rejected = pattern.sub(" ", without_rejected)
    # "I can't stand cilantro" is one denial of liking it, not two; "I can't wait" is eagerness, and
    # "I won't quit" two denials that affirm: what counts is whether the denials are odd in number.
    against = bool(lex.against.search(without_rejected))
    plain = lex.idioms.sub(" ", lex.against.sub(" ", without_rejected))
    negated = (len(lex.negation.findall(plain)) % 2 == 1) != against
    tokens = _WORD_RE.findall(lex.against.sub(" like ", without_rejected))
    light = _LIGHT if english else _LIGHT | lex.stop | lex.self_words | lex.possessive
    words: set[str] = set()
    values: set[str] = set()
    relations: set[str] = set()
    for index, token in enumerate(tokens):
        lowered = _elided(lex, token.lower().strip("'\u2019-"))
        lowered = _FOR_WORDS.get(lowered, lowered)
        ordinal = _ORDINAL_RE.match(lowered)
        if ordinal:
            lowered = ordinal.group(1)
        elif not pronoun_one(lowered, [t.lower() for t in tokens[max(index - 2, 0) : index]]):
            lowered = _NUMBER_WORDS.get(lowered, lowered)
        lowered = _KIN.get(lowered, lex.kin.get(lowered, lowered) if not english else lowered)
        if not lowered or lowered in light or lowered in lex.cues or lowered in subject_words:
            continue
        relation = lex.relations.get(lowered)
        if relation:
            relations.add(relation)
        # One word for a relation in any of its words ("salary", "earn"): the relation is shared.
        root = f"rel:{relation}" if relation else lex.stem(lowered)
        words.add(root)
        # Values: numbers, names, and people ("with my brother" / "with my sister" differ in who).
        if (
            any(ch.isdigit() for ch in lowered)
            or lowered in PEOPLE
            or (index > 0 and token[:1].isupper() and lowered not in COMMON_WORDS and english)
        ):
            values.add(root)
    # "My rent is £950, but my sister's rent went up to £1,100": the values, cues and changes of a
    # clause about someone else are theirs, not the statement's.
    clauses = _CLAUSE_RE.split(body)
    whose = _clause_subjects(lex, speaker, clauses)
    own = _own_clauses(clauses, whose, speaker, subject)
    typed = by_type(values_of(own if own is not None else body))
    if english and "home" in relations and _THING_MOVED_RE.match(body) and not _FIRST_PERSON_RE.search(body):
        # "The company moved to Munich", "My question was about moving to Munich": a thing moved,
        # not the person's home.
        relations.discard("home")
        words.discard("rel:home")
    if english and _REACH_ME_RE.search(body):
        relations.add("phone")  # "You can reach me at 555-0199": the person's own number
    said_cues = {t.lower() for t in _WORD_RE.findall(said)} & lex.cues
    if english and (said_cues or lex.change.search(plain)) and _role_at(body):
        # "I'm now a data engineer at Solvia": a role at a named place, said as what holds now, is
        # where the person works (said without "now" it is as often a client, a club or a feast).
        relations.add("work")
    for norms in typed.values():
        values.update(lex.stem(word) for norm in norms for word in _WORD_RE.findall(norm))
    cue_words = said_cues if own is None else {t.lower() for t in _WORD_RE.findall(own)} & lex.cues
    strong = bool(rejected) or bool(lex.strong_cue.search(body))
    ending = bool(lex.ending.search(said))
    event_words = frozenset(
        lex.stem(_elided(lex, w.lower()))
        for pattern in (lex.change, lex.ending, lex.strong_cue)
        for m in pattern.finditer(said)
        for w in _WORD_RE.findall(m.group())
    )
    frame_text = masked(body)
    frame_words = _frame_words(lex, frame_text, light | subject_words)
    strong_cue = strong or bool(lex.strong_cue.search(said))
    # "I won't quit" reports no change.
    change = (bool(lex.change.search(plain)) and not lex.negation.search(plain)) or ending or scheduled
    if own is not None:
        change = change and bool(lex.change.search(own) or lex.ending.search(own) or scheduled)
    if english and change and subject.startswith(f"{speaker_subject(speaker)}:") and _acts_on_mine(body):
        # "My doctor raised my sertraline to 100 mg", "My landlord put my rent up to £1,020": someone
        # changed the speaker's own thing; the value is the speaker's.
        subject = speaker_subject(speaker)
    return Frame(
        subject=subject,
        words=frozenset(words),
        values=frozenset(values),
        rejected=rejected,
        negated=negated,
        cue=bool(cue_words) or strong,
        strong_cue=strong_cue,
        tentative=is_tentative(body, lex),
        attribute=_attribute(body, subject_words) if english else "",
        change=change,
        additive=bool(lex.additive.search(body)),
        typed=tuple(sorted(typed.items())),
        relations=frozenset(relations),
        frame_words=frame_words,
        # Read only where same_frame asks for them: a statement with a cue or a change (a quarter of
        # frame_of's time on chat turns otherwise).
        value_clauses=_value_clauses(lex, clauses, whose, light | subject_words, subject)
        if cue_words or strong_cue or change
        else (),
        held=_held(lex, clauses, light | subject_words) if english else frozenset(),
        qualifiers=_qualifiers(lex, frame_text, light),
        many=any(_elided(lex, t.lower()) in lex.many for t in tokens),
        masked=frame_text,
        ending=ending,
        event_words=event_words,
        continuity=bool(lex.continuity.search(body)),
        bare=strong_cue
        and bool(typed)
        and not change
        and not frame_words - {lex.stem(w) for w in lex.pronouns | _EN.pronouns},
    )


_LEADING_PUNCTUATION_RE = re.compile(r"^[\s,;:\u2014-]+")

# A lead clause of at most this many characters ("Wait, no, I got that wrong:") before the statement.
_LEAD_MAX = 60
_LEAD_MAX_WORDS = 3
_LEAD_END_RE = re.compile(r"[:;,.!?\u2014]+\s+")


def _without_lead(lex: Lexicon, body: str) -> str:
    """The statement after leads that only say it corrects or opens ("Scratch that, ...", "Btw,
    ...", "Wait, no, I got that wrong: ..."): each the shortest that carries a cue and no value."""
    rest = body
    while True:
        for match in _LEAD_END_RE.finditer(rest, 0, min(len(rest), _LEAD_MAX + 3)):
            lead, after = rest[: match.start()], rest[match.end() :]
            lead_words = [w.lower() for w in _WORD_RE.findall(lead)]
            says_how = (
                lex.strong_cue.search(lead)
                or lex.opener.match(lead)
                or _EN.opener.match(lead)
                or any(w in lex.cues for w in lead_words)
            )
            # "Oops", "Quick update": a short lead with a cue; a longer one says only that it corrects.
            short = len(lead_words) <= _LEAD_MAX_WORDS and not values_of(lead)
            if says_how and (short or _only_cues(lex, lead)) and len(_WORD_RE.findall(after)) >= 3:
                rest = after
                break
        else:
            return rest


def _only_cues(lex: Lexicon, lead: str) -> bool:
    # "Wait, no, I got that wrong" says nothing but that a correction follows; "I replaced my
    # iPhone" says what.
    rest = lex.strong_cue.sub(" ", lex.opener.sub(" ", _EN.opener.sub(" ", lead)))
    light = _LIGHT | lex.stop | lex.self_words | lex.cues
    return all(w.lower() in light for w in _WORD_RE.findall(rest))


def _elided(lex: Lexicon, word: str) -> str:
    # "j'habite" -> "habite", "l'école" -> "école" where the language elides.
    # "Rent's £1,020", "the car's": the word without its "'s" (English only: "l's" elides nothing).
    head, apostrophe, tail = word.replace("\u2019", "'").partition("'")
    if apostrophe and tail == "s" and lex.code == ENGLISH and len(head) > 2:
        return head
    return tail if apostrophe and head in lex.elided and tail else word


_TYPE_TOKEN_RE = re.compile(r"<\w+>")


def _frame_words(lex: Lexicon, frame_text: str, light: frozenset[str] | set[str]) -> frozenset[str]:
    """The content words of a statement with its values masked, its cues of change left out: what
    the values are values of ("standup is at <time>" -> {"standup"})."""
    words = set()
    without_cues = lex.strong_cue.sub(
        " ", lex.ending.sub(" ", lex.change.sub(" ", lex.opener.sub(" ", frame_text)))
    )
    for token in _WORD_RE.findall(_TYPE_TOKEN_RE.sub(" ", without_cues)):
        lowered = _elided(lex, token.lower().strip("'\u2019-"))
        # One letter is no frame: "C<number>" is what masking leaves of a code ("C4").
        if len(lowered) < 2 or lowered in light or lowered in lex.cues or lowered in lex.stop:
            continue
        if lowered in lex.time_words or lowered in _EN.time_words:
            continue  # when it holds is not what it is about ("next month I'm moving to <place>")
        relation = lex.relations.get(lowered)
        words.add(f"rel:{relation}" if relation else lex.stem(lowered))
    return frozenset(words)


_CLAUSE_RE = re.compile(r"[,;:\u2014]\s+|\s+(?:so|and|but|because)\s+", re.IGNORECASE)


def _clause_subjects(lex: Lexicon, speaker: str, clauses: list[str]) -> tuple[str, ...]:
    """Whom each clause of a statement of several is about (nothing for a single clause): read once
    for `_own_clauses` and `_value_clauses`."""
    if len(clauses) < 2:
        return ()
    english = lex.code == ENGLISH
    return tuple((_subject(speaker, c) if english else _subject_in(lex, speaker, c))[0] for c in clauses)


def _own_clauses(clauses: list[str], whose: tuple[str, ...], speaker: str, subject: str) -> str | None:
    """The clauses of a statement about its subject, when another clause is about someone else
    ("..., but my sister's rent went up"); None when every clause is about the subject."""
    if not whose:
        return None
    # The speaker's own remark beside a statement about someone ("my cousin is called Jena, I
    # misspelled it") is the statement's too.
    theirs = {subject, speaker_subject(speaker)}
    if all(who in theirs for who in whose):
        return None
    return " ".join(c for c, who in zip(clauses, whose, strict=True) if who in theirs)


_STILL_RE = re.compile(r"\bstill\b", re.IGNORECASE)


def _held(lex: Lexicon, clauses: list[str], light: frozenset[str] | set[str]) -> frozenset[str]:
    """The frame words of the clauses of a statement of several that say something still holds."""
    if len(clauses) < 2:
        return frozenset()
    return frozenset(
        word
        for clause in clauses
        if _STILL_RE.search(clause) and not lex.negation.search(clause)
        for word in _frame_words(lex, masked(clause), light)
    )


def _value_clauses(
    lex: Lexicon,
    clauses: list[str],
    whose: tuple[str, ...],
    light: frozenset[str] | set[str],
    subject: str,
) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """(frame words, value norms) of each clause that holds a value and is about the statement's
    subject, for a statement of several clauses: "My rent is £950, but my sister's rent went up to
    £1,100" has one clause of the speaker's (£950) and one of the sister's, which is left out."""
    if not whose:
        return ()
    found = []
    for clause, who in zip(clauses, whose, strict=True):
        values = values_of(clause)
        if not values:
            continue
        words = _frame_words(lex, masked(clause), light)
        if who == subject and words:
            found.append((words, frozenset(value.norm for value in values)))
    return tuple(found)


def _qualifiers(lex: Lexicon, frame_text: str, light: frozenset[str] | set[str]) -> frozenset[str]:
    """The words between a possessive and a relation word that narrow the relation: "office" in "my
    office number", "personal" in "my personal email" (not a cue or another relation word)."""
    plain = _TYPE_TOKEN_RE.sub(" . ", frame_text)
    tokens = [_elided(lex, t.lower().strip("'\u2019-")) for t in _WORD_RE.findall(plain)]
    found = set()
    for owner, before, word in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if owner not in lex.possessive or word not in lex.relations or before in lex.relations:
            continue
        if before not in light and before not in lex.cues and before not in lex.stop:
            found.add(lex.stem(before))
    return frozenset(found)


# "of" before a possessive in the languages the lexicons read ("de mi", "de mon", "von meinem").
_OF_WORDS = frozenset({"de", "del", "von", "di", "da", "do"})
_PLURAL_ARTICLES = frozenset({"los", "las", "les"})


def _subject_in(lex: Lexicon, speaker: str, body: str) -> tuple[str, set[str]]:
    """(who the statement is about, the words that named them) in a language other than English:
    "Meine Schwester ...", "Mi tío ...", "Ma tante ..." are about a relative; a known first name
    opening the statement is that person; anything else is the speaker."""
    base = speaker_subject(speaker)
    tokens = [t for t in _WORD_RE.findall(lex.opener.sub("", body, count=1))]
    lowered = [t.lower() for t in tokens]
    for index, word in enumerate(lowered[:4]):
        # "El coche de mi marido", "La voiture de mon mari", "Das Auto von meinem Mann": the thing of a
        # relative, said with "of" after the thing (index 3); otherwise the word opens the statement.
        of_a_relative = index == 3 and lowered[2] in _OF_WORDS
        if index == 3 and not of_a_relative:
            continue
        if (
            of_a_relative
            and word in lex.possessive
            and index + 1 < len(lowered)
            and lowered[index + 1] not in lex.kin
            and lowered[index + 1] not in lex.kin_groups
        ):
            # "El coche de mi trabajo": a thing of something of the speaker's is another attribute.
            return f"{base}:{fold(lowered[index + 1])}", set()
        if word in lex.possessive and index + 1 < len(lowered) and lowered[index + 1] in lex.kin:
            who = lex.kin[lowered[index + 1]]
            # "Meine Schwester Julia ...", as "My sister Julia ...": the name after the word for her.
            after = index + 2
            if after < len(tokens) and tokens[after][:1].isupper() and fold(lowered[after]) in FIRST_NAMES:
                name = fold(lowered[after])
                return f"{base}:{who}:{name}", {lowered[index + 1], who, lowered[after], name}
            return f"{base}:{who}", {lowered[index + 1], who}
    # "Los usuarios de la app viven ...", "Les voisins ont déménagé": a group that is not the speaker.
    if len(lowered) > 1 and lowered[0] in _PLURAL_ARTICLES and lowered[1] not in lex.kin:
        return f"{base}:{fold(lowered[1])}", set()
    # "Mama zieht nach Leeds", "Papá se mudó", "Maman a déménagé": a parent's familiar name said as a
    # name, as "Mum moved to Leeds" (not "Mutter", "Madre": "¡Madre mía!").
    if tokens and tokens[0][:1].isupper() and lowered[0] in _FAMILIAR_PARENTS and lowered[0] in lex.kin:
        who = lex.kin[lowered[0]]
        return f"{base}:{who}", {lowered[0], who}
    # The names are written without accents ("Lucía" is "lucia").
    if tokens and tokens[0][:1].isupper() and fold(lowered[0]) in FIRST_NAMES and lowered[0] not in lex.stop:
        return f"{base}:{fold(lowered[0])}", {lowered[0], fold(lowered[0])}
    return base, set()


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
    # Every relation of the lexicons holds one value at a time (where one lives, works, one's pay).
    relations = {f"rel:{name}" for name in _EN.relations.values()}
    return frozenset(stem(word) for word in SINGLE_VALUED) | relations


# Two statements whose frames (values masked) are this close in meaning are about one attribute
# ("I earn <money> a year" / "My salary went up to <money>"): measured on the update suite.
SAME_FRAME = 0.75


def same_subject(new: str, old: str) -> bool:
    """Whether two statements' subjects (`Frame.subject`) are one person: the same key, or a person
    named once with the word for them and once by name alone ("My friend Marco is drumming for ..."
    / "Marco is drumming for ... now": `user:friend:marco`, `user:marco`). Two people of one name
    and two words for them ("my friend Sam" / "my son Sam") stay two, as do a name and a full name
    ("Tom" / "Tom Hanks") and two people no statement names."""
    if new == old:
        # Two people a statement does not name ("She moved to Leeds", "He moved to York") may be two.
        return not new.endswith(f":{SOMEONE}")
    short, long = sorted((new, old), key=lambda key: key.count(":"))
    base, _, name = short.rpartition(":")
    return (
        bool(base)
        and long.count(":") == short.count(":") + 1
        and long.startswith(base + ":")
        and (long.rpartition(":")[2] == name)
    )


def typed_change(new: Frame, old: Frame) -> bool:
    """Whether `new` names another value of a type `old` has a value of: a candidate change, if the
    two are about the same attribute (`same_frame`). A name beside a relation that holds many
    ("I like Thai food" / "I like Ethiopian food") is more, not another value, unless a change or a
    correction says so."""
    return bool(_changed_types(new, old))


# Values that measure (how much, when, which number): one at a time in one frame.
_MEASURES = frozenset({"money", "quantity", "number", "time", "date", "weekday", "phone", "email", "url"})


def _same_measure(new: Frame, old: Frame) -> bool:
    """Another amount of money, or of a quantity in a unit the prior has ("25 minute" / "40 minute")."""
    changed = _changed_types(new, old)
    if "money" in changed:
        return True
    if "quantity" not in changed:
        return False
    units = {norm.partition(" ")[2] for kind, norms in old.typed if kind == "quantity" for norm in norms}
    return any(
        norm.partition(" ")[2] in units for kind, norms in new.typed if kind == "quantity" for norm in norms
    )


# The values that reschedule a plan; another name or number in a plan is another plan.
_WHEN = frozenset({"time", "date", "weekday"})
FORESIGHT = "foresight"


def _changed_types(new: Frame, old: Frame) -> set[str]:
    old_typed = dict(old.typed)
    changed = {kind for kind, norms in new.typed if kind in old_typed and norms - old_typed[kind]}
    if changed <= {"name"} and (new.many or old.many) and not (new.change or new.strong_cue):
        return set()
    return changed


def same_frame(new: Frame, old: Frame, *, frame_similarity: float | None) -> bool:
    """Whether two statements say their values of one attribute: they name one relation, their words
    around the values are the same, or (by meaning) their masked texts are close."""
    if new.frame_words and new.frame_words == old.frame_words:
        return True
    if new.relations & old.relations:
        # One relation, unless the new statement qualifies it with a word the prior lacks: "my
        # personal email" is another attribute than "my email"; "my work phone" another than "my
        # personal phone" (each names its own qualifier: "work" is itself a relation word).
        if new.attribute and old.attribute and new.attribute != old.attribute:
            return False
        # A qualifier the prior says elsewhere narrows nothing: "I earn €3,400 net a month" / "my net
        # pay is €3,750 a month".
        return not new.qualifiers - old.qualifiers - old.frame_words
    if (new.change or new.cue) and new.frame_words & old.frame_words and _same_measure(new, old):
        # Another amount in the same unit of something both name, said as a change: "my commute is
        # down to 25 minutes" / "my commute takes 40 minutes".
        return True
    if (
        (new.strong_cue or new.change)
        and _within(new.frame_words, old.frame_words)
        and not _other_relation(new, old)
    ):
        # A correction or a change repeats part of what it changes, or only its value ("no, it lands
        # at 8pm" / "my flight lands at 6pm"; "Bajé a 75 kilos" / "Peso 80 kilos").
        return True
    old_norms = {norm for _, norms in old.typed for norm in norms}
    if (new.strong_cue or new.change or new.cue) and any(
        norms - old_norms and _within(words, old.frame_words) for words, norms in new.value_clauses
    ):
        # The clause that holds the value repeats the prior's frame, whatever the others say: "They
        # reassigned me, my parking spot is now C4" / "My parking spot is B12".
        return True
    if frame_similarity is None or frame_similarity < SAME_FRAME:
        return False
    # Close by meaning, but each names something the other does not ("Locker 2 holds my shoes" /
    # "Locker 0 holds my racket"): two things side by side, unless the new one says it changes or
    # corrects. A wrong "same" here hides a true fact; a wrong "different" keeps both current.
    distinct = new.frame_words - old.frame_words and old.frame_words - new.frame_words
    return not distinct or bool(new.change or new.cue or new.strong_cue)


def _other_relation(new: Frame, old: Frame) -> bool:
    """Whether a change says only its relation and values ("I've moved from Cork to Galway": a home)
    while the prior names none of it and says something of its own ("I'm a physiotherapist in Cork",
    "I'm training for the Dublin marathon"): a move changes where one lives, not what one does."""
    return (
        bool(new.relations)
        and not new.relations & old.relations
        and bool(old.frame_words)
        and not old.frame_words & _HOME_THINGS
    )


# What a statement of where one lives names besides the verb: "My flat is in Cork", "I rent a flat".
_HOME_THINGS = frozenset(
    {"home", "flat", "apart", "apartment", "hous", "address", "place", "room", "rel:rent"}
)


def _within(words: frozenset[str], others: frozenset[str]) -> bool:
    """Whether every word has its own in `others`, the head of a compound counting as the compound
    ("Termin" in "Zahnarzttermin", "appointment" in "dentist-appointment")."""
    return all(
        word in others or (len(word) >= 5 and any(other.endswith(word) for other in others)) for word in words
    )


def _same_word(a: str, b: str) -> bool:
    # Stems of one family: "allerg" (allergic) and "allergi" (allergy).
    return a == b or (min(len(a), len(b)) >= 5 and (a.startswith(b) or b.startswith(a)))


def word_difference(left: frozenset[str], right: frozenset[str]) -> set[str]:
    """The words of `left` with no word of its family in `right` (_same_word's rule)."""
    # _same_word asked of every pair was a tenth of an import's CPU in the worker (judge asks it of
    # every prior of every statement): the same word is a set lookup, and a family needs two long
    # words, so a short word is never compared and a long one only with the long words of `right`.
    long_right = [other for other in right if len(other) >= 5]
    return {
        word
        for word in left
        if word not in right
        and not (
            len(word) >= 5 and any(word.startswith(other) or other.startswith(word) for other in long_right)
        )
    }


def no_new_value(new: Frame, old: Frame) -> bool:
    # Replacing a prior that names a value with a statement that names none would leave the value
    # current nowhere: hiding a true fact is worse than keeping two. Unless the statement says it
    # changes, corrects or ends something: "I moved", "not anymore" carry no value and still end it.
    says_change = new.cue or new.strong_cue or new.change or new.ending or new.negated or new.rejected
    return bool(old.values) and not new.values and not new.typed and not says_change


def judge(
    new: Frame,
    old: Frame,
    *,
    similarity: float,
    new_kind: str,
    old_kind: str,
    same_day: bool = True,
    frame_similarity: float | None = None,
    latest: bool = False,
) -> Verdict:
    """How `new` (just said) relates to `old` (held now), given how close they are in meaning
    (`similarity`) and how close their frames are, values masked (`frame_similarity`, when known).

    A change needs a new value: a statement that names no value while the prior names one, and says
    no change, correction or end ("the rent is fine", "I live in a flat"), never replaces it; it is
    beside it at most (`no_new_value`).

    A bare correction ("No, it's 42", "Sorry, I meant Wednesday") names no attribute, so it can only
    mean the last thing said: it replaces `old` only when `old` is the person's latest statement
    (`latest`) and holds another value of a type the correction names.
    """
    replaces = Verdict.ADD if no_new_value(new, old) else Verdict.UPDATE
    if not same_subject(new.subject, old.subject) or new.tentative or old.tentative:
        return Verdict.ADD
    if new.held & old.frame_words:
        # "I moved to Utrecht last month but still work at the port": the move changes the home, not
        # the work the same statement says still holds.
        return Verdict.ADD
    if new.continuity and not _changed_types(new, old):
        # "The rent stays the same" after "My rent is $1,800": no new value, and it says the old one
        # holds. At most evidence for it (it names what it confirms), never its end, whatever its
        # negation says ("hasn't changed").
        return Verdict.SAME if similarity >= RELATED and new.words & old.words else Verdict.ADD
    # A correction restates a fact, whatever the tense of its cue ("I got that wrong: it lands at 8").
    # So does one that says what holds now ("so the team is now 14"), whatever else it tells.
    facts = old_kind != EPISODIC and (new_kind != EPISODIC or new.change or new.cue)
    # "Call Maya on Friday" / "Call Omar on Friday" are two plans; "... on Monday" moves one.
    plans = new_kind == old_kind == FORESIGHT and not (new.change or new.strong_cue)
    if new.rejected & old.values and facts:
        # "No, it's 4417 not 4471": it names the prior's very value as the wrong one.
        return replaces
    if new.bare and not old.tentative:
        # Whatever the meaning says (a bare value is close to nothing), it is about the last statement.
        return replaces if latest and _changed_types(new, old) else Verdict.ADD
    if (
        facts
        and not (plans and not _changed_types(new, old) & _WHEN)
        and similarity >= (LOOSELY_RELATED if new.strong_cue or new.change else RELATED)
        and new.negated == old.negated
        and not (new.additive and not new.strong_cue)
        and typed_change(new, old)
        and same_frame(new, old, frame_similarity=frame_similarity)
    ):
        # Another value of one type in the same frame: "Standup is at 10:00" / "... now at 9:30".
        return replaces
    loose = new.strong_cue or new.ending
    if similarity < (LOOSELY_RELATED if loose else RELATED) or not new.words or not old.words:
        # Unrelated, or nothing said to compare (";)", "Bye!").
        return Verdict.ADD
    only_new = word_difference(new.words, old.words)
    only_old = word_difference(old.words, new.words)
    shared = new.words - only_new
    rejects_old = any(_same_word(r, w) for r in new.rejected for w in old.words)
    if rejects_old and (shared or similarity >= CORRECTED):
        # "Anne, not Anna": the prior statement said what this one rejects, about the same thing.
        return replaces
    # Two statements are about the same thing only when they differ in a few words: a long turn of
    # chat shares words with many others, and sharing them makes it neither the same nor a change.
    close = len(only_new) <= MAX_DIFFERENT and len(only_old) <= MAX_DIFFERENT
    if new.negated != old.negated:
        # The same statement, affirmed and denied: the later one holds.
        events_apart = EPISODIC in (new_kind, old_kind) and not same_day
        # "I don't have a cat anymore" ends "I have a cat named Milo", though it says less.
        denies = not only_old or new.strong_cue or new.ending or similarity >= CORRECTED
        if only_old and only_new - new.event_words and not shared & (new.values | old.values):
            # "I quit swimming" ends swimming, not cycling: a denial that names something the prior
            # does not, while the prior names something it does not, denies something else.
            return Verdict.ADD
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
    if new.attribute and new.attribute == old.attribute and (typed_change(new, old) or not new.typed):
        # "My shoe size is 42" / "My shoe size is 43": one attribute, another value (the same value
        # said again beside someone else's is no change of it).
        return replaces
    if (new.additive and not new.strong_cue) or not close:
        return Verdict.ADD
    numbers_new = {w for w in only_new if any(ch.isdigit() for ch in w)}
    numbers_old = {w for w in only_old if any(ch.isdigit() for ch in w)}
    if numbers_new and numbers_old and only_new == numbers_new and only_old == numbers_old:
        # Everything else the same, another number: "my son is 7" / "my son is 8 now".
        return replaces if similarity >= CORRECTED else Verdict.ADD
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
        return replaces if similarity >= CORRECTED else Verdict.ADD
    values_differ = bool((only_new | only_old) & (new.values | old.values))
    if relation and not values_differ and similarity >= REWORDED:
        # Other words for the same thing, no name or number different: "I'm based in" / "I live in".
        return Verdict.SAME
    if typed_change(new, old) and not same_frame(new, old, frame_similarity=frame_similarity):
        # Another value, but of another attribute ("my office number" / "my phone number").
        return Verdict.ADD
    if shared & _single_valued_stems():
        return replaces
    if (new.strong_cue or new.change) and (
        (shared - new.values - old.values) or similarity >= CORRECTED or typed_change(new, old)
    ):
        # What both name beyond values: "The 7:52 was cancelled so I got the bus" shares only the
        # time with "I take the 7:52 train to work", and ends nothing of it.
        return replaces
    if new.cue and shared and similarity >= CORRECTED:
        return replaces
    return Verdict.ADD


def claims(sentence: str) -> bool:
    """Whether a sentence states something of its own: not only a cue that a correction or a new
    statement follows ("That was wrong.", "Wait, no.", "Btw,")."""
    _, said = split_speaker(sentence.strip())
    lex = lexicon(detect(said))
    return not _only_cues(lex, said)


_POSSESSED_RE = re.compile(r"[\w'\u2019-]+")


def relatives_named(text: str) -> frozenset[str]:
    """The relatives a text names as the speaker's own, in any language with a lexicon: "my uncle's
    email" -> {"uncle"}, "la fecha de mi tía" -> {"aunt"}, "my siblings" -> {"brother", "sister"}
    (one English word per relative; "*" for any, as in "my family")."""
    tokens = [t.lower().removesuffix("'s").removesuffix("\u2019s") for t in _POSSESSED_RE.findall(text)]
    language = lexicon(detect(text))
    lexes = [_EN] if language is _EN else [_EN, language]
    found: set[str] = set()
    for before, word in itertools.pairwise(tokens):
        for lex in lexes:
            if before not in lex.possessive:
                continue
            who = _KIN.get(word, word) if lex is _EN else lex.kin.get(word, "")
            if who in PEOPLE or (who and lex is not _EN):
                found.add(who)
            found.update(lex.kin_groups.get(word, ()))
    return frozenset(found)


def names_someone(text: str) -> bool:
    """Whether a text has a word for another person than the speaker, in English or its language's
    lexicon ("my older sister", "mi hermana", "my boss"), wherever it stands."""
    lex = lexicon(detect(text))
    words = {t.lower().removesuffix("'s").removesuffix("\u2019s") for t in _POSSESSED_RE.findall(text)}
    return bool(words & (PEOPLE | set(_KIN) | set(lex.kin) | set(lex.kin_groups) | set(_EN.kin_groups)))


def asks_about_self(text: str) -> bool:
    """Whether a question is (also) about the speaker: "I", "me", or "my" before something other
    than a relative ("my garden", "my email")."""
    tokens = [t.lower().removesuffix("'s").removesuffix("\u2019s") for t in _POSSESSED_RE.findall(text)]
    lex = lexicon(detect(text))
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if token in _EN.possessive or token in lex.possessive:
            if not relatives_named(f"{token} {following}"):
                return True
        elif token.replace("\u2019", "'") in _EN.self_words | lex.self_words:
            # The speaker's own words are the lexicon's (`lexicon.persons` reads them for recall).
            return True
    return False


def relative_of(text: str) -> str:
    """The relative of the speaker a statement is about ("my aunt lives in York" -> "aunt"), or ""
    when it is about the speaker, a named person or nobody in particular."""
    parts = frame_of(text).subject.split(":")
    return parts[1] if len(parts) > 1 and parts[1] in PEOPLE else ""
