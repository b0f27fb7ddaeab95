"""The built-in extraction rules: text in, memory candidates out, with no language model.

`extract` is the whole pipeline the worker calls: find the date the content states about itself, segment
it (conversation turns, paragraphs, sentence-bounded chunks), then for each segment resolve the times it
mentions, classify it as a fact, an episode or a foresight, set its clock, and pick out its entities, tags
and supersession slot. Every step is a pure function of its input and a reference time, built from regular
expressions and short word lists, so results are deterministic and a 100,000-character document takes a
fraction of a second.

Known limits: English only (the update engine reads four languages, `lexicon/`), and rules rather than
understanding. A segment gets exactly one kind and one slot; a note's compound statement ("I moved to
Berlin and joined Siemens") is split into its facts first (`segment`), a conversation turn is not;
negations are mostly ignored by the classifier ("I didn't go" is an episode); the time and entity rules
have their own limits, listed in `timeparse` and `entities`.
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memories.pipeline.documents import document_blocks
from memories.pipeline.entities import COMMON_WORDS, extract_entities, names_in, type_of_header
from memories.pipeline.language import (
    EXPLICIT_FORESIGHT_RE,
    FUTURE_GRAMMAR_RE,
    FUTURE_TIME_WORDS_RE,
    MONTHS_FULL,
    WEEKDAYS,
    has_past_grammar,
    in_own_words,
    speaker_subject,
    split_sentences,
    split_speaker,
    statement_sentences,
)
from memories.pipeline.lexicon import detect, lexicon
from memories.pipeline.segment import Piece, is_conversation, locate, segment_spans, statement_spans
from memories.pipeline.timeparse import is_future, is_past, leading_date, mentions_time, resolve_time_periods

FACT = "fact"


EPISODE = "episode"


FORESIGHT = "foresight"


# The kind a saver's stated category implies (REST save, graph `remember`). A preference is a
# standing statement and an intent a plan, whatever the grammar; a `fact`, a `decision` or a
# `context` says what sort of statement it is, not how it relates to time ("we decided yesterday"
# happened; "the budget is 50k" holds), so their kind is the one the words show.
CATEGORY_KINDS: dict[str, str] = {"preference": FACT, "intent": FORESIGHT}


def stated_kind(*, kind: str | None, category: str | None) -> str | None:
    """The kind a save fixes for its memories: the one it names, else its category's, else none
    (the rules classify each statement)."""
    return kind or CATEGORY_KINDS.get(category or "")


@dataclass
class Candidate:
    """One memory the rules propose; the worker embeds, deduplicates and supersedes it."""

    content: str
    kind: str
    occurred_at: datetime | None = None
    valid_from: datetime | None = None
    due_at: datetime | None = None
    # When it was said (world time): the time its source, or its own leading date, refers to.
    stated_at: datetime | None = None
    # The end of the period its start names ("last month"), when coarser than a day; None if exact.
    starts_by: datetime | None = None
    entities: list[tuple[str, str]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    slot: str = ""
    slot_value: str = ""
    # Where it came from in the saved text: text[span_start:span_end]; None when not a piece of it.
    span_start: int | None = None
    span_end: int | None = None

    @property
    def names_time(self) -> bool:
        """Whether its content places itself in time (the rule: timeparse.mentions_time)."""
        return mentions_time(self.content)


def extract(
    text: str, *, reference: datetime, known: Set[str] = frozenset(), kind: str | None = None
) -> tuple[datetime, list[Candidate]]:
    """Run the whole rule pipeline over `text` saved at `reference` (timezone-aware).

    A date the content states about itself at its start ("On 8 May 2023:") replaces `reference` for
    everything that follows, and a paragraph that starts with its own date (a journal entry) uses that
    date. Returns (effective reference, candidates); all datetimes are in `reference`'s timezone, and
    each candidate's span points into `text`. `known`: names the space already has as entities
    (`entities.extract_entities`). `kind`: the kind the saver stated, instead of the rules' (the
    clocks follow it: a stated plan gets a due date, not a start).
    Clocks: a fact is valid from the time of a "since ..." mention, else from the reference; an episode
    occurred at its first mentioned time that is not after the reference's day, else at the reference;
    a foresight is due at its first mentioned time that is not before the reference's day, else None.
    """
    _require_aware(reference)
    effective, offset, body, line_tags = _note_body(text, reference=reference)
    if _is_markdown_note(body):
        # An agent's note in Markdown (a table, a code block): read as the document it is.
        candidates = extract_document(body, media_type="text/markdown", reference=effective, known=known)
        for candidate in candidates:
            candidate.tags = _merge(candidate.tags, line_tags)
            if candidate.span_start is not None and candidate.span_end is not None:
                candidate.span_start, candidate.span_end = (
                    offset + candidate.span_start,
                    offset + candidate.span_end,
                )
        return effective, candidates
    known = set(known) | names_in(body)
    candidates = []
    for piece in segment_spans(body):
        candidate = candidate_of(piece.text, reference=effective, tags=line_tags, known=known, kind=kind)
        candidate.span_start, candidate.span_end = offset + piece.start, offset + piece.end
        candidates.append(candidate)
    return effective, candidates


def extract_contents(text: str, *, reference: datetime) -> list[str] | None:
    """The contents of the candidates `extract(text, reference=reference)` gives, in order, whatever
    `known` and `kind` it is given (they change what a candidate says of itself, never its words),
    without the rules' work on each; None for a Markdown note, which the document reader splits.

    The worker embeds them while it reads what the rules need from the database."""
    _require_aware(reference)
    _, _, body, _ = _note_body(text, reference=reference)
    if _is_markdown_note(body):
        return None
    return [piece.text for piece in segment_spans(body)]


def _note_body(text: str, *, reference: datetime) -> tuple[datetime, int, str, list[str]]:
    # (the reference its statements take, where the body starts in `text`, the body, the tags of a
    # trailing "tags:" line): a date stated at the very start replaces `reference`.
    stated, body = leading_date(text.strip(), reference=reference)
    # `body` is a trimmed suffix of `text`: where it starts, so spans point into `text`.
    offset = len(text.rstrip()) - len(body)
    body, line_tags = _split_tags_line(body)
    return stated or reference, offset, body, line_tags


def _is_markdown_note(body: str) -> bool:
    return looks_like_markdown(body) and not is_conversation(body)


# What makes a note Markdown rather than prose with a dash in it: a table's separator row or a fence.
_MARKDOWN_RE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*\|[-:| \t]*$|^[ \t]*(?:```|~~~)", re.MULTILINE)


def looks_like_markdown(text: str) -> bool:
    """Whether a saved note is structured Markdown (a table or a fenced code block)."""
    return bool(_MARKDOWN_RE.search(text))


def extract_document(
    text: str, *, media_type: str, reference: datetime, known: Set[str] = frozenset()
) -> list[Candidate]:
    """A document's candidates: one per list item and table row, one per statement of a paragraph
    (see `documents.document_blocks`), each with its span of `text`. A plain-text transcript of a
    conversation is read as the conversation it is."""
    _require_aware(reference)
    if media_type.startswith("text/plain") and is_conversation(text):
        return extract(text, reference=reference, known=known)[1]
    known = set(known) | names_in(text)
    candidates: list[Candidate] = []
    for block in document_blocks(text, media_type):
        pieces = [Piece(block.text, block.start, block.end)]
        if block.kind == "paragraph":
            # Sentences of a rendered paragraph placed back in the source; kept whole if they cannot be.
            pieces = locate(text, block.start, block.end, statement_spans(block.text)) or pieces
        for piece in pieces:
            candidate = candidate_of(piece.text, reference=reference, speakers=False, known=known)
            candidate.span_start, candidate.span_end = piece.start, piece.end
            if block.subject and (typed := type_of_header(block.subject_header)):
                # The column says what the row is about: | Book | ... makes its first cell a Product.
                key = block.subject.casefold()
                others = [(name, kind) for name, kind in candidate.entities if name.casefold() != key]
                candidate.entities = [(block.subject, typed), *others]
            candidates.append(candidate)
    return candidates


def candidate_of(
    text: str,
    *,
    reference: datetime,
    tags: list[str] | None = None,
    speakers: bool = True,
    known: Set[str] = frozenset(),
    kind: str | None = None,
) -> Candidate:
    """One statement as a memory candidate: its kind, clocks, entities, tags and slot.

    `speakers=False` reads "Piranesi: rating 5/5" (a document's table row) as a statement, not as a
    turn said by someone called Piranesi.
    """
    speaker, utterance = split_speaker(text) if speakers else ("", text)
    # The date of a journal entry is its reference, not one of the times the entry talks about.
    own_date, utterance = leading_date(utterance, reference=reference)
    piece_reference = own_date or reference
    periods = resolve_time_periods(utterance, reference=piece_reference)
    times = [(phrase, moment) for phrase, moment, _ in periods]
    # A note's statement is about its first sentence; what leans on it ("He told me ...") adds to it.
    # A conversation turn is classified whole, as it was said.
    anchor = text if speaker else (split_sentences(utterance) or [utterance])[0]
    if anchor is not text:
        times = [(phrase, moment) for phrase, moment in times if phrase.lower() in anchor.lower()]
    kind = kind or classify(anchor, reference=piece_reference, times=times)
    slot, slot_value = slot_of(text, speakers=speakers)
    candidate = Candidate(
        content=text,
        kind=kind,
        entities=extract_entities(text, speakers=speakers, known=known),
        tags=_merge(extract_tags(text), tags or []),
        slot=slot,
        slot_value=slot_value,
        stated_at=piece_reference,
    )
    _set_clock(candidate, periods, piece_reference)
    if (starts := scheduled_start(utterance, periods=periods, reference=piece_reference)) is not None:
        # "Starting in March I'll be at Acme": it holds from March, whatever its kind (a plan keeps its
        # due date too). Its start is a time to come, so it names no period it already held in.
        candidate.valid_from, candidate.starts_by = starts, None
    return candidate


def scheduled_start(
    text: str, *, periods: list[tuple[str, datetime, datetime | None]], reference: datetime
) -> datetime | None:
    """The time to come that a start cue of the text's language names ("Starting in March", "from
    next month", "ab Mai", "a partir de septiembre"), else None: when what the text says starts to hold.

    The time resolver reads English (`periods`); in the other languages the cue's month name, or its
    "next week / month / year", is read with the lexicon: the first day of it, after `reference`."""
    lex = lexicon(detect(text))
    for match in lex.start.finditer(text):
        cue = match.group().lower()
        for phrase, moment, _ in periods:
            if phrase.lower() in cue and is_future(moment, reference):
                return moment
        words = [word.strip(".'\u2019") for word in re.split("[\\s'\u2019]+", cue)]
        for word in words:
            if (month := lex.month_numbers.get(word)) is not None:
                year = reference.year + (1 if month <= reference.month else 0)
                day = reference.replace(hour=0, minute=0, second=0, microsecond=0)
                return day.replace(year=year, month=month, day=1)
        for word in words:
            period = lex.period_words.get(word)
            if period is not None and (next_start := _next_period(period, reference)) is not None:
                return next_start
    return None


def _next_period(period: str, reference: datetime) -> datetime | None:
    day = reference.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "week":
        return day + timedelta(days=7 - day.weekday())
    if period == "month":
        return day.replace(year=day.year + day.month // 12, month=day.month % 12 + 1, day=1)
    if period == "year":
        return day.replace(year=day.year + 1, month=1, day=1)
    return None


def _set_clock(
    candidate: Candidate, periods: list[tuple[str, datetime, datetime | None]], reference: datetime
) -> None:
    def start(moment: datetime, latest: datetime | None) -> datetime:
        # Nothing said can have started after it was said: "this month" ends, at the latest, now.
        candidate.starts_by = min(latest, reference) if latest is not None and latest > moment else None
        return moment

    if candidate.kind == EPISODE:
        past = [(moment, latest) for _, moment, latest in periods if not is_future(moment, reference)]
        candidate.occurred_at = start(*past[0]) if past else reference
    elif candidate.kind == FORESIGHT:
        ahead = [moment for _, moment, _ in periods if not is_past(moment, reference)]
        candidate.due_at = ahead[0] if ahead else None
    else:
        # "I've been vegetarian since 2015" has held since 2015, not since the day it was said.
        since = [
            (moment, latest)
            for phrase, moment, latest in periods
            if _is_since(phrase) and not is_future(moment, reference)
        ]
        candidate.valid_from = start(*since[0]) if since else reference


def _merge(first: list[str], second: list[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


# "My birthday is on March 5": a recurring date is a standing fact, not a one-off event or plan.
_STANDING_DATE_RE = re.compile(
    r"\b(?:birthday|anniversary|name\s+day)\s+(?:is|['\u2019]s|falls)\b", re.IGNORECASE
)


# Words of recurrence and preference: what they describe holds, whatever day it names.
_HABIT_RE = re.compile(
    r"\bevery\s+(?:other\s+)?(?:day|morning|afternoon|evening|night|week|weekend|month|year|\w+day|time)\b"
    r"|\beach\s+(?:day|morning|evening|night|week|weekend|month|year|\w+day)\b"
    r"|\b(?:usually|always|never|often|typically|normally|generally|regularly|rarely|seldom|habitually)\b"
    r"|\b(?:on|most|some)\s+(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekends"
    r"|weekdays|mornings|evenings|nights)\b|\b(?:daily|weekly|fortnightly|monthly|yearly|annually|nightly)\b"
    # "on Tuesday evenings", "Sunday mornings": a weekday with a plural part of the day recurs.
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekday|weekend)\s+"
    r"(?:mornings|afternoons|evenings|nights)\b"
    r"|\bprefers?\b|\bwhenever\b|\btends?\s+to\b|\bas\s+a\s+rule\b",
    re.IGNORECASE,
)


# What makes a recurring statement a plan after all: "I will go every Friday", "next week".
_PLAN_RE = re.compile(
    r"(?-i:\bwill\b)|'ll\b|\u2019ll\b|\bgoing\s+to\b|\bgonna\b|\bplan(?:s|ning|ned)?\s+to\b|\bintend"
    r"|\bremind\s+me\b|\bstarting\s+(?:next|tomorrow|on|from|in)\b|\bfrom\s+(?:next|tomorrow)\b"
    r"|\bnext\s+(?:week|month|year|\w+day)\b|\btomorrow\b|\btonight\b",
    re.IGNORECASE,
)


def classify(text: str, *, reference: datetime, times: list[tuple[str, datetime]]) -> str:
    """ "fact", "episode" or "foresight" for one segment.

    Order matters, and is why: an explicit task word ("remind me", "deadline", "due") states intent
    whatever else the sentence says. Recurrence or preference without a plan ("every Friday", "on
    Mondays", "usually", "prefer") describes how things are: a fact, whatever weekday it names. Future
    grammar ("will", "going to", "plan to", "want to") states intent. A mentioned
    date after the reference's day is next: "I booked flights for next month" is worth remembering for the
    trip, not the booking. Then past grammar or a date before the reference's day makes an episode
    ("went", "met", "yesterday"). What remains describes how things are: a fact ("I like", "I live in").
    Questions only count when the segment has no statements, because in a conversation they mostly ask
    about the other person. A "since ..." date marks when a fact began, so it does not make an episode.
    """
    _require_aware(reference)
    speaker, body = split_speaker(text)
    statements = statement_sentences(body if speaker else in_own_words(body))
    stated = " ".join(statements).lower()
    if any(EXPLICIT_FORESIGHT_RE.search(s) for s in statements):
        return FORESIGHT
    recurring = _HABIT_RE.search(stated) and not _PLAN_RE.search(stated)
    if recurring and not any(map(has_past_grammar, statements)):
        # "I prefer morning meetings, every Friday", "We meet on Mondays", "I usually have to get up at
        # 6": a weekday in a habit, a preference or a standing arrangement names when it recurs, not a
        # day it is due.
        return FACT
    if any(FUTURE_GRAMMAR_RE.search(s) for s in statements):
        return FORESIGHT
    if _STANDING_DATE_RE.search(stated):
        return FACT
    # A time named only inside a question ("what are you doing tomorrow?") says nothing about this memory.
    whole = body.lower()
    moments = [
        moment
        for phrase, moment in times
        if not _is_since(phrase) and (phrase.lower() in stated or phrase.lower() not in whole)
    ]
    if any(is_future(moment, reference) for moment in moments):
        return FORESIGHT
    if any(has_past_grammar(s) for s in statements) or any(is_past(m, reference) for m in moments):
        return EPISODE
    if any(FUTURE_TIME_WORDS_RE.search(s) for s in statements):
        # Same-day future words with no past verb: "Dinner with Anna tonight".
        return FORESIGHT
    return FACT


def _is_since(phrase: str) -> bool:
    return phrase.lower().startswith("since")


_HASHTAG_RE = re.compile(r"(?<![\w&#/])#(\w[\w-]*)")


_TAGS_LINE_RE = re.compile(r"^[ \t]*tags?[ \t]*:[ \t]*(?P<tags>\S.*?)[ \t]*$", re.IGNORECASE)


_TAG_CHARS_RE = re.compile(r"[^\w-]+")


MAX_TAG_CHARS = 100


def extract_tags(text: str) -> list[str]:
    """Hashtags ("#Travel" -> "travel") in order, then the tags of a trailing "tags: a, b" line.

    Tags are lower-cased letters, digits, "-" and "_" of at most 100 characters. All-digit hashtags
    ("#1", "#2024") are skipped: they are ranks and issue numbers far more often than topics.
    """
    body, line_tags = _split_tags_line(text)
    tags: list[str] = []
    for match in _HASHTAG_RE.finditer(body):
        tag = match.group(1).lower()
        if len(tag) <= MAX_TAG_CHARS and not tag.replace("_", "").replace("-", "").isdigit():
            tags.append(tag)
    return _merge(tags, line_tags)


def _split_tags_line(text: str) -> tuple[str, list[str]]:
    """(text without a trailing "tags:" line, the tags it lists)."""
    stripped = text.rstrip()
    head, _, last = stripped.rpartition("\n")
    match = _TAGS_LINE_RE.match(last)
    if match is None:
        return text, []
    raw = match.group("tags")
    parts = re.split(r"[,;]", raw) if re.search(r"[,;]", raw) else raw.split()
    tags: list[str] = []
    for part in parts:
        tag = _TAG_CHARS_RE.sub("", "-".join(part.strip().lstrip("#").lower().split()))
        if tag and len(tag) <= MAX_TAG_CHARS:
            tags.append(tag)
    return head.rstrip(), _merge(tags, [])


_I = r"\bi"


_IM = r"\bi(?:['\u2019]m|\s+am)"


_IVE = r"\bi(?:['\u2019]ve|\s+have)?"


# "I have lived/worked ..." still holds; "I lived in Rome" (without "have") may be over, so it needs "have".
_HAVE = r"\bi(?:['\u2019]ve|\s+have)"


_ADVERBS = (
    r"(?:(?:now|currently|still|just|recently|finally|happily|newly|officially|strictly|fully"
    r"|mostly|permanently|actually)\s+){0,3}"
)


_VALUE = r"(?P<v>[^\n.,;:!?()\"\u201c\u201d]{1,80})"


_AS_ROLE = r"(?:\s+as\s+an?\s+[\w -]{1,40}?)?"


_DIETS = r"(?P<v>vegetarian|vegan|pescatarian|pescetarian|flexitarian|carnivore|omnivore|keto|paleo)"


# (slot name, pattern). Every pattern is first person; the subject comes from the speaker.
_SLOT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("lives_in", rf"{_I}\s+{_ADVERBS}live\s+in\s+{_VALUE}"),
        ("lives_in", rf"{_IM}\s+{_ADVERBS}(?:living|based|located|settled)\s+in\s+{_VALUE}"),
        # "We moved to Denver": a household's move is the speaker's too.
        (
            "lives_in",
            rf"\b(?:i|we)(?:['\u2019]ve|\s+have)?\s+{_ADVERBS}(?:moved|relocated)\s+(?:back\s+)?(?:to|into)\s+{_VALUE}",
        ),
        ("lives_in", rf"{_HAVE}\s+{_ADVERBS}(?:lived|been\s+living)\s+in\s+{_VALUE}"),
        ("works_at", rf"{_I}\s+{_ADVERBS}work{_AS_ROLE}\s+(?:at|for)\s+{_VALUE}"),
        ("works_at", rf"{_IM}\s+{_ADVERBS}(?:working|employed){_AS_ROLE}\s+(?:at|for|by)\s+{_VALUE}"),
        ("works_at", rf"{_HAVE}\s+{_ADVERBS}(?:worked|been\s+working){_AS_ROLE}\s+(?:at|for)\s+{_VALUE}"),
        ("works_at", rf"{_IVE}\s+{_ADVERBS}joined\s+(?-i:(?=[A-Z0-9])){_VALUE}"),
        (
            "works_at",
            rf"{_IVE}\s+{_ADVERBS}(?:started|began|got|landed|accepted|took)\s+(?:a\s+|my\s+|the\s+)?"
            rf"(?:new\s+)?(?:job|position|role|internship|working){_AS_ROLE}\s+(?:at|for|with)\s+{_VALUE}",
        ),
        ("works_at", rf"{_I}\s+(?:was|got)\s+hired\s+(?:by|at)\s+{_VALUE}"),
        (
            "works_at",
            rf"{_IVE}\s+{_ADVERBS}(?:left|quit)\s+[^\n.;]{{1,60}}?\s+(?:and\s+|to\s+|then\s+)+"
            rf"(?:joined|join|started\s+at)\s+(?-i:(?=[A-Z0-9])){_VALUE}",
        ),
        # "I started at Stripe": a named employer (capitalised), not "I started at 9".
        (
            "works_at",
            rf"{_IVE}\s+{_ADVERBS}(?:started|began)\s+(?:working\s+)?(?:at|with)\s+(?-i:(?=[A-Z])){_VALUE}",
        ),
        (
            "name",
            r"\bmy\s+name\s+is\s+(?P<v>[a-z\u00c0-\u00ff][\w'\u2019-]*(?:\s+[a-z\u00c0-\u00ff][\w'\u2019-]*){0,2})",
        ),
        (
            "name",
            r"\b(?:(?:please|just|you\s+can|everyone|people|friends)\s+)?calls?\s+me\s+"
            r"(?P<v>(?-i:[A-Z][\w'\u2019-]*(?:\s+[A-Z][\w'\u2019-]*)?))",
        ),
        (
            "age",
            rf"{_IM}\s+(?P<v>\d{{1,3}})(?:\s*(?:years?|yrs?)(?:\s*old)?|\s*y/?o)?"
            r"(?=\s*(?:[.,;!?)]|$|(?:now|and|but|this|today|btw|though)\b))",
        ),
        ("age", rf"{_I}\s+{_ADVERBS}turned\s+(?P<v>\d{{1,3}})\b(?!\s*(?:%|minutes|hours|dollars|pages|km))"),
        ("age", rf"{_IM}\s+an?\s+(?P<v>\d{{1,3}})[- ]years?[- ]old\b"),
        (
            "favorite",
            r"\bmy\s+(?:all[- ]time\s+|absolute\s+|current\s+|new\s+)?(?:favou?rite|fave|fav)\s+"
            r"(?P<thing>[a-z][a-z -]{0,30}?)\s+(?:is|are|would\s+be|has\s+to\s+be|['\u2019]s)\s+"
            r"(?P<v>[^\n.,;!?()]{1,60})",
        ),
        (
            "favorite",
            r"(?:^|[.!?]\s+)(?P<v>[\w'\u2019 -]{1,40}?)\s+(?:is|are)\s+my\s+(?:all[- ]time\s+)?"
            r"(?:favou?rite|fave|fav)\s+(?P<thing>[a-z]+(?:\s+(?:show|food|movie|film|book|band|song|game"
            r"|sport|team|color|colour|dish|drink|place|city|season))?)\b",
        ),
        (
            "relationship_status",
            rf"{_IM}\s+{_ADVERBS}(?P<v>married|single|engaged|divorced|separated|widowed"
            r"|in\s+a\s+relationship)\b",
        ),
        (
            "relationship_status",
            rf"\b(?:i|we)(?:['\u2019]ve|\s+have)?\s+{_ADVERBS}(?:got|gotten|became)\s+"
            r"(?P<v>married|engaged|divorced|separated)\b",
        ),
        ("diet", rf"{_IM}\s+{_ADVERBS}(?:an?\s+)?{_ADVERBS}{_DIETS}\b"),
        (
            "diet",
            rf"{_IVE}\s+{_ADVERBS}(?:went|gone|became|become|turned|been)\s+(?:an?\s+)?{_ADVERBS}{_DIETS}\b",
        ),
    )
)


# "my cousin Alex" and "my colleague Alex" are two people: the qualifier is part of who it is.
_QUALIFIER = r"(?:\b(?:my|our)\s+(?P<qual>[a-z-]+(?:['\u2019]s\s+[a-z-]+)?)\s+)?"


# Third person with a name as subject: "Melanie moved to Berlin" is about Melanie, not the speaker.
_NAMED_SLOT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "lives_in",
        re.compile(
            rf"{_QUALIFIER}(?-i:\b(?P<who>[A-Z][a-z]+))\s+{_ADVERBS}(?:lives\s+in|moved\s+to|relocated\s+to)"
            rf"\s+{_VALUE}",
            re.IGNORECASE,
        ),
    ),
    (
        "works_at",
        re.compile(
            rf"{_QUALIFIER}(?-i:\b(?P<who>[A-Z][a-z]+))\s+{_ADVERBS}works{_AS_ROLE}\s+(?:at|for)\s+{_VALUE}",
            re.IGNORECASE,
        ),
    ),
)


# Where a captured value stops: "I live in Berlin with my wife now" -> "Berlin".
_VALUE_END_RE = re.compile(
    r"\s+(?:now|currently|these\s+days|nowadays|anymore|again|and|but|with|since|for|because|as|when|where"
    r"|which|who|after|before|last|next|this|that|ago|in|on|at|from|until|recently|lately|full[- ]time"
    r"|part[- ]time|permanently|temporarily|so|though|too|right|btw|lol|haha|by|to|yet|already|finally"
    r"|together|forever|alone|ever|myself|and|or)\b.*$",
    re.IGNORECASE | re.DOTALL,
)


_BRITISH = {"colour": "color", "colours": "colors", "flavour": "flavor", "theatre": "theater"}


_NOT_A_PLACE_OR_EMPLOYER = frozenset({"home", "night", "nights", "the moment", "weekends", "it", "myself"})


def slot_of(text: str, *, speakers: bool = True) -> tuple[str, str]:
    """(slot, value) for a single-valued fact about the speaker, so a newer value can supersede an older one.

    "I moved to Berlin" -> ("user:lives_in", "berlin"); "Caroline: I work at Acme Corp" ->
    ("caroline:works_at", "acme corp"); "my favourite colour is blue" -> ("user:favorite:color", "blue").
    Slots: lives_in, works_at, name, age, favorite:<thing>, relationship_status, diet. ("", "") otherwise.
    When a segment holds several, the first in the text wins.
    """
    speaker, body = split_speaker(text.strip()) if speakers else ("", text.strip())
    body = body if speaker else in_own_words(body)
    subject = speaker_subject(speaker)
    best: tuple[int, str, str] | None = None
    for name, pattern in _SLOT_PATTERNS:
        for match in pattern.finditer(body):
            if best is not None and match.start() >= best[0]:
                break
            found = _slot_value(name, match)
            if found is not None:
                best = (match.start(), f"{subject}:{found[0]}", found[1])
                break
    for name, pattern in _NAMED_SLOT_PATTERNS:
        for match in pattern.finditer(body):
            if best is not None and match.start() >= best[0]:
                break
            who = match.group("who").lower()
            if match.group("qual"):
                who = f"{match.group('qual').lower()} {who}"
            value = _clean_value(match.group("v"))
            if who.rpartition(" ")[2] in COMMON_WORDS or not value or value in _NOT_A_PLACE_OR_EMPLOYER:
                continue
            best = (match.start(), f"{who}:{name}", value)
            break
    return (best[1], best[2]) if best else ("", "")


def _slot_value(name: str, match: re.Match[str]) -> tuple[str, str] | None:
    raw = match.group("v")
    if name == "age":
        return (name, str(int(raw))) if 0 < int(raw) < 130 else None
    if name == "name":
        # Up to three words, stopping at the first ordinary word: "my name is john and I ..." -> "john".
        words: list[str] = []
        for word in raw.lower().split():
            if (
                word in COMMON_WORDS
                or word in WEEKDAYS
                or word in MONTHS_FULL
                or _VALUE_END_RE.match(" " + word)
            ):
                break
            words.append(word)
        return (name, " ".join(words)) if words else None
    if name == "diet":
        return name, raw.lower().replace("pescetarian", "pescatarian")
    if name == "relationship_status":
        return name, " ".join(raw.lower().split())
    if name == "favorite":
        # "The Office" keeps its article; a place or an employer does not need one to be the same value.
        value = _clean_value(raw, keep_article=True)
        thing = "_".join(_BRITISH.get(word, word) for word in match.group("thing").lower().split())
        return (f"favorite:{thing}", value) if value else None
    value = _clean_value(raw)
    if not value or value in _NOT_A_PLACE_OR_EMPLOYER:
        return None
    return name, value


def _clean_value(raw: str, *, keep_article: bool = False) -> str:
    value = _VALUE_END_RE.sub("", " " + raw.strip()).strip()
    value = " ".join(value.lower().split()).strip(" '\"\u2019-")
    return value if keep_article else value.removeprefix("the ").strip()


def _require_aware(reference: datetime) -> None:
    if reference.tzinfo is None or reference.utcoffset() is None:
        raise ValueError("reference must be a timezone-aware datetime")
