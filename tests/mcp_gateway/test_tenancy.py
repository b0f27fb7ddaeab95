"""Who may use the MCP endpoint, and whose memories a token reaches.

Authorization: the 401/403 challenges, the OAuth discovery documents, audience (RFC 8707),
expiry and revocation of both kinds of token, scopes with step-up, dynamic client registration
and its rate limit, loopback redirect URIs on any port (RFC 8252).

Tenancy: a token of Charlie (the outsider) never reaches Alice's memories through any of the
four tools, and attribution comes from the token, never from the arguments.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.models import get_access_token_model

from accounts.models import PersonalAccessToken, User
from accounts.services import pat_create, pat_revoke
from memories.models import Job, Memory, Source
from tests.conftest import PASSWORD, start_live_server, stop_live_server
from tests.helpers import READ, WRITE, pat_client, wait_for_job
from tests.mcp_gateway import rpc
from tests.mcp_gateway.oauth_browser import Browser
from tests.mcp_gateway.rpc import LEGACY, MODERN, PROTOCOLS, Rpc

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

NO_SUCH_MEMORY = "00000000-0000-0000-0000-000000000000"


def mcp_url(server: Any) -> str:
    return f"{server.url}/mcp"


def status_of(server: Any, token: str | None, protocol: str = LEGACY) -> httpx.Response:
    response = rpc.post(server.url, rpc.tools_list(protocol), token=token, protocol=protocol)
    rpc.assert_clean(response)
    return response


def challenge(response: httpx.Response) -> dict[str, str]:
    """The parameters of a `WWW-Authenticate: Bearer k="v", ...` header."""
    header = response.headers["www-authenticate"]
    assert header.startswith("Bearer "), header
    params = {}
    for part in header[len("Bearer ") :].split(", "):
        key, _, value = part.partition("=")
        assert value.startswith('"') and value.endswith('"'), header
        params[key] = value[1:-1]
    return params


# === authorization ======================================================================


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_no_token_gets_401_with_resource_metadata_and_scope(asgi_server, protocol):
    response = status_of(asgi_server, None, protocol)
    assert response.status_code == 401, response.text
    params = challenge(response)
    assert params["resource_metadata"] == f"{asgi_server.url}/.well-known/oauth-protected-resource/mcp"
    # Every scope the URL's tools need: the TypeScript SDK cannot step up later (typescript-sdk#2255).
    assert params["scope"] == f"{READ} {WRITE}"
    assert "error" not in params  # no credentials at all: no error code (RFC 6750 section 3.1)


@pytest.mark.parametrize(
    "header",
    [
        "Bearer nonsense",
        "Bearer drp_nonsense",
        "Bearer " + "x" * 600,
        "Basic YWxpY2U6cHc=",
        "Bearer",
        "bearer nonsense",
    ],
)
def test_a_bad_or_malformed_token_gets_401_invalid_token(asgi_server, header):
    response = rpc.post(asgi_server.url, rpc.tools_list(), headers={"Authorization": header})
    rpc.assert_clean(response)
    assert response.status_code == 401, response.text
    params = challenge(response)
    assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    assert "scope" in params


def test_the_protected_resource_metadata_names_this_endpoint_exactly(asgi_server):
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        response = httpx.get(asgi_server.url + path, headers={"Origin": "https://claude.ai"}, timeout=10)
        assert response.status_code == 200, (path, response.text)
        document = response.json()
        assert document["resource"] == f"{asgi_server.url}/mcp"  # exactly: no trailing slash
        assert document["authorization_servers"] == [asgi_server.url]
        assert set(document["scopes_supported"]) == {READ, WRITE}
        assert response.headers["access-control-allow-origin"] == "*"


def test_the_authorization_server_metadata_is_what_mcp_clients_need(asgi_server):
    response = httpx.get(
        f"{asgi_server.url}/.well-known/oauth-authorization-server",
        headers={"Origin": "https://claude.ai"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    document = response.json()
    assert document["issuer"] == asgi_server.url  # exactly: no trailing slash
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["registration_endpoint"] == f"{asgi_server.url}/o/register/"
    assert document["authorization_endpoint"].startswith(asgi_server.url + "/")
    assert document["token_endpoint"].startswith(asgi_server.url + "/")
    assert "none" in document["token_endpoint_auth_methods_supported"]
    assert "authorization_code" in document["grant_types_supported"]
    assert "refresh_token" in document["grant_types_supported"]
    assert response.headers["access-control-allow-origin"] == "*"
    # A browser client's preflight is answered too.
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp"):
        preflight = httpx.options(
            asgi_server.url + path,
            headers={"Origin": "https://claude.ai", "Access-Control-Request-Method": "GET"},
            timeout=10,
        )
        assert preflight.status_code in (200, 204), (path, preflight.status_code)
        assert preflight.headers["access-control-allow-origin"] == "*"


def test_an_oauth_token_for_this_resource_is_accepted(asgi_server, alice):
    for resource in (mcp_url(asgi_server), mcp_url(asgi_server) + "/"):
        raw, _ = rpc.oauth_token(alice, resource)
        assert status_of(asgi_server, raw).status_code == 200, resource
    raw, _ = rpc.oauth_token(alice, ["https://other.example/mcp", mcp_url(asgi_server)])
    assert status_of(asgi_server, raw).status_code == 200


@pytest.mark.parametrize(
    "resource",
    [
        "https://other.example/mcp",
        "http://127.0.0.1:1/mcp",
        "{url}",  # the server itself, not its MCP endpoint
        "{url}/mcp/other",
        "{url}/mcpx",
        "{url}/api/v1",
        None,
        [],
        "",
    ],
)
def test_an_oauth_token_for_another_resource_or_none_is_refused(asgi_server, alice, resource):
    if isinstance(resource, str) and resource:
        resource = resource.format(url=asgi_server.url)
    raw, _ = rpc.oauth_token(alice, resource if resource != "" else [""])
    for protocol in PROTOCOLS:
        response = status_of(asgi_server, raw, protocol)
        assert response.status_code == 401, (resource, response.text)
        assert challenge(response)["error"] == "invalid_token"


def test_an_expired_oauth_token_is_refused(asgi_server, alice):
    raw, _ = rpc.oauth_token(alice, mcp_url(asgi_server), expires_in=timedelta(seconds=-1))
    response = status_of(asgi_server, raw)
    assert response.status_code == 401
    assert challenge(response)["error"] == "invalid_token"


def test_an_oauth_token_revoked_at_the_revocation_endpoint_is_refused(asgi_server, alice):
    raw, application = rpc.oauth_token(alice, mcp_url(asgi_server))
    assert status_of(asgi_server, raw).status_code == 200
    revoked = httpx.post(
        f"{asgi_server.url}/o/revoke_token/",
        data={"token": raw, "client_id": application.client_id},
        timeout=10,
    )
    assert revoked.status_code == 200, revoked.text
    assert status_of(asgi_server, raw).status_code == 401


def test_an_oauth_token_whose_row_is_deleted_is_refused(asgi_server, alice):
    raw, _ = rpc.oauth_token(alice, mcp_url(asgi_server))
    assert status_of(asgi_server, raw).status_code == 200
    get_access_token_model().objects.filter(user=alice).delete()
    assert status_of(asgi_server, raw).status_code == 401


def test_a_token_of_a_deactivated_user_is_refused(asgi_server, alice):
    oauth, _ = rpc.oauth_token(alice, mcp_url(asgi_server))
    pat = rpc.pat_token(alice)
    User.objects.filter(pk=alice.pk).update(is_active=False)
    assert status_of(asgi_server, oauth).status_code == 401
    assert status_of(asgi_server, pat).status_code == 401


def test_a_revoked_or_expired_personal_access_token_is_refused(asgi_server, alice):
    row, raw = pat_create(user=alice, name="laptop", scopes=[READ, WRITE])
    assert status_of(asgi_server, raw).status_code == 200
    pat_revoke(user=alice, token_id=row.id)
    response = status_of(asgi_server, raw)
    assert response.status_code == 401 and challenge(response)["error"] == "invalid_token"

    row, raw = pat_create(user=alice, name="old", scopes=[READ, WRITE])
    PersonalAccessToken.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert status_of(asgi_server, raw).status_code == 401


def test_a_new_password_with_the_sign_out_left_ticked_ends_both_kinds_of_token(
    asgi_server, browser_user, charlie
):
    oauth, _ = rpc.oauth_token(browser_user, mcp_url(asgi_server))
    pat = rpc.pat_token(browser_user)
    theirs = rpc.pat_token(charlie)
    for token in (oauth, pat, theirs):
        assert status_of(asgi_server, token).status_code == 200
    browser = Browser(asgi_server.url, browser_user.email)
    browser.sign_in(reverse("accounts:login"))
    new = "a brand new long passphrase 31"
    data = {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
    page, changed = browser.submit(reverse("account:password-change"), data | {"sign_out": "on"})
    # What the browser sends is what the page ticked: the box comes ticked.
    assert re.search(r'<input type="checkbox" name="sign_out"[^>]* checked', page)
    assert changed.status_code == 302, changed.text[:800]
    for token in (oauth, pat):
        response = status_of(asgi_server, token)
        assert response.status_code == 401 and challenge(response)["error"] == "invalid_token"
    assert status_of(asgi_server, theirs).status_code == 200


@pytest.mark.parametrize("kind", ["oauth", "pat"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_read_only_token_gets_403_insufficient_scope_for_a_write_tool(asgi_server, alice, kind, protocol):
    if kind == "oauth":
        raw, _ = rpc.oauth_token(alice, mcp_url(asgi_server), scopes=(READ,))
    else:
        raw = rpc.pat_token(alice, scopes=(READ,))
    before = rpc.row_counts()
    # Listing the tools needs only memory:read.
    assert status_of(asgi_server, raw, protocol).status_code == 200
    for tool, arguments in (
        ("remember", {"content": "Read-only tokens cannot write this."}),
        ("forget", {"memory_id": NO_SUCH_MEMORY, "hard": True}),
    ):
        body = rpc.tools_call(tool, arguments, protocol=protocol)
        response = rpc.post(asgi_server.url, body, token=raw, protocol=protocol)
        rpc.assert_clean(response)
        assert response.status_code == 403, response.text
        header = response.headers["www-authenticate"]
        assert header.startswith('Bearer error="insufficient_scope"'), header
        params = challenge(response)
        assert params["scope"] == "memory:read memory:write"
        assert params["resource_metadata"] == f"{asgi_server.url}/.well-known/oauth-protected-resource/mcp"
    assert rpc.row_counts() == before


def test_a_write_only_token_cannot_read(asgi_server, alice):
    raw = rpc.pat_token(alice, scopes=(WRITE,))
    response = rpc.post(asgi_server.url, rpc.tools_call("recall", {"query": "anything"}), token=raw)
    rpc.assert_clean(response)
    assert response.status_code == 403, response.text
    assert challenge(response)["scope"] == "memory:read memory:write"


def _register(server_url: str, redirect_uri: str = "http://127.0.0.1:9999/callback") -> httpx.Response:
    return httpx.post(
        f"{server_url}/o/register/",
        json={
            "client_name": "Registered Agent",
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "scope": f"{READ} {WRITE}",
        },
        timeout=10,
    )


@pytest.fixture
def dcr_server(child_env, tmp_path):
    """A server process of its own: the registration counter is per client address, so the
    shared server's budget stays for the tests whose real clients register."""
    server = start_live_server(child_env, tmp_path, name="dcr")
    yield server
    stop_live_server(server)


def test_dynamic_client_registration_is_anonymous_and_rate_limited(dcr_server):
    statuses = []
    for _ in range(31):
        response = _register(dcr_server.url)
        statuses.append(response.status_code)
        if response.status_code == 429:
            break
        assert response.status_code == 201, response.text
        client = response.json()
        assert client["client_id"] and client["redirect_uris"] == ["http://127.0.0.1:9999/callback"]
        assert client["token_endpoint_auth_method"] == "none"
        assert response.headers["access-control-allow-origin"] == "*"
    assert statuses == [201] * 30 + [429], statuses
    assert "retry-after" in response.headers
    assert "error" in response.json()


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


@pytest.mark.parametrize("host", ["127.0.0.1", "[::1]"])
def test_a_loopback_redirect_uri_may_use_another_port_than_registered(asgi_server, browser_user, host):
    """RFC 8252 section 7.3 (VS Code, CLI clients): the port of a loopback redirect is chosen at
    authorization time; the registered one is only a template."""
    registered = f"http://{host}:9999/callback"
    used = f"http://{host}:53682/callback"
    registration = _register(asgi_server.url, registered)
    assert registration.status_code == 201, registration.text
    client_id = registration.json()["client_id"]
    verifier, code_challenge = _pkce()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": used,
        "scope": READ,
        "state": "st4te",
        "code_challenge": code_challenge,
        "code_challenge_method": "S256",
        "resource": mcp_url(asgi_server),
    }
    browser = Browser(asgi_server.url, browser_user.email)
    answer = browser.authorize(f"{asgi_server.url}/o/authorize/?{urlencode(query)}")
    assert answer.get("state") == "st4te" and "code" in answer, answer
    token = httpx.post(
        f"{asgi_server.url}/o/token/",
        data={
            "grant_type": "authorization_code",
            "code": answer["code"],
            "redirect_uri": used,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": mcp_url(asgi_server),
        },
        timeout=10,
    )
    assert token.status_code == 200, token.text
    access = token.json()["access_token"]
    assert status_of(asgi_server, access).status_code == 200
    # Only the port is free: another path on the loopback host is refused.
    other_path = browser.http.get(
        f"{asgi_server.url}/o/authorize/?{urlencode({**query, 'redirect_uri': f'http://{host}:53682/evil'})}"
    )
    assert not other_path.headers.get("location", "").startswith(f"http://{host}:53682/evil")


# === tenancy ============================================================================

ALICE_SAYS = (
    "My sister Beatriz lives in Porto and teaches violin.",
    "I am allergic to hazelnuts and keep an epipen in my bag.",
)
ALICE_WORDS = ("Beatriz", "Porto", "violin", "hazelnut", "epipen")
SESSION = str(uuid.uuid4())


@pytest.fixture
def alice_memories(asgi_server, alice) -> list[Memory]:
    """Alice's memories, saved the real ways: remember over /mcp with her agent's token, and a REST
    save in a session (MCP's remember is content only), then the worker."""
    raw, _ = rpc.oauth_token(alice, mcp_url(asgi_server), app_name="Alice's Agent")
    client = Rpc(asgi_server.url, raw)
    memories: list[Memory] = []
    for index, content in enumerate(ALICE_SAYS):
        if index == 0:
            job_id = client.ok("remember", {"content": content})["job_id"]
        else:
            saved = pat_client(alice).post(
                "/api/v1/memories", {"content": content, "session_id": SESSION}, format="json"
            )
            assert saved.status_code in (201, 202), saved.json()
            job_id = saved.json()["job"]["id"]
        job = wait_for_job(job_id)
        assert job.status == Job.Status.SUCCEEDED, job.error_message
        memories.extend(Memory.objects.filter(job=job))
    assert memories and all(m.owner_id == alice.pk for m in memories)
    return memories


@pytest.fixture(params=["oauth", "pat"])
def charlie_token(request, asgi_server, charlie) -> str:
    if request.param == "oauth":
        raw, _ = rpc.oauth_token(charlie, mcp_url(asgi_server), app_name="Charlie's Agent")
        return raw
    return rpc.pat_token(charlie)


def assert_nothing_of_alice(text: str, memories: list[Memory]) -> None:
    for memory in memories:
        assert str(memory.id) not in text, memory.id
        assert memory.content not in text
    lowered = text.lower()
    for word in ALICE_WORDS:
        assert word.lower() not in lowered, word


def alice_state(memories: list[Memory]) -> list[tuple[Any, ...]]:
    rows = Memory.objects.filter(id__in=[m.id for m in memories]).order_by("id")
    return [(m.id, m.content, m.status, m.suppressed_at, m.owner_id, m.superseded_at) for m in rows]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_recall_by_an_outsider_returns_none_of_alices_memories(
    asgi_server, alice, alice_memories, charlie_token, protocol
):
    # The control: Alice's own recall finds them, so the queries below would too.
    mine = Rpc(asgi_server.url, rpc.pat_token(alice), protocol=protocol).ok(
        "recall", {"query": "Where does Beatriz live?"}
    )
    assert {m["id"] for m in mine["memories"]} & {str(m.id) for m in alice_memories}

    outsider = Rpc(asgi_server.url, charlie_token, protocol=protocol)
    for arguments in (
        {"query": "Where does Beatriz live?"},
        {"query": "hazelnuts allergy epipen", "top_k": 50, "expand_entities": True},
        {"query": "Beatriz", "session_id": SESSION},
        {"query": "violin", "agent_id": str(uuid.uuid4())},
    ):
        result = outsider.call("recall", arguments)
        assert result.get("isError") is not True, result
        assert result["structuredContent"]["memories"] == [], result
        assert_nothing_of_alice(json_text(result), alice_memories)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_answer_by_an_outsider_uses_none_of_alices_memories(
    asgi_server, alice, alice_memories, charlie_token, protocol
):
    outsider = Rpc(asgi_server.url, charlie_token, protocol=protocol)
    for arguments in (
        {"question": "Where does my sister Beatriz live?"},
        {"question": "What am I allergic to?", "session_id": SESSION, "agent_id": str(uuid.uuid4())},
    ):
        result = outsider.call("answer", arguments)
        assert result.get("isError") is not True, result
        assert result["structuredContent"]["based_on"] == [], result
        assert result["structuredContent"]["sources"] == [], result
        assert_nothing_of_alice(json_text(result), alice_memories)


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_forget_by_an_outsider_is_memory_not_found_and_changes_nothing(
    asgi_server, alice, alice_memories, charlie_token, hard, protocol
):
    before = alice_state(alice_memories)
    counts = rpc.row_counts()
    outsider = Rpc(asgi_server.url, charlie_token, protocol=protocol)
    for memory in alice_memories:
        for reason in ("other", "private"):
            error = outsider.error(
                "forget", {"memory_id": str(memory.id), "hard": hard, "reason_code": reason}
            )
            assert error["code"] == "memory_not_found", error
            assert_nothing_of_alice(str(error), alice_memories)
    # The same answer as for an id that does not exist at all: existence is not revealed.
    unknown = outsider.error("forget", {"memory_id": str(uuid.uuid4()), "hard": hard})
    assert {k: v for k, v in unknown.items() if k != "request_id"} == {
        k: v for k, v in error.items() if k != "request_id"
    }
    assert alice_state(alice_memories) == before
    assert rpc.row_counts() == counts
    assert Source.objects.filter(owner=alice, purged_at__isnull=True).count() == len(ALICE_SAYS)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_remember_by_an_outsider_stores_into_the_outsiders_space_only(
    asgi_server, alice, charlie, alice_memories, protocol
):
    raw, charlie_app = rpc.oauth_token(charlie, mcp_url(asgi_server), app_name="Charlie's Agent")
    alice_before = (
        Source.objects.filter(owner=alice).count(),
        Job.objects.filter(owner=alice).count(),
        Memory.objects.filter(owner=alice).count(),
    )
    saved = Rpc(asgi_server.url, raw, protocol=protocol).ok(
        "remember", {"content": "Charlie's boat is called the Saltwater Sparrow."}
    )
    job = wait_for_job(saved["job_id"])
    assert job.status == Job.Status.SUCCEEDED, job.error_message
    assert job.owner_id == charlie.pk and job.space.owner_id == charlie.pk
    assert job.agent_id == charlie_app.pk
    source = Source.objects.get(jobs=job)
    assert source.owner_id == charlie.pk and source.space.owner_id == charlie.pk
    assert source.agent_id == charlie_app.pk
    memories = list(Memory.objects.filter(job=job))
    assert memories
    for memory in memories:
        assert memory.owner_id == charlie.pk and memory.space.owner_id == charlie.pk
        assert memory.agent_id == charlie_app.pk
    alice_after = (
        Source.objects.filter(owner=alice).count(),
        Job.objects.filter(owner=alice).count(),
        Memory.objects.filter(owner=alice).count(),
    )
    assert alice_after == alice_before
    # Alice's recall does not see it.
    mine = Rpc(asgi_server.url, rpc.pat_token(alice), protocol=protocol).ok(
        "recall", {"query": "Saltwater Sparrow boat"}
    )
    assert all("Sparrow" not in m["content"] for m in mine["memories"])


def test_agent_id_in_arguments_cannot_change_attribution(asgi_server, alice, alice_memories):
    raw, app = rpc.oauth_token(alice, mcp_url(asgi_server), app_name="The Real Agent")
    _, other_app = rpc.oauth_token(alice, mcp_url(asgi_server), app_name="Another Agent")
    client = Rpc(asgi_server.url, raw)
    counts = rpc.row_counts()
    # remember takes no agent_id at all: refused, nothing stored.
    for agent_id in (str(uuid.uuid4()), other_app.pk, str(other_app.pk), other_app.client_id):
        error = client.error("remember", {"content": "Attribute me elsewhere.", "agent_id": agent_id})
        assert error["code"] == "unknown_field", error
    assert rpc.row_counts() == counts
    # recall and answer accept it (legacy clients) and ignore it: the same result as without.
    plain = client.ok("recall", {"query": "Where does Beatriz live?"})
    spoofed = client.ok("recall", {"query": "Where does Beatriz live?", "agent_id": str(uuid.uuid4())})
    assert [m["id"] for m in spoofed["memories"]] == [m["id"] for m in plain["memories"]]
    answered = client.ok("answer", {"question": "Where does Beatriz live?", "agent_id": str(uuid.uuid4())})
    assert answered["based_on"] == client.ok("answer", {"question": "Where does Beatriz live?"})["based_on"]
    # What is written is attributed to the token's application.
    saved = client.ok("remember", {"content": "My favourite tea is genmaicha."})
    job = wait_for_job(saved["job_id"])
    assert job.agent_id == app.pk
    assert {m.agent_id for m in Memory.objects.filter(job=job)} == {app.pk}
    # A personal access token writes with no agent.
    saved = Rpc(asgi_server.url, rpc.pat_token(alice)).ok("remember", {"content": "I cycle to work."})
    job = wait_for_job(saved["job_id"])
    assert job.agent_id is None and Source.objects.get(jobs=job).agent_id is None


def test_the_same_token_in_two_protocols_sees_the_same_memories(asgi_server, alice, alice_memories):
    raw = rpc.pat_token(alice)
    found = [
        sorted(
            m["id"]
            for m in Rpc(asgi_server.url, raw, protocol=p).ok("recall", {"query": "Beatriz"})["memories"]
        )
        for p in (LEGACY, MODERN)
    ]
    assert found[0] == found[1] and found[0]


def json_text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"]) + str(result["structuredContent"])


def test_concurrent_calls_of_two_users_never_cross(asgi_server, alice, charlie, alice_memories):
    """The caller rides in a context variable per request: under concurrency in one process,
    no request ever runs as another request's caller."""
    alice_raw, alice_app = rpc.oauth_token(alice, mcp_url(asgi_server), app_name="Alice Concurrent")
    charlie_raw, charlie_app = rpc.oauth_token(charlie, mcp_url(asgi_server), app_name="Charlie Concurrent")
    alice_ids = {str(m.id) for m in alice_memories}

    def one(i: int) -> tuple[str, int, dict[str, Any]]:
        who, raw = ("alice", alice_raw) if i % 2 == 0 else ("charlie", charlie_raw)
        client = Rpc(asgi_server.url, raw, protocol=PROTOCOLS[i % 4 // 2])
        if i % 3 == 0:
            return who, i, client.ok("remember", {"content": f"Concurrent note {i} written by {who}."})
        return who, i, client.ok("recall", {"query": "Where does Beatriz live?"})

    with ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(one, range(48)))
    for who, i, payload in outcomes:
        if "job_id" in payload:
            job = wait_for_job(payload["job_id"])
            source = Source.objects.get(jobs=job)
            assert f"written by {who}." in source.content
            assert source.owner_id == (alice.pk if who == "alice" else charlie.pk), (who, i)
            assert job.agent_id == (alice_app.pk if who == "alice" else charlie_app.pk), (who, i)
        else:
            found = {m["id"] for m in payload["memories"]}
            if who == "alice":
                assert found & alice_ids, (i, payload)
            else:
                assert not found & alice_ids, (i, payload)
                assert all("alice" not in m["content"] for m in payload["memories"]), (i, payload)
