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

import pypdf
from pypdf import PasswordType
from pypdf.errors import LimitReachedError

from memories.errors import AppError, Code
from memories.pipeline.html_markdown import html_to_markdown

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


def upload_check(*, filename: str, data: bytes, declared_media_type: str = "", max_bytes: int) -> str:
    """The cheap checks of an upload (size, emptiness, type from name and first bytes), done in the
    request so a wrong file is refused at once; return its media type, or raise an `AppError`.

    Nothing here reads the document's structure: that is `extract_detected`, which can be made
    arbitrarily expensive by a crafted file and so runs in the worker, in a child process.
    """
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
    # Only ASCII whitespace: bytes.strip() stops at the first other byte, so this costs nothing.
    if not data.strip():
        raise _empty()
    return media_type


def extract_detected(data: bytes, media_type: str) -> ExtractedDocument:
    """The readable text of a document whose type `upload_check` decided, or an `AppError` saying why not."""
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


def extract_text(
    *, filename: str, data: bytes, declared_media_type: str = "", max_bytes: int
) -> ExtractedDocument:
    """Return the readable text of an uploaded document, or raise an `AppError` saying why not.

    In this process: for trusted input and tests. Uploads go through `upload_check` in the request
    and `memories.pipeline.parse_sandbox` in the worker.
    """
    media_type = upload_check(
        filename=filename, data=data, declared_media_type=declared_media_type, max_bytes=max_bytes
    )
    return extract_detected(data, media_type)


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


def _extract_html(markup: str) -> tuple[str, str]:
    try:
        return html_to_markdown(markup)
    except MemoryError:
        raise  # a limit of the process reading it (parse_child), not bad markup
    except Exception:
        # The tokenizer asserts on some malformed declarations; that is bad input, not our failure.
        logger.info("could not parse an HTML upload", exc_info=True)
        raise _unreadable(
            "This HTML document could not be parsed.",
            "upload the document as plain text (.txt) or fix the HTML and upload it again",
        ) from None


# --- PDF --------------------------------------------------------------------------------------------


def _extract_pdf(data: bytes) -> tuple[str, str, int]:
    try:
        return _read_pdf(data)
    except (AppError, MemoryError):
        # MemoryError: a limit of the process reading it (parse_child), not a damaged file.
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
