"""HTML into Markdown that says what a reader of the page sees, for memories/pipeline/documents.py.

Read with the standard library's tokenizer: nothing is fetched, loaded or run. Errors from the
tokenizer on malformed input propagate; parse.py turns them into the user-facing error.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_HTML_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg"})
# Elements that may appear in <head>; anything else means the (optional) </head> has passed.
_HTML_HEAD_CONTENT = frozenset({"title", "meta", "link", "base", "style", "script", "noscript", "template"})
# Page furniture rather than content: menus, sidebars, forms. Dropped with everything in them.
_HTML_BOILERPLATE = frozenset({"nav", "aside", "form"})
# A page's banner and footer are furniture too, but inside these they are the article's own
# header (its title, its byline) and are kept.
_HTML_PAGE_FURNITURE = frozenset({"header", "footer"})
_HTML_SECTIONING = frozenset({"article", "section", "main"})
_HTML_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# A blank line around these, as a reader sees paragraphs (a single line break inside a list).
_HTML_PARAGRAPHS = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "blockquote",
        "figure",
        "figcaption",
        "address",
        "details",
        "summary",
        "dl",
        "hr",
    }
)
# Their own line; consecutive lines read as one Markdown paragraph ("Term definition").
_HTML_LINES = frozenset({"dt", "dd"})
# Tags that end an unclosed heading, so that a missing </h1> cannot turn the page into one heading.
_HTML_ENDS_HEADING = _HTML_PARAGRAPHS | frozenset({"ul", "ol", "li", "table", "pre", *_HTML_HEADINGS})
_WHITESPACE = re.compile(r"\s+")
# Markdown would read these as markup inside a line: a backslash before punctuation, a tag, an entity.
_MD_INLINE_SPECIAL = re.compile(r"\\(?=[!-/:-@\[-`{-~])|<(?=[A-Za-z/!?])|&(?=#?\w+;)")
# ...and these at the start of a line as structure: headings, quotes, lists, rules, fences, tables.
_MD_LINE_START = re.compile(r"[>|]|[#=+*_`~:-](?![^\W_])")
_MD_ORDERED_MARKER = re.compile(r"(\d{1,9})([.)])(?=\s|$)")


class _MarkdownCollector(HTMLParser):
    """Writes what a reader would see as Markdown; nothing is fetched, loaded or run.

    Headings become "#" lines, list items "- " (or "1. ") lines indented under their parent, tables
    pipe rows with a "|---|" line after the first row, <pre> a fenced code block. Text that Markdown
    would mistake for markup is escaped, so only the page's own structure becomes structure.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.title_parts: list[str] = []
        self._skipping = 0
        self._in_head = False
        self._in_title = False
        self._title_done = False
        self._dropping = ""  # the boilerplate element being dropped, "" when none
        self._dropping_depth = 0
        self._sectioning = 0
        self._prefix = ""  # the current line's structure: indentation, "- ", "## "
        self._words: list[str] = []  # the current line's text, not yet escaped
        self._lists: list[str] = []  # the marker of each open list, innermost last
        self._in_heading = False
        self._pre: list[str] | None = None
        self._pre_depth = 0
        self._table: list[list[list[str]]] | None = None  # rows of cells of text pieces
        self._table_depth = 0
        self._table_loose: list[str] = []  # a caption, or text stray between cells
        self._cell: list[str] | None = None

    def text(self) -> str:
        """The Markdown so far, with whatever the page left open closed."""
        if self._pre is not None:
            self._flush_pre()
        if self._table is not None:
            self._flush_table()
        self._break(0)
        return "\n".join(self.lines)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._in_title:
            # An unclosed <title> must not swallow the whole body.
            self._in_title, self._title_done = False, True
        if self._in_head and tag not in _HTML_HEAD_CONTENT:
            self._in_head = False
        if tag in _HTML_SKIPPED:
            self._skipping += 1
        elif tag == "head":
            self._in_head = True
        elif tag == "title" and not self._skipping and not self._title_done:
            self._in_title = True
        if self._skipping or self._in_head:
            return
        if self._dropping:
            if tag == self._dropping:
                self._dropping_depth += 1
            return
        navigation = any(
            name == "role" and (value or "").strip().lower() == "navigation" for name, value in attrs
        )
        if tag in _HTML_BOILERPLATE or navigation or (tag in _HTML_PAGE_FURNITURE and not self._sectioning):
            self._dropping, self._dropping_depth = tag, 1
            return
        if tag in _HTML_SECTIONING:
            self._sectioning += 1
        self._open(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # A self-closed <svg/> or <script/> opens nothing, so it must not start skipping.
        if self._skipping or self._in_head or self._dropping or tag in _HTML_SKIPPED:
            return
        self._open(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _HTML_SKIPPED:
            self._skipping = max(0, self._skipping - 1)
            return
        if tag == "head":
            self._in_head = False
            return
        if tag == "title" and self._in_title:
            self._in_title = False
            self._title_done = True
            return
        if self._skipping or self._in_head:
            return
        if self._dropping:
            if tag == self._dropping:
                self._dropping_depth -= 1
                if not self._dropping_depth:
                    self._dropping = ""
            return
        if tag in _HTML_SECTIONING:
            self._sectioning = max(0, self._sectioning - 1)
        self._close(tag)

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
            return
        if self._skipping or self._in_head or self._dropping:
            return
        if self._pre is not None:
            self._pre.append(data)
        elif self._cell is not None:
            self._cell.append(data)
        elif self._table is not None:
            self._table_loose.append(data)
        else:
            self._write(data)

    # --- structure ---

    def _open(self, tag: str) -> None:
        if self._table is not None:
            self._open_in_table(tag)
            return
        if self._pre is not None:
            if tag == "pre":
                self._pre_depth += 1
            elif tag == "br":
                self._pre.append("\n")
            return
        if self._in_heading:
            if tag == "br":
                self._write(" ")
                return
            if tag not in _HTML_ENDS_HEADING:
                return
            self._in_heading = False
        if tag in _HTML_HEADINGS:
            self._break(1)
            self._prefix = self._indent() + "#" * _HTML_HEADINGS[tag] + " "
            self._in_heading = True
        elif tag == "br":
            self._break(0)
        elif tag == "pre":
            self._break(1)
            self._pre, self._pre_depth = [], 1
        elif tag == "table":
            self._break(1)
            self._table, self._table_depth, self._table_loose, self._cell = [], 1, [], None
        elif tag in ("ul", "ol"):
            self._break(0 if self._lists else 1)
            self._lists.append("1. " if tag == "ol" else "- ")
        elif tag == "li":
            marker = self._lists[-1] if self._lists else "- "
            if self._prefix.strip() and not "".join(self._words).strip():
                # An item that opens with a list: "- - nested", as Markdown allows.
                self._prefix += marker
            else:
                self._break(0)
                self._prefix = self._indent(outer=True) + marker
        elif tag in _HTML_PARAGRAPHS:
            self._break(0 if self._lists else 1)
        elif tag in _HTML_LINES:
            self._break(0)

    def _close(self, tag: str) -> None:
        if self._table is not None:
            self._close_in_table(tag)
            return
        if self._pre is not None:
            if tag == "pre":
                self._pre_depth -= 1
                if not self._pre_depth:
                    self._flush_pre()
            return
        if tag in _HTML_HEADINGS:
            self._in_heading = False
            self._break(1)
        elif tag in ("ul", "ol"):
            if self._lists:
                self._lists.pop()
            # A blank line after a list, so that the next paragraph does not continue its last item.
            self._break(0 if self._lists else 1)
        elif tag == "li" or tag in _HTML_LINES:
            self._break(0)
        elif tag in _HTML_PARAGRAPHS:
            self._break(0 if self._lists else 1)

    def _open_in_table(self, tag: str) -> None:
        assert self._table is not None
        if tag == "table":
            self._table_depth += 1
        if self._table_depth == 1 and tag == "tr":
            self._table.append([])
            self._cell = None
        elif self._table_depth == 1 and tag in ("td", "th"):
            if not self._table:
                self._table.append([])
            self._cell = []
            self._table[-1].append(self._cell)
        elif self._cell is not None:
            # Anything else inside a cell (a <br>, a list, a nested table) only separates words.
            self._cell.append(" ")

    def _close_in_table(self, tag: str) -> None:
        if tag == "table":
            self._table_depth -= 1
            if not self._table_depth:
                self._flush_table()
                return
        if self._table_depth == 1 and tag in ("td", "th", "tr"):
            self._cell = None
        elif self._cell is not None:
            self._cell.append(" ")

    def _flush_table(self) -> None:
        assert self._table is not None
        rows = [[_squash(" ".join(cell)) for cell in row] for row in self._table]
        rows = [row for row in rows if any(row)]
        loose = _squash(" ".join(self._table_loose))
        self._table, self._table_depth, self._table_loose, self._cell = None, 0, [], None
        self._break(1)
        if loose:
            self._write(loose)
            self._break(1)
        if len(rows) == 1:
            # A single row has no header to read its cells by: it is a line of text.
            self._write(" ".join(cell for cell in rows[0] if cell))
        elif rows:
            indent = self._indent()
            width = max(len(row) for row in rows)
            for index, row in enumerate(rows):
                cells = [_escape_cell(cell) for cell in row] + [""] * (width - len(row))
                self.lines.append(indent + "| " + " | ".join(cells) + " |")
                if index == 0:
                    self.lines.append(indent + "|" + "---|" * width)
        self._break(1)

    def _flush_pre(self) -> None:
        assert self._pre is not None
        # HTML drops the line break right after <pre>; the rest, indentation included, is kept.
        content = "".join(self._pre).removeprefix("\n").rstrip()
        self._pre, self._pre_depth = None, 0
        if not content.strip():
            return
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", content)), default=0))
        indent = self._indent()
        self._break(1)
        self.lines.append(indent + fence)
        self.lines.extend(indent + line if line else "" for line in content.split("\n"))
        self.lines.append(indent + fence)
        self._break(1)

    # --- lines ---

    def _indent(self, *, outer: bool = False) -> str:
        lists = self._lists[:-1] if outer else self._lists
        return " " * sum(len(marker) for marker in lists)

    def _write(self, data: str) -> None:
        if not self._prefix and not self._words and self._lists:
            self._prefix = self._indent()  # a continuation line of a list item
        self._words.append(_WHITESPACE.sub(" ", data))

    def _end_line(self) -> None:
        text = _squash("".join(self._words))
        if text:
            self.lines.append(self._prefix + _escape_markdown(text))
        # A line with structure but no text (an empty item or heading) states nothing: dropped.
        self._prefix, self._words = "", []

    def _break(self, blank_lines: int) -> None:
        self._end_line()
        if blank_lines and self.lines and self.lines[-1]:
            self.lines.append("")


def _squash(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def _escape_markdown(text: str) -> str:
    text = _MD_INLINE_SPECIAL.sub(lambda match: "\\" + match.group(), text)
    if _MD_LINE_START.match(text):
        return "\\" + text
    return _MD_ORDERED_MARKER.sub(r"\1\\\2", text, count=1) if _MD_ORDERED_MARKER.match(text) else text


def _escape_cell(text: str) -> str:
    return _MD_INLINE_SPECIAL.sub(lambda match: "\\" + match.group(), text).replace("|", "\\|")


def html_to_markdown(markup: str) -> tuple[str, str]:
    """The page as Markdown, and its <title>."""
    collector = _MarkdownCollector()
    collector.feed(markup)
    collector.close()
    return collector.text(), "".join(collector.title_parts)
