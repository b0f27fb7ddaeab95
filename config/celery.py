"""The Celery application. Tasks bind to this app explicitly (`@app.task`)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun
from django.conf import settings
from django.db import close_old_connections
from kombu.exceptions import ChannelError
from kombu.exceptions import OperationalError as BrokerError

from config.boundary import settings_load

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A configuration mistake is one line and exit status 2 under `celery -A config ...` as well.
settings_load()

app = Celery("deeprecall")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["memories"])

# How often the recovery sweep (`memories.recover_jobs`) sends the jobs the database says need a
# worker. Often, so a save whose publish failed waits seconds, not minutes; the sweep is one indexed
# query when there is nothing to send.
RECOVERY_INTERVAL_SECONDS = 15.0

# Expired tokens, unused anonymous registrations and old code records (accounts.oauth).
OAUTH_HOUSEKEEPING_INTERVAL_SECONDS = 3600.0

# Celery beat sends the sweeps; exactly one beat may run per deployment (docs/deploy.md), or every
# beat would sweep. `manage.py up` runs it inside its worker (`celery worker -B`).
app.conf.beat_schedule = {
    "recover-jobs": {"task": "memories.recover_jobs", "schedule": RECOVERY_INTERVAL_SECONDS},
    "oauth-housekeeping": {
        "task": "accounts.oauth_housekeeping",
        "schedule": OAUTH_HOUSEKEEPING_INTERVAL_SECONDS,
    },
}
# Beat's own default is ./celerybeat-schedule, wherever it was started (a home folder, say);
# it belongs with the service's other state.
app.conf.beat_schedule_filename = str(settings.VAR_DIR / "celerybeat-schedule")
# Beat opens the file without creating its folder: a fresh DEEPRECALL_VAR_DIR killed beat at start.
# Unwritable is left for beat to report (the unit's state folder is the usual answer).
with contextlib.suppress(OSError):
    settings.VAR_DIR.mkdir(parents=True, exist_ok=True)


# Celery's Django fixup closes every database connection before and after each task, and in a prefork
# pool process with Django's connection pool it closes that pool too: every task opened a pool (its
# threads started) and a new PostgreSQL connection (a backend forked, authenticated, configured),
# a sixth of a worker process's time at ingest concurrency 8 (docs/pipeline.md, 4 December 2026).
# With a reuse count the fixup closes them only every this many tasks; in between, _connections_back
# hands the connection back to the pool after each task as Django does after each request, and the
# pool checks it before the next task takes it (CONN_HEALTH_CHECKS), so one a database restart broke
# is replaced, not used.
app.conf["CELERY_DB_REUSE_MAX"] = 1000


@task_prerun.connect(weak=False)
@task_postrun.connect(weak=False)
def _connections_back(sender: object = None, **kwargs: object) -> None:
    # Not for a task applied in the caller's process (`apply()`): its connection is the caller's,
    # maybe inside the caller's transaction. The fixup leaves those alone too.
    if getattr(getattr(sender, "request", None), "is_eager", False):
        return
    close_old_connections()


def queue_depth() -> int | None:
    """How many messages the broker's task queue holds (waiting, not yet taken by a worker), or None
    when the broker cannot be reached: the recovery sweep compares it with the jobs waiting for a
    message (memories.selectors.jobs.jobs_to_recover). A passive declare, which every broker answers
    with the queue's length (the filesystem broker counts its files, Redis its list's length); a
    queue that does not exist (Redis drops an empty list) holds none."""
    try:
        with app.connection_for_read() as connection:
            connection.ensure_connection(max_retries=2)
            # A virtual or AMQP channel: kombu's stubs type it as the bare StdChannel.
            channel: Any
            with connection.channel() as channel:
                try:
                    declared = channel.queue_declare(queue=app.conf.task_default_queue, passive=True)
                except ChannelError:
                    return 0
                return int(declared.message_count)
    except (BrokerError, OSError):
        return None


def ensure_broker_folders() -> None:
    """The filesystem broker needs its folders before the first publish or poll."""
    for key in ("data_folder_in", "data_folder_out", "control_folder", "processed_folder"):
        folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get(key)
        if folder:
            Path(str(folder)).mkdir(parents=True, exist_ok=True)


ensure_broker_folders()
