"""Two server processes on one database answer one client's alternating calls correctly.

The endpoint is stateless (no MCP session, no cache of callers or tools in a process): a client
may initialize on one process and go on with the other, save through one and forget through the
other. Both processes, like two replicas behind a load balancer, accept one OAuth token (its
audience names both URLs here because each test process has its own port) and personal tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from accounts.models import PersonalAccessToken
from accounts.services import pat_revoke
from memories.models import Job, Memory
from tests.conftest import LiveServer, start_live_server, stop_live_server
from tests.helpers import wait_for_job
from tests.mcp_gateway import rpc
from tests.mcp_gateway.rpc import LEGACY, MODERN, PROTOCOLS, Rpc

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture(scope="module")
def second_server(child_env, asgi_server, tmp_path_factory) -> Iterator[LiveServer]:
    server = start_live_server(child_env, tmp_path_factory.mktemp("second"), name="second")
    yield server
    stop_live_server(server)


@pytest.fixture(params=["oauth", "pat"])
def token(request, alice, asgi_server, second_server) -> str:
    if request.param == "oauth":
        raw, _ = rpc.oauth_token(
            alice, [f"{asgi_server.url}/mcp", f"{second_server.url}/mcp"], app_name="Replicated Agent"
        )
        return raw
    return rpc.pat_token(alice)


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=60) as client:
        yield client


def memories_of(job_id: Any) -> list[Memory]:
    job = wait_for_job(job_id)
    assert job.status == Job.Status.SUCCEEDED, job.error_message
    memories = list(Memory.objects.filter(job=job))
    assert memories
    return memories


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_one_client_alternating_between_two_processes(asgi_server, second_server, token, http, protocol):
    assert asgi_server.proc.pid != second_server.proc.pid
    one = Rpc(asgi_server.url, token, protocol=protocol, client=http)
    two = Rpc(second_server.url, token, protocol=protocol, client=http)

    # Start the conversation on one process, go on on the other.
    if protocol == LEGACY:
        response = one.send(rpc.initialize(LEGACY), protocol=None)
        assert response.status_code == 200 and rpc.parse(response)["result"]["protocolVersion"] == LEGACY
        ack = two.send(rpc.notification("notifications/initialized"))
        assert ack.status_code == 202 and ack.content == b""
    else:
        assert MODERN in one.connect()["supportedVersions"]
    assert two.list_tools() == one.list_tools()

    # Save through one process, forget (soft) through the other once the job has succeeded.
    saved = two.ok("remember", {"content": "My bicycle is a green Brompton."})
    kept = memories_of(saved["job_id"])
    for memory in kept:
        forgotten = one.ok("forget", {"memory_id": str(memory.id)})
        assert forgotten == {**forgotten, "action": "suppressed", "memory_id": str(memory.id)}
        memory.refresh_from_db()
        assert memory.status == Memory.Status.SUPPRESSED
    # Forgetting again on the other process sees the same state (idempotent, not "not found").
    again = two.ok("forget", {"memory_id": str(kept[0].id)})
    assert again["action"] == "suppressed"

    # Save on one, delete permanently on the other.
    saved = one.ok("remember", {"content": "I was born in Coimbra."})
    doomed = memories_of(saved["job_id"])
    for memory in doomed:
        deleted = two.ok("forget", {"memory_id": str(memory.id), "hard": True, "reason_code": "private"})
        assert deleted["action"] == "hard_deleted"
    assert not Memory.objects.filter(id__in=[m.id for m in doomed]).exists()
    # ... and the first process agrees it is gone.
    gone = one.error("forget", {"memory_id": str(doomed[0].id)})
    assert gone["code"] == "memory_not_found"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_what_one_process_saved_the_other_recalls_and_answers_from(
    asgi_server, second_server, token, http, protocol
):
    one = Rpc(asgi_server.url, token, protocol=protocol, client=http)
    two = Rpc(second_server.url, token, protocol=protocol, client=http)
    saved = one.ok("remember", {"content": "My landlord is called Henrique Sousa."})
    ids = {str(m.id) for m in memories_of(saved["job_id"])}

    found = two.ok("recall", {"query": "Who is my landlord?"})
    assert ids & {m["id"] for m in found["memories"]}, found
    assert found["freshness"]["pending_jobs"] == 0
    answered = one.ok("answer", {"question": "What is my landlord called?"})
    assert ids & set(answered["based_on"]), answered

    for memory_id in ids:
        two.ok("forget", {"memory_id": memory_id})
    after = one.ok("recall", {"query": "Who is my landlord?"})
    assert not ids & {m["id"] for m in after["memories"]}, after


def test_the_processes_refuse_and_challenge_alike(asgi_server, second_server, alice, http):
    """Auth decisions come from the database, not from a process: a token revoked while one
    process has just accepted it is refused by both."""
    raw = rpc.pat_token(alice)
    for server in (asgi_server, second_server):
        assert rpc.post(server.url, rpc.tools_list(), token=raw, client=http).status_code == 200
    pat_revoke(user=alice, token_id=PersonalAccessToken.objects.get(user=alice).id)
    for server in (second_server, asgi_server):
        response = rpc.post(server.url, rpc.tools_list(), token=raw, client=http)
        assert response.status_code == 401, response.text
        assert (
            f'resource_metadata="{server.url}/.well-known/oauth-protected-resource/mcp"'
            in (response.headers["www-authenticate"])
        )
