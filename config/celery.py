"""The Celery application. Tasks bind to this app explicitly (`@app.task`)."""

from __future__ import annotations

import os
from pathlib import Path

from celery import Celery
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("deeprecall")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["memories"])


def ensure_broker_folders() -> None:
    """The filesystem broker needs its folders before the first publish or poll."""
    for key in ("data_folder_in", "data_folder_out", "control_folder", "processed_folder"):
        folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get(key)
        if folder:
            Path(str(folder)).mkdir(parents=True, exist_ok=True)


ensure_broker_folders()
