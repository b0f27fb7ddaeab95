"""Images end to end over REST: upload -> job (decode, clean, OCR in the worker's child) -> memories
-> recall with a signed image_url that works for an hour; refusals; outsiders; hard delete; export."""

from __future__ import annotations

import base64
import io
import json
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from PIL import ExifTags, Image

from memories.errors import Code
from memories.models import Job, Memory, Source
from memories.pipeline.parse_sandbox import DocumentRefused, image_read_isolated
from tests.helpers import error_of, pat_client, wait_for_job
from tests.images import FORMATS, encode, gps_exif, photo, png_claiming, render

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("celery_worker"),
    # Each upload's job runs the OCR model in a child process: a few seconds of CPU.
    pytest.mark.slow,
]

URL = "/api/v1/images"


def _upload(client, name: str, data: bytes, content_type: str = "application/octet-stream", **fields):
    upload = SimpleUploadedFile(name, data, content_type=content_type)
    return client.post(URL, {"file": upload, "wait": "30", **fields}, format="multipart")


def _uploaded(client, name: str, data: bytes, **fields) -> dict:
    """Upload and wait for the job (the worker's first job also loads the embedding model)."""
    response = _upload(client, name, data, **fields)
    assert response.status_code in (201, 202), response.json()
    body = response.json()
    if response.status_code == 202:
        wait_for_job(body["job"]["id"], timeout=120)
        body["job"] = client.get(f"/api/v1/jobs/{body['job']['id']}").json()
    assert body["job"]["status"] == "succeeded", body
    return body


def _search(client, query: str) -> list[dict]:
    response = client.get("/api/v1/memories/search", {"q": query})
    assert response.status_code == 200, response.json()
    return list(response.json()["results"])


def _path(url: str) -> str:
    """An absolute image_url as a path for the in-process client (same code, same SECRET_KEY)."""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def _fetch(url: str):
    # No credentials at all: the link is the access.
    return Client().get(_path(url))


def _picture(response) -> Image.Image:
    return Image.open(io.BytesIO(b"".join(response.streaming_content)))


class TestUpload:
    @pytest.mark.parametrize(
        "extension,sentence",
        [
            ("png", "The heron nests by the old mill pond."),
            ("jpg", "Invoice 4471 is due on the twelfth of March."),
            ("webp", "The spare key hangs behind the blue door."),
        ],
    )
    def test_it_reads_the_text_of_each_format_and_recall_links_the_picture(self, alice, extension, sentence):
        client = pat_client(alice)
        body = _uploaded(client, f"note.{extension}", render(sentence, extension))

        source = Source.objects.get(id=body["source"]["id"])
        assert source.origin == Source.Origin.IMAGE and source.media_type == FORMATS[extension][1]
        assert source.raw is None  # the upload's bytes are gone; only the clean picture is kept
        memories = Memory.objects.filter(owner=alice, source=source)
        # The OCR model reads the rendered sentence word for word (case and punctuation aside).
        assert [m.content.lower().rstrip(".") for m in memories] == [sentence.lower().rstrip(".")]

        hits = _search(client, sentence.split()[1] + " " + sentence.split()[-1].rstrip("."))
        assert hits and hits[0]["provenance"]["source_id"] == str(source.id)
        response = _fetch(hits[0]["image_url"])
        assert response.status_code == 200
        assert response["Content-Type"] == FORMATS[extension][1]
        assert response["Cache-Control"] == "no-store, private"
        assert response["X-Content-Type-Options"] == "nosniff"
        picture = _picture(response)
        assert picture.format == FORMATS[extension][0] and picture.size == (760, 110)

    @pytest.mark.parametrize("extension", ["jpg", "png", "webp"])
    def test_it_keeps_the_caption_and_serves_the_picture_upright_without_its_metadata(self, alice, extension):
        original = encode(photo((320, 200)), extension, exif=gps_exif(orientation=6))
        # The upload really carries the position and the camera, so their absence below means something.
        assert Image.open(io.BytesIO(original)).getexif().get_ifd(ExifTags.IFD.GPSInfo)
        client = pat_client(alice)
        body = _uploaded(client, f"sunset.{extension}", original, caption="Sunset over the Seine with Maya.")

        assert [m["content"] for m in body["job"]["memories"]] == ["Sunset over the Seine with Maya."]
        served = b"".join(_fetch(body["job"]["memories"][0]["image_url"]).streaming_content)
        picture = Image.open(io.BytesIO(served))
        assert dict(picture.getexif()) == {}
        assert not picture.getexif().get_ifd(ExifTags.IFD.GPSInfo)
        for needle in (b"PhoneMaker", b"Pocket 12", b"2024:06:01", b"Exif\x00\x00", b"GPS"):
            assert needle not in served, needle
        # Orientation 6 is "turn 90 degrees to see it upright": it is applied, then dropped.
        assert picture.size == (200, 320)

    def test_the_same_picture_and_caption_again_stores_nothing_new(self, alice):
        client = pat_client(alice)
        data = encode(photo(), "png")
        first = _uploaded(client, "a.png", data, caption="The garden in May.")
        again = _upload(client, "copy.png", data, caption="The garden in May.")
        assert again.status_code == 201 and again.json()["created"] is False
        assert again.json()["source"]["id"] == first["source"]["id"]
        assert Source.objects.filter(owner=alice).count() == 1

    @pytest.mark.parametrize(
        "name,data,content_type,fields,code,status",
        [
            ("notes.png", b"just some text, not a picture", "image/png", {}, "unsupported_media_type", 415),
            (
                "anim.gif",
                b"GIF89a\x01\x00\x01\x00\x00\x00\x00;",
                "image/gif",
                {},
                "unsupported_media_type",
                415,
            ),
            ("photo.jpg", render("x", "png"), "image/jpeg", {}, "unsupported_media_type", 415),
            ("photo", render("x", "png"), "image/jpeg", {}, "unsupported_media_type", 415),
            ("photo.png", render("x", "png"), "image/webp", {}, "unsupported_media_type", 415),
            ("bomb.png", png_claiming(100_000, 100_000), "image/png", {}, "image_too_large", 413),
            ("cut.png", b"\x89PNG\r\n\x1a\n\x00\x00", "image/png", {}, "image_unreadable", 422),
            ("a.png", render("x", "png"), "image/png", {"caption": "x" * 4001}, "value_too_long", 400),
            ("a.png", render("x", "png"), "image/png", {"title": "x"}, "unknown_field", 400),
            ("a.png", render("x", "png"), "image/png", {"space": "nope"}, "invalid_format", 400),
        ],
    )
    def test_it_refuses_bad_uploads_with_a_clear_error_and_stores_nothing(
        self, alice, name, data, content_type, fields, code, status
    ):
        response = _upload(pat_client(alice), name, data, content_type, **fields)
        assert response.status_code == status, response.json()
        error = error_of(response)
        assert error["code"] == code and error["message"] and error["agent_action"]
        assert not Source.objects.exists() and not Job.objects.exists()

    def test_a_png_named_as_a_jpeg_is_refused_saying_what_it_is(self, alice):
        response = _upload(pat_client(alice), "photo.jpg", render("x", "png"), "image/jpeg")
        assert error_of(response)["message"] == "This file's file name says JPEG but its content is PNG."

    def test_it_refuses_too_many_bytes_and_too_many_pixels(self, alice, settings):
        client = pat_client(alice)
        settings.IMAGE_MAX_BYTES = 2048
        big = _upload(client, "big.png", encode(photo((400, 400)), "png"))
        assert big.status_code == 413 and error_of(big)["details"]["max_bytes"] == 2048
        settings.IMAGE_MAX_BYTES = 10 * 1024 * 1024
        settings.IMAGE_MAX_PIXELS = 10_000
        wide = _upload(client, "wide.png", encode(photo((400, 30)), "png"))
        assert wide.status_code == 413, wide.json()
        assert error_of(wide)["details"] == {"max_pixels": 10_000, "width": 400, "height": 30}
        assert not Source.objects.exists()

    def test_a_picture_whose_pixels_are_cut_short_fails_its_job(self, alice):
        whole = encode(photo((320, 200)), "png")
        response = _upload(pat_client(alice), "cut.png", whole[: len(whole) // 2])
        assert response.status_code in (201, 202), response.json()
        job = wait_for_job(response.json()["job"]["id"], timeout=120)
        assert job.status == "failed" and job.error_code == "image_unreadable"
        source = Source.objects.get(id=response.json()["source"]["id"])
        assert source.raw is None and source.image_name == ""

    def test_the_decoder_refuses_a_bomb_even_when_the_request_let_it_through(self, settings):
        # The child checks the pixel count again before it allocates a single pixel.
        settings.IMAGE_MAX_PIXELS = 1_000_000
        with pytest.raises(DocumentRefused) as refused:
            image_read_isolated(data=png_claiming(30_000, 30_000), media_type="image/png")
        assert refused.value.code == Code.IMAGE_TOO_LARGE

    def test_it_needs_the_write_scope(self, alice):
        response = _upload(pat_client(alice, ("memory:read",)), "a.png", render("x", "png"))
        assert response.status_code == 403 and error_of(response)["code"] == "insufficient_scope"
        assert not Source.objects.exists()


@pytest.fixture
def alice_image(alice) -> dict:
    """Alice's picture of a parking note, read into one memory; the upload's answer."""
    return _uploaded(pat_client(alice), "parking.png", render("Parking is on level minus two.", "png"))


class TestLinks:
    def test_it_works_for_an_hour_and_then_answers_gone(self, alice, alice_image):
        url = _search(pat_client(alice), "parking level")[0]["image_url"]
        issued = timezone.now()
        assert _fetch(url).status_code == 200
        with time_machine.travel(issued + timedelta(minutes=59), tick=False):
            assert _fetch(url).status_code == 200
        with time_machine.travel(issued + timedelta(minutes=61), tick=False):
            expired = _fetch(url)
            assert expired.status_code == 410
            assert expired.json()["error"]["code"] == "image_link_expired"
            assert expired["Cache-Control"] == "no-store, private"
            # A fresh recall gives a fresh hour.
            again = _search(pat_client(alice), "parking level")[0]["image_url"]
            assert again != url and _fetch(again).status_code == 200

    def test_an_outsider_cannot_find_it_nor_reach_it_with_an_altered_link(self, alice, bob, alice_image):
        alice_source = alice_image["source"]["id"]
        bob_client = pat_client(bob)
        assert all(
            hit["provenance"]["source_id"] != alice_source for hit in _search(bob_client, "parking level")
        )
        memory_id = alice_image["job"]["memories"][0]["id"]
        assert bob_client.get(f"/api/v1/memories/{memory_id}").status_code == 404
        # Bob's own link, pointed at Alice's picture: the signature names Bob's source only.
        bob_body = _uploaded(bob_client, "bob.png", encode(photo(), "png"), caption="Bob's bike.")
        bob_url = bob_body["job"]["memories"][0]["image_url"]
        bob_parts = urlsplit(bob_url)
        signature = parse_qs(bob_parts.query)["sig"][0]
        pointed = Client().get(f"/api/v1/images/{alice_source}?{urlencode({'sig': signature})}")
        assert pointed.status_code == 403 and pointed.json()["error"]["code"] == "image_link_invalid"
        # Alice's link with one character of its signature changed, or without it.
        alice_url = alice_image["job"]["memories"][0]["image_url"]
        good = parse_qs(urlsplit(alice_url).query)["sig"][0]
        forged = good[:-1] + ("A" if good[-1] != "A" else "B")
        for query in (urlencode({"sig": forged}), "", "sig="):
            response = Client().get(f"/api/v1/images/{alice_source}?{query}")
            assert response.status_code == 403, query
            assert response.json()["error"]["code"] == "image_link_invalid"
        # Nor can Bob put a picture in Alice's space.
        space = Source.objects.get(id=alice_source).space_id
        into = _upload(bob_client, "x.png", render("x", "png"), space=str(space))
        assert into.status_code == 404 and error_of(into)["code"] == "space_not_found"

    def test_only_get_is_served(self, alice_image):
        url = alice_image["job"]["memories"][0]["image_url"]
        response = Client().post(_path(url))
        assert response.status_code == 405 and response.json()["error"]["code"] == "method_not_allowed"


class TestDelete:
    def test_a_hard_delete_removes_the_picture_and_its_link(self, alice, alice_image, images_dir: Path):
        source = Source.objects.get(id=alice_image["source"]["id"])
        stored = images_dir / source.image_name
        assert stored.is_file()
        url = alice_image["job"]["memories"][0]["image_url"]
        response = pat_client(alice).delete(f"/api/v1/memories/{alice_image['job']['memories'][0]['id']}")
        assert response.status_code == 200, response.json()
        assert response.json()["receipt"]["purged"]["images_deleted"] == 1
        assert not stored.exists()
        gone = _fetch(url)
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "image_not_found"

    def test_deleting_one_statement_of_a_picture_deletes_the_picture(self, alice, images_dir: Path):
        client = pat_client(alice)
        body = _uploaded(
            client,
            "board.png",
            render("The retro is on Thursday.", "png"),
            caption="Photo of the team board.",
        )
        memories = {m["content"]: m for m in body["job"]["memories"]}
        assert len(memories) == 2 and all("image_url" in m for m in memories.values())
        stored = images_dir / Source.objects.get(id=body["source"]["id"]).image_name
        retro = next(m for text, m in memories.items() if "retro" in text.lower())
        assert client.delete(f"/api/v1/memories/{retro['id']}").status_code == 200
        # The pixels still show the deleted words and cannot be redacted: the picture goes.
        assert not stored.exists()
        caption = client.get(f"/api/v1/memories/{memories['Photo of the team board.']['id']}").json()
        assert "image_url" not in caption
        assert "retro" not in Source.objects.get(id=body["source"]["id"]).content.lower()

    def test_deleting_the_account_removes_its_pictures(self, alice, alice_image, images_dir: Path):
        from accounts.caller import Actor
        from memories.services.account import account_delete

        stored = images_dir / Source.objects.get(id=alice_image["source"]["id"]).image_name
        receipt = account_delete(actor=Actor.owner_acting(alice, "test"))
        assert receipt["purged"]["images_deleted"] == 1
        assert not stored.exists()


class TestExport:
    def test_the_export_holds_the_clean_picture_not_a_link(self, alice, alice_image):
        response = pat_client(alice).get("/api/v1/export")
        lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
        [record] = [line for line in lines if line["type"] == "source"]
        served = b"".join(_fetch(alice_image["job"]["memories"][0]["image_url"]).streaming_content)
        assert record["image"]["media_type"] == "image/png"
        assert base64.b64decode(record["image"]["data_base64"]) == served
        assert "sig=" not in json.dumps(lines) and "image_url" not in json.dumps(lines)
