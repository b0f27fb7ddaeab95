"""`manage.py pipeline_status`: the queue, the stuck jobs and the latest failures."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from config.celery import queue_depth
from memories.management.operator import as_json
from memories.models import Job
from memories.selectors.jobs import pipeline_summary


def _row(job: Job) -> dict[str, object]:
    return {
        "id": str(job.id),
        "owner": job.owner.email,
        "kind": job.kind,
        "status": job.status,
        "attempts": job.attempts,
        "created_at": job.created_at.isoformat(timespec="seconds"),
        "claimed_by": job.claimed_by,
        "error_code": job.error_code,
    }


class Command(BaseCommand):
    help = (
        "Show the pipeline across every account: jobs by status, the oldest queued job's age, the "
        "stuck jobs (what the recovery sweep re-sends next) and the latest failures "
        "(re-run one with manage.py job_rerun JOB_ID)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON instead of text")
        parser.add_argument("--failures", type=int, default=10, help="how many recent failures (default 10)")

    def handle(self, *args: Any, **options: Any) -> None:
        summary = pipeline_summary(waiting=queue_depth(), failures=options["failures"])
        age = (
            (timezone.now() - summary.oldest_queued_at).total_seconds() if summary.oldest_queued_at else None
        )
        stuck = [_row(j) for j in summary.stuck]
        failures = [_row(j) for j in summary.recent_failures]
        report: dict[str, object] = {
            "counts": summary.counts,
            "oldest_queued_seconds": round(age) if age is not None else None,
            "stuck": stuck,
            "recent_failures": failures,
        }
        if options["json"]:
            self.stdout.write(as_json(report))
            return
        self.stdout.write("jobs: " + ", ".join(f"{status} {n}" for status, n in summary.counts.items()))
        self.stdout.write(
            f"oldest queued: {report['oldest_queued_seconds']} s ago"
            if age is not None
            else "oldest queued: none"
        )
        for title, rows in (("stuck", stuck), ("recent failures", failures)):
            self.stdout.write(f"{title}: {len(rows)}")
            for r in rows:
                self.stdout.write(
                    f"  {r['id']}  {r['status']}  {r['kind']}  {r['owner']}  attempts={r['attempts']}  "
                    f"{r['error_code'] or r['claimed_by']}".rstrip()
                )
