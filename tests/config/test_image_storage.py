"""Where pictures are stored: a folder under var/ by default, an S3-compatible bucket when asked,
and no silent fallback when the bucket is not named. Settings are read in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT

PROBE = """
import json, django
django.setup()
from django.core.files.storage import storages
storage = storages["images"]
names = {"bucket": "bucket_name", "endpoint": "endpoint_url", "acl": "default_acl"}
found = {key: getattr(storage, name, None) for key, name in names.items()}
print(json.dumps({"class": type(storage).__name__, **found, "location": str(storage.location)}))
"""


def _probe(**env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("IMAGE_", "DEEPRECALL_IMAGES"))}
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_stores_pictures_in_a_folder_of_var_by_default():
    result = _probe()
    assert result.returncode == 0, result.stderr
    storage = json.loads(result.stdout)
    assert storage["class"] == "FileSystemStorage"
    assert storage["location"].endswith("/var/images")


def test_it_stores_pictures_in_a_private_s3_compatible_bucket_when_asked():
    result = _probe(
        IMAGE_STORAGE="s3", IMAGE_S3_BUCKET="recall-images", IMAGE_S3_ENDPOINT_URL="https://s3.example.test"
    )
    assert result.returncode == 0, result.stderr
    storage = json.loads(result.stdout)
    assert storage == {
        "class": "S3Storage",
        "bucket": "recall-images",
        "endpoint": "https://s3.example.test",
        "acl": "private",
        "location": "images",
    }


def test_it_refuses_s3_without_a_bucket():
    result = _probe(IMAGE_STORAGE="s3")
    assert result.returncode != 0
    assert "IMAGE_STORAGE=s3 needs IMAGE_S3_BUCKET" in result.stderr
