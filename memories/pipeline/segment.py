"""Segmentation: text into memory-sized statements (conversation turns, paragraphs, chunks)."""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from memories.pipeline.language import (
    sentence_spans,
    split_speaker,
    word_set,
)
from memories.pipeline.lexicon import ENGLISH, Lexicon, detect, lexicon


def document_blocks(text: str) -> list[str]:
    """Paragraphs of a document; a heading or a very short line joins the block after it."""
    blocks: list[str] = []
    carry = ""
    for raw in text.split("\n\n"):
        block = raw.strip()
        if not block:
            continue
        one_short_line = "\n" not in block and len(block) < 40 and block[-1:] not in ".!?"
        is_heading = block.startswith("#") or one_short_line
        if is_heading:
            carry = f"{carry}\n{block}".strip()
            continue
        blocks.append(f"{carry}\n{block}".strip() if carry else block)
        carry = ""
    if carry:
        blocks.append(carry)
    return blocks


# Segment size bounds: big enough to carry context for retrieval, small enough to stay on one topic and
# within what a small embedding model reads well (all-MiniLM-L6-v2 truncates at 256 word pieces).
MAX_SEGMENT_CHARS = 800


MIN_SEGMENT_CHARS = 300


_HEADING_RE = re.compile(r"^[ \t]*#{1,6}[ \t]+(?P<title>\S.*?)[ \t#]*$")


_ITEM_RE = re.compile(r"^[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])[ \t]+(?P<body>\S.*)$")


_CONTENT_RE = re.compile(r"\w")


# A sentence that opens with one of these leans on the one before it ("It was hot.", "And long walks."):
# alone it would not say what it is about, so it stays with its predecessor.
_LEANING_WORDS = word_set(
    """
    he she they it its his her hers their theirs him them this that these those which who whom whose and
    but or nor so then also plus too though although however still yet besides both neither either
    """
)


# A sentence this short ("Nice!", "Thanks.", "Me too.") is a reaction to the one before it.
_MIN_STATEMENT_WORDS = 3


_WORD_RE = re.compile(r"[\w'\u2019]+")


@dataclass(frozen=True)
class Piece:
    """One segment: its text and where it came from, text_in[start:end].

    `text` is the span itself (its first letter made a capital where an opener was dropped), except
    for a conversation turn ("Speaker: " is kept on every chunk of a
    long turn) and a list item under an introducing line ("Shopping list: milk"), whose text carries
    the context it needs to be read alone.
    """

    text: str
    start: int
    end: int


def segment(text: str) -> list[str]:
    """The texts of `segment_spans(text)`."""
    return [piece.text for piece in segment_spans(text)]


def segment_spans(text: str) -> list[Piece]:
    """Split text into self-contained statements, with the span of `text` each one came from.

    A conversation ("Alice: ..." lines) gives one segment per turn, keeping the "Speaker: " prefix, with
    lines without a speaker joined to the turn before; a turn longer than 800 characters is chunked at
    sentence ends. Any other text is a note: paragraphs (blank lines) split into statements, one per
    sentence, except that a sentence leaning on the one before it (opening with a pronoun or a
    conjunction, or a two-word reaction) stays with it, unless an opener ("Also", "Btw", "Oh and")
    makes it a statement of its own; a sentence splits further at a semicolon, at a comma and joiner
    before a new subject, and between the facts of a compound ("I live in X and work at Y", the
    second keeping the subject in the sentence's own words: "I work at Y", "Ich arbeite bei Y"; a
    subject-less "Juego al tenis y pinto" gives "pinto ..."). A list item is a statement of its own, prefixed
    with the line that introduces it ("Shopping list:"); a heading is not a statement but the context of
    the items under it, and so is a note's title (a first short line without punctuation, followed by
    paragraphs). Spans never overlap and follow the text's order.
    """
    # Same-length replacements, so offsets still point into the caller's text.
    text = text.replace("\r\n", " \n").replace("\r", "\n")
    if not text.strip():
        return []
    lines = _lines(text)
    speakers = [split_speaker(line)[0] for line, _ in lines]
    turns = sum(1 for speaker in speakers if speaker)
    # One "Name:" line opening a document of paragraphs is more likely a title ("Chapter One: ...") than a
    # speaker; a real conversation has several turns, and a single turn rarely has blank lines.
    first = next((i for i, (line, _) in enumerate(lines) if line.strip()), 0)
    if turns >= 2 or (speakers[first] and not re.search(r"\n[ \t]*\n", text)):
        pieces = _segment_conversation(text, lines, speakers)
    else:
        pieces = [_without_opener(piece) for piece in _segment_note(text, 0, len(text))]
    return [piece for piece in pieces if _CONTENT_RE.search(piece.text)]


def _without_opener(piece: Piece) -> Piece:
    """ "Btw, my new number is ..." is stored as "My new number is ...": an opener only says that a
    statement begins, so the statement starts after it (the source keeps every word). An opener that
    says more ("Also", "Außerdem": in addition) stays, for the update engine reads it."""
    code = detect(piece.text)
    for lex in (lexicon(code), lexicon(ENGLISH)):
        match = lex.opener.match(piece.text)
        if match is None or lex.additive.search(match.group()):
            continue
        rest = piece.text[match.end() :]
        if len(_WORD_RE.findall(rest)) < _MIN_STATEMENT_WORDS:
            return piece
        # The piece's text is its span here (a labelled item or a carried subject opens otherwise).
        return Piece(rest[:1].upper() + rest[1:], min(piece.start + match.end(), piece.end), piece.end)
    return piece


def is_conversation(text: str) -> bool:
    """Whether `text` reads as a conversation ("Alice: ..." turns), as `segment_spans` decides."""
    lines = [line for line in text.replace("\r", "\n").split("\n") if line.strip()]
    speakers = [split_speaker(line)[0] for line in lines]
    turns = sum(1 for speaker in speakers if speaker)
    return turns >= 2 or (bool(speakers) and bool(speakers[0]) and not re.search(r"\n[ \t]*\n", text))


def statement_spans(text: str) -> list[Piece]:
    """One paragraph of running text (no line structure) as statements, spans into `text`."""
    return _join_leaning(text, _statements(text, 0, len(text)))


def locate(source: str, start: int, end: int, pieces: list[Piece]) -> list[Piece] | None:
    """`pieces` of a rendering of source[start:end] (markup removed, lines joined) placed back in the
    source, each from its first word to its last word and closing punctuation, in order. The words are
    aligned in order, skipping what the rendering dropped (a link's address) or joined ("infor-mation").
    None when a piece has no word in the source, so the caller keeps the rendering whole rather than
    point at the wrong words."""
    tokens = [(m.group(), m.start(), m.end()) for m in _WORD_RE.finditer(source, start, end)]
    placed: list[Piece] = []
    index = 0
    for piece in pieces:
        first = last = -1
        for word in _WORD_RE.findall(piece.text):
            # A short look ahead: what the rendering dropped is a few words, never a paragraph.
            match = next(
                (i for i in range(index, min(index + _ALIGN_WINDOW, len(tokens))) if tokens[i][0] == word), -1
            )
            if match < 0:
                continue
            first = match if first < 0 else first
            last = match
            index = match + 1
        if first < 0:
            return None
        stop = tokens[last][2]
        while stop < end and source[stop] in _CLOSING:
            stop += 1
        placed.append(Piece(piece.text, tokens[first][1], stop))
    return placed


# How far ahead in the source a rendered word is looked for.
_ALIGN_WINDOW = 12


# What ends a sentence after its last word: the stop, quotes, brackets, emphasis marks.
_CLOSING = frozenset(".!?\u2026\"'\u201d\u2019)]*_")


def _lines(text: str) -> list[tuple[str, int]]:
    """Each line with its start offset."""
    out: list[tuple[str, int]] = []
    offset = 0
    for line in text.split("\n"):
        out.append((line, offset))
        offset += len(line) + 1
    return out


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _segment_conversation(text: str, lines: list[tuple[str, int]], speakers: list[str]) -> list[Piece]:
    pieces: list[Piece] = []
    preamble_end = 0
    turn_start = turn_end = -1
    speaker = ""

    def close_turn() -> None:
        if speaker and turn_start >= 0:
            start, end = _trimmed(text, turn_start, turn_end)
            for chunk_start, chunk_end in _chunk_spans(text, start, end):
                pieces.append(Piece(f"{speaker}: {text[chunk_start:chunk_end]}", chunk_start, chunk_end))

    for (line, offset), line_speaker in zip(lines, speakers, strict=True):
        if line_speaker:
            close_turn()
            speaker = line_speaker
            body = split_speaker(line)[1]
            turn_start = offset + line.index(body) if body else offset + len(line)
            turn_end = offset + len(line)
        elif speaker:
            turn_end = offset + len(line)
        else:
            preamble_end = offset + len(line)
    close_turn()
    start, end = _trimmed(text, 0, preamble_end)
    if end <= start:
        return pieces
    head = text[start:end]
    preamble = [Piece(head, start, end)] if "\n" not in head.strip() else _segment_note(text, start, end)
    return preamble + pieces


# A title: the first paragraph of a longer note, one short line with no final punctuation ("Trip ideas").
_TITLE_MAX_WORDS = 8


def _is_title(block: str) -> bool:
    words = _WORD_RE.findall(block)
    return "\n" not in block and 0 < len(words) <= _TITLE_MAX_WORDS and block[-1:] not in ".!?;,)\"'"


def _segment_note(text: str, begin: int, finish: int) -> list[Piece]:
    pieces: list[Piece] = []
    context = ""
    paragraphs = _paragraphs(text, begin, finish)
    for index, (start, end) in enumerate(paragraphs):
        block = text[start:end]
        heading = _HEADING_RE.match(block)
        if heading and "\n" not in block:
            context = heading.group("title").strip()
            continue
        if index == 0 and len(paragraphs) > 1 and _is_title(block) and not _ITEM_RE.match(block):
            # A note's title names what follows; it is the context of its items, not a statement.
            context = block.strip()
            continue
        intro = context
        offset = start
        for line in block.split("\n"):
            line_start, line_end = _trimmed(text, offset, offset + len(line))
            offset += len(line) + 1
            if line_end <= line_start:
                continue
            stripped = text[line_start:line_end]
            if (match := _HEADING_RE.match(stripped)) is not None:
                intro = context = match.group("title").strip()
                continue
            if (item := _ITEM_RE.match(stripped)) is not None:
                body_start = line_start + item.start("body")
                body = text[body_start:line_end]
                label = intro.rstrip(":").strip()
                pieces.append(Piece(f"{label}: {body}" if label else body, body_start, line_end))
                continue
            if stripped.endswith(":") and len(stripped) <= 80:
                # "Shopping list:" introduces the items after it; said alone it states nothing.
                intro = stripped
                continue
            pieces.extend(_statements(text, line_start, line_end))
    return _join_leaning(text, pieces)


def _paragraphs(text: str, begin: int, finish: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for match in re.finditer(r"(?:[^\n]|\n(?![ \t]*\n))+", text[begin:finish]):
        start, end = _trimmed(text, begin + match.start(), begin + match.end())
        if end > start:
            spans.append((start, end))
    return spans


def _statements(text: str, start: int, end: int) -> list[Piece]:
    """The sentences of one line, long ones cut into chunks, each sentence split into its clauses."""
    pieces: list[Piece] = []
    for s_start, s_end in sentence_spans(text[start:end]):
        for c_start, c_end in _chunk_spans(text, start + s_start, start + s_end):
            pieces.extend(_clauses(text, c_start, c_end))
    return pieces


# "I moved to Porto; the commute is by train", "Priya left; my boss is Tom now": a semicolon between
# two clauses that each say something (a subject and a verb at least) ends a statement; so does
# "..., so my manager is Ben now" (`_boundaries`).
_MIN_CLAUSE_WORDS = 2
_SEMICOLON_RE = re.compile(r"\s*;\s+")
# "I live in Lisbon and work at Fieldnote": one subject, two facts. The second clause keeps the
# subject ("I work at Fieldnote") so that it is read, superseded and found on its own. The subject is
# one of the sentence's own language's words for the speaker (`Lexicon.subjects`), said in full
# ("Ich " never reads as "I" + "ch"), so a split never writes a word the person did not say.
_ELIDED = {"j'": "Je", "j\u2019": "Je"}


@functools.cache
def _compound_re(code: str) -> re.Pattern[str]:
    lex = lexicon(code)
    full = [
        re.escape(w) + r"\s+" for w in sorted(lex.subjects, key=len, reverse=True) if w[-1:] not in "'\u2019"
    ]
    elided = [re.escape(w[:-1]) + "['\u2019]" for w in lex.subjects if w[-1:] in "'\u2019"]
    subject = "|".join(elided + full) or r"(?!x)x"
    return re.compile(
        rf"^(?P<subject>{subject})?(?P<first>\S.*?),?\s+(?:and|und|et|y)\s+(?P<second>(?P<verb>[^\W\d_]+)\s+\S.*)$",
        re.IGNORECASE | re.DOTALL,
    )


def _clauses(text: str, start: int, end: int) -> list[Piece]:
    """One sentence as its statements: clauses after a semicolon, and the second fact of a compound
    ("... and work at Y") whose verb names a relation or a change in the sentence's language, or is
    a second verb of the speaker ("Juego al tenis y pinto los domingos", `_second_verb`)."""
    spans: list[tuple[int, int]] = []
    cursor = start
    lex = lexicon(detect(text[start:end]))
    for match in _boundaries(lex, text, start, end):
        if (
            len(_WORD_RE.findall(text[cursor : match.start()])) >= _MIN_CLAUSE_WORDS
            and len(_WORD_RE.findall(text[match.end() : end])) >= _MIN_CLAUSE_WORDS
        ):
            spans.append((cursor, match.start()))
            cursor = match.end()
    spans.append((cursor, end))
    pieces: list[Piece] = []
    for c_start, c_end in spans:
        pieces.extend(_compound(text, c_start, c_end))
    return pieces


def _boundaries(lex: Lexicon, text: str, start: int, end: int) -> list[re.Match[str]]:
    """Where one statement ends and the next begins inside a sentence: a semicolon, or a comma and a
    joiner before a new subject ("Olga got promoted, so my manager is Ben now")."""
    return list(_boundary_re(lex.code).finditer(text, start, end))


@functools.cache
def _boundary_re(code: str) -> re.Pattern[str]:
    lex = lexicon(code)
    subjects = "|".join(re.escape(w) for w in sorted(lex.self_words | lex.possessive, key=len, reverse=True))
    joiners = "|".join(re.escape(w) for w in sorted(lex.joiners, key=len, reverse=True))
    pattern = rf"\s*;\s+|,\s+(?:{joiners})\s+(?=(?:{subjects})\b)" if joiners else _SEMICOLON_RE.pattern
    if joiners and lex.copulas:
        # Without a comma, a joiner opens a statement only before a possessive, a noun or two and a
        # copula: "The building was sold and our landlord is now Ms. Ito"; not "my mom and my dad".
        possessive = "|".join(re.escape(w) for w in sorted(lex.possessive, key=len, reverse=True))
        copulas = "|".join(re.escape(w) for w in sorted(lex.copulas, key=len, reverse=True))
        pattern += (
            rf"|\s+(?:{joiners})\s+(?=(?:{possessive})\s+[^\W\d_]+(?:\s+[^\W\d_]+)?\s+"
            rf"(?:\w+\s+)?(?:{copulas})\b)"
        )
    return re.compile(pattern, re.IGNORECASE)


def _compound(text: str, start: int, end: int) -> list[Piece]:
    clause = text[start:end]
    lex = lexicon(detect(clause))
    match = _compound_re(lex.code).match(clause)
    if match is None:
        return [Piece(clause, start, end)]
    verb = match.group("verb").lower()
    names_fact = verb in lex.relations or bool(lex.change.fullmatch(verb))
    if not (names_fact or _second_verb(lex, match)) or len(_WORD_RE.findall(match.group("first"))) < 2:
        return [Piece(clause, start, end)]
    first_end = start + match.end("first")
    second_start = start + match.start("second")
    subject = (match.group("subject") or "").strip()
    subject = _ELIDED.get(subject.lower(), subject)
    second = clause[match.start("second") :]
    return [
        Piece(text[start:first_end], start, first_end),
        Piece(f"{subject} {second}" if subject else second, second_start, end),
    ]


def _second_verb(lex: Lexicon, match: re.Match[str]) -> bool:
    """Whether the word after the joiner is a second verb of the speaker, in a language whose verbs
    say who acts ("Juego al tenis y pinto los domingos", "Ich lese Krimis und spiele Schach"): it
    ends as a verb of the speaker does, and so does the first clause's verb; it is lowercase and no
    function word; and what follows it opens an object (an article, a preposition), unless the
    language writes its nouns with a capital, when a lowercase word is no noun. "Compro pan y queso
    fresco" and "Me gustan el té y el café" stay one statement."""
    if not lex.verb_endings:
        return False
    word = match.group("verb")
    lead = _WORD_RE.findall(match.group("first"))[0].lower()
    words = _WORD_RE.findall(match.group("second"))
    after = words[1].lower() if len(words) > 1 else ""
    function_word = word.lower() in lex.stop | lex.self_words | lex.possessive
    return (
        word.islower()
        and not function_word
        and _ends_as_verb(lex, word.lower())
        and _ends_as_verb(lex, lead)
        and (lex.nouns_capitalised or after in lex.stop)
    )


def _ends_as_verb(lex: Lexicon, word: str) -> bool:
    # A stem before the ending: "o" alone, or "yo", is no verb.
    return any(word.endswith(ending) and len(word) > len(ending) + 1 for ending in lex.verb_endings)


def _opens_statement(sentence: str) -> bool:
    """ "Btw ...", "Oh and ...", "Also, ...": a new statement, even after one it could lean on."""
    code = detect(sentence)
    return bool(
        lexicon(code).opener.match(sentence) or (code != ENGLISH and lexicon(ENGLISH).opener.match(sentence))
    )


def _leans(sentence: str) -> bool:
    words = _WORD_RE.findall(sentence)
    if len(words) < _MIN_STATEMENT_WORDS:
        return True
    if _opens_statement(sentence):
        return False
    return words[0].lower().replace("\u2019", "'").split("'")[0] in _LEANING_WORDS


def _join_leaning(text: str, pieces: list[Piece]) -> list[Piece]:
    """A statement that leans on its predecessor joins it, when both are plain spans of the text."""
    joined: list[Piece] = []
    for piece in pieces:
        previous = joined[-1] if joined else None
        plain = previous is not None and previous.text == text[previous.start : previous.end]
        fits = previous is not None and piece.end - previous.start <= MAX_SEGMENT_CHARS
        if (
            previous is not None
            and plain
            and fits
            and piece.text == text[piece.start : piece.end]
            and (_leans(piece.text))
        ):
            joined[-1] = Piece(text[previous.start : piece.end], previous.start, piece.end)
        else:
            joined.append(piece)
    return joined


def _chunk_spans(text: str, begin: int, finish: int) -> list[tuple[int, int]]:
    """text[begin:finish] split at sentence ends into chunks of at most 800 characters, sized evenly so
    that no chunk is tiny; spans of `text`, trimmed."""
    begin, finish = _trimmed(text, begin, finish)
    if finish - begin <= MAX_SEGMENT_CHARS:
        return [(begin, finish)] if finish > begin else []
    piece = text[begin:finish]
    pieces: list[tuple[int, int]] = []
    for start, end in sentence_spans(piece):
        if end - start <= MAX_SEGMENT_CHARS:
            pieces.append((start, end))
        else:
            pieces.extend(_word_windows(piece, start, end))
    target = len(piece) / math.ceil(len(piece) / MAX_SEGMENT_CHARS)
    spans: list[tuple[int, int]] = []
    for start, end in pieces:
        if spans and spans[-1][1] - spans[-1][0] < target and end - spans[-1][0] <= MAX_SEGMENT_CHARS:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    # A short tail joins the chunk before it when both fit in one.
    tail_is_short = len(spans) > 1 and spans[-1][1] - spans[-1][0] < MIN_SEGMENT_CHARS
    if tail_is_short and spans[-1][1] - spans[-2][0] <= MAX_SEGMENT_CHARS:
        spans[-2:] = [(spans[-2][0], spans[-1][1])]
    return [_trimmed(text, begin + start, begin + end) for start, end in spans]


def _word_windows(text: str, start: int, end: int) -> list[tuple[int, int]]:
    # A "sentence" longer than a chunk (a run-on transcript, a list without punctuation) is cut at the
    # last space that fits; a single word longer than a chunk is cut where it must be.
    windows: list[tuple[int, int]] = []
    while end - start > MAX_SEGMENT_CHARS:
        cut = text.rfind(" ", start + MIN_SEGMENT_CHARS, start + MAX_SEGMENT_CHARS)
        if cut <= start:
            cut = start + MAX_SEGMENT_CHARS
        windows.append((start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        windows.append((start, end))
    return windows
