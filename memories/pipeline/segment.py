"""Segmentation: text into memory-sized statements (conversation turns, paragraphs, chunks)."""

from __future__ import annotations

import math
import re

from memories.pipeline.language import (
    sentence_spans,
    split_speaker,
)


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


# A note up to this long is one thought; splitting it would only scatter its context.
SHORT_NOTE_CHARS = 400


# Segment size bounds: big enough to carry context for retrieval, small enough to stay on one topic and
# within what a small embedding model reads well (all-MiniLM-L6-v2 truncates at 256 word pieces).
MAX_SEGMENT_CHARS = 800


MIN_SEGMENT_CHARS = 300


_HEADING_RE = re.compile(r"^[ \t]*#{1,6}[ \t]+\S")


_BLANK_RE = re.compile(r"^[ \t]*$")


_CONTENT_RE = re.compile(r"\w")


def segment(text: str) -> list[str]:
    """Split text into memory-sized segments.

    A conversation ("Alice: ..." lines) gives one segment per turn, keeping the "Speaker: " prefix, with
    lines without a speaker joined to the turn before. Otherwise a note of up to 400 characters stays
    whole, and longer text splits at blank lines and Markdown headings, then at sentence ends into chunks
    of roughly 300-800 characters. Segments are trimmed and never empty.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not text:
        return []
    lines = text.split("\n")
    speakers = [split_speaker(line)[0] for line in lines]
    turns = sum(1 for speaker in speakers if speaker)
    # One "Name:" line opening a document of paragraphs is more likely a title ("Chapter One: ...") than a
    # speaker; a real conversation has several turns, and a single turn rarely has blank lines.
    if turns >= 2 or (speakers[0] and not re.search(r"\n[ \t]*\n", text)):
        pieces = _segment_conversation(lines, speakers)
    elif len(text) <= SHORT_NOTE_CHARS:
        pieces = [text]
    else:
        pieces = _segment_prose(text)
    return [piece for piece in pieces if _CONTENT_RE.search(piece)]


def _segment_conversation(lines: list[str], speakers: list[str]) -> list[str]:
    pieces: list[str] = []
    preamble: list[str] = []
    turn: list[str] = []
    speaker = ""

    def close_turn() -> None:
        body = "\n".join(turn).strip()
        if speaker and body:
            pieces.extend(f"{speaker}: {chunk}" for chunk in _chunk(body))

    for line, line_speaker in zip(lines, speakers, strict=True):
        if line_speaker:
            close_turn()
            speaker = line_speaker
            turn = [split_speaker(line)[1]]
        elif speaker:
            turn.append(line)
        else:
            preamble.append(line)
    close_turn()
    head = "\n".join(preamble).strip()
    if not head:
        return pieces
    return ([head] if len(head) <= SHORT_NOTE_CHARS else _segment_prose(head)) + pieces


def _segment_prose(text: str) -> list[str]:
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in text.split("\n"):
        if _HEADING_RE.match(line):
            if current:
                blocks.append(current)
            current = [line]
        elif _BLANK_RE.match(line):
            # A heading keeps the paragraph under it, even across the blank line that follows it.
            if current and not (len(current) == 1 and _HEADING_RE.match(current[0])):
                blocks.append(current)
                current = []
        else:
            current.append(line)
    if current:
        blocks.append(current)
    pieces: list[str] = []
    for block in blocks:
        pieces.extend(_chunk("\n".join(block).strip()))
    return pieces


def _chunk(text: str) -> list[str]:
    """Split at sentence ends into chunks of at most 800 characters, sized evenly so that no chunk is tiny."""
    if len(text) <= MAX_SEGMENT_CHARS:
        return [text]
    pieces: list[tuple[int, int]] = []
    for start, end in sentence_spans(text):
        if end - start <= MAX_SEGMENT_CHARS:
            pieces.append((start, end))
        else:
            pieces.extend(_word_windows(text, start, end))
    target = len(text) / math.ceil(len(text) / MAX_SEGMENT_CHARS)
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
    return [text[start:end].strip() for start, end in spans]


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
