"""Each long-running process settles once it has started (config.runtime): the objects made while
starting are frozen out of the garbage collector's walks, and young collections run every 50,000
allocations instead of every 700. Checked in child processes, each started as the service starts
its own: the web's ASGI lifespan, and the worker's signals for its pool processes and main process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from config.runtime import THRESHOLDS
from tests.conftest import ROOT

_WEB = """
import asyncio, gc, json
from config import asgi

async def main():
    before = {"frozen": gc.get_freeze_count(), "threshold": list(gc.get_threshold())}
    sent, messages = [], [{"type": "lifespan.startup"}]

    async def receive():
        if messages:
            return messages.pop(0)
        await asyncio.sleep(3600)

    async def send(message):
        sent.append(message)

    task = asyncio.create_task(asgi.application({"type": "lifespan"}, receive, send))
    while not sent:
        await asyncio.sleep(0.01)
    after = {"frozen": gc.get_freeze_count(), "threshold": list(gc.get_threshold())}
    print(json.dumps({"started": sent[0]["type"], "before": before, "after": after}))
    task.cancel()

asyncio.run(main())
"""

_WORKER = """
import gc, json, sys
import django
django.setup()
from celery.signals import {signal}
import memories.tasks  # noqa: F401 - connects the worker's signal handlers
before = {{"frozen": gc.get_freeze_count(), "threshold": list(gc.get_threshold())}}
{signal}.send(sender=None)
after = {{"frozen": gc.get_freeze_count(), "threshold": list(gc.get_threshold())}}
print(json.dumps({{"before": before, "after": after}}))
"""


def _child(script: str, env: dict[str, str]) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, **env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _settled(report: dict) -> None:
    assert report["before"]["frozen"] == 0
    assert report["before"]["threshold"] != list(THRESHOLDS)
    # Django, the model's session and tokenizer: far more than a handful of objects.
    assert report["after"]["frozen"] > 50_000
    assert report["after"]["threshold"] == list(THRESHOLDS)


def test_a_web_process_settles_when_its_lifespan_has_started(child_env):
    report = _child(_WEB, child_env)
    assert report["started"] == "lifespan.startup.complete"
    _settled(report)


def test_a_worker_pool_process_settles_when_it_starts(child_env):
    _settled(_child(_WORKER.format(signal="worker_process_init"), child_env))


def test_the_worker_main_process_settles_when_it_is_ready(child_env):
    report = _child(_WORKER.format(signal="worker_ready"), child_env)
    assert report["before"]["frozen"] == 0
    assert report["after"]["frozen"] > 0
    assert report["after"]["threshold"] == list(THRESHOLDS)
