"""Small pieces of English the extraction rules share: speakers, sentences and tense cues.

Approach: plain regular expressions and short word lists, no models and no third-party parsers, so the
rules are deterministic, fast on long documents and easy to read when one of them misfires.

Known limits: English only. A line such as "Shopping List: eggs" looks like a conversation turn unless its
label is in `LABEL_WORDS`. Tense is decided from a few dozen cue words and the "-ed" ending, so unusual
verbs, irony and reported speech can fool it.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

import snowballstemmer

from memories.pipeline.lexicon import is_cue


def word_set(words: str) -> frozenset[str]:
    """A set from a block of space-separated words: long word lists stay readable in the source."""
    return frozenset(words.split())


# A Snowball stemmer keeps the word it is stemming on itself, so one stemmer shared by threads
# (requests run in a thread pool) mixes their words: a wrong stem, or an IndexError that answered a
# recall with HTTP 500. One stemmer per thread.
_stemmers = threading.local()


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word ("allergic", "allergy" -> "allerg"): how
    statements and queries are compared by word family. Safe to call from many threads at once."""
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def fold(text: str) -> str:
    """Case- and accent-folded text with its whitespace collapsed: "  Zoë  Müller " -> "zoe muller".

    Casefold, then NFKD, then the combining marks dropped; runs of whitespace become one space and
    the ends are trimmed. Entity names are stored under this key, and queries and aliases are folded
    the same way to be compared with them.
    """
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return " ".join("".join(ch for ch in decomposed if not unicodedata.combining(ch)).split())


# English stop words, with chat filler and the words a question to a memory carries ("do you
# remember", "tell me"): words that say nothing about what a text is about, dropped before texts
# are compared word for word.
STOP_WORDS = word_set(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom whose why will
    with would you your yours yourself yourselves also am pm yes yeah oh hey hi wow really just like
    tell know remember recall anything something kind sort type likely probably ever
    """
)

# Question filler alone, for queries that PostgreSQL's 'english' text-search configuration parses:
# it drops the function words itself (what, when, did, ...) but keeps these. Not STOP_WORDS, which
# would also drop words such as "like" and "really" that the text search keeps and ranks on.
REQUEST_WORDS = word_set(
    """
    tell remember recall know knows anything something everything mention mentioned please kind
    sort type likely probably
    """
)


# Words that open "Label: value" lines in notes. They share the shape of a speaker turn ("Alice: hi"),
# so they are listed here to keep a note's "Note: buy milk" from becoming a turn by someone called Note.
LABEL_WORDS = word_set(
    """
    a action address age agenda answer attendees background breakfast budget caution cc comment comments
    context correction date day deadline description details dinner due edit email erratum example fyi goal
    goals idea ideas important info input issue location lunch name note notes objective output p.s ps phone
    plan plans
    priority problem q question reason reminder result results solution source status step subject summary
    task tasks tip tips title to todo topic tags tag time update warning where when why who what how re fwd
    from link url http https
    """
)

# Roles used by chat transcripts; they mark turns but are not people.
ROLE_SPEAKERS = frozenset({"user", "assistant", "human", "ai", "system", "bot", "agent", "model", "me"})
# Roles that stand for the person whose memory this is.
USER_ROLES = frozenset({"user", "human", "me"})

# Well-known countries and major cities, lower-case. Short on purpose: it only has to catch the places
# people mention most without a preposition ("Berlin is lovely"); "in/to/from X" catches the rest.
KNOWN_LOCATIONS = word_set(
    """
    afghanistan argentina australia austria belgium brazil canada chile china colombia croatia cuba
    czechia denmark egypt england estonia ethiopia finland france germany ghana greece hungary iceland india
    indonesia iran iraq ireland israel italy jamaica japan kenya korea latvia lebanon lithuania luxembourg
    malaysia mexico morocco nepal netherlands nigeria norway pakistan peru philippines poland portugal
    romania russia scotland serbia singapore slovakia slovenia spain sweden switzerland taiwan thailand
    turkey ukraine uruguay usa uk vietnam wales europe asia africa america
    amsterdam athens atlanta austin bangkok barcelona beijing berlin boston brussels budapest cairo chicago
    copenhagen delhi denver dubai dublin edinburgh florence frankfurt geneva hamburg helsinki istanbul
    jakarta lagos lisbon london madrid manchester melbourne miami milan montreal moscow mumbai munich nairobi
    naples oslo paris prague rome seattle seoul shanghai stockholm sydney tokyo toronto vancouver venice
    vienna warsaw zurich kyoto osaka hawaii california texas florida bali
    """
) | frozenset(
    {
        "new york",
        "new york city",
        "los angeles",
        "san francisco",
        "san diego",
        "las vegas",
        "hong kong",
        "mexico city",
        "rio de janeiro",
        "buenos aires",
        "cape town",
        "tel aviv",
        "kuala lumpur",
        "sao paulo",
        "new zealand",
        "south africa",
        "south korea",
        "united states",
        "united kingdom",
        "saudi arabia",
        "washington",
        "new delhi",
        "costa rica",
        "puerto rico",
        "sri lanka",
        "czech republic",
    }
)

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS_FULL = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)

# The first words of a "Word: ..." prefix that make it a label, a date or a weekday rather than a
# speaker ("Correction: ...", "Note: ...", "Monday: ..."): `is_speaker_name`, and recall's reading of
# a save's speaker in SQL (memories.retrieval.recall).
NOT_SPEAKER_WORDS = frozenset(LABEL_WORDS | set(WEEKDAYS) | set(MONTHS_FULL))

# A speaker is one to three capitalised words (or a chat role) at line start, then a colon and the words
# said on the same line. Requiring text after the colon keeps headings such as "Shopping List:" out.
# A turn's speaker is one of the roles (`ROLE_SPEAKERS`, in any case: "User:", "assistant:") or one to
# three capitalised words ("Alice:", "Dr. Ana Lee:"). Recall's SQL reads a memory's speaker by the
# same two rules (`memories.retrieval.recall`).
_SPEAKER_RE = re.compile(
    r"^[ \t]*(?P<speaker>(?:[A-Z\u00c0-\u00de][\w'\u2019.\-]*(?:[ \t][A-Z\u00c0-\u00de][\w'\u2019.\-]*){0,2})"
    r"|(?i:" + "|".join(sorted(ROLE_SPEAKERS)) + r"))[ \t]*:[ \t]+(?P<body>\S.*)$"
)

_SPEAKER_LINE_RE = re.compile(_SPEAKER_RE.pattern, re.MULTILINE)


def split_speaker(text: str) -> tuple[str, str]:
    """("Alice", "I went home") for "Alice: I went home"; ("", text) when the text is not a turn."""
    first_line, newline, rest = text.partition("\n")
    match = _SPEAKER_RE.match(first_line)
    if match is None:
        return "", text
    speaker = match.group("speaker").strip()
    if not is_speaker_name(speaker):
        return "", text
    return speaker, (match.group("body") + newline + rest).strip()


def is_speaker_name(name: str) -> bool:
    """Whether a "Name:" prefix names a speaker rather than a label, a date or a place heading."""
    words = name.lower().split()
    if not words or words[0].rstrip(".") in NOT_SPEAKER_WORDS:
        return False
    if is_cue(name):
        return False  # "Korrektur: ...", "Wait, no: ..." say how, not who
    return " ".join(words) not in KNOWN_LOCATIONS


def speaker_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of every speaker prefix ("Alice:") at the start of a line."""
    spans: list[tuple[int, int, str]] = []
    for match in _SPEAKER_LINE_RE.finditer(text):
        name = match.group("speaker").strip()
        if is_speaker_name(name):
            spans.append((match.start("speaker"), match.start("body"), name))
    return spans


def speaker_subject(speaker: str) -> str:
    """The subject key of a turn's speaker: "user" for the person themselves, else the lower-cased name."""
    lowered = " ".join(speaker.lower().split())
    if not lowered or lowered in USER_ROLES:
        return "user"
    return lowered


# --- sentences -------------------------------------------------------------------------------------------

# Words after which a full stop rarely ends a sentence.
_ABBREVIATIONS = word_set(
    """
    mr mrs ms dr prof sr jr st mt vs etc e.g i.e eg ie inc ltd co corp no nos fig approx dept est jan feb mar
    apr jun jul aug sep sept oct nov dec a.m p.m u.s u.k ave rd blvd gen col lt sgt capt rev hon
    """
)
_BOUNDARY_RE = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*[ \t]+|[ \t]*\n+[ \t]*")
_WORD_BEFORE_RE = re.compile(r"([\w.]+)[.!?\u2026]*[\"'\u201d\u2019)\]]*$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, stripped, in order. Line breaks end sentences too (list items)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(text):
        end = match.end()
        if "\n" not in match.group() and not _ends_sentence(text, match.start(), end):
            continue
        _add_span(text, start, end, spans)
        start = end
    _add_span(text, start, len(text), spans)
    return spans


def split_sentences(text: str) -> list[str]:
    return [text[start:end] for start, end in sentence_spans(text)]


def _ends_sentence(text: str, punct_start: int, after: int) -> bool:
    # A lower-case continuation ("e.g. this", "approx. ten") means the stop was not a sentence end.
    if after < len(text) and text[after].islower():
        return False
    if text[punct_start] != ".":
        return True
    word = _WORD_BEFORE_RE.search(text, max(0, punct_start - 20), punct_start + 1)
    if word is None:
        return True
    token = word.group(1).lower().rstrip(".")
    # A single letter before the stop is an initial ("J. K. Rowling").
    return not (token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha()))


def _add_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))


# --- tense cues ------------------------------------------------------------------------------------------

# Phrases that make a memory a task or reminder whatever its grammar.
EXPLICIT_FORESIGHT_RE = re.compile(
    r"\bremind\s+me\b|\breminder\b|\bdeadline\b|\bdue\b(?!\s+to\b)|\bdon'?t\s+forget\b|\bdo\s+not\s+forget\b"
    r"|\bto-?do\b|\b(?:shopping|grocery|packing|to-?buy)\s+list\b",
    re.IGNORECASE,
)

# Future grammar and intent. "Will" is matched only in lower case or before a subject, because the
# capitalised word is also a first name. "going to" needs a form of "be" before it so that
# "I love going to the beach" stays a preference. Past forms ("was going to", "planned",
# "wanted to") are deliberately absent: they report what happened.
FUTURE_GRAMMAR_RE = re.compile(
    r"(?-i:\bwill\b)|\bWill\s+(?:you|we|i|he|she|they|it|there)\b|'ll\b|\u2019ll\b|\bshall\b|\bwon[\u2019']?t\b"
    r"|(?:\bam|'m|\u2019m|\bis|'s|\u2019s|\bare|'re|\u2019re|\bbe)\s+(?:\w+\s+)?going\s+to\b|\bgonna\b"
    r"|(?:\bam|'m|\u2019m|\bare|'re|\u2019re|\bis)\s+(?:\w+ly\s+)?(?:flying|travell?ing|heading|leaving|moving"
    r"|visiting|meeting|starting|getting\s+married|coming|returning|relocating)\b"
    r"|\b(?:plan|plans|planning|intend|intends|intending|intention|hope\s+to|hoping\s+to|aim\s+to|aiming\s+to"
    r"|want\s+to|wants\s+to|wanna|would\s+like\s+to|'d\s+like\s+to|\u2019d\s+like\s+to|looking\s+forward"
    r"|can'?t\s+wait|cannot\s+wait|about\s+to|need\s+to|needs\s+to|have\s+to|has\s+to|gotta"
    r"|must(?!\s+have)|should(?!\s+have)|thinking\s+(?:about|of)\s+\w+ing|considering|scheduled|upcoming|someday"
    r"|in\s+the\s+future)\b",
    re.IGNORECASE,
)

FUTURE_TIME_WORDS_RE = re.compile(
    r"\btomorrow\b|\btonight\b|\bnext\s+(?:week|weekend|month|year|time|\w+day)\b|\bin\s+(?:\d+|an?|a\s+few"
    r"|a\s+couple\s+of|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+(?:day|week|month"
    r"|year)s?\b|\bfrom\s+now\b|\bsoon\b|\blater\s+(?:today|this|tonight)\b",
    re.IGNORECASE,
)
PAST_TIME_WORDS_RE = re.compile(
    r"\byesterday\b|\bago\b|\blast\s+(?:night|week|weekend|month|year|time|\w+day|summer|winter|spring"
    r"|fall|autumn)\b|\bearlier\s+today\b|\bthe\s+other\s+day\b|\bused\s+to\b",
    re.IGNORECASE,
)

# Common irregular past tenses; regular ones are recognised by their "-ed" ending below.
IRREGULAR_PAST = word_set(
    """
    went met had did was were saw got made took came ate drank ran wrote gave found told said thought felt
    lost won began spoke broke drove flew rode swam sent spent built paid sold taught caught brought bought
    fought held kept slept sat stood heard became chose forgot knew grew threw wore fell led meant woke hid
    shook sang stole struck swore tore understood wept fed fled dug hung lit shot spun forgave overcame
    """
)
_IRREGULAR_PAST_RE = re.compile(
    r"\b(?:" + "|".join(sorted(IRREGULAR_PAST)) + r")\b|\b(?:did|was|were|had)n['\u2019]?t\b|\bdid\s+not\b"
    r"|\b(?:should|must|could|would)\s+have\s+\w+(?:ed|en|ne|wn)\b",
    re.IGNORECASE,
)
_ED_WORD_RE = re.compile(r"\b[A-Za-z]{3,}ed\b")
# "-ed" words that are usually adjectives or nouns, not a report of something done.
_ED_NOT_PAST = word_set(
    """
    hundred sacred naked wicked kindred beloved interested married unmarried engaged divorced retired based
    excited tired bored scared worried related named called supposed obsessed dedicated qualified experienced
    talented skilled advanced limited unlimited united detailed complicated sophisticated crowded aged biased
    stressed overwhelmed motivated blessed relaxed fried baked grilled roasted smoked boiled mixed mashed
    canned sliced dried iced spiced flavored flavoured scented colored coloured striped shaped employed
    unemployed vaccinated certified licensed registered located situated allowed required needed interested
    concerned pleased satisfied disappointed annoyed amazed surprised confused embarrassed ashamed preferred
    favored favoured
    """
)
# A "be", "feel" or degree word right before an "-ed" word makes it an adjective: "I'm tired".
_ADJECTIVE_CONTEXT_RE = re.compile(
    r"(?:\b(?:am|is|are|be|being|been|feel|feels|feeling|felt|get|gets|getting|seem|seems|look|looks|so|very"
    r"|really|quite|too|pretty|not|a|an|the|more|most|less|fully|totally|extremely)|'m|'re|'s|\u2019m|\u2019re"
    r"|\u2019s)\s+$",
    re.IGNORECASE,
)
# "I have lived here for years" / "has worked there since 2019" describe a standing state, not an event.
_HAVE_GOT_RE = re.compile(r"(?:\b(?:have|has)|['\u2019](?:ve|s))\s+got\b", re.IGNORECASE)
_PERFECT_STANDING_RE = re.compile(
    r"\b(?:have|has|'ve|\u2019ve)\s+(?:\w+\s+)?(?:been|lived|worked|known|had|loved|liked|used|studied|played"
    r"|owned|wanted|followed|practi[cs]ed|kept|stayed|enjoyed|preferred)\b[^.!?]*\b(?:for|since)\b",
    re.IGNORECASE,
)


def has_past_grammar(sentence: str) -> bool:
    """Whether a sentence reports something that happened (past tense or a past time word)."""
    if _PERFECT_STANDING_RE.search(sentence):
        return False
    # "I've got two cats" is "I have two cats": a state, not something that happened.
    sentence = _HAVE_GOT_RE.sub(" have ", sentence)
    if _IRREGULAR_PAST_RE.search(sentence) or PAST_TIME_WORDS_RE.search(sentence):
        return True
    for match in _ED_WORD_RE.finditer(sentence):
        word = match.group().lower()
        if word in _ED_NOT_PAST or word.endswith("eed"):
            continue
        if _ADJECTIVE_CONTEXT_RE.search(sentence, max(0, match.start() - 20), match.start()):
            continue
        return True
    return False


def has_future_grammar(sentence: str) -> bool:
    """Whether a sentence states a plan, an intent or something expected to happen."""
    return bool(
        EXPLICIT_FORESIGHT_RE.search(sentence)
        or FUTURE_GRAMMAR_RE.search(sentence)
        or FUTURE_TIME_WORDS_RE.search(sentence)
    )


def statement_sentences(text: str) -> list[str]:
    """The sentences that state something. Questions are dropped when there is anything else, because in
    a conversation they mostly ask about the other person ("I went hiking. What are you going to do?")."""
    sentences = split_sentences(text)
    statements = [s for s in sentences if not s.rstrip("\"'\u201d\u2019) ").endswith("?")]
    return statements or sentences


def tense_of(text: str) -> str:
    """ "past", "future" or "" (neither or both), from the statements of a text."""
    past = future = False
    for sentence in statement_sentences(text):
        past = past or has_past_grammar(sentence)
        future = future or has_future_grammar(sentence)
    if past == future:
        return ""
    return "past" if past else "future"


# --- an agent's notes about the person ---------------------------------------------------------------
# Memory tools of assistants write in the third person: "User lives in Berlin.", "The user's sister
# Ana is a nurse.", "User mentioned they moved to Munich." The rules read statements in the person's
# own voice ("I live in Berlin"): the agent's note is read as the person's own words, so that it and
# the person's "I moved to Munich" are one subject, one slot, one frame. Only for reading: the stored
# text stays as the agent wrote it.
_USER_RE = r"(?:[Tt]he\s+)?[Uu]ser"
_ADVERBS = (
    r"(?:(?:now|currently|no\s+longer|still|also|recently|just|actually|usually|always|often|never"
    r"|mostly|only|really|already|apparently|generally|typically|sometimes|rarely|then|since)\s+)*"
)
# "User mentioned (that) they ...": what the note reports is the person's statement itself.
_REPORT_RE = re.compile(
    r"^" + _USER_RE + r"\s+" + _ADVERBS + r"(?:mentioned|mentions|said|says|stated|states|noted|notes|shared"
    r"|shares|reported|reports|explained|explains|indicated|indicates|confirmed|confirms|revealed|reveals"
    r"|disclosed|discloses|added|adds|told\s+(?:me|the\s+assistant|us))(?:\s+that)?,?\s+",
)
# What a report verb reports when it is a statement: "that ...", a pronoun, "my ...", a name.
_CLAUSE_START_RE = re.compile(
    r"(?:that\b|they\b|they['\u2019]|their\b|I\b|I['\u2019]|my\b|he\b|she\b|his\b|her\b|we\b|our\b"
    r"|[A-Z][a-z]+\s+(?:is|was|has|had|moved|works|lives|\w+ed)\b)",
)
_CORRECTED_RE = re.compile(
    r"^" + _USER_RE + r"\s+(?:corrected|clarified|corrects|clarifies)(?:\s+that)?,?\s+"
)
_POSSESSIVE_START_RE = re.compile(r"^" + _USER_RE + r"['\u2019]s\s+(?=[a-z])")
_SUBJECT_START_RE = re.compile(
    r"^" + _USER_RE + r"\s+(?P<adverbs>" + _ADVERBS + r")(?P<verb>[a-z]+(?:['\u2019]t)?)\b"
)
# "the user" as an object ("told the user", "for the user's sister"), not a compound noun ("the user
# table", "the user base"): after a verb or a preposition, and not before another noun.
_USER_ELSEWHERE_RE = re.compile(
    r"\b(?P<before>to|for|with|at|from|by|about|of|told|asked|gave|sent|called|emailed|reminded|helped"
    r"|met|visited|invited|is|was|are|were)\s+the\s+user(?:(?P<s>['\u2019]s)\b|\b(?!\s+[a-z]+s?\s+(?:is|are"
    r"|was|were|has|have|had|moved|doubled|grew)\b)(?!\s+(?:table|base|group|id|data|account)s?\b))",
)
_THEY_RE = re.compile(
    r"\b(?:[Tt]hey|[Tt]heir|[Tt]hem|[Tt]hemselves)(?:['\u2019](?:re|ve|d|ll))?(?:\s+(?:are|were))?\b"
)
_THEY_AS_ME = {
    "they": "I", "their": "my", "them": "me", "themselves": "myself",
    "they're": "I'm", "they've": "I've", "they'd": "I'd", "they'll": "I'll",
    "they are": "I am", "they were": "I was",
}  # fmt: skip
_BASE_FORMS = {"is": "am", "isn't": "am not", "has": "have", "hasn't": "haven't", "does": "do",
               "doesn't": "don't", "goes": "go", "was": "was", "wasn't": "wasn't"}  # fmt: skip
_IS_FOLLOWERS = word_set(
    "now not a an currently no still also just always never very really quite from based"
    " allergic vegan vegetarian married single divorced pregnant retired"
)
# "User's wedding is in June": "-ing" words that are things, and the verbs that follow a thing.
_ING_NOUNS = word_set(
    "wedding morning evening building sibling ring painting ceiling clothing darling feeling meeting"
    " spring string thing king wing bedding housing earring offspring pudding stuffing icing"
)
_VERBS_AFTER = word_set("is was are were has had will includes costs starts begins")
_MODALS = word_set(
    "can can't cannot will won't would wouldn't should shouldn't may might must did didn't had"
)
# Words in "-s" after "User" that are nouns of a compound ("User sessions expire"), not its verb.
_NOUN_ENDINGS = ("ions", "ments", "ings", "ships", "ities", "nesses", "ss", "us")


def _verb_like(word: str) -> bool:
    """Whether a word after "User <word>" is a verb, so that the word between is a noun."""
    lowered = word.lower().strip(".,;:!?")
    return (
        lowered in _BASE_FORMS
        or lowered in _MODALS
        or lowered in {"are", "were", "have"}
        or lowered in IRREGULAR_PAST
        or (lowered.endswith("ed") and len(lowered) > 3 and lowered not in _ED_NOT_PAST)
    )


def _base_form(verb: str) -> str | None:
    """The first-person form of a verb said of "the user", or None when the word is no verb."""
    lowered = verb.lower().replace("\u2019", "'")
    if lowered in _BASE_FORMS:
        return _BASE_FORMS[lowered]
    if lowered in _MODALS or lowered in IRREGULAR_PAST or (lowered.endswith("ed") and len(lowered) > 3):
        return lowered
    if not lowered.endswith("s") or lowered.endswith(_NOUN_ENDINGS):
        return None
    if lowered.endswith("ies") and len(lowered) > 4:
        return lowered[:-3] + "y"
    if lowered.endswith(("ches", "shes", "xes", "zes", "oes", "sses")):
        return lowered[:-2]
    return lowered[:-1]


def in_own_words(text: str) -> str:
    """An assistant's note about "the user" in the person's own voice, each sentence on its own:
    "User no longer eats meat." -> "I no longer eat meat."; "The user's sister Ana is a nurse." ->
    "My sister Ana is a nurse."; "User mentioned they moved to Munich." -> "I moved to Munich."; "User
    corrected that the flight is at 9." -> "Correction: the flight is at 9." Text without such a
    note comes back unchanged (the same object), so callers can tell nothing was read anew."""
    if "user" not in text.lower():
        return text
    spans = sentence_spans(text)
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for start, end in spans:
        out.append(text[last:start])
        out.append(_sentence_in_own_words(text[start:end]))
        last = end
    out.append(text[last:])
    rewritten = "".join(out)
    return text if rewritten == text else rewritten


def _sentence_in_own_words(sentence: str) -> str:
    corrected = _CORRECTED_RE.match(sentence)
    if corrected:
        return "Correction: " + _they_as_me(sentence[corrected.end() :])
    reported = _REPORT_RE.match(sentence)
    if reported:
        # "User mentioned (that) they moved", "User said Ana moved": what is reported is the
        # person's own statement, read as they would say it.
        rest = sentence[reported.end() :]
        if not _CLAUSE_START_RE.match(rest):
            # "User reported a rent of £1,020 for the flat they viewed": what was reported is a
            # thing, not a statement of the person's; the note is left as written.
            return sentence
        if rest.split(" ", 1)[0].lower().replace("\u2019", "'") in _THEY_AS_ME:
            rest = _they_as_me(rest)
        return _sentence_in_own_words(rest[:1].upper() + rest[1:])
    possessive = _POSSESSIVE_START_RE.match(sentence)
    if possessive:
        rest = sentence[possessive.end() :]
        following = rest.split(" ", 1)[0].lower()
        # "User's moving to Leeds", "User's been vegan for years": "is" and "has", not a possessive.
        if following in {"been", "got"}:
            return _they_as_me("I've " + rest)
        after = rest.split()[1].lower() if len(rest.split()) > 1 else ""
        progressive = following.endswith("ing") and following not in _ING_NOUNS and after not in _VERBS_AFTER
        if progressive or following in _IS_FOLLOWERS:
            return _they_as_me("I'm " + rest)
        return _USER_ELSEWHERE_RE.sub(_me, "My " + rest)
    subject = _SUBJECT_START_RE.match(sentence)
    if subject:
        base = _base_form(subject.group("verb"))
        next_words = sentence[subject.end() :].split(None, 1)
        if (
            base is not None
            and next_words
            and _verb_like(next_words[0])
            and subject.group("verb").endswith("s")
            and subject.group("verb").lower() not in _BASE_FORMS  # "User has relocated"
        ):
            # "User groups moved to Munich", "User accounts are ...": a compound noun and its verb.
            base = None
        if base is not None:
            rest = sentence[subject.end() :]
            said = "I " + subject.group("adverbs") + base + rest
            return _USER_ELSEWHERE_RE.sub(_me, _they_as_me(said))
    return _USER_ELSEWHERE_RE.sub(_me, sentence)


def _me(match: re.Match[str]) -> str:
    return f"{match.group('before')} " + ("my" if match.group("s") else "me")


def _they_as_me(text: str) -> str:
    """They, their, them of a note whose subject is the user, as the person says them."""

    def swap(match: re.Match[str]) -> str:
        said = match.group()
        key = " ".join(said.lower().replace("\u2019", "'").split())
        mine = _THEY_AS_ME.get(key)
        if mine is None:  # "they're were" cannot occur; "they are" etc. are in the table
            return said
        return mine[0].upper() + mine[1:] if said[0].isupper() and mine != "I" else mine

    return _THEY_RE.sub(swap, text)
