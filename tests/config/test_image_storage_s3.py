"""Pictures in an S3-compatible bucket, end to end: a real S3 endpoint (moto's standalone server, in
its own process, spoken to over HTTP), the service and a worker as separate processes configured
with IMAGE_STORAGE=s3 as production would be, uploads, recall, links and hard delete over REST.

The suite's own worker and server store pictures in a folder; this module starts its own pair on a
broker folder of its own, so no job of theirs reaches the suite's worker (and no beat of theirs
sweeps the suite's jobs: the suite's worker is the one beat).
"""

from __future__ import annotations

import base64
import io
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import boto3
import httpx
import pytest
import time_machine
from django.test import Client
from django.utils import timezone
from PIL import ExifTags, Image

from accounts.services import pat_create
from memories.models import Source
from tests.conftest import ROOT, LiveServer, start_live_server, stop_live_server
from tests.helpers import wait_for_job
from tests.images import encode, gps_exif, photo

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BUCKET = "deeprecall-images"
PREFIX = "images"
REGION = "eu-west-1"
# moto's server accepts any key pair; these only have to reach it through boto3's usual chain.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test-images", "AWS_SECRET_ACCESS_KEY": "test-images-secret"}
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory) -> Iterator[str]:
    """moto's S3 server in a process of its own (so the test's time travel never reaches it)."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("s3") / "moto.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(log.read_text()[-3000:])
        try:
            httpx.get(url, timeout=2)
            break
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"the S3 server did not start: {log.read_text()[-3000:]}") from None
            time.sleep(0.2)
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def s3_client(s3_endpoint) -> Any:
    """The operator's view of the bucket (boto3 with the deployment's keys), created private."""
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name=REGION, **_boto_keys())
    client.create_bucket(
        Bucket=BUCKET, ACL="private", CreateBucketConfiguration={"LocationConstraint": REGION}
    )
    return client


def _boto_keys() -> dict[str, str]:
    return {
        "aws_access_key_id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    }


@pytest.fixture
def bucket(s3_client) -> Any:
    """The bucket, emptied of what an earlier test stored (the database is emptied between tests)."""
    for key in _keys(s3_client):
        s3_client.delete_object(Bucket=BUCKET, Key=key)
    return s3_client


def _keys(s3_client: Any) -> list[str]:
    listed = s3_client.list_objects_v2(Bucket=BUCKET)
    return sorted(item["Key"] for item in listed.get("Contents", []))


@pytest.fixture(scope="module")
def s3_env(child_env, s3_client, s3_endpoint, tmp_path_factory) -> dict[str, str]:
    """The suite's child environment with pictures in the bucket and a broker folder of its own.
    No folder for pictures at all: nothing may land on disk instead."""
    base = {k: v for k, v in child_env.items() if not k.startswith(("IMAGE_", "DEEPRECALL_IMAGES", "AWS_"))}
    return {
        **base,
        "DEEPRECALL_BROKER_DIR": str(tmp_path_factory.mktemp("s3-broker")),
        "IMAGE_STORAGE": "s3",
        "IMAGE_S3_BUCKET": BUCKET,
        "IMAGE_S3_ENDPOINT_URL": s3_endpoint,
        # The keys and region through boto3's standard variables, as most deployments give them.
        **CREDENTIALS,
        "AWS_DEFAULT_REGION": REGION,
    }


@pytest.fixture(scope="module")
def s3_worker(s3_env, tmp_path_factory) -> Iterator[subprocess.Popen[bytes]]:
    """A Celery worker of the S3 deployment, ready when it says so in its log (the test process's
    Celery app speaks to the suite's broker, so it cannot ping this one)."""
    from memories.management.commands.up import worker_command

    # Without -B: one beat per deployment, and in this suite the suite's own worker is it.
    command = [arg for arg in worker_command(concurrency=1, hostname="s3@%h") if arg != "-B"]
    log = tmp_path_factory.mktemp("s3-worker") / "worker.log"
    proc = subprocess.Popen(command, cwd=ROOT, env=s3_env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while " ready." not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"the S3 worker did not start: {log.read_text()[-3000:]}")
        time.sleep(0.2)
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def s3_server(s3_env, s3_worker, tmp_path_factory) -> Iterator[LiveServer]:
    server = start_live_server(s3_env, tmp_path_factory.mktemp("s3-server"), name="s3-server")
    yield server
    stop_live_server(server)


def _token(user: Any) -> dict[str, str]:
    _, raw = pat_create(user=user, name="tests", scopes=["memory:read", "memory:write"])
    return {"Authorization": f"Bearer {raw}"}


def _uploaded(server: LiveServer, headers: dict[str, str], data: bytes, caption: str) -> dict[str, Any]:
    """Upload a PNG over HTTP and wait for its job; the job as REST shows it, with its memories."""
    response = httpx.post(
        f"{server.url}/api/v1/images",
        headers=headers,
        files={"file": ("picture.png", data, "image/png")},
        data={"caption": caption, "wait": "30"},
        timeout=60,
    )
    assert response.status_code in (201, 202), response.text
    body = response.json()
    wait_for_job(body["job"]["id"], timeout=120)
    job = httpx.get(f"{server.url}/api/v1/jobs/{body['job']['id']}", headers=headers, timeout=10).json()
    assert job["status"] == "succeeded", job
    return {"source_id": body["source"]["id"], "job": job}


def _recalled_link(server: LiveServer, headers: dict[str, str], query: str, source_id: str) -> str:
    response = httpx.post(
        f"{server.url}/api/v1/operations/recall", headers=headers, json={"query": query}, timeout=30
    )
    assert response.status_code == 200, response.text
    [hit] = [m for m in response.json()["memories"] if m["provenance"]["source_id"] == source_id]
    return str(hit["image_url"])


def _object_key(source_id: str) -> str:
    return f"{PREFIX}/{Source.objects.get(id=source_id).image_name}"


def _in_process_s3(settings, s3_endpoint: str) -> None:
    """This test process's own image storage, pointed at the same bucket, for the requests it
    makes in process while time is moved (the service's processes keep their own clock)."""
    settings.STORAGES = {
        **settings.STORAGES,
        "images": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": BUCKET,
                "endpoint_url": s3_endpoint,
                "region_name": REGION,
                "access_key": CREDENTIALS["AWS_ACCESS_KEY_ID"],
                "secret_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                "location": PREFIX,
            },
        },
    }


def _path(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def test_it_stores_the_clean_picture_in_the_bucket_and_links_it_for_an_hour(
    alice, bucket, s3_server, s3_endpoint, images_dir: Path, settings
):
    original = encode(photo((320, 200)), "png", exif=gps_exif())
    # The upload really carries a position and a camera, so their absence below means something.
    assert Image.open(io.BytesIO(original)).getexif().get_ifd(ExifTags.IFD.GPSInfo)
    headers = _token(alice)
    uploaded = _uploaded(s3_server, headers, original, "Sunset over the Seine with Maya.")
    source_id = uploaded["source_id"]

    key = _object_key(source_id)
    assert _keys(bucket) == [key]
    assert key.startswith(f"{PREFIX}/{alice.id}/")
    stored = bucket.get_object(Bucket=BUCKET, Key=key)
    assert stored["ContentType"] == "image/png"
    data = stored["Body"].read()
    picture = Image.open(io.BytesIO(data))
    assert picture.format == "PNG" and picture.size == (320, 200)
    assert dict(picture.getexif()) == {}
    for needle in (b"PhoneMaker", b"Pocket 12", b"eXIf", b"GPS"):
        assert needle not in data, needle
    # Private: no grant to everyone, and the endpoint refuses a request without the keys.
    grants = bucket.get_object_acl(Bucket=BUCKET, Key=key)["Grants"]
    assert all(grant["Grantee"].get("URI") != ALL_USERS for grant in grants)
    assert httpx.get(f"{s3_endpoint}/{BUCKET}/{key}", timeout=10).status_code == 403
    # Nothing went to a folder instead.
    assert not list(images_dir.rglob(f"{source_id}*"))

    url = _recalled_link(s3_server, headers, "sunset over the Seine", source_id)
    assert url.startswith(f"{s3_server.url}/api/v1/images/{source_id}?sig=")
    served = httpx.get(url, timeout=10)  # no credentials: the link is the access
    assert served.status_code == 200
    assert served.headers["Content-Type"] == "image/png"
    assert served.headers["Cache-Control"] == "no-store, private"
    assert served.content == data
    # The export reads the same object.
    export = httpx.get(f"{s3_server.url}/api/v1/export", headers=headers, timeout=60)
    assert export.status_code == 200
    [record] = [line for line in map(json.loads, export.text.splitlines()) if line["type"] == "source"]
    assert base64.b64decode(record["image"]["data_base64"]) == data

    # The service's processes cannot be moved in time; the same link is asked of this process's
    # copy of the service (same code, same SECRET_KEY), reading the same bucket.
    _in_process_s3(settings, s3_endpoint)
    issued = timezone.now()
    with time_machine.travel(issued + timedelta(minutes=59), tick=False):
        within = Client().get(_path(url))
        assert within.status_code == 200
        assert within.getvalue() == data
    with time_machine.travel(issued + timedelta(minutes=61), tick=False):
        expired = Client().get(_path(url))
        assert expired.status_code == 410
        assert expired.json()["error"]["code"] == "image_link_expired"
        assert expired["Cache-Control"] == "no-store, private"


def test_a_hard_delete_removes_the_object_and_an_outsider_can_neither_fetch_nor_delete_it(
    alice, bob, bucket, s3_server, s3_endpoint
):
    alice_headers, bob_headers = _token(alice), _token(bob)
    alice_upload = _uploaded(s3_server, alice_headers, encode(photo((300, 180)), "png"), "The garden in May.")
    bob_upload = _uploaded(s3_server, bob_headers, encode(photo((200, 120)), "png"), "Bob's bike.")
    alice_source, bob_source = alice_upload["source_id"], bob_upload["source_id"]
    alice_key, bob_key = _object_key(alice_source), _object_key(bob_source)
    assert _keys(bucket) == sorted([alice_key, bob_key])
    [alice_memory] = alice_upload["job"]["memories"]
    alice_url = alice_memory["image_url"]

    # Bob guessing: Alice's picture's path without a signature, with a forged one, with his own.
    bob_signature = parse_qs(urlsplit(bob_upload["job"]["memories"][0]["image_url"]).query)["sig"][0]
    good = parse_qs(urlsplit(alice_url).query)["sig"][0]
    forged = good[:-1] + ("A" if good[-1] != "A" else "B")
    for query in ("", urlencode({"sig": forged}), urlencode({"sig": bob_signature})):
        guessed = httpx.get(f"{s3_server.url}/api/v1/images/{alice_source}?{query}", timeout=10)
        assert guessed.status_code == 403, query
        assert guessed.json()["error"]["code"] == "image_link_invalid"
    # Nor at the bucket itself, without its keys.
    assert httpx.get(f"{s3_endpoint}/{BUCKET}/{alice_key}", timeout=10).status_code == 403
    assert httpx.delete(f"{s3_endpoint}/{BUCKET}/{alice_key}", timeout=10).status_code == 403
    # Bob deleting Alice's memory finds nothing, and nothing goes.
    memory_url = f"{s3_server.url}/api/v1/memories/{alice_memory['id']}"
    refused = httpx.delete(memory_url, headers=bob_headers, timeout=30)
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "memory_not_found"
    assert _keys(bucket) == sorted([alice_key, bob_key])
    assert httpx.get(alice_url, timeout=10).status_code == 200

    deleted = httpx.delete(memory_url, headers=alice_headers, timeout=30)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["receipt"]["purged"]["images_deleted"] == 1
    assert _keys(bucket) == [bob_key]
    gone = httpx.get(alice_url, timeout=10)
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "image_not_found"
    assert httpx.get(bob_upload["job"]["memories"][0]["image_url"], timeout=10).status_code == 200
