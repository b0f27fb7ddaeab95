"""Rules with one home: one supersede, one purge with one receipt, one orphan clean-up, and every
account write through an audited service. Each test fails when a second copy comes back.

The behaviour of each rule is tested where it shows (test_forget, test_relation_delete,
test_spaces, test_recall, test_graph_profile ...); here the rule is held to its one place, and the
shapes every surface returns are held to each other.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.caller import ALL_SCOPES, Actor, Caller
from accounts.models import User
from memories.as_of import world_start
from memories.models import AuditEvent, Memory, Relation
from memories.services.account import account_delete
from memories.services.purge import PURGE_COUNTS
from memories.services.relations import relation_record
from memories.services.spaces import space_create, space_delete
from tests.helpers import pat_client, wait_for_job

ROOT = Path(__file__).resolve().parents[2]
CODE = ROOT / "memories"


def _lines_matching(pattern: re.Pattern[str], *, allowed: tuple[str, ...]) -> list[str]:
    found = []
    for path in sorted(list(CODE.rglob("*.py")) + list((ROOT / "accounts").rglob("*.py"))):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith((*allowed, "memories/migrations/", "accounts/migrations/")):
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if pattern.search(line):
                found.append(f"{relative}:{number}: {line.strip()}")
    return found


# --- one supersede ------------------------------------------------------------------------------


def test_it_closes_rows_in_one_place_only():
    # Closing a row (superseded_at / superseded_by written) happens in memories.pipeline.supersede.
    # The one other writer is an import of our own export, which judges nothing: it copies the
    # history the export recorded onto the rows the engine made again (docs/decisions.md).
    closing = re.compile(r"\.superseded_(at|by)\s*=(?!=)")
    allowed = ("memories/pipeline/supersede.py", "memories/worker/restore.py")
    assert _lines_matching(closing, allowed=allowed) == []


@pytest.mark.django_db(transaction=True)
def test_it_supersedes_memories_and_relations_by_the_same_rule(alice, celery_worker):
    # The memory side: a later value of the same slot replaces the earlier one.
    client = pat_client(alice)
    for text in ("I live in Paris.", "I moved to Berlin."):
        response = client.post("/api/v1/memories", {"content": text, "wait": 20}, format="json")
        wait_for_job(response.json()["job"]["id"])
    paris = Memory.objects.get(owner=alice, content__contains="Paris")
    berlin = Memory.objects.get(owner=alice, content__contains="Berlin")
    # The relation side, through relate: the same subject's later single-valued object replaces it.
    caller = Caller(user=alice, scopes=ALL_SCOPES, via="session")
    first = relation_record(caller=caller, source_name="Me", target_name="Paris", relation_type="lives_in")
    second = relation_record(caller=caller, source_name="Me", target_name="Berlin", relation_type="lives_in")
    old_relation = Relation.objects.get(id=first.relation.id)
    for older, newer in ((paris, berlin), (old_relation, second.relation)):
        older.refresh_from_db()
        assert older.superseded_by_id == newer.id
        # Valid until the new row starts in the world, kept as history, contradicted by the new claim.
        assert older.valid_until == world_start(newer)
        assert older.evidence.filter(stance="contradicts").count() == 1


# --- one purge, one receipt -----------------------------------------------------------------------


def test_it_clears_orphaned_entities_and_writes_hard_delete_rows_in_one_place_only():
    orphans = re.compile(r"memories__isnull=True")
    assert _lines_matching(orphans, allowed=("memories/services/purge.py",)) == []
    hard_delete_rows = re.compile(r"Action\.HARD_DELETED|Action\.ACCOUNT_DELETED")
    allowed = ("memories/services/purge.py", "memories/services/account.py", "memories/selectors/audit.py")
    assert _lines_matching(hard_delete_rows, allowed=allowed) == []
    # The receipt is built by one function.
    receipt_keys = re.compile(r"[\"']audit_event_id[\"']\s*:")
    assert _lines_matching(receipt_keys, allowed=("memories/wire.py",)) == []


RECEIPT_KEYS = {"target_type", "target_id", "reason", "purged", "audit_event_id", "purged_at"}


@pytest.mark.django_db
def test_every_hard_delete_answers_with_the_same_receipt(alice, bob):
    caller = Caller(user=alice, scopes=ALL_SCOPES, via="session")
    relation = relation_record(
        caller=caller, source_name="Ana", target_name="Lisbon", relation_type="lives_in"
    ).relation
    client = pat_client(alice)
    relation_receipt = client.delete(f"/api/v1/relations/{relation.id}").json()["receipt"]
    extra = space_create(actor=Actor.owner_acting(alice), name="Work")
    space_receipt = space_delete(actor=Actor.owner_acting(alice), space_id=extra.id, memories="delete")[
        "receipt"
    ]
    account_receipt = account_delete(actor=Actor.owner_acting(bob))
    receipts = {"relation": relation_receipt, "space": space_receipt, "account": account_receipt}
    for target_type, receipt in receipts.items():
        assert set(receipt) == RECEIPT_KEYS | {f"{target_type}_id"}, target_type
        assert receipt["target_type"] == target_type
        assert receipt[f"{target_type}_id"] == receipt["target_id"]
        assert list(receipt["purged"])[: len(PURGE_COUNTS)] == list(PURGE_COUNTS)
        event = AuditEvent.objects.get(id=receipt["audit_event_id"])
        assert str(event.target_id) == receipt["target_id"]
        assert receipt["purged_at"] == event.created_at.isoformat()
    assert relation_receipt["purged"]["relations"] == 1
    assert set(account_receipt["purged"]) > set(PURGE_COUNTS)  # what the account itself held


# --- every account write audited ----------------------------------------------------------------


def test_surfaces_write_credentials_only_through_audited_services():
    # accounts.services writes credential rows without an audit row; memories.services.account wraps
    # each of them with one. Views, API endpoints, tools and the gateway call the wrappers.
    raw_writes = re.compile(r"\b(pat_create|pat_revoke)\b")
    allowed = ("accounts/", "memories/services/")
    assert _lines_matching(raw_writes, allowed=allowed) == []
    gateway = [
        f"{path.name}:{n}"
        for path in sorted((ROOT / "mcp_gateway").rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if raw_writes.search(line)
    ]
    assert gateway == []


def _session(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_creating_and_revoking_a_token_over_rest_leaves_audit_rows(alice):
    created = _session(alice).post(
        "/api/v1/tokens", {"name": "laptop", "scopes": ["memory:read"]}, format="json"
    )
    assert created.status_code == 201, created.json()
    token_id = created.json()["id"]
    assert _session(alice).delete(f"/api/v1/tokens/{token_id}").status_code == 200
    # Revoking again changes nothing and records nothing more.
    assert _session(alice).delete(f"/api/v1/tokens/{token_id}").status_code == 200
    rows = list(
        AuditEvent.objects.filter(owner_id_snapshot=alice.id, target_id=token_id)
        .order_by("created_at")
        .values_list("action", "target_type")
    )
    assert rows == [("token_created", "personal_access_token"), ("token_revoked", "personal_access_token")]
    assert created.json()["token"] not in str(AuditEvent.objects.values_list("detail", flat=True))


@pytest.mark.django_db
def test_signing_up_and_changing_the_password_leave_audit_rows_without_secrets(client):
    password, new_password = "a long enough passphrase 1", "another long passphrase 2"
    response = client.post(reverse("account:signup"), {"email": "dana@example.com", "password": password})
    assert response.status_code == 302
    response = client.post(
        reverse("account:password-change"),
        {"old_password": password, "new_password1": new_password, "new_password2": new_password},
    )
    assert response.status_code == 302
    dana = User.objects.get(email="dana@example.com")
    assert dana.check_password(new_password)
    rows = list(
        AuditEvent.objects.filter(owner_id_snapshot=dana.id)
        .order_by("created_at")
        .values_list("action", "detail")
    )
    assert rows == [
        ("account_created", {}),
        # The post names no sign-out choice: the safe one (tests/accounts/test_password_sign_out.py).
        (
            "password_changed",
            {
                "changed": "changed",
                "signed_out": True,
                "sign_out_field": "absent",
                "access_tokens": 0,
                "refresh_tokens": 0,
                "grants": 0,
                "personal_access_tokens": 0,
            },
        ),
    ]
    assert password not in str(rows) and new_password not in str(rows)
