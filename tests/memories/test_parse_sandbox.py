"""Reading a document's text in a child process with hard limits (memories.pipeline.parse_sandbox)."""

from __future__ import annotations

import time

import pytest

from memories.errors import CATALOGUE, Code
from memories.pipeline import parse_sandbox
from memories.pipeline.parse_sandbox import DocumentRefused, extract_isolated
from tests.memories.test_documents import build_pdf, build_pdf_bomb, encrypt_pdf


def refusal(data: bytes, media_type: str = "application/pdf") -> DocumentRefused:
    with pytest.raises(DocumentRefused) as caught:
        extract_isolated(data=data, media_type=media_type)
    return caught.value


class TestExtractIsolated:
    def test_it_reads_the_same_text_as_in_process(self):
        document = extract_isolated(
            data=build_pdf(["Alice drinks tea", "Page two"], title="Tea"), media_type="application/pdf"
        )
        assert document.text == "Alice drinks tea\n\nPage two"
        assert (document.title, document.pages, document.media_type) == ("Tea", 2, "application/pdf")

    def test_it_reads_text_and_html(self):
        assert extract_isolated(data="Grüße ☕".encode(), media_type="text/plain").text == "Grüße ☕"
        page = b"<html><head><title>T</title></head><body><h2>Hi</h2><p>There</p></body></html>"
        document = extract_isolated(data=page, media_type="text/html")
        assert document.title == "T" and "## Hi" in document.text

    @pytest.mark.parametrize(
        ("data", "media_type", "code"),
        [
            (b"%PDF-1.4 garbage", "application/pdf", Code.DOCUMENT_UNREADABLE),
            (
                encrypt_pdf(build_pdf(["Top secret"]), user_password="secret"),
                "application/pdf",
                Code.DOCUMENT_UNREADABLE,
            ),
            (build_pdf([None]), "application/pdf", Code.DOCUMENT_UNREADABLE),
            (b"\xef\xbb\xbf\n\n", "text/markdown", Code.DOCUMENT_EMPTY),
            (b"caf\xe9\x01\x02", "text/plain", Code.DOCUMENT_UNREADABLE),
        ],
    )
    def test_it_answers_with_the_readers_code(self, data, media_type, code):
        refused = refusal(data, media_type)
        assert refused.code == code and refused.message
        assert "Error" not in refused.message and "/" not in refused.message.replace("/s", "")

    def test_it_stops_a_bomb_at_the_cpu_limit(self, settings):
        settings.DOCUMENT_PARSE_CPU_SECONDS = 1
        started = time.monotonic()
        refused = refusal(build_pdf_bomb(pages=8, repeats=100_000))
        assert refused.code == Code.DOCUMENT_TOO_COMPLEX
        assert time.monotonic() - started < 10

    def test_it_stops_a_bomb_at_the_wall_clock_limit(self, settings):
        settings.DOCUMENT_PARSE_CPU_SECONDS = 600
        settings.DOCUMENT_PARSE_TIMEOUT_SECONDS = 1
        started = time.monotonic()
        assert refusal(build_pdf_bomb(pages=8, repeats=100_000)).code == Code.DOCUMENT_TOO_COMPLEX
        assert time.monotonic() - started < 5

    def test_it_stops_a_child_that_writes_more_than_the_output_cap(self, monkeypatch):
        monkeypatch.setattr(parse_sandbox, "_output_limit", lambda data: 100)
        assert refusal(b"a long text " * 50, "text/plain").code == Code.DOCUMENT_TOO_COMPLEX

    def test_it_stops_a_child_over_the_memory_limit(self, settings):
        # 128 MB of address space holds the interpreter and the reader, not 200 MB of text.
        settings.DOCUMENT_PARSE_MEMORY_MB = 128
        assert refusal(b"a" * (200 * 1024 * 1024), "text/plain").code == Code.DOCUMENT_TOO_COMPLEX

    def test_too_complex_is_a_permanent_job_failure_in_the_catalogue(self):
        entry = CATALOGUE[Code.DOCUMENT_TOO_COMPLEX]
        assert entry.job and not entry.response and not entry.retryable and entry.message
