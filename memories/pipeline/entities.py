"""Entities a memory mentions: people, organisations, products, places, concepts, dates and amounts.

Approach: amounts and dates are found by pattern; names are runs of capitalised words ("Bank of America",
"Caroline") that are typed by the words around them ("works at X" is an Organization, "my sister X" a
Person, "moved to X" a Location, "my new X" a Product), by a suffix ("... Inc", "... University"), or by
two short built-in lists (well-known places in `language.KNOWN_LOCATIONS`, common first names here). A
capitalised word at the start of a sentence is usually just capitalised, so it is only kept with more
evidence: a list hit, a cue, a verb after it ("Caroline said", "Zed went"), the same word capitalised
elsewhere in the text where it does not start a sentence, or a name the caller already knows (`known`:
the normalized names of the space's entities).

Known limits: English capitalisation is the main signal, so all-lower-case or ALL-CAPS text yields few or
wrong names; a name with no cue and not in a list becomes a Concept; "Jordan" or "Georgia" are read as
places; nicknames and names written in non-Latin scripts are missed.
"""

from __future__ import annotations

import re
from collections.abc import Set

from memories.pipeline.language import (
    IRREGULAR_PAST,
    KNOWN_LOCATIONS,
    MONTHS_FULL,
    ROLE_SPEAKERS,
    WEEKDAYS,
    fold,
    speaker_spans,
    word_set,
)
from memories.pipeline.timeparse import explicit_dates

# Common first names, lower-case. Month names ("May", "June") and modal-like words ("Will") are left out:
# they are far more often not names.
FIRST_NAMES = word_set(
    """
    aaron adam ahmed aisha alan albert alex alexander alice alicia amanda amber amy ana andrea andrew andy
    angela anna anne anthony arthur audrey ava barbara ben benjamin beth betty bill billy bob bobby brandon
    brenda brian bruce calvin carl carlos carmen carol caroline catherine charles charlie charlotte chen chloe
    chris christina christine christopher claire clara daniel danielle dave david deborah debra dennis diana
    diane dmitri donna doris dorothy douglas dylan edward elena elijah elizabeth ella ellie emily emma eric
    ethan eva evan eve evelyn fatima felix frances frank fred gabriel gary george gina gloria grace greg
    gregory hannah hans harry heather helen henry hiroshi ian ingrid isabella ivan jack jacob jake james
    jamie jane janet jason jeff jeffrey jennifer jenny jeremy jerry jess jessica jim joanna joe john johnny
    jolene jon jonas jonathan jordan jose joseph josh joshua joyce juan judith judy julia julie justin karen
    kate katherine kathleen kathryn kayla keith kelly ken kevin kimberly kyle lars laura lauren lena leo liam
    lily linda lisa liz logan lucas lucia lucy luis luke madison marco margaret maria marie mark martha mary
    mason matt matthew max megan mei mel melanie melissa mia michael michelle miguel mike mohammed nancy
    natalie nate nathan nicholas nick nicole nina noah olivia omar oliver pablo pamela patricia patrick paul
    paula pedro peter philip pierre priya rachel raj ralph raymond rebecca richard rick rita rob robert roger
    ronald rosa ruby russell ruth ryan sam samantha samuel sandra sara sarah scott sean sharon sofia sophia
    sophie stephanie stephen steve steven susan sven taylor ted teresa thomas tim timothy tina tobias tom
    tommy tony tyler victoria vincent walter wayne wei william yuki zoe
    """
)


# Capitalised words that are not names by themselves: pronouns, determiners, sentence openers, titles,
# kinship words, weekdays and months. Lower-case.
COMMON_WORDS = (
    word_set(
        """
    i me my mine myself we us our ours you your yours he him his she her hers they them their theirs it its
    a an the this that these those there here some any all every each no none both either neither many much
    most more less few several other another such what which who whom whose where when why how whatever
    whoever and or but nor so yet for if then than because although though while since unless until as at
    by from in into of off on onto out over to up upon with within without about above after against along
    among around before behind below beneath beside between beyond during except inside near outside past
    through throughout toward towards under via am is are was were be been being do does did done have has
    had having can could will would shall should may might must ought let lets not yes yeah yep no nope oh
    ah hey hi hello bye goodbye thanks thank please ok okay sure well wow great good nice cool awesome
    amazing sorry anyway also just maybe perhaps probably actually really very still even only now today
    tomorrow yesterday tonight last next soon later earlier recently finally first second third then once
    again always never often sometimes usually everyone everybody everything someone somebody something
    anyone anybody anything nobody nothing lol omg btw fyi idk tbh imo asap haha hmm mr mrs ms miss dr prof
    sir madam dear mom mum mother dad father grandma grandpa grandmother grandfather uncle aunt auntie
    sister brother wife husband son daughter baby honey love note notes remember remind reminder todo
    update tags tag happy merry congrats congratulations welcome morning evening night afternoon week
    weekend month year day
    """
    )
    | frozenset(WEEKDAYS)
    # "on Sundays": a recurring day, not a name.
    | frozenset(f"{day}s" for day in WEEKDAYS)
    | frozenset(MONTHS_FULL)
)


_ORG_SUFFIXES = word_set(
    """
    inc incorporated ltd llc llp plc corp corporation gmbh ag sa university college bank company co group
    labs lab foundation institute hospital clinic airlines airways technologies systems studios partners
    capital ventures holdings association agency council ministry
    """
)


_ORG_HEADS = frozenset({"university", "bank", "institute", "college", "museum", "ministry", "department"})


# Verbs that open notes-to-self ("Call Anna", "Ask Tom about the keys").
_IMPERATIVES = word_set(
    """
    call buy meet visit ask email tell text send book pick get take bring check ping see thank congratulate
    invite pay order schedule cancel follow contact message write read watch try
    """
)


_CONNECTORS = frozenset(
    {"of", "de", "da", "del", "della", "di", "du", "van", "von", "der", "den", "la", "le", "&"}
)


_UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de"


_TOKEN = rf"(?:[{_UPPER}][\w'\u2019\-]*|[a-z]+[A-Z][\w\-]*)"


_NAME_RE = re.compile(
    rf"(?<![\w'\u2019#@&/.\-]){_TOKEN}(?:(?:[ \t]+(?:of|de|da|del|della|di|du|van|von|der|den|la|le|&))*"
    rf"[ \t]+{_TOKEN})*"
)


_WORD_RE = re.compile(r"[^ \t]+")


_POSSESSIVE_RE = re.compile(r"['\u2019]s?$")


_HONORIFIC_BEFORE_RE = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr|Prof|Sir|Dame|Uncle|Aunt|Auntie)\.?[ \t]+$")


_KIN_BEFORE_RE = re.compile(
    r"\b(?:my|our|his|her|their|your)\s+(?:(?:best|old|close|new|little|big|younger|older|twin|step|ex|late"
    r"|dear|good)[\s-]+)*(?:friend|sister|brother|sis|bro|mom|mum|mother|dad|father|wife|husband|boss"
    r"|colleague|coworker|co-worker|partner|girlfriend|boyfriend|son|daughter|cousin|aunt|uncle|grandma"
    r"|grandpa|grandmother|grandfather|niece|nephew|neighbou?r|roommate|flatmate|fianc[e\u00e9]e?|manager"
    r"|teacher|doctor|therapist|coach|mentor|classmate|buddy|pal|bestie|kid|child|baby|stepmom|stepdad)s?,?"
    r"\s+$",
    re.IGNORECASE,
)


_ORG_BEFORE_RE = re.compile(
    r"\b(?:work(?:s|ed|ing)?\s+(?:at|for)|join(?:s|ed|ing)?|hired\s+by|employed\s+(?:at|by)|job\s+(?:at|with)"
    r"|intern(?:ship|ing)?\s+(?:at|with)|interview(?:ed|ing)?\s+(?:at|with)|position\s+at|role\s+at"
    r"|offer\s+from|promoted\s+at|quit|resigned\s+from)\s+(?:the\s+)?$",
    re.IGNORECASE,
)


_PRODUCT_BEFORE_RE = re.compile(
    r"\b(?:(?:my|a|an|the|his|her|our|their)\s+(?:brand\s+)?(?:new|old|first|favou?rite)"
    r"|bought|ordered|purchased|installed|downloaded|upgraded\s+to|got\s+(?:a|an|the|my)(?:\s+new)?"
    r"|(?:bought|drive|drives|driving|drove|own|owns)\s+(?:a|an|the|my)(?:\s+new)?|using|use|uses)\s+$",
    re.IGNORECASE,
)


_PRODUCT_AFTER_RE = re.compile(
    r"^\s+(?:app|application|phone|smartphone|car|laptop|tablet|watch|console|headphones|earbuds|camera"
    r"|bike|software|game|device|tv|speaker|subscription|model|tool|plugin|extension)\b",
    re.IGNORECASE,
)


_PRODUCT_TAIL_RE = re.compile(r"(?:[ \t]+(?:\d{1,4}[A-Za-z]{0,2}|Pro|Max|Plus|Mini|Ultra|Air|SE|XL|Lite))+")


_PLACE_BEFORE_RE = re.compile(
    r"\b(?:in|to|from|at|near|visit|visits|visited|visiting|moved\s+to|live\s+in|lives\s+in|living\s+in"
    r"|flew\s+to|trip\s+to|back\s+(?:to|from)|around|across|into|through|via|based\s+in|outside|toward)"
    r"\s+(?:the\s+)?$",
    re.IGNORECASE,
)


# "Belem tower", "Alfama district": a name followed by a kind of place is that place.
_PLACE_AFTER_RE = re.compile(
    r"^\s+(?:tower|bridge|park|museum|square|street|avenue|station|airport|beach|lake|river|mountain|castle"
    r"|palace|cathedral|church|district|neighbou?rhood|island|valley|harbou?r|market|gardens?|plaza)\b"
)


_PERSON_BEFORE_RE = re.compile(
    r"\b(?:with|met|meet|meeting|told|tell|asked|ask|called|call|texted|text|messaged|message|hey|hi|hello"
    r"|thanks|thank\s+you|dear|congrats|congratulations|dating|married|hugged|named)\s*,?\s+$",
    re.IGNORECASE,
)


_PERSON_AFTER_RE = re.compile(
    r"^(?:['\u2019]s)?\s+(?:said|says|told|tells|asked|asks|thinks|thought|mentioned|replied|wrote|texted"
    r"|called|laughed|smiled|agreed|suggested|recommended)\b"
    r"|^['\u2019]s\s+(?:mom|mum|mother|dad|father|wife|husband|sister|brother|son|daughter|birthday|wedding"
    r"|kids?|children|family|boyfriend|girlfriend|partner|friend|house|place|party)\b",
    re.IGNORECASE,
)


# After a sentence-initial word: a verb that people do, or "is my <relation>".
_ANIMATE_AFTER_RE = re.compile(
    r"^\s+(?:said|says|told|tells|went|goes|works|worked|lives|lived|thinks|thought|asked|wants|wanted|loves"
    r"|loved|likes|liked|texted|called|came|moved|joined|started|bought|visited|met|and\s+I)\b"
    r"|^\s+(?:is|was)\s+(?:my|our|his|her|their)\s+(?:\w+\s+)?(?:friend|sister|brother|mom|mum|mother|dad"
    r"|father|wife|husband|boss|colleague|partner|girlfriend|boyfriend|son|daughter|cousin|neighbou?r)\b",
    re.IGNORECASE,
)


_COPULA_AFTER_RE = re.compile(r"^\s+(?:is|was)\s+(?:my|our|a|an|the)\b", re.IGNORECASE)


# A sentence-initial first name followed by these is more likely the word ("Mark the date", "Jack up").
_NOT_A_NAME_AFTER_RE = re.compile(
    r"^\s+(?:the|a|an|my|your|it|this|that|these|those|me|us|them|down|up|out|off|as)\b", re.IGNORECASE
)


_AMOUNT_RE = re.compile(
    r"(?<![\w$\u20ac\u00a3\u00a5])(?:US\$|A\$|C\$|[$\u20ac\u00a3\u00a5])\s?\d[\d,]*(?:\.\d+)?"
    r"(?:\s?(?:k|m|bn|million|billion|thousand)\b)?"
    r"|\b\d[\d,]*(?:\.\d+)?(?:\s?(?:k|m|bn|million|billion|thousand|hundred))?\s?(?:dollars|usd|eur|euros?"
    r"|pounds|gbp|bucks|yen|cents|francs|chf|rupees|inr)\b"
    r"|\b\d+(?:\.\d+)?k\b(?!\s*(?:run|race|runs|races|steps|followers|views|subscribers|resolution|monitor))",
    re.IGNORECASE,
)


_MASKED_RE = re.compile(r"https?://\S+|www\.\S+|[\w.+-]+@[\w-]+\.[\w.-]+|[#@][\w-]+")


def extract_entities(
    text: str, *, speakers: bool = True, known: Set[str] = frozenset()
) -> list[tuple[str, str]]:
    """(display name, type) of each entity in order of first appearance, deduplicated case-insensitively.

    Types: Person, Organization, Product, Location, Concept, Date, Amount. Speakers of conversation turns
    ("Alice: ...") are Persons; chat roles such as "User:" are not entities. `speakers=False` reads a
    leading "Name:" as part of the text (a document's "Piranesi: rating 5/5"). `known`: normalized names
    (`normalize_entity_name`) that are already entities, so that one of them starting a sentence with no
    other cue is still kept ("Acme is hiring." when Acme is known).
    """
    found: list[tuple[int, str, str]] = []
    masks: list[tuple[int, int]] = []
    for start, end, name in speaker_spans(text) if speakers else []:
        masks.append((start, end))
        if name.lower() not in ROLE_SPEAKERS:
            found.append((start, name, "Person"))
    for match in _MASKED_RE.finditer(text):
        masks.append(match.span())
    for match in _AMOUNT_RE.finditer(text):
        masks.append(match.span())
        found.append((match.start(), match.group().strip(), "Amount"))
    for start, end, phrase in explicit_dates(text):
        masks.append((start, end))
        found.append((start, phrase, "Date"))
    found.extend(_names(text, _mask(text, masks), known))
    return _dedupe(found)


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    # Blank out spans with spaces of the same length so positions stay comparable with `text`.
    if not spans:
        return text
    parts: list[str] = []
    cursor = 0
    for start, end in sorted(spans):
        if end <= cursor:
            continue
        start = max(start, cursor)
        parts.append(text[cursor:start])
        parts.append(" " * (end - start))
        cursor = end
    parts.append(text[cursor:])
    return "".join(parts)


def _names(text: str, masked: str, known: Set[str]) -> list[tuple[int, str, str]]:
    names: list[tuple[int, str, str]] = []
    consumed = 0
    named = _named_mid_sentence(masked) | known
    for match in _NAME_RE.finditer(masked):
        for start, end in _pieces(masked, match.start(), match.group()):
            if start < consumed:
                continue
            display = _POSSESSIVE_RE.sub("", text[start:end])
            end = start + len(display)
            kind = _type_of(text, display, start, end, named)
            if kind is None:
                continue
            if kind == "Product":
                tail = _PRODUCT_TAIL_RE.match(text, end)
                if tail:
                    end = tail.end()
                    display = text[start:end]
            consumed = end
            names.append((start, display, kind))
    return names


def names_in(text: str) -> set[str]:
    """Keys of the capitalised words of `text` that do not start a sentence: pass them as `known` when
    extracting from one part of a longer text, so a name the rest of the text writes mid-sentence is
    kept where a part starts with it."""
    return _named_mid_sentence(text)


_CAPITALISED_RE = re.compile(rf"(?<![\w'\u2019])[{_UPPER}][\w'\u2019\-]+")


def capitalised_words(text: str, *, limit: int = 500) -> list[str]:
    """The distinct capitalised words of `text` (at most `limit`): the names a space may already know."""
    return list(dict.fromkeys(match.group() for match in _CAPITALISED_RE.finditer(text)))[:limit]


# A column header that says what kind of thing its cells name: | Book | Rating | makes "Piranesi" a
# Product. Lower-case, singular; a plural header ("Books") is folded to it.
_HEADER_TYPES: dict[str, str] = {
    **dict.fromkeys(
        word_set(
            """book novel film movie show series album song track game app application product tool device car
            model phone laptop brand item dish recipe"""
        ),
        "Product",
    ),
    **dict.fromkeys(
        word_set("city country place location town village venue destination region address"), "Location"
    ),
    **dict.fromkeys(
        word_set(
            """company employer organisation organization client customer vendor supplier school university
            team club bank publisher"""
        ),
        "Organization",
    ),
    **dict.fromkeys(
        word_set("name person contact friend author who guest member colleague attendee"), "Person"
    ),
}


def type_of_header(header: str) -> str:
    """The entity type a table column's header names ("Book" -> "Product"), or "" when it names none."""
    words = header.lower().split()
    if not words:
        return ""
    word = words[-1]
    return _HEADER_TYPES.get(word) or (_HEADER_TYPES.get(word[:-1], "") if word.endswith("s") else "")


def _named_mid_sentence(masked: str) -> set[str]:
    """Keys of the capitalised words that do not start a sentence: "Acme" in "I left Acme." says that
    a sentence-initial "Acme" elsewhere in the text is the name too."""
    named: set[str] = set()
    for match in _NAME_RE.finditer(masked):
        for word in _WORD_RE.finditer(match.group()):
            start = match.start() + word.start()
            token = word.group()
            if token[0].isupper() and not _is_stop(token) and not _sentence_initial(masked, start):
                named.add(normalize_entity_name(token))
    return named


def _pieces(text: str, offset: int, sequence: str) -> list[tuple[int, int]]:
    """Split a run of capitalised words at stop words: "Yesterday Alice" -> "Alice"; "Paris I" -> "Paris"."""
    pieces: list[tuple[int, int]] = []
    current: list[tuple[int, int]] = []
    for word in _WORD_RE.finditer(sequence):
        span = (offset + word.start(), offset + word.end())
        if word.group().lower() in _CONNECTORS:
            if current:
                current.append(span)
            continue
        if _is_stop(word.group()):
            _close_piece(text, current, pieces)
            current = []
            continue
        current.append(span)
    _close_piece(text, current, pieces)
    return pieces


def _close_piece(text: str, words: list[tuple[int, int]], pieces: list[tuple[int, int]]) -> None:
    while words and text[words[-1][0] : words[-1][1]].lower() in _CONNECTORS:
        words.pop()
    if not words:
        return
    # "Visiting Paris", "Met John", "Call Anna": a sentence-initial verb or adverb that merely starts the run.
    first = text[words[0][0] : words[0][1]].lower()
    if len(words) > 1 and _sentence_initial(text, words[0][0]) and _looks_like_verb(first):
        words = words[1:]
    pieces.append((words[0][0], words[-1][1]))


def _looks_like_verb(word: str) -> bool:
    if word in FIRST_NAMES:
        return False
    return word.endswith(("ing", "ed", "ly")) or word in IRREGULAR_PAST or word in _IMPERATIVES


def _is_stop(token: str) -> bool:
    low = token.lower().replace("\u2019", "'")
    if low.endswith("n't") or len(low.strip("'-")) < 2:
        return True
    base = low.split("'")[0]
    return low in COMMON_WORDS or base in COMMON_WORDS


def _sentence_initial(text: str, start: int) -> bool:
    index = start - 1
    while index >= 0 and text[index] in " \t\"'\u201c\u201d\u2018\u2019([*-\u2022>#":
        index -= 1
    return index < 0 or text[index] in ".!?:;\n\u2026"


def _in_heading(text: str, start: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    return text[line_start:start].lstrip().startswith("#")


def _type_of(text: str, display: str, start: int, end: int, named: Set[str]) -> str | None:
    """The entity type of a capitalised run, or None when the evidence says it is just a capitalised word.

    `named`: keys known to be names (capitalised mid-sentence in this text, or already entities)."""
    words = display.lower().split()
    if not words or len(display) < 2:
        return None
    low = " ".join(words)
    before = text[max(0, start - 48) : start]
    after = text[end : end + 48]
    initial = _sentence_initial(text, start)
    if _HONORIFIC_BEFORE_RE.search(before):
        return "Person"
    if words[-1].rstrip(".") in _ORG_SUFFIXES or (
        len(words) > 2 and words[0] in _ORG_HEADS and words[1] == "of"
    ):
        return "Organization"
    if low in KNOWN_LOCATIONS:
        return "Location"
    if _KIN_BEFORE_RE.search(before):
        return "Person"
    if words[0] in FIRST_NAMES and not (initial and _NOT_A_NAME_AFTER_RE.match(after)):
        return "Person"
    if _ORG_BEFORE_RE.search(before):
        return "Organization"
    if _PRODUCT_BEFORE_RE.search(before) or _PRODUCT_AFTER_RE.match(after) or display[0].islower():
        return "Product"
    if _PLACE_BEFORE_RE.search(before) or _PLACE_AFTER_RE.match(after):
        return "Location"
    if _PERSON_BEFORE_RE.search(before) or _PERSON_AFTER_RE.match(after):
        return "Person"
    if _in_heading(text, start):
        # Headings are Title Cased, so a capital letter there is no evidence of a name.
        return None
    if initial and len(words) == 1:
        if _ANIMATE_AFTER_RE.match(after):
            return "Person"
        if _COPULA_AFTER_RE.match(after) or normalize_entity_name(display) in named:
            return "Concept"
        return None
    return "Concept"


def _dedupe(found: list[tuple[int, str, str]]) -> list[tuple[str, str]]:
    found.sort(key=lambda item: item[0])
    seen: dict[str, int] = {}
    result: list[tuple[str, str]] = []
    for _, display, kind in found:
        key = " ".join(display.casefold().split())
        if key in seen:
            index = seen[key]
            # A later mention with a cue can say more than an uncued first one ("Concept").
            if result[index][1] == "Concept" and kind != "Concept":
                result[index] = (result[index][0], kind)
            continue
        seen[key] = len(result)
        result.append((display, kind))
    return result


# Legal forms of a company: "Acme Corp", "Acme, Inc.", "Acme GmbH" and "Acme & Co" are the Acme of
# "works at Acme". Only legal forms: "Oxford University" or "Acme Labs" can be another thing than
# "Oxford" or "Acme", so words such as university, bank or labs stay part of the name.
_LEGAL_FORM_RE = re.compile(
    r"(?:\s*,)?\s+(?:&\s*)?(?:inc|incorporated|corp|corporation|co|ltd|limited|llc|l\.l\.c|llp|plc|gmbh|ag|sa"
    r"|s\.a)\.?$"
)


_EDGE_PUNCTUATION = " \t\"'\u201c\u201d\u2018\u2019()[]{}<>.,;:!?*"


def normalize_entity_name(name: str) -> str:
    """The key under which a space holds one entity: `Entity.normalized_name`.

    Folded (case, accents, whitespace) and stripped of what does not change the thing named: quotes
    and punctuation at the ends, a possessive ("Bob's"), a leading "the" ("The Guardian", as
    `extract_entities` already drops it) and trailing legal forms ("Acme Corp", "Acme, Inc."). What
    is left when stripping would leave nothing stays as it is ("The", "Inc"). First names and
    surnames are not merged ("Bob" and "Bob Smith" can be two people). Queries are folded without
    the cut (`fold`), so a name late in a long question is still found.
    """
    key = fold(name).strip(_EDGE_PUNCTUATION)
    key = _POSSESSIVE_RE.sub("", key).rstrip(_EDGE_PUNCTUATION) or key
    if key.startswith("the ") and len(key) > 4:
        key = key[4:].lstrip(_EDGE_PUNCTUATION)
    while (stripped := _LEGAL_FORM_RE.sub("", key)) != key and stripped.strip(_EDGE_PUNCTUATION):
        key = stripped.rstrip(_EDGE_PUNCTUATION)
    return " ".join(key.split())[:200]
