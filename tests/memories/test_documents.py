"""Uploaded documents into text: detection, limits, decoding, HTML, Markdown and real PDFs built here."""

from __future__ import annotations

import codecs
import io
import logging
import sys
import zlib

import pypdf
import pytest

from memories.errors import AppError
from memories.pipeline import parse as documents
from memories.pipeline.parse import ExtractedDocument, detect_media_type, extract_text

MB = 1024 * 1024
LIMIT = 10 * MB


def extract(filename: str, data: bytes, **kwargs) -> ExtractedDocument:
    kwargs.setdefault("max_bytes", LIMIT)
    return extract_text(filename=filename, data=data, **kwargs)


def failure(filename: str, data: bytes, **kwargs) -> AppError:
    with pytest.raises(AppError) as caught:
        extract(filename, data, **kwargs)
    return caught.value


def _pdf_string(text: str) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + escaped.encode("latin-1") + b")"


def build_pdf(pages: list[str | None], *, title: str = "") -> bytes:
    """A minimal valid PDF: one page per entry, each line of text drawn in Helvetica; None is a blank page.

    Written by hand, with the xref offsets computed here, so no PDF-writing package is needed.
    """
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    kids: list[int] = []
    next_id = 4
    for text in pages:
        page_id, next_id = next_id, next_id + 1
        page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
        if text is not None:
            content_id, next_id = next_id, next_id + 1
            lines = b" T* ".join(_pdf_string(line) + b" Tj" for line in text.split("\n"))
            stream = b"BT /F1 12 Tf 14 TL 72 720 Td " + lines + b" ET"
            objects[content_id] = b"<< /Length %d >>\nstream\n%b\nendstream" % (len(stream), stream)
            page += b" /Contents %d 0 R" % content_id
        objects[page_id] = page + b" >>"
        kids.append(page_id)
    refs = b" ".join(b"%d 0 R" % kid for kid in kids)
    objects[2] = b"<< /Type /Pages /Kids [%b] /Count %d >>" % (refs, len(kids))
    info = b""
    if title:
        objects[next_id] = b"<< /Title %b >>" % _pdf_string(title)
        info = b" /Info %d 0 R" % next_id
        next_id += 1

    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for number in range(1, next_id):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%b\nendobj\n" % (number, objects[number])
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % next_id
    for number in range(1, next_id):
        out += b"%010d 00000 n \n" % offsets[number]
    out += b"trailer\n<< /Size %d /Root 1 0 R%b >>\nstartxref\n%d\n%%%%EOF\n" % (next_id, info, xref_at)
    return bytes(out)


def build_pdf_bomb(*, pages: int, repeats: int) -> bytes:
    """A few kilobytes of PDF that take seconds of CPU per page to read: one zlib-compressed content
    stream of `repeats` path operators (and one word of text, so a reader cannot skip it), shared
    by every page. The shape of the finding that moved text extraction out of the web process."""
    operators = b"0 0 m 1 1 l S\n" * repeats + b"BT /F1 12 Tf 72 720 Td (x) Tj ET\n"
    stream = zlib.compress(operators, 9)
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        4: b"<< /Length %d /Filter /FlateDecode >>\nstream\n%b\nendstream" % (len(stream), stream),
    }
    kids = list(range(5, 5 + pages))
    for kid in kids:
        objects[kid] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
            b" /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
        )
    refs = b" ".join(b"%d 0 R" % kid for kid in kids)
    objects[2] = b"<< /Type /Pages /Kids [%b] /Count %d >>" % (refs, pages)
    out = bytearray(b"%PDF-1.4\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%b\nendobj\n" % (number, objects[number])
    xref_at, size = len(out), len(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in sorted(objects):
        out += b"%010d 00000 n \n" % offsets[number]
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref_at)
    return bytes(out)


def encrypt_pdf(data: bytes, *, user_password: str, owner_password: str | None = None) -> bytes:
    writer = pypdf.PdfWriter()
    writer.append(pypdf.PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password, owner_password)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


class TestPdfBuilder:
    def test_it_builds_pdfs_pypdf_reads(self):
        reader = pypdf.PdfReader(io.BytesIO(build_pdf(["Hello", "Two\nlines", None], title="T")), strict=True)
        assert [page.extract_text() for page in reader.pages] == ["Hello", "Two\nlines", ""]
        assert reader.metadata is not None and reader.metadata.title == "T"


class TestDetectMediaType:
    @pytest.mark.parametrize(
        ("filename", "expected"),
        [
            ("notes.txt", "text/plain"),
            ("README.MD", "text/markdown"),
            ("guide.markdown", "text/markdown"),
            ("page.HTM", "text/html"),
            ("page.html", "text/html"),
            ("C:\\Users\\alice\\notes.Txt", "text/plain"),
        ],
    )
    def test_it_detects_text_types_by_extension_in_any_case(self, filename, expected):
        assert detect_media_type(filename, b"hello") == expected

    def test_it_detects_a_pdf_by_extension_and_content(self):
        assert detect_media_type("Report.PDF", build_pdf(["x"])) == "application/pdf"

    def test_it_rejects_unknown_extensions_naming_the_supported_ones(self):
        with pytest.raises(AppError) as caught:
            detect_media_type("slides.pptx", b"hello")
        error = caught.value
        assert error.code == "unsupported_media_type" and error.http_status == 415
        assert "(.pptx)" in error.message
        for extension in (".txt", ".md", ".markdown", ".pdf", ".html", ".htm"):
            assert extension in error.message

    def test_it_does_not_echo_odd_extensions(self):
        with pytest.raises(AppError) as caught:
            detect_media_type("x.<script>alert(1)</script>", b"hello")
        assert "<script>" not in caught.value.message

    def test_it_rejects_a_pdf_extension_without_pdf_content(self):
        with pytest.raises(AppError) as caught:
            detect_media_type("report.pdf", b"just some text")
        assert caught.value.code == "unsupported_media_type"

    @pytest.mark.parametrize("filename", ["report.txt", "report.md", "report.html"])
    def test_it_rejects_a_pdf_under_another_name(self, filename):
        with pytest.raises(AppError) as caught:
            detect_media_type(filename, build_pdf(["x"]))
        assert caught.value.code == "unsupported_media_type"
        assert ".pdf" in caught.value.agent_action

    @pytest.mark.parametrize("filename", ["image.txt", "image.md", "image.html"])
    def test_it_rejects_nul_bytes_in_text_files(self, filename):
        with pytest.raises(AppError) as caught:
            detect_media_type(filename, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
        assert caught.value.code == "unsupported_media_type"

    def test_it_only_sniffs_the_first_8kb_for_nul_bytes(self):
        assert detect_media_type("log.txt", b"a" * 8192 + b"\x00") == "text/plain"

    def test_it_never_trusts_the_declared_type_over_the_name_and_content(self):
        assert detect_media_type("notes.txt", b"hello", "application/pdf") == "text/plain"
        with pytest.raises(AppError):
            detect_media_type("notes.txt", build_pdf(["x"]), "application/pdf")
        with pytest.raises(AppError):
            detect_media_type("notes.txt", b"\x00\x01binary", "text/plain")

    def test_it_uses_the_declared_type_only_when_the_name_has_no_extension(self):
        assert detect_media_type("README", b"# Hi", "text/markdown; charset=utf-8") == "text/markdown"
        assert detect_media_type("upload", build_pdf(["x"]), "application/pdf") == "application/pdf"
        with pytest.raises(AppError):
            detect_media_type("upload", b"hello", "application/octet-stream")
        with pytest.raises(AppError):
            detect_media_type("upload", b"hello")

    def test_it_accepts_utf16_text_despite_its_nul_bytes(self):
        assert detect_media_type("notes.txt", "hi".encode("utf-16")) == "text/plain"


class TestLimits:
    def test_it_rejects_a_document_over_the_size_limit(self):
        error = failure("big.txt", b"a" * (LIMIT + 1))
        assert error.code == "document_too_large" and error.http_status == 413
        assert "10 MB" in error.message
        assert error.details == {"max_bytes": LIMIT}

    def test_it_checks_the_size_before_looking_at_the_content(self):
        assert failure("big.exe", b"\x00" * 2048, max_bytes=1024).code == "document_too_large"

    def test_it_accepts_a_document_exactly_at_the_limit(self):
        assert extract("fits.txt", b"a" * 1024, max_bytes=1024).text == "a" * 1024

    def test_it_rejects_an_empty_file(self):
        error = failure("empty.pdf", b"")
        assert error.code == "document_empty" and error.http_status == 422

    @pytest.mark.parametrize(
        ("filename", "data"),
        [
            ("blank.txt", b" \r\n\t\n  "),
            ("blank.md", b"\xef\xbb\xbf\n\n"),
            ("blank.html", b"<html><head><title>T</title></head><body><script>x()</script></body></html>"),
            ("blank.txt", codecs.BOM_UTF16_LE),
        ],
    )
    def test_it_rejects_a_document_with_nothing_left_after_extraction(self, filename, data):
        assert failure(filename, data).code == "document_empty"


class TestPlainText:
    def test_it_extracts_utf8_text(self):
        document = extract("notes.txt", "Grüße, Zoë ☕\n".encode())
        assert document == ExtractedDocument(text="Grüße, Zoë ☕", media_type="text/plain", title="", pages=1)

    def test_it_strips_a_utf8_bom(self):
        assert extract("notes.txt", b"\xef\xbb\xbfhello").text == "hello"

    @pytest.mark.parametrize(
        "data",
        [
            "Grüße ☕\r\nzwei".encode("utf-16"),
            codecs.BOM_UTF16_LE + "Grüße ☕\r\nzwei".encode("utf-16-le"),
            codecs.BOM_UTF16_BE + "Grüße ☕\r\nzwei".encode("utf-16-be"),
        ],
    )
    def test_it_decodes_utf16_with_a_bom(self, data):
        assert extract("notes.txt", data).text == "Grüße ☕\nzwei"

    def test_it_rejects_utf16_that_does_not_decode(self):
        assert failure("notes.txt", codecs.BOM_UTF16_LE + b"a\x00b").code == "document_unreadable"

    def test_it_falls_back_to_cp1252(self):
        text = "Café \u2013 \u201cnaïve\u201d 5€"  # en dash, curly quotes, euro: all differ from Latin-1
        assert extract("notes.txt", text.encode("cp1252")).text == text

    @pytest.mark.parametrize("data", [b"caf\xe9\x01\x02", b"caf\xe9 \x81 undefined in cp1252"])
    def test_it_rejects_text_in_no_recognisable_encoding(self, data):
        error = failure("notes.txt", data)
        assert error.code == "document_unreadable" and error.http_status == 422
        assert "UTF-8" in error.agent_action

    def test_it_normalises_newlines_and_blank_lines_and_trims(self):
        data = b"\n\n  first  \r\nsecond\rthird\n\n\n\n\n\nfourth\x0cfifth\n\n\n\nsixth\t \n\n"
        assert extract("notes.txt", data).text == "first\nsecond\nthird\n\n\nfourth\nfifth\n\n\nsixth"

    def test_it_drops_nul_bytes_after_the_sniffed_prefix(self):
        document = extract("log.txt", b"a" * 8192 + b"\x00b\x07c")
        assert document.text == "a" * 8192 + "bc"


class TestMarkdown:
    def test_it_takes_the_title_from_the_first_level_one_heading(self):
        data = b"Intro line\n\n## Not this\n#hashtag\n# Deep Recall #\n\n# Later heading\n"
        document = extract("README.md", data)
        assert document.title == "Deep Recall"
        assert document.media_type == "text/markdown"

    def test_it_ignores_headings_inside_code_blocks(self):
        data = b"```python\n# just a comment\nx = 1\n```\n\n# Real title\n"
        assert extract("notes.md", data).title == "Real title"

    def test_it_keeps_the_text_and_code_blocks_as_they_are(self):
        data = b"# Title\r\n\r\nSome *emphasis*.\r\n\r\n```\r\ndef f():\r\n    return 1\r\n```\r\n"
        assert (
            extract("notes.md", data).text
            == "# Title\n\nSome *emphasis*.\n\n```\ndef f():\n    return 1\n```"
        )

    def test_it_has_no_title_without_a_heading(self):
        assert extract("notes.md", b"Just text\n## Sub\n").title == ""


class TestHtml:
    PAGE = b"""<!DOCTYPE html>
<html>
<head>
  <title>  Tea &amp; Notes </title>
  <meta charset="utf-8">
  <style>body { color: red; } .secret-style {}</style>
  <script>var secretScript = "x";</script>
  <link rel="stylesheet" href="https://example.com/x.css">
</head>
<body>
  <noscript>secret noscript</noscript>
  <template><p>secret template</p></template>
  <svg viewBox="0 0 10 10"><title>secret icon</title><path d="M0 0"/></svg>
  <h1>Alice's   tea</h1>
  <p>She   drinks
     oolong&nbsp;&mdash; every <b>morning</b>.</p>
  <ul><li>green</li><li>black</li></ul>
  <div>one<br>two</div>
  <table><tr><td>a</td><td>b</td></tr></table>
  <pre>  keep
    this</pre>
  <img src="https://example.com/tracker.png" alt="">
  <script src="https://example.com/app.js"></script>
</body>
</html>
"""

    def test_it_writes_readable_text_as_markdown(self):
        document = extract("page.html", self.PAGE)
        assert document.media_type == "text/html" and document.pages == 1
        assert document.text == (
            "# Alice's tea\n\n"
            "She drinks oolong \u2014 every morning.\n\n"
            "- green\n"
            "- black\n\n"
            "one\n"
            "two\n\n"
            "a b\n\n"  # a one-row table has no header to read it by: a line of text
            "```\n"
            "  keep\n"
            "    this\n"
            "```"
        )

    def test_it_writes_nested_lists_tables_and_code_as_markdown(self):
        page = (
            b"<h2>Travel</h2><ul><li>Japan<ul><li>Kyoto</li><li>Osaka</li></ul></li><li>Peru</ul>"
            b"<ol><li>first<li>second</ol>"
            b"<table><thead><tr><th>Book</th><th>Rating</th></tr></thead>"
            b"<tbody><tr><td>Piranesi</td><td>5/5</td></tr><tr><td>Dune</td></tr></tbody></table>"
            b"<pre>a ``` b\nx</pre>"
        )
        assert extract("page.html", page).text == (
            "## Travel\n\n"
            "- Japan\n"
            "  - Kyoto\n"
            "  - Osaka\n"
            "- Peru\n\n"
            "1. first\n"
            "1. second\n\n"
            "| Book | Rating |\n"
            "|---|---|\n"
            "| Piranesi | 5/5 |\n"
            "| Dune |  |\n\n"
            "````\n"
            "a ``` b\n"
            "x\n"
            "````"
        )

    def test_it_drops_navigation_banners_footers_sidebars_and_forms(self):
        page = (
            b"<header><a href='/'>Site menu</a></header><nav>Nav links</nav>"
            b"<div role='navigation'>Breadcrumbs</div><aside>Ads</aside>"
            b"<main><article><header><h1>Kept title</h1></header><p>Body.</p></article></main>"
            b"<form>Search box</form><footer>Copyright</footer>"
        )
        assert extract("page.html", page).text == "# Kept title\n\nBody."

    def test_it_escapes_text_markdown_would_read_as_structure(self):
        page = (
            b"<p># not a heading</p><p>- not an item</p><p>&gt; not a quote</p><p>| not a row |</p>"
            b"<p>1. not a list</p><p>---</p><p>&lt;div&gt; &amp;amp; \\*</p>"
            b"<table><tr><th>a</th><th>b</th></tr><tr><td>x | y</td><td>z</td></tr></table>"
            b"<p>-5 degrees, #tag, 3.5 litres</p>"
        )
        assert extract("page.html", page).text == (
            "\\# not a heading\n\n"
            "\\- not an item\n\n"
            "\\> not a quote\n\n"
            "\\| not a row |\n\n"
            "1\\. not a list\n\n"
            "\\---\n\n"
            "\\<div> \\&amp; \\\\*\n\n"
            "| a | b |\n"
            "|---|---|\n"
            "| x \\| y | z |\n\n"
            "-5 degrees, #tag, 3.5 litres"
        )

    def test_it_takes_the_title_from_the_title_element(self):
        assert extract("page.html", self.PAGE).title == "Tea & Notes"

    def test_it_drops_scripts_styles_and_other_hidden_content(self):
        text = extract("page.html", self.PAGE).text
        for hidden in ("secret", "color", "var ", "Tea &", "example.com"):
            assert hidden not in text

    def test_it_finds_the_body_when_head_is_never_closed(self):
        document = extract("page.html", b"<html><head><title>T</title><body><p>Visible</p></body></html>")
        assert (document.title, document.text) == ("T", "Visible")

    def test_it_reads_fragments_without_html_or_body(self):
        # The "<" is escaped: the text is Markdown, where "<here>" would be a tag.
        assert extract("snippet.htm", b"Plain <i>words</i> &lt;here&gt;").text == "Plain words \\<here>"

    def test_it_does_not_let_an_unclosed_title_swallow_the_page(self):
        assert extract("page.html", b"<title>T<p>Body text</p>").text == "Body text"

    def test_it_survives_unclosed_scripts_and_stray_end_tags(self):
        assert extract("page.html", b"</script></svg><p>Before</p><script>never closed").text == "Before"

    def test_it_turns_a_tokenizer_crash_into_an_unreadable_document(self):
        # Python 3.11's tokenizer asserts on unknown marked sections; later versions skip them.
        try:
            document = extract("page.html", b"<![foo[bar]]><p>After</p>")
        except AppError as error:
            assert error.code == "document_unreadable"
            assert sys.version_info < (3, 13)
        else:
            assert "After" in document.text


class TestPdf:
    def test_it_extracts_the_text_of_a_pdf(self):
        document = extract("tea.pdf", build_pdf(["Alice drinks (oolong) tea"]))
        assert document == ExtractedDocument(
            text="Alice drinks (oolong) tea", media_type="application/pdf", title="", pages=1
        )

    def test_it_takes_the_title_from_the_metadata(self):
        assert extract("tea.pdf", build_pdf(["Hello"], title="Tea Report")).title == "Tea Report"

    def test_it_joins_pages_with_blank_lines(self):
        document = extract("book.pdf", build_pdf(["Chapter one", None, "Chapter two\nmore", "Three"]))
        assert document.pages == 4
        assert document.text == "Chapter one\n\nChapter two\nmore\n\nThree"

    def test_it_opens_a_pdf_encrypted_with_an_empty_password(self):
        data = encrypt_pdf(build_pdf(["Restricted but readable"]), user_password="", owner_password="owner")
        assert extract("locked.pdf", data).text == "Restricted but readable"

    def test_it_rejects_a_password_protected_pdf(self):
        data = encrypt_pdf(build_pdf(["Top secret"]), user_password="secret")
        error = failure("locked.pdf", data)
        assert error.code == "document_unreadable" and error.http_status == 422
        assert "password-protected" in error.message
        assert "password" in error.agent_action

    def test_it_rejects_a_corrupt_pdf_and_logs_why(self, caplog):
        data = build_pdf(["Hello"])
        with caplog.at_level(logging.INFO, logger="memories.pipeline.parse"):
            error = failure("broken.pdf", data[: len(data) // 2])
        assert error.code == "document_unreadable"
        assert "damaged" in error.message
        assert "Stream" not in error.message and "pypdf" not in error.message
        logged = [record for record in caplog.records if record.name == "memories.pipeline.parse"]
        assert logged and logged[0].exc_info is not None

    def test_it_rejects_a_pdf_without_text_saying_ocr_is_not_supported(self):
        error = failure("scan.pdf", build_pdf([None, None]))
        assert error.code == "document_unreadable"
        assert "OCR is not supported" in error.message

    def test_it_rejects_a_pdf_with_too_many_pages(self):
        error = failure("huge.pdf", build_pdf(["p"] * (documents.MAX_PDF_PAGES + 1)))
        assert error.code == "document_too_large" and error.http_status == 413
        assert "2,000 pages" in error.message

    def test_it_stops_extracting_when_the_text_gets_too_long(self, monkeypatch):
        # Building 2,000,000 characters of PDF text would make the suite slow; the limit is what matters.
        monkeypatch.setattr(documents, "MAX_PDF_CHARS", 25)
        assert extract("ok.pdf", build_pdf(["a" * 10, "b" * 10])).pages == 2
        error = failure("long.pdf", build_pdf(["a" * 10, "b" * 10, "c" * 10]))
        assert error.code == "document_too_large"


class TestErrorMessages:
    FAILING = [
        ("slides.pptx", b"hello"),
        ("report.txt", build_pdf(["x"])),
        ("report.pdf", b"not a pdf"),
        ("image.txt", b"\x00\x01\x02"),
        ("empty.txt", b""),
        ("blank.md", b"\n \n"),
        ("latin.txt", b"caf\xe9\x01"),
        ("broken.pdf", build_pdf(["Hello"])[:200]),
        ("locked.pdf", encrypt_pdf(build_pdf(["x"]), user_password="secret")),
        ("scan.pdf", build_pdf([None])),
        ("big.txt", b"a" * (LIMIT + 1)),
    ]

    @pytest.mark.parametrize(("filename", "data"), FAILING, ids=[name for name, _ in FAILING])
    def test_it_never_leaks_paths_or_internals(self, filename, data):
        error = failure(filename, data)
        assert error.code in {
            "unsupported_media_type",
            "document_too_large",
            "document_unreadable",
            "document_empty",
        }
        assert error.agent_action and not error.retryable
        shown = f"{error.message} {error.agent_action} {error.details}"
        # Substrings we look for in messages, not temporary files we use.
        for leak in ("/work", "/tmp", "site-packages", "Traceback", "pypdf", "Error"):  # noqa: S108
            assert leak not in shown
