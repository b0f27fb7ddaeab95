"""Where one save's CPU goes, measured in one process: SQL statements and CPU time of the web side
(one REST save, `POST /api/v1/operations/remember`) and of the worker side (batches of short saves
through `job_process`, as the messages would run them), on the real database and the real model.

    .venv/bin/python benchmarks/ingest_profile.py [--saves 64] [--profile 25]

Statement counts and process CPU time do not move with the machine's load the way wall time does,
so two commits compare by these. It makes a throwaway data folder (embedded PostgreSQL), migrates
it, and prints: statements per REST save, statements per job in a batch of 16 and alone, CPU ms
per save on each side, and with --profile N the top N functions of the worker's cProfile (by
cumulative time, then by own time).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._service import ROOT
from benchmarks.ingest import note  # the same notes as the service benchmark


def _top(profile: cProfile.Profile, title: str, count: int, order: str = "cumulative") -> None:
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats(order).print_stats(count)
    print(title)
    print(out.getvalue())


class Statements:
    """Counts the statements this process sends (connection.execute_wrapper), by kind and table.

    An execute wrapper, not CaptureQueriesContext: a request closes its connection at the end, and
    the wrapper counts across that."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        words = sql.split()
        head = words[0] if words else ""
        if head in ("SELECT", "INSERT", "UPDATE", "DELETE"):
            tail = sql.split(" FROM ", 1)[1] if head == "SELECT" and " FROM " in sql else " ".join(words[1:4])
            table = next((w for w in tail.replace("INTO", "").split() if w.startswith('"')), "")
            self.kinds[f"{head} {table.strip(chr(34))}"] += 1
        else:
            self.kinds[" ".join(w for w in words[:2] if not w.startswith('"'))] += 1
        return execute(sql, params, many, context)

    @property
    def total(self) -> int:
        return sum(self.kinds.values())

    def table(self, per: int) -> str:
        return "\n".join(f"    {n / per:6.2f}  {kind}" for kind, n in self.kinds.most_common())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--saves", type=int, default=64, help="saves through the worker, in batches of 16")
    parser.add_argument("--profile", type=int, default=0, help="print the top N of the worker's cProfile")
    parser.add_argument("--verbose", action="store_true", help="print the statements by kind")
    args = parser.parse_args()

    var_dir = Path(tempfile.mkdtemp(prefix="deeprecall-ingest-profile-"))
    os.environ["DEEPRECALL_VAR_DIR"] = str(var_dir)
    os.environ.setdefault("DEEPRECALL_MODELS_DIR", str(ROOT / "var" / "models"))
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["RATE_LIMIT_SAVE"] = "off"
    try:
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        run(args)
    finally:
        from django.db import connections

        connections.close_all()
        shutil.rmtree(var_dir, ignore_errors=True)


def run(args: argparse.Namespace) -> None:
    from django.conf import settings
    from django.db import connection, transaction
    from django.test import Client

    from accounts.caller import ALL_SCOPES, Caller
    from accounts.services import pat_create
    from memories import embeddings
    from memories.models import Job
    from memories.services.account import user_sign_up
    from memories.services.memories import remember
    from memories.worker.lease import BATCH_MAX
    from memories.worker.run import job_process

    user = user_sign_up(email="profile@example.com", password="profile-password-123")  # noqa: S106
    _, token = pat_create(user=user, name="profile", scopes=["memory:read", "memory:write"])
    hosts = [h for h in settings.ALLOWED_HOSTS if h != "*"]
    host = hosts[0] if hosts else "localhost"
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}", SERVER_NAME=host)
    embeddings.embed(["warm the model up"])

    # The web side: REST saves, one at a time. The first warms the code paths.
    def post(i: int) -> str:
        body = {"content": note(i)}
        response = client.post("/api/v1/operations/remember", body, content_type="application/json")
        assert response.status_code in (200, 201, 202), response.content[:500]
        return str(response.json()["job_id"])

    post(-1)
    web_saves = 20
    web = Statements()
    with connection.execute_wrapper(web):
        for i in range(web_saves):
            post(-2 - i)
    cpu = time.process_time()
    for i in range(web_saves):
        post(-100 - i)
    web_cpu = (time.process_time() - cpu) * 1000 / web_saves
    web_profile = cProfile.Profile()
    web_profile.enable()
    for i in range(web_saves):
        post(-200 - i)
    web_profile.disable()

    def report(label: str, counted: Statements, cpu_ms: float, saves: int) -> None:
        print(f"{label}: {counted.total / saves:.1f} statements per save, {cpu_ms:.1f} ms CPU per save")
        if args.verbose:
            print(counted.table(saves))

    report("web, REST save (in process, the test client included)", web, web_cpu, web_saves)
    # Those saves' jobs are done here (their messages reach no worker), so they do not join the
    # measured batches below.
    for job_id in Job.objects.filter(status=Job.Status.QUEUED).values_list("id", flat=True):
        job_process(job_id=job_id)

    caller = Caller(user=user, scopes=ALL_SCOPES)

    def queue(numbers: range) -> list[Any]:
        with transaction.atomic():
            return [remember(caller=caller, content=note(i)).id for i in numbers]

    # The worker side: saves queued BATCH_MAX at a time, each batch started by its first job's
    # message (the members' own messages each then find their job done: one read).
    def batches(first: int, profile: cProfile.Profile | None = None) -> tuple[Statements, float]:
        counted = Statements()
        spent = 0.0
        for start in range(first, first + args.saves, BATCH_MAX):
            ids = queue(range(start, min(start + BATCH_MAX, first + args.saves)))
            cpu = time.process_time()
            with connection.execute_wrapper(counted):
                if profile is not None:
                    profile.enable()
                for job_id in ids:
                    job_process(job_id=job_id)
                if profile is not None:
                    profile.disable()
            spent += time.process_time() - cpu
        return counted, spent

    # New notes, then the same notes again (evidence for the first ones: dedupe). Every member's
    # own message is included.
    counted, spent = batches(0)
    report(f"worker, batches of {BATCH_MAX}, new notes", counted, spent * 1000 / args.saves, args.saves)
    counted, spent = batches(0)
    report(f"worker, batches of {BATCH_MAX}, the same again", counted, spent * 1000 / args.saves, args.saves)
    statuses = Counter(Job.objects.filter(kind=Job.Kind.REMEMBER).values_list("status", flat=True))
    assert set(statuses) == {"succeeded"}, statuses

    # One job alone (a save whose batch is itself), for the per-job figure without batching.
    alone = 8
    counted = Statements()
    spent = 0.0
    alone_profile = cProfile.Profile()
    for i in range(alone):
        (job_id,) = queue(range(10_000 + i, 10_001 + i))
        cpu = time.process_time()
        with connection.execute_wrapper(counted):
            job_process(job_id=job_id)
        spent += time.process_time() - cpu
    for i in range(alone):
        (job_id,) = queue(range(11_000 + i, 11_001 + i))
        alone_profile.enable()
        job_process(job_id=job_id)
        alone_profile.disable()
    report("worker, one job alone", counted, spent * 1000 / alone, alone)

    if args.profile:
        _top(web_profile, f"web, cProfile of {web_saves} REST saves:", args.profile)
        _top(alone_profile, f"worker, cProfile of {alone} jobs alone:", args.profile)
        profile = cProfile.Profile()
        batches(20_000, profile)
        for order in ("cumulative", "tottime"):
            title = f"worker, cProfile of {args.saves} saves in batches of {BATCH_MAX}, by {order}:"
            _top(profile, title, args.profile, order)


if __name__ == "__main__":
    main()
