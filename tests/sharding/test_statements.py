"""Every hot statement names exactly one owner: the SQL of save, the batch write, recall, answer,
get_context and purge, captured against the real database and parsed (tests/sharding/owner_sql.py).

A statement that touches a tenant table without holding it to the caller's owner would be sent to
every node of a Citus cluster (docs/scale.md); here it fails with the statement and the table.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.caller import Caller
from memories import sharding
from memories.models import Job, Memory
from memories.operations import registry
from memories.worker.run import job_process
from tests.helpers import pat_client
from tests.sharding.owner_sql import unrouted

pytestmark = pytest.mark.django_db(transaction=True)

ALL_SCOPES = frozenset({"memory:read", "memory:write"})


def _owners() -> dict[str, str]:
    return {t.name: t.owner_column for t in sharding.tenant_tables()}


def _check(captured: CaptureQueriesContext, owner_id: object) -> None:
    owners = _owners()
    problems = []
    for query in captured.captured_queries:
        sql = query["sql"]
        if not any(table in sql for table in owners):
            continue
        for problem in unrouted(sql, owners=owners, owner_id=str(owner_id)):
            problems.append(f"{problem}:\n    {sql[:400]}")
    assert captured.captured_queries, "the path sent no statement"
    assert not problems, "statements not held to one owner:\n" + "\n".join(problems)


def _saved(user, client, texts):
    ids = []
    for text in texts:
        response = client.post("/api/v1/memories", {"content": text}, format="json")
        assert response.status_code == 202, response.json()
        ids.append(response.json()["job"]["id"])
    return ids


@pytest.fixture
def alice_memories(alice, bob, no_worker_broker):
    # Bob saves too: a statement that forgot the owner would find his rows beside Alice's.
    _saved(bob, pat_client(bob), ["Bob lives in Oslo."])
    for job_id in _saved(alice, pat_client(alice), ["I live in Lisbon.", "My sister Ana works at Acme."]):
        job_process(job_id=job_id, owner_id=alice.pk)
    return alice


def test_it_saves_with_one_owner(alice, no_worker_broker):
    client = pat_client(alice)
    _saved(alice, client, ["warm the token up"])
    with CaptureQueriesContext(connection) as captured:
        _saved(alice, client, ["I keep bees in Porto."])
    _check(captured, alice.pk)


def test_it_runs_a_batch_of_saves_with_one_owner(alice, no_worker_broker):
    ids = _saved(alice, pat_client(alice), ["I keep bees.", "My brother Tom is a nurse.", "I moved to Faro."])
    with CaptureQueriesContext(connection) as captured:
        job_process(job_id=ids[0], owner_id=alice.pk)  # as the job's message carries it
    assert set(Job.objects.filter(owner=alice).values_list("status", flat=True)) == {"succeeded"}
    _check(captured, alice.pk)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("recall", {"query": "Where do I live?"}),
        ("answer", {"question": "Where do I live?"}),
        ("get_context", {"entity_name": "Ana"}),
    ],
)
def test_it_reads_with_one_owner(alice_memories, tool, arguments):
    caller = Caller(user=alice_memories, scopes=ALL_SCOPES)
    registry.run(tool, caller, arguments)  # the first call fills the process's caches
    with CaptureQueriesContext(connection) as captured:
        registry.run(tool, caller, arguments)
    _check(captured, alice_memories.pk)


def test_it_purges_with_one_owner(alice_memories):
    memory = Memory.objects.filter(owner=alice_memories).first()
    assert memory is not None
    client = pat_client(alice_memories)
    with CaptureQueriesContext(connection) as captured:
        response = client.delete(f"/api/v1/memories/{memory.id}")
    assert response.status_code == 200, response.json()
    _check(captured, alice_memories.pk)
