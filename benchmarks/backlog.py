"""Under a backlog, the pipeline must not collapse (issue 44): the embedded broker's cost per look for
a message at 10 and 10,000 queued messages, and the worker's throughput with a short queue beside its
throughput with a backlog of 10,000 saves, on one throwaway service (`manage.py up`: embedded
PostgreSQL, the embedded filesystem broker, the real worker and model).

    .venv/bin/python benchmarks/backlog.py [--backlog 10000] [--seconds 60] [--window 64]

1. Polls (in this process, on a temporary broker folder): the time of a look at a queue that holds
   10 or 10,000 messages (taking one), and of a look at an empty queue beside them (a worker's
   control queue), by config.broker's channel and, for comparison, by kombu's stock one on the same
   folder.
2. Short queue: saves made in this process through the service layer (`remember`, published as a
   save over the API is), kept at `--window` waiting at most, for `--seconds`: the worker is never
   idle and its queue never long. Jobs finished per second.
3. Backlog: `--backlog` saves made at once (a thousand per transaction, each published after its
   commit), then, once the worker has started on them, jobs finished per second over `--seconds`,
   the recovery sweep run every 15 s meanwhile (as beat does; its own message would wait behind
   the backlog) and the broker's messages counted after each sweep.

Each phase saves as a user of its own. The machine's other work shows in both phases alike; the
phases run one after the other, so say how busy the machine was.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
import uuid
from functools import partial
from pathlib import Path
from queue import Empty
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._service import running_service, use_service_database

SWEEP_EVERY = 15.0


def _poll_figures(looks: int = 200) -> list[tuple[int, str, float, float]]:
    """(queued, channel, ms per look taking a message, ms per look at an empty queue): each channel
    takes `looks` messages (10 at 10 queued) from a queue that then still holds `queued`, then looks
    `looks` times at an empty queue beside it."""
    from kombu import Connection
    from kombu.transport import filesystem

    rows = []
    for queued in (10, 10_000):
        for label in ("config.broker", "kombu stock"):
            with tempfile.TemporaryDirectory() as folder:
                options: dict[str, Any] = {"store_processed": False, "polling_interval": 3600.0}
                options["data_folder_in"] = options["data_folder_out"] = str(Path(folder) / "queue")
                options["control_folder"] = str(Path(folder) / "control")
                options["processed_folder"] = str(Path(folder) / "processed")
                for name in ("queue", "control", "processed"):
                    (Path(folder) / name).mkdir()
                with Connection(transport="config.broker:Transport", transport_options=options) as conn:
                    channel: Any = conn.default_channel
                    tasks, control = f"tasks-{uuid.uuid4().hex[:6]}", f"control-{uuid.uuid4().hex[:6]}"
                    taken = min(looks, queued)
                    for n in range(queued + taken):
                        channel._put(tasks, {"body": n})
                    get = (
                        channel._get
                        if label == "config.broker"
                        else partial(filesystem.Channel._get, channel)
                    )
                    started = time.perf_counter()
                    for _ in range(taken):
                        get(tasks)
                    taking = (time.perf_counter() - started) / taken * 1000
                    started = time.perf_counter()
                    for _ in range(looks):
                        with contextlib.suppress(Empty):
                            get(control)
                    empty = (time.perf_counter() - started) / looks * 1000
                    rows.append((queued, label, taking, empty))
    return rows


def _save(caller: Any, n: int) -> None:
    from memories.services.memories import remember

    remember(caller=caller, content=f"Note {n}: the locker at gym {n} has code {n * 7919 % 10007}.")


def _caller(email: str) -> Any:
    from accounts.caller import ALL_SCOPES, Caller
    from memories.services.account import user_sign_up

    user = user_sign_up(email=email, password="bench-password-123")  # noqa: S106 - a throwaway service's
    return Caller(user=user, scopes=ALL_SCOPES)


def _done(user: Any) -> int:
    from memories.models import Job

    return Job.objects.filter(owner=user, status__in=[Job.Status.SUCCEEDED, Job.Status.FAILED]).count()


def _waiting(user: Any) -> int:
    from memories.models import Job

    return Job.objects.filter(owner=user, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).count()


def _short_queue(seconds: float, window: int) -> float:
    caller = _caller("short@example.com")
    n = 0
    # Fill the window and let the worker get going before the clock starts.
    while _done(caller.user) < window:
        while _waiting(caller.user) < window:
            _save(caller, n)
            n += 1
        time.sleep(0.05)
    first, started = _done(caller.user), time.monotonic()
    while time.monotonic() - started < seconds:
        for _ in range(window - _waiting(caller.user)):
            _save(caller, n)
            n += 1
        time.sleep(0.05)
    return (_done(caller.user) - first) / (time.monotonic() - started)


def _backlog(count: int, seconds: float, messages: Any) -> tuple[float, list[tuple[int, int]], int]:
    from django.db import transaction

    from memories.tasks import recover_jobs

    caller = _caller("backlog@example.com")
    for start in range(0, count, 1000):
        with transaction.atomic():
            for n in range(start, min(start + 1000, count)):
                _save(caller, n)
    print(f"backlog of {count} saves made; {messages()} messages in the queue", flush=True)
    while _done(caller.user) == 0:
        time.sleep(0.2)
    first, started = _done(caller.user), time.monotonic()
    sweeps: list[tuple[int, int]] = []
    next_sweep = started
    while time.monotonic() - started < seconds:
        if time.monotonic() >= next_sweep:
            sent = recover_jobs()
            sweeps.append((sent, messages()))
            next_sweep += SWEEP_EVERY
        time.sleep(0.2)
    rate = (_done(caller.user) - first) / (time.monotonic() - started)
    return rate, sweeps, _waiting(caller.user)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backlog", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--polls-only", action="store_true", help="only the broker's cost per look")
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="deeprecall-backlog-"))
    use_service_database(data_dir)
    print("ms per look        queued  taking one  at an empty queue beside it")
    for queued, label, taking, empty in _poll_figures():
        print(f"{label:<16} {queued:>8}  {taking:>10.3f}  {empty:>10.3f}", flush=True)
    if args.polls_only:
        return

    queue = data_dir / "broker" / "queue"

    def messages() -> int:
        return len(list(queue.glob("*.celery.msg")))

    with running_service(var_dir=data_dir):
        short = _short_queue(args.seconds, args.window)
        print(f"short queue (at most {args.window} waiting): {short:.1f} jobs/s", flush=True)
        rate, sweeps, left = _backlog(args.backlog, args.seconds, messages)
    print(
        f"backlog of {args.backlog}: {rate:.1f} jobs/s ({rate / short:.2f}x the short queue's), {left} left"
    )
    for i, (sent, count) in enumerate(sweeps, 1):
        print(f"  sweep {i}: re-sent {sent}, {count} messages in the queue after it")
    import shutil

    shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
