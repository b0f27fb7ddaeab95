"""An image uploaded over REST is found by `recall` on the core /mcp endpoint through the official
Python SDK, with an image_url that the real server answers now and refuses after the hour."""

from __future__ import annotations

import io
from datetime import timedelta
from urllib.parse import urlsplit

import httpx
import pytest
import time_machine
from django.test import Client
from django.utils import timezone
from PIL import Image

from memories.models import Job
from tests.helpers import wait_for_job
from tests.images import encode, photo, render
from tests.mcp_gateway.rpc import pat_token
from tests.mcp_gateway.sdk import call, structured

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _upload(server_url: str, token: str, name: str, data: bytes, caption: str = "") -> str:
    """Upload over the real server's REST API; return the source id once its job has succeeded."""
    response = httpx.post(
        f"{server_url}/api/v1/images",
        headers={"Authorization": f"Bearer {token}"},
        files={"file": (name, data, "application/octet-stream")},
        data={"caption": caption} if caption else {},
        timeout=60,
    )
    assert response.status_code in (201, 202), response.text
    body = response.json()
    job = wait_for_job(body["job"]["id"], timeout=120)
    assert job.status == Job.Status.SUCCEEDED, (job.error_code, job.error_message)
    return str(body["source"]["id"])


def test_recall_over_mcp_carries_an_image_url_that_works_for_an_hour(asgi_server, alice, bob):
    token = pat_token(alice)
    source_id = _upload(
        asgi_server.url, token, "gate.png", render("The gate code is 2580 on weekdays.", "png")
    )

    result = call(f"{asgi_server.url}/mcp", token, "recall", {"query": "gate code weekdays"})
    payload = structured(result)
    assert not result.is_error, payload
    [hit] = [m for m in payload["memories"] if m["provenance"]["source_id"] == source_id]
    assert "2580" in hit["content"]
    url = hit["image_url"]
    assert url.startswith(f"{asgi_server.url}/api/v1/images/{source_id}?sig=")

    now = httpx.get(url, timeout=30)
    assert now.status_code == 200
    assert now.headers["content-type"] == "image/png"
    assert now.headers["cache-control"] == "no-store, private"
    assert now.headers["x-content-type-options"] == "nosniff"
    assert Image.open(io.BytesIO(now.content)).size == (760, 110)

    # The server's clock cannot be moved from here; the same view, settings and secret in this
    # process can: the link is refused once the hour has passed.
    parts = urlsplit(url)
    with time_machine.travel(timezone.now() + timedelta(hours=1, seconds=5), tick=False):
        later = Client().get(f"{parts.path}?{parts.query}")
    assert later.status_code == 410
    assert later.json()["error"]["code"] == "image_link_expired"

    # Bob recalls the same words and gets nothing of Alice's; his own link bent to her picture fails.
    bob_token = pat_token(bob)
    bob_source = _upload(
        asgi_server.url, bob_token, "bike.png", encode(photo(), "png"), caption="Bob's bike."
    )
    bob_hits = structured(call(f"{asgi_server.url}/mcp", bob_token, "recall", {"query": "gate code"}))
    assert all(m["provenance"]["source_id"] != source_id for m in bob_hits["memories"])
    bike = structured(call(f"{asgi_server.url}/mcp", bob_token, "recall", {"query": "Bob's bike"}))
    bob_url = next(m["image_url"] for m in bike["memories"] if m["provenance"]["source_id"] == bob_source)
    bent = httpx.get(bob_url.replace(bob_source, source_id), timeout=30)
    assert bent.status_code == 403
    assert bent.json()["error"]["code"] == "image_link_invalid"
