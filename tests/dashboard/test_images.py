"""Images in the dashboard: the upload page for each format, refusals in place, the memory page
showing the picture (to its owner only), and the same in a real browser."""

from __future__ import annotations

import io
import os
import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from PIL import Image

from memories.models import Job, Memory, Source
from memories.services.spaces import space_create_default
from tests.dashboard.test_browser import browser, dashboard_server, person  # noqa: F401 - fixtures
from tests.helpers import wait_for_job
from tests.images import FORMATS, encode, photo, render

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _post(client: Client, owner: Any, name: str, data: bytes, caption: str = "") -> Any:
    space = space_create_default(owner=owner)
    upload = SimpleUploadedFile(name, data, content_type="application/octet-stream")
    return client.post(
        reverse("dashboard:upload-image"), {"file": upload, "caption": caption, "space": str(space.id)}
    )


def _image_src(html: str) -> str:
    match = re.search(r'<figure class="memory-image"><img src="([^"]+)"', html)
    assert match is not None, html[:3000]
    return match.group(1).replace("&amp;", "&")


@pytest.mark.usefixtures("celery_worker")
class TestUploadPage:
    @pytest.mark.parametrize("extension", ["png", "jpg", "webp"])
    def test_it_uploads_each_format_and_the_memory_page_shows_the_picture(
        self, alice_client, alice, extension
    ):
        response = _post(
            alice_client, alice, f"shelf.{extension}", encode(photo(), extension), "The pantry shelf."
        )
        assert response.status_code == 302, response.content[:2000]
        job = Job.objects.get(owner=alice)
        assert response["Location"] == reverse("dashboard:job", args=[job.id])
        assert wait_for_job(job.id, timeout=120).status == Job.Status.SUCCEEDED
        memory = Memory.objects.get(owner=alice)
        assert memory.content == "The pantry shelf."

        page = alice_client.get(reverse("dashboard:memory", args=[memory.id]))
        src = _image_src(page.content.decode())
        picture = Client().get(src)
        assert picture.status_code == 200 and picture["Content-Type"] == FORMATS[extension][1]
        assert Image.open(io.BytesIO(b"".join(picture.streaming_content))).size == (320, 200)

    def test_an_outsider_sees_neither_the_page_nor_a_link(self, alice_client, alice, charlie_client):
        _post(alice_client, alice, "desk.png", encode(photo(), "png"), "My desk at the office.")
        assert wait_for_job(Job.objects.get(owner=alice).id, timeout=120).status == Job.Status.SUCCEEDED
        memory = Memory.objects.get(owner=alice)
        page = charlie_client.get(reverse("dashboard:memory", args=[memory.id]))
        assert page.status_code == 404
        assert "/api/v1/images/" not in page.content.decode()


class TestRefusals:
    @pytest.mark.parametrize(
        "name,data,message",
        [
            ("photo.jpg", render("x", "png"), "This file's file name says JPEG but its content is PNG."),
            ("notes.png", b"plain words", "This file is not a PNG, JPEG or WebP image."),
        ],
    )
    def test_it_refuses_a_wrong_file_on_the_page_and_stores_nothing(
        self, alice_client, alice, name, data, message
    ):
        response = _post(alice_client, alice, name, data)
        assert response.status_code == 400
        assert message in response.content.decode().replace("&#x27;", "'")
        assert not Source.objects.exists() and not Job.objects.exists()

    def test_it_refuses_an_image_over_the_size_limit(self, alice_client, alice, settings):
        settings.IMAGE_MAX_BYTES = 2048
        noise = Image.frombytes("RGB", (64, 64), os.urandom(64 * 64 * 3))  # does not compress
        response = _post(alice_client, alice, "big.png", encode(noise, "png"))
        assert response.status_code == 400
        assert "The image is larger than" in response.content.decode()
        assert not Source.objects.exists()


def test_a_person_uploads_an_image_and_sees_it_on_its_memory_page(person):  # noqa: F811 - the fixture
    person.sign_up("iris@example.com")
    page = person.page
    person.goto("/memories/upload/image/")
    page.get_by_label("Image").set_input_files(
        files=[
            {"name": "note.png", "mimeType": "image/png", "buffer": render("The boiler service is in June.")}
        ]
    )
    page.get_by_label("Caption").fill("Sticky note on the fridge.")
    page.get_by_role("button", name="Upload", exact=True).click()
    page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
    person.wait_for_job()
    listed = page.locator("[data-job-memories] li .content").all_inner_texts()
    assert "Sticky note on the fridge." in listed and any("boiler" in text.lower() for text in listed), listed
    page.locator("[data-job-memories] li .content a", has_text="Sticky note").click()
    image = page.locator("figure.memory-image img")
    image.wait_for()
    # Loaded and decoded by the browser, under the page's Content-Security-Policy.
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    assert image.evaluate("img => [img.naturalWidth, img.naturalHeight]") == [760, 110]
    person.shot("40-image-memory")
    person.assert_clean()
