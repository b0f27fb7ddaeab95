"""What one image may cost the workers: a pixel budget read from the header at the door (and again
by the decoder, Pillow's own guard set to it), and a per-account budget of images a minute.

An outside review (issue 39) found that a 512 KB, 50-megapixel PNG cost about 10 s of worker time,
and that at 20 uploads a minute one account could keep both workers busy. The picture here is a
real 51-megapixel PNG that Pillow makes small on disk (one colour compresses to almost nothing).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from PIL import Image

from accounts.caller import ALL_SCOPES, Caller
from memories.errors import Code
from memories.models import Job, Source
from memories.pipeline.parse_sandbox import DocumentRefused
from memories.services.images import image_ingest, image_store
from memories.services.spaces import space_create_default
from tests.helpers import error_of, pat_client
from tests.images import encode, photo, render

pytestmark = pytest.mark.django_db

WIDTH, HEIGHT = 8000, 6400  # 51,200,000 pixels: just over the budget
BUDGET = 50_000_000  # IMAGE_MAX_PIXELS's default
REFUSAL = "This image has 8000 x 6400 pixels; the limit is 50,000,000 pixels."


@pytest.fixture(scope="module")
def fifty_megapixels() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (WIDTH, HEIGHT), (236, 240, 244)).save(out, format="PNG", compress_level=1)
    data = out.getvalue()
    assert len(data) < 1024 * 1024  # well under IMAGE_MAX_BYTES: only the pixel count can refuse it
    return data


def _nothing_kept(images_dir: Path) -> None:
    assert not Source.objects.exists() and not Job.objects.exists()
    assert [path for path in images_dir.rglob("*") if path.is_file()] == []


class TestPixelBudget:
    def test_the_default_budget_is_50_megapixels(self, settings):
        assert settings.IMAGE_MAX_PIXELS == BUDGET

    def test_it_refuses_a_50_megapixel_png_at_the_door_without_decoding_it(
        self, alice, fifty_megapixels, images_dir
    ):
        upload = SimpleUploadedFile("huge.png", fifty_megapixels, content_type="image/png")
        response = pat_client(alice).post("/api/v1/images", {"file": upload}, format="multipart")
        assert response.status_code == 413, response.json()
        error = error_of(response)
        assert error["code"] == "image_too_large" and error["retryable"] is False
        assert error["message"] == REFUSAL
        assert error["agent_action"] == "scale the image down (or crop it) and upload it again"
        assert error["details"] == {"max_pixels": BUDGET, "width": WIDTH, "height": HEIGHT}
        _nothing_kept(images_dir)

    def test_the_dashboard_refuses_it_on_the_page(self, alice, fifty_megapixels, images_dir):
        client = Client()
        client.force_login(alice)
        space = space_create_default(owner=alice)
        upload = SimpleUploadedFile("huge.png", fifty_megapixels, content_type="image/png")
        response = client.post(reverse("dashboard:upload-image"), {"file": upload, "space": str(space.id)})
        assert response.status_code == 400
        assert REFUSAL in response.content.decode()
        _nothing_kept(images_dir)

    def test_the_worker_refuses_it_before_decoding_when_the_budget_fell_after_the_upload(
        self, alice, fifty_megapixels, images_dir, settings, no_worker_broker
    ):
        # Accepted under a larger budget; the operator lowers it before the job runs.
        settings.IMAGE_MAX_PIXELS = 60_000_000
        caller = Caller(user=alice, scopes=ALL_SCOPES)
        source, _, _ = image_ingest(
            caller=caller, filename="huge.png", data=fifty_megapixels, caption="A wall."
        )
        settings.IMAGE_MAX_PIXELS = BUDGET
        with pytest.raises(DocumentRefused) as refused:
            image_store(source=source)
        # Under twice the budget Pillow's own guard only warns unless told otherwise, and a warning
        # turned into an error must not read as a damaged file.
        assert refused.value.code == Code.IMAGE_TOO_LARGE
        assert "50,000,000" in refused.value.message
        source.refresh_from_db()
        assert source.raw is None and source.image_name == ""
        assert [path for path in images_dir.rglob("*") if path.is_file()] == []


class TestImagesPerAccount:
    def _upload(self, client, name: str, data: bytes):
        upload = SimpleUploadedFile(name, data, content_type="application/octet-stream")
        return client.post("/api/v1/images", {"file": upload, "caption": f"The {name}."}, format="multipart")

    def test_it_limits_images_per_account_apart_from_documents(self, alice, bob, settings, no_worker_broker):
        settings.RATE_LIMITS = {**settings.RATE_LIMITS, "image": "2/m"}
        client = pat_client(alice)
        with time_machine.travel("2026-12-01 10:00:00+00:00", tick=False):
            accepted = [self._upload(client, f"shelf {n}.png", encode(photo(), "png")) for n in range(2)]
            refused = self._upload(client, "shelf 3.png", render("Third", "png"))
            document = client.post(
                "/api/v1/documents",
                {"file": SimpleUploadedFile("notes.txt", b"Notes of the day.", content_type="text/plain")},
                format="multipart",
            )
            bobs = self._upload(pat_client(bob), "bike.png", encode(photo(), "png"))
        assert all(response.status_code in (201, 202) for response in accepted), accepted
        assert refused.status_code == 429
        error = error_of(refused)
        assert error["code"] == "rate_limited" and error["details"]["limit"] == "image"
        assert error["retryable"] is True and 1 <= int(refused["Retry-After"]) <= 60
        assert Source.objects.filter(owner=alice, origin=Source.Origin.IMAGE).count() == 2
        assert document.status_code in (201, 202), document.json()
        assert bobs.status_code in (201, 202), bobs.json()

    def test_the_dashboard_counts_into_the_same_budget(self, alice, settings, no_worker_broker):
        settings.RATE_LIMITS = {**settings.RATE_LIMITS, "image": "1/m"}
        client = Client()
        client.force_login(alice)
        space = space_create_default(owner=alice)

        def post(name: str):
            upload = SimpleUploadedFile(name, encode(photo(), "png"), content_type="image/png")
            return client.post(
                reverse("dashboard:upload-image"),
                {"file": upload, "caption": f"The {name}.", "space": str(space.id)},
            )

        with time_machine.travel("2026-12-01 10:00:00+00:00", tick=False):
            first = self._upload(pat_client(alice), "desk.png", encode(photo(), "png"))
            refused = post("door.png")
        assert first.status_code in (201, 202), first.json()
        assert refused.status_code == 429 and refused["Retry-After"]
        assert "Too many attempts" in refused.content.decode()
