"""The operator's management commands: accounts, tokens, purge, the pipeline, re-running a job.

Each goes through the same services as the dashboard; a refusal is one line, never a traceback.
"""

from __future__ import annotations

import io
import json
import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from accounts.models import PersonalAccessToken, User
from memories.models import AuditEvent, Job, Memory
from tests.conftest import PASSWORD, run_manage
from tests.helpers import pat_client, wait_for_job

COMMANDS = [
    "user_create",
    "user_list",
    "token_create",
    "token_revoke",
    "user_purge",
    "pipeline_status",
    "job_rerun",
]


def _run(name: str, *args: str, stdin: str = "") -> str:
    out = io.StringIO()
    import sys

    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        call_command(name, *args, stdout=out, stderr=io.StringIO())
    finally:
        sys.stdin = saved
    return out.getvalue()


@pytest.mark.parametrize("name", COMMANDS)
def test_it_explains_itself_with_help(name):
    result = run_manage(name, "--help", timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: manage.py " + name)
    assert len(result.stdout.split("\n\n")[1]) > 40  # the description, not just the usage


@pytest.mark.django_db
class TestAccounts:
    def test_it_creates_an_account_as_sign_up_does(self):
        out = _run("user_create", "--email", "Dana@Example.com", stdin=PASSWORD + "\n")
        dana = User.objects.get(email="dana@example.com")
        assert out.startswith("created dana@example.com")
        assert dana.check_password(PASSWORD)
        assert dana.spaces.filter(is_default=True).count() == 1
        assert AuditEvent.objects.filter(
            owner_id_snapshot=dana.id, action=AuditEvent.Action.ACCOUNT_CREATED
        ).exists()

    def test_it_refuses_a_taken_email_and_a_weak_password(self, alice):
        with pytest.raises(CommandError, match="already exists"):
            _run("user_create", "--email", "alice@example.com", stdin=PASSWORD + "\n")
        with pytest.raises(CommandError, match="password"):
            _run("user_create", "--email", "erin@example.com", stdin="123\n")
        assert not User.objects.filter(email="erin@example.com").exists()

    def test_it_lists_every_account(self, alice, bob):
        rows = json.loads(_run("user_list", "--json"))
        assert [r["email"] for r in rows] == ["alice@example.com", "bob@example.com"]
        assert rows[0]["id"] == str(alice.id)

    def test_it_purges_an_account_with_a_receipt_only_when_confirmed(self, alice, bob):
        with pytest.raises(CommandError, match="add --yes"):
            _run("user_purge", "--email", "alice@example.com")
        assert User.objects.filter(id=alice.id).exists()
        receipt = json.loads(_run("user_purge", "--email", "alice@example.com", "--yes"))
        assert not User.objects.filter(id=alice.id).exists()
        assert User.objects.filter(id=bob.id).exists()
        assert receipt["purged"]["spaces"] == 1
        assert AuditEvent.objects.filter(
            action=AuditEvent.Action.ACCOUNT_DELETED, target_id=str(alice.id)
        ).exists()


@pytest.mark.django_db
class TestTokens:
    def test_it_creates_a_token_that_works_and_revokes_it(self, alice):
        raw = _run("token_create", "--email", "alice@example.com", "--name", "cli").strip()
        assert raw.startswith("drp_")
        client = pat_client(alice)
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        assert client.get("/api/v1/memories").status_code == 200
        token = PersonalAccessToken.objects.get(user=alice, name="cli")
        assert token.scope_set == {"memory:read", "memory:write"}
        listing = _run("token_revoke", "--email", "alice@example.com")
        assert str(token.id) in listing and "active" in listing
        _run("token_revoke", "--email", "alice@example.com", str(token.id))
        assert client.get("/api/v1/memories").status_code == 401

    def test_it_refuses_a_bad_scope_and_another_accounts_token(self, alice, charlie):
        with pytest.raises(CommandError, match="invalid_scope"):
            _run("token_create", "--email", "alice@example.com", "--name", "x", "--scopes", "memory:admin")
        _run("token_create", "--email", "alice@example.com", "--name", "alices")
        alices = PersonalAccessToken.objects.get(user=alice, name="alices")
        with pytest.raises(CommandError, match="token_not_found"):
            _run("token_revoke", "--email", "charlie@example.com", str(alices.id))
        alices.refresh_from_db()
        assert alices.revoked_at is None


@pytest.mark.django_db
class TestPipeline:
    def test_it_shows_the_queue_the_stuck_jobs_and_the_failures(self, alice):
        space = alice.spaces.get(is_default=True)
        stuck = Job.objects.create(
            owner=alice, space=space, kind=Job.Kind.REMEMBER, created_at=timezone.now() - timedelta(minutes=5)
        )
        fresh = Job.objects.create(owner=alice, space=space, kind=Job.Kind.REMEMBER)
        failed = Job.objects.create(
            owner=alice,
            space=space,
            kind=Job.Kind.REMEMBER,
            status=Job.Status.FAILED,
            error_code="retries_exhausted",
            finished_at=timezone.now(),
        )
        report = json.loads(_run("pipeline_status", "--json"))
        assert report["counts"] == {"queued": 2, "running": 0, "succeeded": 0, "failed": 1}
        assert 290 <= report["oldest_queued_seconds"] <= 400
        assert [r["id"] for r in report["stuck"]] == [str(stuck.id)]
        assert str(fresh.id) not in json.dumps(report["stuck"])
        assert [(r["id"], r["error_code"]) for r in report["recent_failures"]] == [
            (str(failed.id), "retries_exhausted")
        ]
        text = _run("pipeline_status")
        assert "queued 2" in text and str(stuck.id) in text

    def test_it_refuses_to_rerun_an_unknown_or_unfailed_job(self, alice):
        with pytest.raises(CommandError, match="job_not_found"):
            _run("job_rerun", str(uuid.uuid4()))
        queued = Job.objects.create(
            owner=alice, space=alice.spaces.get(is_default=True), kind=Job.Kind.REMEMBER
        )
        with pytest.raises(CommandError, match="only a failed job"):
            _run("job_rerun", str(queued.id))
        with pytest.raises(CommandError, match="not a job id"):
            _run("job_rerun", "nope")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_reruns_a_failed_job_on_a_real_worker_without_doubling(alice, celery_worker):
    client = pat_client(alice)
    response = client.post("/api/v1/memories", {"content": "I moved to Lisbon in 2021."}, format="json")
    assert response.status_code in (201, 202), response.json()
    job = wait_for_job(response.json()["job"]["id"])
    assert job.status == Job.Status.SUCCEEDED
    memories = set(Memory.objects.filter(owner=alice).values_list("id", flat=True))
    assert memories
    # As a job looks after its retries ran out.
    Job.objects.filter(id=job.id).update(status=Job.Status.FAILED, error_code="retries_exhausted")
    out = _run("job_rerun", str(job.id))
    assert out.startswith(f"re-queued {job.id}")
    job = wait_for_job(job.id)
    assert job.status == Job.Status.SUCCEEDED and job.error_code == ""
    assert set(Memory.objects.filter(owner=alice).values_list("id", flat=True)) == memories


@pytest.mark.parametrize(
    "args",
    [
        ("user_purge", "--email", "nobody@example.com", "--yes"),
        ("token_create", "--email", "nobody@example.com", "--name", "x"),
        ("token_revoke", "--email", "nobody@example.com"),
    ],
    ids=lambda args: args[0],
)
def test_it_says_an_unknown_account_in_one_line(args, child_env):
    result = run_manage(*args, env=child_env, timeout=60)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["CommandError: no account has the email 'nobody@example.com'; see manage.py user_list"]
