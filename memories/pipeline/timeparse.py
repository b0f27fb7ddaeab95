"""Time expressions: the date a text states about itself, and the dates it mentions.

Approach: a handful of regular expressions, each with a small resolver that turns a match into a calendar
date relative to a timezone-aware reference. A mention that names a day (not a clock time) resolves to
12:00 on that day in the reference's timezone. Midday is the instant furthest from both midnights, so
converting it to UTC or to any other offset within twelve hours keeps the same calendar date; a day stored
as 00:00 in Berlin would read as the previous day in UTC. "today" is the reference itself, "tonight" and
"last night" are 20:00, "this morning" 09:00, "this afternoon" 15:00, "this evening" 19:00.

Mentions that do not pin a date by themselves (a bare weekday, "March 5" without a year, "in March") are
placed using the tense of their sentence: a past sentence ("we met in March") takes the most recent such
date, a future one ("I'll fly out on Friday") the next one, and a neutral one the nearest (for a weekday:
the coming one, today included).

Known limits: English only; no numeric day/month forms such as 05/03/2024 (US and European readings
disagree); no clock times except in a leading date and ISO timestamps; ranges ("from May 3 to May 7")
yield two mentions; vague phrases ("recently", "a while ago", "the other day") are not resolved.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo

from memories.pipeline.language import has_future_grammar, has_past_grammar, sentence_spans, tense_of

_MONTH_NUMBERS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
_WEEKDAY_NUMBERS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
    "mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4, "sat": 5, "sun": 6,
}  # fmt: skip
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3,
    "several": 3,
}  # fmt: skip

_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
)
# Abbreviations are only trusted next to a day or year: a bare "mar" or "jan" is more often something else.
_MONTH_FULL = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_YEAR = r"(?:19|20)\d{2}"
_DAY = r"[0-3]?\d"
_NUM = (
    r"(?:\d{1,3}|a\s+couple\s+of|couple\s+of|a\s+few|few|several|an?|one|two|three|four|five|six|seven"
    r"|eight|nine|ten|eleven|twelve)"
)
_UNIT = r"(?:day|week|fortnight|month|year)s?"
_PREP = r"(?:(?P<prep>on|since|by|until|till|from|before|after|in|during)\s+)?"
_TIME = r"\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?)|\d{1,2}:\d{2}"

_ISO_RE = re.compile(
    r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?:[T ](?P<H>\d{1,2}):(?P<M>\d{2})"
    r"(?::(?P<S>\d{2})(?:\.\d+)?)?(?P<tz>Z|[+-]\d{2}:?\d{2})?)?(?!\d)"
)
_ISO_SLASH_RE = re.compile(r"\b(?P<y>\d{4})/(?P<m>\d{1,2})/(?P<d>\d{1,2})\b")
_DMY_RE = re.compile(
    rf"\b{_PREP}(?:(?P<wd>{_WEEKDAY}),?\s+)?(?:the\s+)?(?P<d>{_DAY})(?:st|nd|rd|th)?(?:\s+of)?\s+"
    rf"(?P<mon>{_MONTH})\b\.?(?:,?\s+(?P<y>{_YEAR})\b)?",
    re.IGNORECASE,
)
_MDY_RE = re.compile(
    rf"\b{_PREP}(?:(?P<wd>{_WEEKDAY}),?\s+)?(?P<mon>{_MONTH})\b\.?\s+(?:the\s+)?(?P<d>{_DAY})(?:st|nd|rd|th)?\b"
    rf"(?!\s*(?:%|:\d|\.\d|[ap]\.?m\b))(?:,?\s+(?P<y>{_YEAR})\b)?",
    re.IGNORECASE,
)
_MONTH_YEAR_RE = re.compile(rf"\b{_PREP}(?P<mon>{_MONTH})\b\.?,?\s+(?P<y>{_YEAR})\b", re.IGNORECASE)
# A bare month needs a word in front ("in May", "last March"): "May" alone is mostly the verb.
_MONTH_BARE_RE = re.compile(
    rf"\b(?P<mod>in|since|during|by|until|till|before|after|early|mid|late|last|next|this|throughout"
    rf"|end\s+of|beginning\s+of|start\s+of)[\s-]+(?P<mon>{_MONTH_FULL})\b(?!\s*\d)",
    re.IGNORECASE,
)
_MAY_AS_VERB_RE = re.compile(
    r"\s+(?:be|have|not|help|take|seem|need|also|or|well|come|go|get|want|find|work|look|cause|change|make"
    r"|want|sound|i|we|you|it)\b",
    re.IGNORECASE,
)
_YEAR_RE = re.compile(
    rf"\b(?P<prep>in|since|during|by|until|till|from|before|after|back\s+in)\s+(?P<y>{_YEAR})\b"
    r"(?![-/]\d|\s*(?:%|people|dollars|euros|km|miles|kg|words|times))",
    re.IGNORECASE,
)
_DAY_WORD_RE = re.compile(
    r"\b(?P<w>(?:the\s+)?day\s+before\s+yesterday|(?:the\s+)?day\s+after\s+tomorrow|yesterday|today|tonight"
    r"|tomorrow|last\s+night|this\s+(?:morning|afternoon|evening)|earlier\s+today|later\s+today)\b",
    re.IGNORECASE,
)
_WEEKDAY_RE = re.compile(
    rf"\b(?:(?P<mod>last|next|this\s+coming|this\s+past|this|coming|past|on)\s+)?(?P<wd>{_WEEKDAY})\b",
    re.IGNORECASE,
)
# "last Fri", "next Tues": an abbreviated weekday only after a word that makes it one ("Sun", "Sat" and
# "Wed" alone are mostly something else).
_WEEKDAY_SHORT_RE = re.compile(
    r"\b(?P<mod>last|next|this\s+coming|this\s+past|this|coming|past|on)\s+"
    r"(?P<wd>mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\b",
    re.IGNORECASE,
)
_PERIOD_RE = re.compile(
    r"\b(?P<mod>last|next|this|past|coming)\s+(?P<unit>week|weekend|month|year)\b", re.IGNORECASE
)
_THE_WEEKEND_RE = re.compile(r"\b(?:over|on|at|for|during)\s+the\s+weekend\b", re.IGNORECASE)
_AGO_RE = re.compile(rf"\b(?P<n>{_NUM})\s+(?P<unit>{_UNIT})\s+ago\b", re.IGNORECASE)
_IN_N_RE = re.compile(
    rf"\bin\s+(?:about\s+|around\s+|another\s+)?(?P<n>{_NUM})\s+(?P<unit>{_UNIT})\b(?!\s+ago)", re.IGNORECASE
)
_FROM_NOW_RE = re.compile(rf"\b(?P<n>{_NUM})\s+(?P<unit>{_UNIT})\s+from\s+(?:now|today)\b", re.IGNORECASE)

# Phrases that place what a text says in time without naming a date these rules resolve: a duration
# ("for four years", "seven years now"), a season or a holiday ("last summer", "over Christmas"), a stage
# of life ("when I was 18", "as a kid"), a vague past ("the other day", "a while ago", "recently"). They
# answer "when?" and "how long?" as well as a date does, so `mentions_time` counts them.
_TIME_WORD_RE = re.compile(
    rf"\b(?:for|over|about|almost|nearly|around)\s+(?:the\s+(?:past|last)\s+)?{_NUM}\s+(?:{_UNIT}|hours?|decades?)\b"
    rf"|\b{_NUM}\s+(?:{_UNIT}|decades?|weekends?)\s+(?:now|already|ago|later|earlier|before|after)\b"
    r"|\b(?:years|months|weeks|ages|decades)\s+ago\b"
    r"|\b(?:last|this|next|past|early|late|in\s+the|during\s+the|over\s+the|that)\s+(?:summer|winter|spring|autumn|fall)\b"
    r"|\b(?:at|on|over|for|during|last|this|next|before|after)\s+(?:the\s+)?(?:christmas|thanksgiving|easter"
    r"|new\s+year(?:['\u2019]s)?(?:\s+eve)?|halloween|hanukkah|diwali|ramadan|eid|holidays)\b"
    r"|\bwhen\s+(?:i|we|he|she|they)\s+(?:was|were)\s+(?:a\s+(?:kid|child|teen|teenager|boy|girl|student)|young"
    r"|little|younger|\d{1,2})\b|\bas\s+a\s+(?:kid|child|teen(?:ager)?)\b|\bgrowing\s+up\b"
    r"|\b(?:recently|lately|the\s+other\s+(?:day|night|week)|a\s+while\s+(?:ago|back)|not\s+long\s+ago"
    r"|since\s+(?:i|we|you|he|she|they|my|our|his|her|their|the|then|last))\b"
    r"|\bfor\s+the\s+(?:first|last)\s+time\b",
    re.IGNORECASE,
)


_LEADING_RE = re.compile(
    rf"^\s*(?P<open>[\[(])?\s*(?:(?P<t1>{_TIME})\s+on\s+)?(?:on\s+)?(?:{_WEEKDAY},?\s+)?"
    r"(?:(?P<iso>\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?)"
    rf"|(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{_MONTH})\.?,?\s+(?P<y1>\d{{4}})"
    rf"|(?P<m2>{_MONTH})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{{4}}))"
    rf"(?:,?\s+(?:at\s+)?(?P<t2>{_TIME}))?[ \t]*(?P<close>(?(open)[\])]))"
    r"(?P<sep>[ \t]*[:,.|\-\u2013\u2014]*)",
    re.IGNORECASE,
)
_CLOCK_RE = re.compile(r"(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ampm>[ap])?", re.IGNORECASE)

_EXPLICIT_KINDS = frozenset({"iso", "iso_slash", "dmy", "mdy", "month_year"})


def leading_date(text: str, *, reference: datetime) -> tuple[datetime | None, str]:
    """The date a text states about itself at its very start, and the text without it.

    Recognises "On 8 May 2023:", "On May 8, 2023,", "8 May 2023 -", "2023-05-08:", "[2023-05-08]" and the
    LoCoMo form "1:56 pm on 8 May, 2023:". The date must be closed by a bracket, a separator (":", ",",
    "-", "|", ".") or the end of a line, so "On 8 May 2023 we met" keeps its date in the content, where
    `resolve_times` finds it. Without a clock time the result is 12:00 (see the module docstring).
    """
    _require_aware(reference)
    match = _LEADING_RE.match(text)
    if match is None:
        return None, text
    after = text[match.end() :]
    closed = bool(match.group("close")) or bool(match.group("sep").strip())
    if not closed and after.partition("\n")[0].strip():
        # "On 8 May 2023 we met Anna": the date belongs to the sentence, not to the whole text.
        return None, text
    stated = _leading_datetime(match, reference)
    if stated is None:
        return None, text
    return stated, after.strip()


def resolve_times(text: str, *, reference: datetime) -> list[tuple[str, datetime]]:
    """Every time mention in `text`, in document order, as (matched phrase, resolved datetime)."""
    return [(phrase, moment) for phrase, moment, _ in resolve_time_periods(text, reference=reference)]


def resolve_time_periods(text: str, *, reference: datetime) -> list[tuple[str, datetime, datetime | None]]:
    """Like `resolve_times`, with the end of the period each mention names: (phrase, moment, latest).

    `latest` is the exclusive end of the period when the phrase names more than a day ("last month",
    "in March", "2023", "last week", "three months ago": the month, year or week it falls in), and None
    when it names a day or an instant. "I moved to Berlin last month" happened some time in that month,
    so a statement made during that month is not necessarily older than the move.
    """
    _require_aware(reference)
    found: list[tuple[str, datetime, datetime | None]] = []
    tenses = _SentenceTenses(text)
    for mention in _scan(text):
        resolved = _RESOLVERS[mention.kind](mention.match, reference, tenses.at(mention.start))
        if resolved is not None:
            latest = _period_end(mention, resolved)
            found.append((text[mention.start : mention.end], resolved, latest))
    return found


def mentions_time(text: str) -> bool:
    """Whether `text` places what it says in time: a mention `resolve_times` would resolve ("yesterday",
    "last Fri", "in 2019"), or one it only recognises (a duration, a season, a holiday, "when I was a
    kid", "the other day"). A leading date ("On 8 May 2023:") is when the text was written, not a
    time it names, so it does not count.

    Recall prefers such a memory when the question asks "when?" or "how long?"
    (memories.retrieval.recall); it is stored with the memory (`Memory.names_time`).
    """
    body = _LEADING_RE.sub("", text, count=1)
    return _TIME_WORD_RE.search(body) is not None or bool(_scan(body))


def _period_end(mention: _Mention, moment: datetime) -> datetime | None:
    groups = mention.match.groupdict()
    unit = (groups.get("unit") or "").lower().rstrip("s")
    day = moment.date()
    month_start = date(day.year, day.month, 1)
    whole_month = ("in", "during", "last", "this", "throughout", "next")
    if mention.kind == "month_year" or (
        mention.kind == "month_bare" and (groups.get("mod") or "").lower() in whole_month
    ):
        return _at(_add_months(month_start, 1), moment, 0)
    if mention.kind == "year":
        return _at(date(day.year + 1, 1, 1), moment, 0)
    if mention.kind in ("period", "ago", "in_n", "from_now"):
        if unit == "month":
            return _at(_add_months(month_start, 1), moment, 0)
        if unit == "year":
            return _at(date(day.year + 1, 1, 1), moment, 0)
        if unit in ("week", "fortnight"):
            monday = day - timedelta(days=day.weekday())
            return _at(monday + timedelta(days=7), moment, 0)
        if unit == "weekend":
            return _at(day + timedelta(days=2), moment, 0)
    return None


def explicit_dates(text: str) -> list[tuple[int, int, str]]:
    """(start, end, phrase) of dates written out in full or in part ("2024-03-05", "5 March", "May 2024"),
    without a leading preposition. Relative phrases ("yesterday") are not included."""
    spans: list[tuple[int, int, str]] = []
    for mention in _scan(text):
        if mention.kind not in _EXPLICIT_KINDS:
            continue
        start = mention.start
        if "prep" in mention.match.re.groupindex and mention.match.group("prep"):
            start = mention.match.end("prep")
            while start < mention.end and text[start].isspace():
                start += 1
        spans.append((start, mention.end, text[start : mention.end]))
    return spans


def is_future(moment: datetime, reference: datetime) -> bool:
    """Later than the reference's day. Mentions name days, so a same-day one is neither past nor future."""
    return moment.astimezone(reference.tzinfo).date() > reference.date()


def is_past(moment: datetime, reference: datetime) -> bool:
    return moment.astimezone(reference.tzinfo).date() < reference.date()


# --- scanning --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    kind: str
    match: re.Match[str]


# (kind, pattern, words the text must contain for the pattern to have a chance). Checking the cheap
# preconditions once per text skips most of the fourteen scans on segments that mention no time at all.
_PATTERNS: tuple[tuple[str, re.Pattern[str], frozenset[str]], ...] = (
    ("iso", _ISO_RE, frozenset({"digit"})),
    ("iso_slash", _ISO_SLASH_RE, frozenset({"digit"})),
    ("dmy", _DMY_RE, frozenset({"digit", "month"})),
    ("mdy", _MDY_RE, frozenset({"digit", "month"})),
    ("month_year", _MONTH_YEAR_RE, frozenset({"digit", "month"})),
    ("month_bare", _MONTH_BARE_RE, frozenset({"month"})),
    ("year", _YEAR_RE, frozenset({"digit"})),
    ("day_word", _DAY_WORD_RE, frozenset({"relative"})),
    ("weekday", _WEEKDAY_RE, frozenset({"weekday"})),
    ("weekday", _WEEKDAY_SHORT_RE, frozenset({"weekday"})),
    ("period", _PERIOD_RE, frozenset({"relative"})),
    ("the_weekend", _THE_WEEKEND_RE, frozenset({"relative"})),
    ("ago", _AGO_RE, frozenset({"relative"})),
    ("in_n", _IN_N_RE, frozenset({"relative"})),
    ("from_now", _FROM_NOW_RE, frozenset({"relative"})),
)
_PRECONDITIONS: dict[str, re.Pattern[str]] = {
    "digit": re.compile(r"\d"),
    "month": re.compile(rf"\b{_MONTH}\b", re.IGNORECASE),
    "weekday": re.compile(rf"\b{_WEEKDAY}\b|\b(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\b", re.IGNORECASE),
    "relative": re.compile(
        r"day|week|month|year|fortnight|tonight|tomorrow|night|morning|afternoon|evening", re.IGNORECASE
    ),
}


def _scan(text: str) -> list[_Mention]:
    present = {name for name, pattern in _PRECONDITIONS.items() if pattern.search(text)}
    candidates: list[_Mention] = []
    for kind, pattern, needs in _PATTERNS:
        if not needs <= present:
            continue
        for match in pattern.finditer(text):
            is_may = kind == "month_bare" and match.group("mon").lower() == "may"
            if is_may and _MAY_AS_VERB_RE.match(text, match.end()):
                continue
            candidates.append(_Mention(match.start(), match.end(), kind, match))
    # Several patterns can match around the same words ("on Friday, 5 March 2024" is a weekday mention
    # and a date); the longest match starting first wins and the ones it overlaps are dropped.
    candidates.sort(key=lambda m: (m.start, -(m.end - m.start)))
    chosen: list[_Mention] = []
    last_end = -1
    for mention in candidates:
        if mention.start >= last_end:
            chosen.append(mention)
            last_end = mention.end
    return chosen


class _SentenceTenses:
    """The tense of the sentence around a position, falling back to the whole text's tense."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._spans: list[tuple[int, int]] | None = None
        self._whole: str | None = None
        self._cache: dict[int, str] = {}

    def at(self, position: int) -> str:
        if self._spans is None:
            self._spans = sentence_spans(self._text)
        for index, (start, end) in enumerate(self._spans):
            if start <= position < end:
                if index not in self._cache:
                    self._cache[index] = self._sentence_tense(self._text[start:end])
                return self._cache[index]
        return self._whole_tense()

    def _sentence_tense(self, sentence: str) -> str:
        past, future = has_past_grammar(sentence), has_future_grammar(sentence)
        if past != future:
            return "past" if past else "future"
        return self._whole_tense()

    def _whole_tense(self) -> str:
        if self._whole is None:
            self._whole = tense_of(self._text)
        return self._whole


# --- resolvers -------------------------------------------------------------------------------------------

_Resolver = Callable[[re.Match[str], datetime, str], datetime | None]


def _at(day: date, reference: datetime, hour: int = 12, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=reference.tzinfo)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    for candidate_day in (day.day, 30, 29, 28):
        found = _safe_date(year, month, min(candidate_day, day.day))
        if found is not None:
            return found
    raise AssertionError("every month has a 28th")


def _shift(day: date, amount: int, unit: str) -> date:
    unit = unit.lower().rstrip("s")
    if unit == "day":
        return day + timedelta(days=amount)
    if unit == "week":
        return day + timedelta(weeks=amount)
    if unit == "fortnight":
        return day + timedelta(weeks=2 * amount)
    if unit == "month":
        return _add_months(day, amount)
    return _add_months(day, 12 * amount)


def _count(word: str) -> int:
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def _pick_day(month: int, day: int, reference: datetime, tense: str) -> date | None:
    today = reference.date()
    # Nine years around the reference so that a 29 February always has a candidate on each side.
    options: list[date] = []
    for year in range(today.year - 4, today.year + 5):
        candidate = _safe_date(year, month, day)
        if candidate is not None:
            options.append(candidate)
    if tense == "past":
        earlier = [d for d in options if d <= today]
        return max(earlier) if earlier else None
    if tense == "future":
        later = [d for d in options if d >= today]
        return min(later) if later else None
    # Ties go to the future date: a neutral "on March 5" is more often an appointment than a memory.
    return min(options, key=lambda d: (abs((d - today).days), d < today)) if options else None


def _resolve_iso(match: re.Match[str], reference: datetime, tense: str) -> datetime | None:
    day = _safe_date(int(match.group("y")), int(match.group("m")), int(match.group("d")))
    if day is None:
        return None
    if "H" not in match.re.groupindex or match.group("H") is None:
        return _at(day, reference)
    hour, minute = int(match.group("H")), int(match.group("M"))
    second = int(match.group("S") or 0)
    if hour > 23 or minute > 59 or second > 59:
        return _at(day, reference)
    offset = match.group("tz")
    if offset is None:
        return datetime(day.year, day.month, day.day, hour, minute, second, tzinfo=reference.tzinfo)
    stated = datetime(day.year, day.month, day.day, hour, minute, second, tzinfo=_offset(offset))
    return stated.astimezone(reference.tzinfo)


def _offset(text: str) -> tzinfo:
    if text.upper() == "Z":
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))


def _resolve_day_month(match: re.Match[str], reference: datetime, tense: str) -> datetime | None:
    month = _MONTH_NUMBERS[match.group("mon").lower().rstrip(".")]
    day_number = int(match.group("d"))
    if match.group("y"):
        day = _safe_date(int(match.group("y")), month, day_number)
    else:
        day = _pick_day(month, day_number, reference, _prep_tense(match, tense))
    return _at(day, reference) if day else None


def _prep_tense(match: re.Match[str], tense: str) -> str:
    # "since March 5" can only be behind us and "by/until March 5" ahead, whatever the verb says.
    prep = (match.group("prep") or "").lower() if "prep" in match.re.groupindex else ""
    if prep == "since":
        return "past"
    if prep in ("by", "until", "till"):
        return "future"
    return tense


def _resolve_month_year(match: re.Match[str], reference: datetime, tense: str) -> datetime | None:
    month = _MONTH_NUMBERS[match.group("mon").lower().rstrip(".")]
    day = _safe_date(int(match.group("y")), month, 1)
    return _at(day, reference) if day else None


def _resolve_month_bare(match: re.Match[str], reference: datetime, tense: str) -> datetime | None:
    modifier = " ".join(match.group("mod").lower().split())
    month = _MONTH_NUMBERS[match.group("mon").lower()]
    today = reference.date()
    year, current = today.year, today.month
    if modifier == "since":
        tense = "past"
    elif modifier in ("by", "until", "till"):
        tense = "future"
    if modifier == "last":
        year = year if month < current else year - 1
    elif modifier == "next":
        year = year if month > current else year + 1
    elif modifier == "this" or (month == current and tense != "future"):
        pass
    elif tense == "past":
        year = year if month <= current else year - 1
    elif tense == "future":
        if month == current:
            # "I'm going to Japan in May", said in May: the rest of this month, which starts now.
            return reference
        year = year if month > current else year + 1
    else:
        options = [date(y, month, 1) for y in (year - 1, year, year + 1)]
        year = min(options, key=lambda d: abs((d - today).days)).year
    day_of_month = {"mid": 15, "late": 25}.get(modifier, 1)
    if modifier == "end of":
        return _at(_add_months(date(year, month, 1), 1) - timedelta(days=1), reference)
    return _at(date(year, month, day_of_month), reference)


def _resolve_year(match: re.Match[str], reference: datetime, tense: str) -> datetime | None:
    return _at(date(int(match.group("y")), 1, 1), reference)


def _resolve_day_word(match: re.Match[str], reference: datetime, tense: str) -> datetime | None:
    word = " ".join(match.group("w").lower().split()).removeprefix("the ")
    today = reference.date()
    if word in ("today", "earlier today", "later today"):
        return reference
    if word == "tonight":
        return _at(today, reference, 20)
    if word == "last night":
        return _at(today - timedelta(days=1), reference, 20)
    hours = {"this morning": 9, "this afternoon": 15, "this evening": 19}
    if word in hours:
        return _at(today, reference, hours[word])
    offsets = {"yesterday": -1, "day before yesterday": -2, "tomorrow": 1, "day after tomorrow": 2}
    return _at(today + timedelta(days=offsets[word]), reference)


def _resolve_weekday(match: re.Match[str], reference: datetime, tense: str) -> datetime | None:
    modifier = " ".join((match.group("mod") or "").lower().split())
    target = _WEEKDAY_NUMBERS[match.group("wd").lower()]
    today = reference.date()
    back = (today.weekday() - target) % 7
    ahead = (target - today.weekday()) % 7
    if modifier in ("last", "this past", "past"):
        day = today - timedelta(days=back or 7)
    elif modifier in ("next", "this coming", "coming"):
        day = today + timedelta(days=ahead or 7)
    elif modifier == "this":
        day = today - timedelta(days=back) if tense == "past" else today + timedelta(days=ahead)
    elif tense == "past":
        day = today - timedelta(days=back or 7)
    elif tense == "future":
        day = today + timedelta(days=ahead or 7)
    else:
        day = today + timedelta(days=ahead)
    return _at(day, reference)


def _this_saturday(today: date) -> date:
    # The weekend of the current Monday-to-Sunday week; on a Sunday that is yesterday's Saturday.
    return today + timedelta(days=5 - today.weekday())


def _resolve_period(match: re.Match[str], reference: datetime, tense: str) -> datetime | None:
    modifier = match.group("mod").lower()
    unit = match.group("unit").lower()
    today = reference.date()
    step = {"last": -1, "past": -1, "next": 1, "coming": 1, "this": 0}[modifier]
    if unit == "weekend":
        saturday = _this_saturday(today)
        if step < 0 and today.weekday() < 5:
            # On a weekday, "last weekend" is the one just gone, which is this week's Saturday minus 7.
            return _at(saturday - timedelta(days=7), reference)
        if step > 0 and today.weekday() < 5:
            # "Next Friday" is the first Friday after today (the brief's rule), and so "next weekend"
            # on a weekday is the first weekend after today.
            return _at(saturday, reference)
        return _at(saturday + timedelta(days=7 * step), reference)
    if step == 0:
        return reference
    return _at(_shift(today, step, unit), reference)


def _resolve_the_weekend(match: re.Match[str], reference: datetime, tense: str) -> datetime | None:
    today = reference.date()
    saturday = _this_saturday(today)
    if tense == "past" and today.weekday() < 5:
        saturday -= timedelta(days=7)
    return _at(saturday, reference)


def _resolve_ago(match: re.Match[str], reference: datetime, tense: str) -> datetime | None:
    return _at(_shift(reference.date(), -_count(match.group("n")), match.group("unit")), reference)


def _resolve_ahead(match: re.Match[str], reference: datetime, tense: str) -> datetime | None:
    return _at(_shift(reference.date(), _count(match.group("n")), match.group("unit")), reference)


_RESOLVERS: dict[str, _Resolver] = {
    "iso": _resolve_iso,
    "iso_slash": _resolve_iso,
    "dmy": _resolve_day_month,
    "mdy": _resolve_day_month,
    "month_year": _resolve_month_year,
    "month_bare": _resolve_month_bare,
    "year": _resolve_year,
    "day_word": _resolve_day_word,
    "weekday": _resolve_weekday,
    "period": _resolve_period,
    "the_weekend": _resolve_the_weekend,
    "ago": _resolve_ago,
    "in_n": _resolve_ahead,
    "from_now": _resolve_ahead,
}


# --- leading dates ---------------------------------------------------------------------------------------


def _leading_datetime(match: re.Match[str], reference: datetime) -> datetime | None:
    if match.group("iso"):
        iso = _ISO_RE.match(match.group("iso"))
        return _resolve_iso(iso, reference, "") if iso else None
    if match.group("d1"):
        day_text, month_text, year_text = match.group("d1", "m1", "y1")
    else:
        day_text, month_text, year_text = match.group("d2", "m2", "y2")
    day = _safe_date(int(year_text), _MONTH_NUMBERS[month_text.lower().rstrip(".")], int(day_text))
    if day is None:
        return None
    clock = _clock(match.group("t1") or match.group("t2"))
    if clock is None:
        return _at(day, reference)
    return _at(day, reference, *clock)


def _clock(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    match = _CLOCK_RE.match(text.strip())
    if match is None:
        return None
    hour, minute = int(match.group("h")), int(match.group("m") or 0)
    meridiem = (match.group("ampm") or "").lower()
    if meridiem:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if meridiem == "p" else 0)
    if hour > 23 or minute > 59:
        return None
    return hour, minute


def _require_aware(reference: datetime) -> None:
    if reference.tzinfo is None or reference.utcoffset() is None:
        raise ValueError("reference must be a timezone-aware datetime")
