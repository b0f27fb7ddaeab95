"""Document upload end to end: bytes -> text -> job -> memories; same bytes; living versions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memories.models import Job, Memory, Source
from tests.helpers import error_of, pat_client

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]

URL = "/api/v1/documents"


def _upload(client, name: str, data: bytes, **fields):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return client.post(
        URL, {"file": SimpleUploadedFile(name, data), "wait": "20", **fields}, format="multipart"
    )


class TestUpload:
    def test_it_turns_a_markdown_file_into_memories(self, alice):
        doc = b"# Team handbook\n\nOur office is in Lisbon.\n\nThe standup is every Monday at 9:30."
        response = _upload(pat_client(alice), "handbook.md", doc)
        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["created"] is True and body["job"]["status"] == "succeeded"
        contents = " ".join(m["content"] for m in body["job"]["memories"])
        assert "Lisbon" in contents and "standup" in contents
        source = Source.objects.get(id=body["source"]["id"])
        assert source.origin == "document" and source.media_type == "text/markdown"
        assert source.title == "Team handbook"  # no title was sent: the document's own H1

    def test_the_same_bytes_again_is_a_no_op_that_says_so(self, alice):
        client = pat_client(alice)
        first = _upload(client, "note.txt", b"I keep my passport in the blue drawer.").json()
        again = _upload(client, "note-copy.txt", b"I keep my passport in the blue drawer.")
        assert again.status_code == 201
        body = again.json()
        assert body["created"] is False and body["source"]["id"] == first["source"]["id"]
        assert (
            Source.objects.filter(owner=alice).count() == 1 and Job.objects.filter(owner=alice).count() == 1
        )

    def test_it_takes_source_modified_at_as_the_instant_it_names(self, alice):
        response = _upload(
            pat_client(alice),
            "roof.txt",
            b"The roof was repaired.",
            source_modified_at="2024-05-01t11:00:00+02:00",
        )
        assert response.status_code == 201, response.json()
        source = Source.objects.get(id=response.json()["source"]["id"])
        assert source.source_modified_at == datetime(2024, 5, 1, 9, tzinfo=UTC)

    def test_a_new_version_of_a_living_source_supersedes_what_it_no_longer_says(self, alice):
        client = pat_client(alice)
        v1 = b"Project Falcon launches in May.\n\nThe project lead is Maya."
        v2 = b"Project Falcon launches in May.\n\nThe project lead is Tomas."
        common = {"source_kind": "drive", "source_ref": "doc-42", "versioning_mode": "living"}
        _upload(client, "falcon.txt", v1, **common)
        response = _upload(client, "falcon.txt", v2, **common)
        assert response.json()["source"]["version"] == 2
        maya = Memory.objects.get(owner=alice, content__contains="Maya")
        tomas = Memory.objects.get(owner=alice, content__contains="Tomas")
        launch = Memory.objects.get(owner=alice, content__contains="launches")
        assert maya.superseded_at is not None
        assert tomas.superseded_at is None and launch.superseded_at is None
        assert launch.evidence.values("source").distinct().count() == 2

    @pytest.mark.parametrize(
        "name,data,fields,code,status",
        [
            ("evil.exe", b"MZ\x00\x00", {}, "unsupported_media_type", 415),
            ("empty.txt", b"", {}, "document_empty", 422),
            ("broken.pdf", b"%PDF-1.4 garbage", {}, "document_unreadable", 422),
            ("a.txt", b"hello", {"source_kind": "drive"}, "source_ref_incomplete", 400),
            ("a.txt", b"hello", {"versioning_mode": "sometimes"}, "invalid_value", 400),
            ("a.txt", b"hello", {"versioning_mode": "living"}, "source_ref_required", 400),
            ("a.txt", b"hello", {"colour": "blue"}, "unknown_field", 400),
            ("a.txt", b"hello", {"source_modified_at": "2024-05-01T10:00+02:00"}, "invalid_format", 400),
            (
                "a.txt",
                b"hello",
                {"space": "urn:uuid:0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51"},
                "invalid_format",
                400,
            ),
        ],
    )
    def test_it_rejects_bad_uploads_and_stores_nothing(self, alice, name, data, fields, code, status):
        response = _upload(pat_client(alice), name, data, **fields)
        assert response.status_code == status, response.json()
        assert error_of(response)["code"] == code
        assert not Source.objects.exists() and not Job.objects.exists()

    def test_it_refuses_a_document_over_the_size_limit(self, alice, settings):
        settings.DOCUMENT_MAX_BYTES = 2048
        response = _upload(pat_client(alice), "big.txt", b"a" * 4096)
        assert response.status_code == 413
        assert error_of(response)["code"] == "document_too_large"
        assert not Source.objects.exists()

    def test_it_needs_the_write_scope(self, alice):
        response = _upload(pat_client(alice, ("memory:read",)), "a.txt", b"hello")
        assert response.status_code == 403
        assert not Source.objects.exists()
