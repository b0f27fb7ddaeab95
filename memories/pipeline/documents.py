"""Documents as documents: a document's text into self-contained blocks, each with its span.

A block is one statement as a person reads it: a paragraph, a list item or a table row, with the
markup removed and, for items and rows, the context a reader carries in from the heading or the row's
header ("Allergies: peanuts", "Piranesi: rating 5/5"). `text[block.start:block.end]` is where in the
input the block came from, so a memory can point back into its Source. Spans are in order, never
overlap, and every block has at least one word character. Long paragraphs stay whole: splitting them
into sentences is the caller's job.

What each media type is assumed to look like (it is `Source.content`, as `parse.extract_text` made it):

- ``text/markdown``: CommonMark with GFM tables, parsed by markdown-it-py; optional front matter.
- ``text/html``: the Markdown that `parse._extract_html` writes from the page, so it is read the same
  way as Markdown.
- ``application/pdf``: the pypdf text of each page, pages joined by a blank line. pypdf puts a line
  break at the end of every printed line and rarely a blank line inside a page, so each blank-line
  separated chunk is taken as a page: its first and last lines are where headers, footers and page
  numbers sit, and inside it paragraphs are found from how lines end and begin. A paragraph that runs
  on to the next page becomes two blocks.
- anything else is plain text: paragraphs separated by blank lines, lines inside one reflowed.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode


@dataclass(frozen=True)
class Block:
    text: str  # the statement as a person reads it, markup removed
    start: int  # span in the input text: text_in[start:end] is where it came from
    end: int
    kind: str  # "paragraph" | "item" | "row"
    # A row's first cell and its column's header ("Piranesi", "Book"): what the row is about, and what
    # kind of thing that is. Empty for other blocks.
    subject: str = ""
    subject_header: str = ""


def document_blocks(text: str, media_type: str) -> list[Block]:
    """The blocks of a document's text, in document order; see the module docstring for the formats."""
    kind = media_type.split(";", 1)[0].strip().lower()
    if kind in ("text/markdown", "text/html"):
        blocks = _MarkdownReader(text).blocks()
    elif kind == "application/pdf":
        blocks = _pdf_blocks(text)
    else:
        blocks = _plain_blocks(text)
    return _in_order(blocks)


_WORD = re.compile(r"\w")
# Ends a sentence, allowing a closing quote or bracket after the mark.
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*$")
_LINE_END = re.compile(r"[.!?:][\"'\u201d\u2019)\]]*$")
_TASK_BOX = re.compile(r"\[[ xX]\]\s+")


def _in_order(blocks: list[Block]) -> list[Block]:
    # Every reader below yields spans in order; this is the guarantee, not a repair that is expected to run.
    kept: list[Block] = []
    for block in blocks:
        if not _WORD.search(block.text):
            continue
        if kept and block.start < kept[-1].end:
            block = Block(
                block.text, kept[-1].end, block.end, block.kind, block.subject, block.subject_header
            )
            if block.start >= block.end:
                continue
        kept.append(block)
    return kept


def _is_sentence(text: str) -> bool:
    return bool(_SENTENCE_END.search(text)) and len(text.split()) >= 4


def _with_context(context: str, text: str) -> str:
    """ "Allergies" + "peanuts" -> "Allergies: peanuts"; a full sentence stands on its own."""
    context = context.strip().rstrip(":").rstrip()
    if not context or _is_sentence(text):
        return text
    separator = " " if context[-1] in ".!?" else ": "
    return context + separator + text


def _squash(text: str) -> str:
    return " ".join(text.split())


# --- Markdown (and HTML, which parse.py turns into Markdown) ----------------------------------------

# One parser per thread: markdown-it builds its rule lists at a parser's first parse, and a second
# thread parsing meanwhile can see them half built (a wrong parse, or "none of the block rules
# matched"). The worker's pool processes parse on one thread today; a thread pool would not be safe
# with one shared parser.
_markdown_parsers = threading.local()


def _markdown() -> MarkdownIt:
    parser = getattr(_markdown_parsers, "parser", None)
    if parser is None:
        parser = _markdown_parsers.parser = MarkdownIt("commonmark").enable("table")
    return parser


_FRONT_MATTER_OPEN = re.compile(r"---[ \t]*")
_FRONT_MATTER_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*")
_LISTS = ("bullet_list", "ordered_list")


class _MarkdownReader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0] + [match.end() for match in re.finditer("\n", text)]
        self.heading = ""
        self.out: list[Block] = []

    def blocks(self) -> list[Block]:
        # markdown-it reads a lone \r as a line break; a space keeps its line numbers equal to ours.
        source = _blank_front_matter(self.text.replace("\r", " "))
        self.visit(SyntaxTreeNode(_markdown().parse(source)).children, list_context=None)
        return self.out

    def visit(self, nodes: Sequence[SyntaxTreeNode], *, list_context: str | None) -> None:
        """Blocks of a container; a list in it hangs its items on `list_context` (None: the heading)."""
        intro: str | None = None
        for index, node in enumerate(nodes):
            following = nodes[index + 1] if index + 1 < len(nodes) else None
            if node.type == "heading":
                self.heading = _inline_text(node.children[0]) if node.children else ""
            elif node.type == "paragraph":
                inline = node.children[0]
                if _only_links(inline):
                    continue
                text = _inline_text(inline)
                # "Things to pack:" followed by a list is the list's heading, not a statement.
                if text.endswith(":") and following is not None and following.type in _LISTS:
                    intro = text
                    continue
                self.add(text, node, "paragraph")
            elif node.type in _LISTS:
                if not _is_table_of_contents(node):
                    context = intro if intro is not None else list_context
                    self.visit_list(node, self.heading if context is None else context)
            elif node.type == "blockquote":
                self.visit(node.children, list_context=list_context)
            elif node.type == "table":
                self.visit_table(node)
            # Code, HTML blocks and rules carry no statements.
            if node.type != "paragraph":
                intro = None

    def visit_list(self, node: SyntaxTreeNode, context: str) -> None:
        for item in node.children:
            children = item.children
            child_context = context
            rest: Sequence[SyntaxTreeNode] = children
            if children and children[0].type == "paragraph":
                own, rest = children[0], children[1:]
                text = _TASK_BOX.sub("", _inline_text(own.children[0]), count=1)
                has_sublist = any(child.type in _LISTS for child in rest)
                if text.endswith(":") and has_sublist:
                    child_context = _with_context(context, text)
                elif _WORD.search(text):
                    full = _with_context(context, text)
                    self.add(full, item, "item", last=own)
                    child_context = full
            self.visit(rest, list_context=child_context)

    def visit_table(self, node: SyntaxTreeNode) -> None:
        header: list[str] = []
        for section in node.children:
            for row in section.children:
                cells = [_inline_text(cell.children[0]) if cell.children else "" for cell in row.children]
                if section.type == "thead":
                    header = cells
                else:
                    subject = (
                        (cells[0], header[0] if header else "") if cells and len(header) > 1 else ("", "")
                    )
                    self.add(_row_text(header, cells), row, "row", subject=subject)

    def add(
        self,
        text: str,
        node: SyntaxTreeNode,
        kind: str,
        *,
        last: SyntaxTreeNode | None = None,
        subject: tuple[str, str] = ("", ""),
    ) -> None:
        # `last`: the block ends where this node ends (an item's own text, not its nested list).
        first_map, last_map = node.map, (last or node).map
        if first_map is None or last_map is None or not _WORD.search(text):
            return
        start, end = self.line_span(first_map[0], last_map[1])
        if start < end:
            self.out.append(Block(text, start, end, kind, *subject))

    def line_span(self, first_line: int, end_line: int) -> tuple[int, int]:
        text, starts = self.text, self.line_starts
        start = starts[min(first_line, len(starts) - 1)]
        end = starts[end_line] - 1 if end_line < len(starts) else len(text)
        # A blockquote's ">" belongs to the container, not to the statement in it.
        while start < end and (text[start].isspace() or text[start] == ">"):
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        return start, end


def _blank_front_matter(text: str) -> str:
    lines = text.split("\n")
    if not lines or not _FRONT_MATTER_OPEN.fullmatch(lines[0]):
        return text
    for index in range(1, len(lines)):
        if _FRONT_MATTER_CLOSE.fullmatch(lines[index]):
            # Same length, same line breaks: markdown-it's line numbers still point into the original.
            blanked = [" " * len(line) for line in lines[: index + 1]]
            return "\n".join(blanked + lines[index + 1 :])
    return text


def _inline_text(node: SyntaxTreeNode) -> str:
    parts: list[str] = []

    def walk(parent: SyntaxTreeNode) -> None:
        for child in parent.children:
            if child.type in ("text", "code_inline"):
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append(" ")
            elif child.type == "image":
                parts.append(child.content)  # the alt text
            elif child.type != "html_inline":
                walk(child)

    walk(node)
    return _squash("".join(parts))


def _only_links(inline: SyntaxTreeNode) -> bool:
    """A paragraph of nothing but links or images (a link bar, a badge row) states nothing."""
    found = False

    def walk(parent: SyntaxTreeNode) -> bool:
        nonlocal found
        for child in parent.children:
            if child.type in ("link", "image"):
                found = True
            elif child.type in ("text", "code_inline"):
                if _WORD.search(child.content):
                    return False
            elif child.type not in ("softbreak", "hardbreak", "html_inline") and not walk(child):
                return False
        return True

    return walk(inline) and found


def _is_table_of_contents(node: SyntaxTreeNode) -> bool:
    linked = False
    for item in node.children:
        for index, child in enumerate(item.children):
            if child.type == "paragraph" and index == 0:
                if not _only_links(child.children[0]):
                    return False
                linked = True
            elif child.type not in _LISTS or not _is_table_of_contents(child):
                return False
    return linked


def _row_text(header: list[str], cells: list[str]) -> str:
    """ "Piranesi: rating 5/5; year 2020" from | Book | Rating | Year |."""
    if len(header) <= 1:
        return cells[0] if cells else ""
    first = cells[0] if cells else ""
    parts = []
    for label, cell in zip(header[1:], cells[1:], strict=False):
        if cell:
            parts.append(f"{_label(label)} {cell}" if label else cell)
    described = "; ".join(parts)
    if first and described:
        return f"{first}: {described}"
    return first or described


def _label(header: str) -> str:
    # Lower-cased to read as part of a sentence, except acronyms: "ISBN" stays "ISBN".
    words = header.rstrip(":").split()
    return " ".join(word if len(word) > 1 and word.isupper() else word.lower() for word in words)


# --- plain text and PDF -----------------------------------------------------------------------------

_ITEM = re.compile(r"[ \t]*(?:[-*\u2022]|\d{1,3}[.)])[ \t]+(?=\S)")
_TITLE_MAX_CHARS = 60
_PAGE_NUMBER = re.compile(
    r"(?i)(?:page\s+)?[-\u2013\u2014]?\s*\d{1,4}\s*[-\u2013\u2014]?(?:\s*(?:/|of)\s*\d{1,4})?"
)
# Same line on at least this share of pages: a running header or footer.
_BOILERPLATE_SHARE = 0.6
_EDGE_LINES = 2


@dataclass(frozen=True)
class _Line:
    start: int  # where the text starts, past the indentation
    end: int
    text: str  # text_in[start:end]
    indent: int  # columns of whitespace before it


def _chunks(text: str) -> list[list[_Line]]:
    """Non-blank lines, grouped at blank lines."""
    chunks: list[list[_Line]] = [[]]
    position = 0
    for raw in text.split("\n"):
        stripped = raw.strip()
        if stripped:
            indent = len(raw) - len(raw.lstrip())
            start = position + indent
            chunks[-1].append(_Line(start, start + len(stripped), stripped, indent))
        elif chunks[-1]:
            chunks.append([])
        position += len(raw) + 1
    return [chunk for chunk in chunks if chunk]


def _title_cased(line: str) -> bool:
    words = [w for w in re.findall(r"[^\W\d_]+", line) if len(w) > 3]
    return bool(words) and all(w[0].isupper() for w in words)


def _starts_list(following: list[list[_Line]]) -> bool:
    return bool(following) and bool(_ITEM.match(following[0][0].text))


def _is_title(line: str) -> bool:
    return len(line) < _TITLE_MAX_CHARS and not re.search(r"[.!?;,]$", line)


# Whether a line continues the run (paragraph or item) whose last line is `previous`.
_Continues = Callable[[_Line, _Line, bool], bool]


def _plain_blocks(text: str) -> list[Block]:
    paragraphs = _chunks(text)
    blocks: list[Block] = []
    title = ""
    for index, lines in enumerate(paragraphs):
        # A short line on its own, with more to come, is a title: context for lists, not a statement.
        # Only the first line of the file, a line in Title Case or one that introduces a list is one:
        # "Call mom tomorrow" alone between paragraphs is a statement, and must not be lost.
        heads = index == 0 or _title_cased(lines[0].text) or _starts_list(paragraphs[index + 1 : index + 2])
        if len(lines) == 1 and index + 1 < len(paragraphs) and _is_title(lines[0].text) and heads:
            title = lines[0].text
            continue
        found, title = _line_blocks(lines, title, _plain_continues)
        blocks.extend(found)
    return blocks


def _plain_continues(previous: _Line, line: _Line, in_item: bool) -> bool:
    # Inside a paragraph every line break is a wrap; an item goes on while indented or mid-sentence.
    return not in_item or line.indent > 0 or line.text[:1].islower()


def _pdf_blocks(text: str) -> list[Block]:
    pages = _chunks(text)
    repeated = _repeated_edges(pages)
    blocks: list[Block] = []
    title = ""
    for page in pages:
        lines = _strip_boilerplate(page, repeated)
        if not lines:
            continue
        short = min(_TITLE_MAX_CHARS, 0.7 * max(len(line.text) for line in lines))

        def continues(previous: _Line, line: _Line, in_item: bool, short: float = short) -> bool:
            if line.text[:1].islower():
                return True
            if _LINE_END.search(previous.text):
                return False
            if previous.text.endswith("-"):
                return True
            # A short line without a final mark before a capital: a heading, or a paragraph's last line.
            return not (len(previous.text) < short and line.text[:1].isupper())

        found, title = _line_blocks(lines, title, continues, join=_join_pdf, title_chars=short)
        blocks.extend(found)
    return blocks


def _repeated_edges(pages: list[list[_Line]]) -> set[str]:
    seen: Counter[str] = Counter()
    for lines in pages:
        edges = lines[:_EDGE_LINES] + lines[-_EDGE_LINES:]
        seen.update({_boilerplate_key(line.text) for line in edges})
    threshold = max(2, _BOILERPLATE_SHARE * len(pages))
    return {key for key, count in seen.items() if count >= threshold}


def _boilerplate_key(line: str) -> str:
    # "Page 3 of 10" and "Page 4 of 10" are the same footer.
    return re.sub(r"\d+", "#", _squash(line).lower())


def _strip_boilerplate(lines: list[_Line], repeated: set[str]) -> list[_Line]:
    def is_boilerplate(line: _Line) -> bool:
        return bool(_PAGE_NUMBER.fullmatch(line.text)) or _boilerplate_key(line.text) in repeated

    lines = list(lines)
    for _ in range(_EDGE_LINES):
        if lines and is_boilerplate(lines[0]):
            lines.pop(0)
        if lines and is_boilerplate(lines[-1]):
            lines.pop()
    return lines


def _join_plain(previous: str, line: str) -> str:
    return f"{previous} {line}"


def _join_pdf(previous: str, line: str) -> str:
    if len(previous) > 1 and previous.endswith("-") and previous[-2].isalpha():
        # "infor-" + "mation" is one word broken at the end of a printed line; "Franco-" + "German"
        # is a compound that keeps its hyphen.
        if line[:1].islower():
            return previous[:-1] + line
        if line[:1].isalnum():
            return previous + line
    return f"{previous} {line}"


def _line_blocks(
    lines: list[_Line],
    title: str,
    continues: _Continues,
    *,
    join: Callable[[str, str], str] = _join_plain,
    title_chars: float = 0,
) -> tuple[list[Block], str]:
    """Lines into paragraph and item blocks, and the title in force after them.

    A paragraph ending in ":" right before items is their context; otherwise the title is. With
    `title_chars`, a lone line shorter than that is a title too (PDF headings have no blank line after).
    """
    runs: list[tuple[str, list[_Line]]] = []
    for line in lines:
        if _ITEM.match(line.text):
            runs.append(("item", [line]))
        elif runs and continues(runs[-1][1][-1], line, runs[-1][0] == "item"):
            runs[-1][1].append(line)
        else:
            runs.append(("text", [line]))

    blocks: list[Block] = []
    intro: str | None = None
    for index, (kind, run) in enumerate(runs):
        parts = [line.text for line in run]
        if kind == "item":
            parts[0] = _ITEM.sub("", parts[0], count=1)
        text = parts[0]
        for part in parts[1:]:
            text = join(text, part)
        text = _squash(text)
        start, end = run[0].start, run[-1].end
        if kind == "item":
            context = intro if intro is not None else title
            blocks.append(Block(_with_context(context, text), start, end, "item"))
            continue
        intro = None
        more = index + 1 < len(runs)
        if text.endswith(":") and more and runs[index + 1][0] == "item":
            intro = text
        elif len(run) == 1 and more and len(text) < title_chars and _is_title(text):
            title = text
        else:
            blocks.append(Block(text, start, end, "paragraph"))
    return blocks, title
