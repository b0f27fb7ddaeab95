"""Turning an uploaded document into text, safely.

Plain text and Markdown are kept as they are, PDFs become the text of their pages joined by blank lines,
and HTML is written out as Markdown (headings, lists, tables, code), so that one Markdown reader
(memories/pipeline/documents.py) finds the structure of both.

Everything here works on bytes already in memory and never touches the network or the file system:
HTML is read with the standard library's tokenizer (nothing is fetched or executed) and PDFs with
pypdf. Every problem with the input becomes an `AppError` whose message says what the user can do;
library details go to the log only, because they can contain paths and internals.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass
from html.parser import HTMLParser

import pypdf
from pypdf import PasswordType
from pypdf.errors import LimitReachedError

from memories.errors import AppError, Code

logger = logging.getLogger(__name__)

# Stable codes. They belong with the others in memories/errors.py; kept here until they move.

SUPPORTED_EXTENSIONS: dict[str, str] = {
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".pdf": "application/pdf",
    ".html": "text/html",
    ".htm": "text/html",
}

# Upload clients send all sorts of names for the same thing; only these are understood.
_DECLARED_ALIASES: dict[str, str] = {
    "text/plain": "text/plain",
    "text/markdown": "text/markdown",
    "text/x-markdown": "text/markdown",
    "application/pdf": "application/pdf",
    "text/html": "text/html",
}

# A compressed PDF of a few megabytes can expand to gigabytes of text; these stop the work early.
MAX_PDF_PAGES = 2_000
MAX_PDF_CHARS = 2_000_000
# Titles come from metadata anyone can write; a sane cap keeps them usable as labels.
MAX_TITLE_CHARS = 300
# Enough to tell text from binary without scanning a whole upload.
_SNIFF_BYTES = 8 * 1024

_PDF_MAGIC = b"%PDF-"
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_SUPPORTED_LIST = ", ".join(sorted(SUPPORTED_EXTENSIONS))
_SAFE_EXTENSION = re.compile(r"\.[a-z0-9]{1,10}")
# C0 controls and DEL minus \t \n \r: a text file containing them is almost certainly not text.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# What is left after line endings are unified: dropped rather than rejected.
_STRAY_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_LINE_BREAKS = str.maketrans({"\x0b": "\n", "\x0c": "\n", "\x85": "\n", "\u2028": "\n", "\u2029": "\n"})
_FENCE = re.compile(r" {0,3}(```|~~~)")
_ATX_H1 = re.compile(r" {0,3}# +(.*?)(?: +#+)? *")


@dataclass(frozen=True)
class ExtractedDocument:
    text: str  # normalised: \n newlines, no NULs, at most two blank lines in a row, trimmed
    media_type: str  # one of the values of SUPPORTED_EXTENSIONS
    title: str  # best effort, "" when the document has none
    pages: int  # PDF pages, else 1


def detect_media_type(filename: str, data: bytes, declared: str = "") -> str:
    """Decide what an upload is from its name and its first bytes.

    The extension decides; the content must agree with it. The declared type (an upload's
    Content-Type) is only used when the name has no extension at all, and even then the content
    is checked the same way: clients get it wrong, and it must never turn binary into "text".
    """
    extension = _extension(filename)
    if extension:
        media_type = SUPPORTED_EXTENSIONS.get(extension)
        if media_type is None:
            raise _unsupported(extension)
    else:
        media_type = _DECLARED_ALIASES.get(declared.split(";", 1)[0].strip().lower())
        if media_type is None:
            raise _unsupported("")

    looks_like_pdf = data.startswith(_PDF_MAGIC)
    if media_type == "application/pdf":
        if not looks_like_pdf:
            raise AppError(
                Code.UNSUPPORTED_MEDIA_TYPE,
                "This file is named as a PDF but its content is not a PDF.",
                agent_action="upload the real PDF, or give the file the extension that matches its content",
            )
        return media_type
    if looks_like_pdf:
        raise AppError(
            Code.UNSUPPORTED_MEDIA_TYPE,
            "This file contains a PDF but is not named as one.",
            agent_action="rename the file to end in .pdf and upload it again",
        )
    # UTF-16 text is full of NUL bytes by design; its byte order mark is what marks it as text.
    if not data.startswith(_UTF16_BOMS) and b"\x00" in data[:_SNIFF_BYTES]:
        raise AppError(
            Code.UNSUPPORTED_MEDIA_TYPE,
            "This file looks like binary data, not text.",
            agent_action=f"upload a text document ({_SUPPORTED_LIST})",
        )
    return media_type


def extract_text(
    *, filename: str, data: bytes, declared_media_type: str = "", max_bytes: int
) -> ExtractedDocument:
    """Return the readable text of an uploaded document, or raise an `AppError` saying why not."""
    if len(data) > max_bytes:
        limit = _human_size(max_bytes)
        raise AppError(
            Code.DOCUMENT_TOO_LARGE,
            f"This document is larger than the {limit} limit.",
            agent_action=f"split the document into parts of at most {limit} and upload them separately",
            details={"max_bytes": max_bytes},
        )
    if not data:
        raise _empty()

    media_type = detect_media_type(filename, data, declared_media_type)
    if media_type == "application/pdf":
        text, title, pages = _extract_pdf(data)
    else:
        decoded = _decode_text(data)
        pages = 1
        if media_type == "text/html":
            text, title = _extract_html(decoded)
        elif media_type == "text/markdown":
            text, title = decoded, _markdown_title(decoded)
        else:
            text, title = decoded, ""

    text = _normalise(text)
    if not text:
        if media_type == "application/pdf":
            raise _no_pdf_text()
        raise _empty()
    return ExtractedDocument(text=text, media_type=media_type, title=_clean_title(title), pages=pages)


# --- detection and errors -------------------------------------------------------------------------


def _extension(filename: str) -> str:
    # Browsers on Windows have been known to send the whole client path; only the last part matters.
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip().lower()
    stem, dot, suffix = name.rpartition(".")
    # ".md" alone is a hidden file with no extension, as the OS sees it too.
    if not dot or not stem:
        return ""
    return "." + suffix


def _unsupported(extension: str) -> AppError:
    # The extension is user input: only echo it back when it is short and plain.
    shown = f" ({extension})" if _SAFE_EXTENSION.fullmatch(extension) else ""
    return AppError(
        Code.UNSUPPORTED_MEDIA_TYPE,
        f"This type of file{shown} is not supported. Supported: {_SUPPORTED_LIST}.",
        agent_action=f"convert the document to one of {_SUPPORTED_LIST} and upload it again",
        details={"supported_extensions": sorted(SUPPORTED_EXTENSIONS)},
    )


def _empty() -> AppError:
    return AppError(
        Code.DOCUMENT_EMPTY,
        "This document contains no text.",
        agent_action="upload a document that contains text",
    )


def _unreadable(message: str, agent_action: str) -> AppError:
    return AppError(Code.DOCUMENT_UNREADABLE, message, agent_action=agent_action)


def _no_pdf_text() -> AppError:
    return _unreadable(
        "This PDF contains no extractable text; it is probably scanned images, and OCR is not supported.",
        "run OCR on the PDF first, or upload its text as a .txt file",
    )


def _human_size(size: int) -> str:
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


# --- plain text -------------------------------------------------------------------------------------


def _decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    # cp1252 maps almost every byte to something, so a guess only counts when the result reads as text.
    encoding = "utf-16" if data.startswith(_UTF16_BOMS) else "cp1252"
    text: str | None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        text = None
    if text is not None and not _CONTROL_CHARS.search(text):
        return text
    raise _unreadable(
        "This document's text encoding could not be recognised.",
        "save the document as UTF-8 text and upload it again",
    )


def _normalise(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n").translate(_LINE_BREAKS)
    text = _STRAY_CONTROL_CHARS.sub("", text)
    # Lone surrogates (from odd PDF fonts) cannot be stored as UTF-8.
    text = text.encode("utf-8", "replace").decode("utf-8").removeprefix("\ufeff")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    # Two blank lines can be meaningful (PEP 8 code in Markdown); more are only noise.
    text = re.sub(r"\n{4,}", "\n\n\n", text)
    return text.strip()


def _clean_title(title: str) -> str:
    return " ".join(_normalise(title).split())[:MAX_TITLE_CHARS].strip()


def _markdown_title(text: str) -> str:
    in_fence = False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (match := _ATX_H1.fullmatch(line)) and match.group(1).strip():
            return match.group(1)
    return ""


# --- HTML -------------------------------------------------------------------------------------------

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


def _extract_html(markup: str) -> tuple[str, str]:
    collector = _MarkdownCollector()
    try:
        collector.feed(markup)
        collector.close()
    except Exception:
        # The tokenizer asserts on some malformed declarations; that is bad input, not our failure.
        logger.info("could not parse an HTML upload", exc_info=True)
        raise _unreadable(
            "This HTML document could not be parsed.",
            "upload the document as plain text (.txt) or fix the HTML and upload it again",
        ) from None
    return collector.text(), "".join(collector.title_parts)


# --- PDF --------------------------------------------------------------------------------------------


def _extract_pdf(data: bytes) -> tuple[str, str, int]:
    try:
        return _read_pdf(data)
    except AppError:
        raise
    except LimitReachedError:
        # pypdf's own guard against decompression bombs tripped inside a single stream.
        logger.info("PDF upload hit a pypdf limit", exc_info=True)
        raise _pdf_too_large() from None
    except Exception:
        # pypdf raises many types on malformed input (its own, ValueError, KeyError, zlib errors...).
        logger.info("could not read a PDF upload", exc_info=True)
        raise _unreadable(
            "This PDF could not be read; it may be damaged or incomplete.",
            "re-save or re-export the PDF and upload it again, or upload its text as a .txt file",
        ) from None


def _read_pdf(data: bytes) -> tuple[str, str, int]:
    reader = pypdf.PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        try:
            # Many PDFs are "encrypted" only to restrict printing or copying, with an empty password.
            opened = reader.decrypt("") != PasswordType.NOT_DECRYPTED
        except Exception:
            logger.info("could not decrypt a PDF upload", exc_info=True)
            opened = False
        if not opened:
            raise _unreadable(
                "This is a password-protected PDF, which cannot be read.",
                "remove the password (save an unprotected copy) and upload it again",
            )

    pages = len(reader.pages)
    if pages > MAX_PDF_PAGES:
        raise _pdf_too_large()

    texts: list[str] = []
    total = 0
    for page in reader.pages:
        page_text = page.extract_text()
        if not page_text.strip():
            continue
        total += len(page_text)
        if total > MAX_PDF_CHARS:
            raise _pdf_too_large()
        texts.append(page_text)

    title = ""
    try:
        metadata = reader.metadata
        if metadata is not None and metadata.title:
            title = str(metadata.title)
    except Exception:
        # A broken Info dictionary should not cost the user a document whose text is fine.
        logger.info("could not read the metadata of a PDF upload", exc_info=True)
    return "\n\n".join(texts), title, pages


def _pdf_too_large() -> AppError:
    return AppError(
        Code.DOCUMENT_TOO_LARGE,
        f"This PDF is too large to process: the limits are {MAX_PDF_PAGES:,} pages "
        f"and {MAX_PDF_CHARS:,} characters of text.",
        agent_action="split the PDF into smaller parts and upload them separately",
        details={"max_pages": MAX_PDF_PAGES, "max_chars": MAX_PDF_CHARS},
    )
