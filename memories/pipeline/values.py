"""Typed values: what a statement says a thing IS, found by one extractor for every rule that needs it.

`values_of` finds, in order of precedence (a span is typed once): emails, URLs, phone numbers, money,
quantities with a unit, clock times, dates, weekdays, bare numbers, and names and places
(capitalised words inside a sentence, a word after a place preposition, a title such as "Dr."). Each
value has a type and a normal form ("$1,550" -> money "1550"; "9:30" -> time "09:30"; "Mondays" ->
weekday "monday"), so two statements can be compared by type: the same frame with another value of
one type is a candidate change (`memories.pipeline.update`). `masked` is the statement with each
value replaced by its type, the frame a value sits in ("I earn <money> a year"), compared by meaning.

Month, weekday, unit and currency words come from the language's lexicon
(`memories/pipeline/lexicon/`), so values are typed in every language that has one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memories.pipeline.entities import COMMON_WORDS
from memories.pipeline.language import STOP_WORDS
from memories.pipeline.lexicon import Lexicon, detect, languages, lexicon

EMAIL = "email"
URL = "url"
PHONE = "phone"
MONEY = "money"
QUANTITY = "quantity"
TIME = "time"
DATE = "date"
WEEKDAY = "weekday"
NUMBER = "number"
NAME = "name"
PLACE = "place"


@dataclass(frozen=True)
class Value:
    type: str
    text: str
    norm: str
    start: int
    end: int


_EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL_RE = re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+[^\s<>\"'.,;:!?)]", re.IGNORECASE)
# Seven digits or more in groups ("555-0101" is seven), optionally with a country code.
_PHONE_RE = re.compile(r"(?<![\w.,])\+?\d[\d\s().-]{5,18}\d(?![\w.,]\d)")
_NUM = r"\d{1,3}(?:[,.\s\u00a0\u202f]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?"
_CURRENCY_SIGN = r"[$\u20ac\u00a3\u00a5]"
_CLOCK_RE = re.compile(
    r"\b(?P<h>[01]?\d|2[0-3])(?:[:.h](?P<m>[0-5]\d))?\s*(?P<ap>[ap]\.?\s?m\.?)(?!\w)"
    r"|\b(?P<h2>[01]?\d|2[0-3])[:h](?P<m2>[0-5]\d)\b"
    r"|\b(?P<h3>[01]?\d|2[0-3])\s*uhr\b(?:\s*(?P<m3>[0-5]\d))?"
    # "11 at night", "6.30 in the morning", "4 o'clock in the afternoon": a time said with its part of day.
    r"|\b(?P<h4>1[0-2]|0?[1-9])(?:[:.](?P<m4>[0-5]\d))?\s+(?:o['\u2019]clock\s+)?"
    r"(?P<part>at\s+night|in\s+the\s+(?:evening|afternoon|morning))\b",
    re.IGNORECASE,
)
_YEAR_RE = re.compile(r"\b(?:19|20)\d{2}\b")
_ISO_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b")
_TOKEN_RE = re.compile(r"[^\W_]+(?:['\u2019.-][^\W_]+)*\.?")
_TITLES = frozenset({"dr", "dr.", "mr", "mr.", "mrs", "mrs.", "ms", "ms.", "prof", "prof."})


def _number(text: str) -> str:
    digits = re.sub(r"[\s\u00a0\u202f,.](?=\d{3}\b)", "", text).replace(",", ".")
    return digits.rstrip(".") or text


@lru_cache(maxsize=64)
def _money_re(currencies: frozenset[str]) -> re.Pattern[str]:
    words = "|".join(sorted((re.escape(c) for c in currencies if c != "k"), key=len, reverse=True))
    return re.compile(
        rf"{_CURRENCY_SIGN}\s?(?P<a>{_NUM})\s?(?P<ka>k\b|m\b|thousand\b)?"
        rf"|(?P<b>{_NUM})\s?(?P<kb>k\b|m\b|thousand\b|mil\b|tausend\b)?\s?(?:{_CURRENCY_SIGN}|\b(?:{words})\b)"
        rf"|\b(?P<c>\d+(?:[.,]\d+)?)\s?(?P<kc>k)\b",
        re.IGNORECASE,
    )


@lru_cache(maxsize=64)
def _quantity_re(units: frozenset[str]) -> re.Pattern[str]:
    words = "|".join(sorted((re.escape(u) for u in units if u != "%"), key=len, reverse=True))
    return re.compile(rf"(?P<n>{_NUM})\s?(?P<u>%|\b(?:{words})\b)", re.IGNORECASE)


def _lexicons(text: str) -> list[Lexicon]:
    # The statement's language first, English always (units and months are often said in English).
    code = detect(text)
    return [lexicon(code)] + ([lexicon("en")] if code != "en" else [])


# Words before "one" that make it a pronoun standing for a noun, not the number: "a fixed one", "the
# back one", "which one", "this one", "no one". One adjective may stand between ("the other one").
_ONE_DETERMINERS = frozenset(
    {"a", "an", "the", "this", "that", "which", "each", "every", "any", "another", "other", "no", "some"}
)


def pronoun_one(word: str, before: list[str]) -> bool:
    """Whether `word` is "one" as a pronoun ("Should we get a fixed one?", "the back one is bald"),
    given the lower-cased words before it (`before`, nearest last): after a determiner, or after a
    determiner and one more word. "I have one cat", "just one", "one of my housemates" are the
    number."""
    if word != "one" or not before:
        return False
    return before[-1] in _ONE_DETERMINERS or (len(before) > 1 and before[-2] in _ONE_DETERMINERS)


@lru_cache(maxsize=8192)
def values_of(text: str) -> tuple[Value, ...]:
    """The typed values of one statement, in the order they appear."""
    found: list[Value] = []
    taken = [False] * len(text)

    def claim(kind: str, start: int, end: int, norm: str) -> None:
        if start >= end or any(taken[start:end]):
            return
        for i in range(start, end):
            taken[i] = True
        found.append(Value(kind, text[start:end], norm, start, end))

    lexes = _lexicons(text)
    for m in _EMAIL_RE.finditer(text):
        claim(EMAIL, m.start(), m.end(), m.group().lower())
    for m in _URL_RE.finditer(text):
        claim(
            URL, m.start(), m.end(), re.sub(r"^(?:https?://)?(?:www\.)?", "", m.group().lower()).rstrip("/")
        )
    for lex in lexes:
        for m in _money_re(lex.currencies).finditer(text):
            amount = m.group("a") or m.group("b") or m.group("c")
            scale = (m.group("ka") or m.group("kb") or m.group("kc") or "").lower()
            value = float(_number(amount)) if _number(amount).replace(".", "", 1).isdigit() else 0.0
            value *= {"k": 1e3, "thousand": 1e3, "tausend": 1e3, "m": 1e6, "mil": 1e3}.get(scale, 1)
            claim(MONEY, m.start(), m.end(), f"{value:g}")
    for m in _CLOCK_RE.finditer(text):
        hour = int(m.group("h") or m.group("h2") or m.group("h3") or m.group("h4"))
        minute = int(m.group("m") or m.group("m2") or m.group("m3") or m.group("m4") or 0)
        ap = (m.group("ap") or "").lower().replace(".", "").replace(" ", "")
        part = (m.group("part") or "").lower()
        if part:
            # The part of the day says am or pm: "11 at night" is 23:00, "2 at night" 02:00.
            ap = "am" if "morning" in part or ("night" in part and (hour < 6 or hour == 12)) else "pm"
        if ap == "pm" and hour < 12:
            hour += 12
        if ap == "am" and hour == 12:
            hour = 0
        claim(TIME, m.start(), m.end(), f"{hour:02d}:{minute:02d}")
    for m in _ISO_DATE_RE.finditer(text):
        claim(DATE, m.start(), m.end(), m.group())
    for m in _PHONE_RE.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if len(digits) >= 7 and not _YEAR_RE.fullmatch(m.group().strip()):
            claim(PHONE, m.start(), m.end(), digits)
    for lex in lexes:
        for m in _quantity_re(lex.units).finditer(text):
            unit = m.group("u").lower().rstrip("s") or m.group("u")
            claim(QUANTITY, m.start(), m.end(), f"{_number(m.group('n'))} {unit}")
    tokens = list(_TOKEN_RE.finditer(text))
    months = frozenset().union(*(lex.months for lex in lexes))
    weekdays = frozenset().union(*(lex.weekdays for lex in lexes))
    for index, m in enumerate(tokens):
        word = m.group().lower().rstrip(".")
        if word in weekdays:
            claim(WEEKDAY, m.start(), m.end(), _weekday(word, lexes))
        elif word in months and (index > 0 or len(tokens) > 1):
            day = next((t for t in tokens[index + 1 : index + 2] if t.group()[:2].isdigit()), None)
            day = day or next((t for t in tokens[max(index - 2, 0) : index] if t.group()[:2].isdigit()), None)
            start = min(m.start(), day.start()) if day else m.start()
            end = max(m.end(), day.end()) if day else m.end()
            day_digits = re.sub(r"\D", "", day.group()) if day else ""
            norm = f"{word[:3]} {day_digits}".strip()
            claim(DATE, start, end, norm)
    for m in _YEAR_RE.finditer(text):
        claim(DATE, m.start(), m.end(), m.group())
    number_words = {w: n for lex in lexes for w, n in lex.number_words.items()}
    for m in re.finditer(r"\d+(?:[.,]\d+)*", text):
        claim(NUMBER, m.start(), m.end(), _number(m.group()))
    words = [m.group().lower().rstrip(".") for m in tokens]
    for index, m in enumerate(tokens):
        word = m.group().lower()
        if word in number_words and word not in STOP_WORDS and not pronoun_one(word, words[:index]):
            claim(NUMBER, m.start(), m.end(), number_words[word])
    _names(text, tokens, lexes, claim)
    return tuple(sorted(found, key=lambda v: v.start))


def _weekday(word: str, lexes: list[Lexicon]) -> str:
    # "Mondays", "montags", "lunes": one weekday, by its position in the lexicon's list.
    for lex in lexes:
        ordered = [w for w in lex.weekdays]
        if word in ordered:
            base = sorted(ordered, key=len)
            for candidate in base:
                if word.startswith(candidate[:4]):
                    return f"{lex.code}:{candidate[:4]}"
    return word


def _names(text: str, tokens: list[re.Match[str]], lexes: list[Lexicon], claim) -> None:  # type: ignore[no-untyped-def]
    """Names and places: a run of capitalised words that are not the sentence's first word (unless
    a title, a place preposition or a known name says so), and not common words."""
    capitalised_nouns = lexes[0].code == "de"  # every German noun is capitalised
    preps = frozenset().union(*(lex.place_preps for lex in lexes))
    kin = frozenset().union(*(frozenset(lex.kin) | lex.self_words | lex.stop for lex in lexes))
    index = 0
    while index < len(tokens):
        m = tokens[index]
        word = m.group().rstrip(".") if m.group().lower() not in _TITLES else m.group()
        lowered = word.lower()
        previous = tokens[index - 1].group().lower() if index else ""
        between = text[tokens[index - 1].end() : m.start()].strip() if index else ""
        sentence_start = index == 0 or (between != "" and between[-1] in ".!?;:")
        after_prep = previous in preps
        title = lowered in _TITLES
        capital = word[:1].isupper()
        plain = lowered in COMMON_WORDS or lowered in STOP_WORDS or lowered in kin
        is_name = capital and not plain and (title or after_prep or not (sentence_start or capitalised_nouns))
        if not is_name:
            index += 1
            continue
        end = index + 1
        while (
            end < len(tokens)
            and tokens[end].group()[:1].isupper()
            and tokens[end].group().lower() not in STOP_WORDS
        ):
            end += 1
        if title and end == index + 1 and end < len(tokens):
            end += 1
        start_char, end_char = m.start(), tokens[end - 1].end()
        span = text[start_char:end_char].rstrip(".")
        claim(
            PLACE if after_prep and previous not in {"at"} else NAME,
            start_char,
            start_char + len(span),
            span.lower(),
        )
        index = end


def masked(text: str) -> str:
    """The statement with each typed value replaced by its type: the frame the values sit in."""
    out = []
    last = 0
    for value in values_of(text):
        out.append(text[last : value.start])
        out.append(f"<{value.type}>")
        last = value.end
    out.append(text[last:])
    return "".join(out)


def by_type(values: tuple[Value, ...]) -> dict[str, frozenset[str]]:
    """The normal forms of a statement's values, by type (names and places count as one type: a
    move is from one place to another, a new employer a name where a name was)."""
    grouped: dict[str, set[str]] = {}
    for value in values:
        kind = NAME if value.type == PLACE else value.type
        grouped.setdefault(kind, set()).add(value.norm)
    return {kind: frozenset(norms) for kind, norms in grouped.items()}


__all__ = ["Value", "by_type", "languages", "masked", "values_of"]
