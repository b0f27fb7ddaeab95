"""Tool profiles: each its own MCP URL and OAuth resource, all rendered from the one registry.

What holds for every profile: its discovery document names it exactly, a token minted for
another profile's URL is refused there, `tools/list` is the core four then the profile's own
tools in a stable order (or exactly a contract's tools, for a profile whose contract fixes them:
graph and evidence), tools of other profiles are unknown, and resources need memory:read.
The tools themselves are tested per profile (test_graph_profile.py, test_evidence_profile.py,
test_ingest_profile.py).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession

from mcp_gateway.stdio_proxy import DeepRecallClient, StdioProxy
from tests.helpers import READ, WRITE, wait_for_job
from tests.mcp_gateway import rpc, sdk
from tests.mcp_gateway.oauth_browser import Browser
from tests.mcp_gateway.rpc import LEGACY, PROTOCOLS
from tests.mcp_gateway.test_evidence_profile import CONTRACT_TOOLS
from tests.mcp_gateway.test_python_client import REDIRECT_URI, MemoryStorage, _session_run, oauth_provider

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CORE = ["recall", "answer", "remember", "forget"]
# What the issue asks each profile to add, in the order it lists them.
OWN = {
    "core": [],
    # The graph contract's closed namespace, in its order: its own remember and recall, no core four.
    "graph": ["remember", "recall", "get_context", "list_entities", "invalidate", "relate", "switch_agent"],
    "evidence": ["resolve_entity", "facts_context", "claims_and_sources_context", "combined_context"],
    "ingest": ["ingest", "pipeline_readiness"],
}
# A profile whose contract closes its namespace lists exactly the contract's tools.
CLOSED = {"evidence": CONTRACT_TOOLS, "graph": OWN["graph"]}
# Profiles whose contract fixes their tools: without the core four.
CONTRACTED = set(CLOSED)
PATHS = {"core": "/mcp", "graph": "/mcp/graph", "evidence": "/mcp/evidence", "ingest": "/mcp/ingest"}
GRAPH_RESOURCES = ["graph://entities", "graph://memories", "graph://relations", "graph://stats"]


def _challenge(response: httpx.Response) -> dict[str, str]:
    header = response.headers["www-authenticate"]
    assert header.startswith("Bearer "), header
    params = {}
    for part in header[len("Bearer ") :].split(", "):
        key, _, value = part.partition("=")
        params[key] = value.strip('"')
    return params


def _post(url: str, token: str | None, body: Any, protocol: str = LEGACY) -> httpx.Response:
    response = rpc.post(url, body, token=token, protocol=protocol)
    rpc.assert_clean(response)
    return response


@pytest.mark.parametrize("profile", list(PATHS))
def test_each_profile_has_its_own_discovery_document_and_challenge(asgi_server, profile):
    url = asgi_server.url + PATHS[profile]
    metadata_url = f"{asgi_server.url}/.well-known/oauth-protected-resource{PATHS[profile]}"
    document = httpx.get(metadata_url, timeout=10)
    assert document.status_code == 200, document.text
    assert document.json()["resource"] == url
    assert document.json()["authorization_servers"] == [asgi_server.url]
    response = _post(url, None, rpc.tools_list())
    assert response.status_code == 401
    assert _challenge(response)["resource_metadata"] == metadata_url


def test_an_unknown_profile_path_is_not_an_mcp_endpoint(asgi_server, alice):
    token = rpc.pat_token(alice)
    metadata = httpx.get(f"{asgi_server.url}/.well-known/oauth-protected-resource/mcp/nope", timeout=10)
    assert metadata.status_code == 404
    response = httpx.post(
        f"{asgi_server.url}/mcp/nope",
        json=rpc.tools_list(),
        headers={"Authorization": f"Bearer {token}", "Accept": rpc.ACCEPT},
        timeout=10,
    )
    assert response.status_code == 404
    rpc.assert_clean(response)


@pytest.mark.parametrize("profile", list(PATHS))
def test_an_oauth_token_works_only_at_the_profile_it_was_minted_for(asgi_server, alice, profile):
    raw, _ = rpc.oauth_token(alice, asgi_server.url + PATHS[profile])
    for other, path in PATHS.items():
        response = _post(asgi_server.url + path, raw, rpc.tools_list())
        expected = 200 if other == profile else 401
        assert response.status_code == expected, (profile, other, response.text)
    # A personal access token is the user's own credential: every profile accepts it.
    pat = rpc.pat_token(alice)
    for path in PATHS.values():
        assert _post(asgi_server.url + path, pat, rpc.tools_list()).status_code == 200


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_tools_list_is_the_core_four_then_the_profiles_own_or_its_contracts_in_a_stable_order(
    asgi_server, alice, protocol
):
    token = rpc.pat_token(alice, scopes=(READ,))
    listed = {}
    for profile, path in PATHS.items():
        client = rpc.Rpc(asgi_server.url + path, token, protocol=protocol)
        client.connect()
        first = client.list_tools()
        again = client.list_tools()
        assert first == again, profile  # same names, schemas and order every time
        listed[profile] = [tool["name"] for tool in first]
        for tool in first:
            schema = tool["inputSchema"]
            assert schema["type"] == "object" and schema["additionalProperties"] is False, tool["name"]
            assert "outputSchema" in tool, tool["name"]
    for profile, names in listed.items():
        if profile in CLOSED:
            assert names == CLOSED[profile], (profile, names)
            continue
        assert names[:4] == CORE, (profile, names)
        assert names[4:] == OWN[profile], (profile, names)


@pytest.mark.parametrize("profile", list(PATHS))
def test_an_unknown_tool_is_an_error_result_naming_the_tools_on_every_url_and_over_stdio(
    asgi_server, alice, profile
):
    """contracts/evidence-mcp.txt, tools/call: "A tool the registry has no active row for, a call
    missing a required argument, or an open-query call with invalid argument types is a protocol error
    result (isError: true) with the reason in the text block — never an exception across the wire.
    The client re-plans against a stated failure." The core and graph contracts state no other rule
    (core-mcp.txt: "Errors are sanitized; inspect isError instead of treating every tool response as
    success"), so every URL, and the stdio proxy for every profile, follows this one
    (docs/decisions.md, issue 42)."""
    token = rpc.pat_token(alice)
    before = rpc.row_counts()
    foreign = [
        name
        for name in ("relate", "switch_agent", "ingest", "facts_context", "forget")
        if name not in listed_names(profile)
    ]
    names = [*foreign, "nope", "Remember", "examples.memories_by_month"]

    async def steps(session: ClientSession) -> tuple[list[str], list[Any]]:
        offered = [tool.name for tool in (await session.list_tools()).tools]
        return offered, [await session.call_tool(name, {"query": "a"}) for name in names]

    offered, results = sdk.session_run(asgi_server.url + PATHS[profile], token, steps)
    client = DeepRecallClient(asgi_server.url, token, timeout=60)
    proxy = StdioProxy(client, profile)
    try:
        over_stdio = [
            json.loads(proxy.handle_line(json.dumps(rpc.tools_call(name, {"query": "a"}))) or "{}")["result"]
            for name in names
        ]
    finally:
        client.close()
    for name, result, local in zip(names, results, over_stdio, strict=True):
        error = sdk.structured(result)
        assert result.is_error is True and error["code"] == "unknown_operation", (profile, name, error)
        assert error["details"] == {"tool": name, "available": offered}, (profile, name)
        assert name in error["message"] and error["retryable"] is False
        assert ("http_status" in error) is (profile == "evidence"), (profile, error)
        assert local["isError"] is True, (profile, name, local)
        shown = local["structuredContent"]
        assert {k: v for k, v in shown.items() if k != "remote_status"} == {
            k: v for k, v in error.items() if k != "request_id"
        }, (profile, name, shown, error)
    assert rpc.row_counts() == before


def listed_names(profile: str) -> list[str]:
    return CLOSED.get(profile, [*CORE, *OWN[profile]])


def test_only_the_graph_profile_lists_resources_and_reading_needs_memory_read(asgi_server, alice):
    reader = rpc.pat_token(alice, scopes=(READ,))

    async def resources(session: ClientSession) -> list[str]:
        listed = await session.list_resources()
        return [str(resource.uri) for resource in listed.resources]

    assert sdk.session_run(asgi_server.url + "/mcp/graph", reader, resources) == GRAPH_RESOURCES
    for profile in ("core", "evidence", "ingest"):
        assert sdk.session_run(asgi_server.url + PATHS[profile], reader, resources) == [], profile

    writer = rpc.pat_token(alice, scopes=(WRITE,))
    for method, params in (("resources/list", None), ("resources/read", {"uri": "graph://stats"})):
        response = _post(asgi_server.url + "/mcp/graph", writer, rpc.message(method, params))
        assert response.status_code == 403, (method, response.text)
        params_ = _challenge(response)
        assert params_["error"] == "insufficient_scope" and "memory:read" in params_["scope"].split()


def test_an_unknown_resource_is_a_resource_not_found_error(asgi_server, alice):
    token = rpc.pat_token(alice, scopes=(READ,))

    async def read(session: ClientSession) -> Any:
        return await session.read_resource("graph://secrets")

    error = sdk.mcp_error(asgi_server.url + "/mcp/graph", token, read)
    assert error.error.code == -32002
    # A graph resource is not offered at the core endpoint either.
    error = sdk.mcp_error(
        asgi_server.url + "/mcp", token, lambda session: session.read_resource("graph://stats")
    )
    assert error.error.code == -32002


def test_a_client_signs_in_with_oauth_for_a_profile_url_and_gets_a_token_for_it(asgi_server, browser_user):
    """The Python SDK's own discovery finds the graph profile's metadata, registers, asks for
    the graph URL as its resource, and the token it gets works there and nowhere else."""
    from oauth2_provider.models import get_access_token_model

    browser = Browser(asgi_server.url, browser_user.email)
    storage = MemoryStorage()
    auth = oauth_provider(asgi_server.url, browser, "memory:read", storage, path="/mcp/graph")

    async def steps(session: ClientSession) -> list[str]:
        return [tool.name for tool in (await session.list_tools()).tools]

    names = asyncio.run(_session_run(asgi_server.url, auth, steps, path="/mcp/graph"))
    assert names == OWN["graph"]
    assert storage.tokens is not None
    access = get_access_token_model().objects.get(user=browser_user, application__name="Test Agent")
    assert access.resource == [f"{asgi_server.url}/mcp/graph"]
    raw = storage.tokens.access_token
    assert _post(asgi_server.url + "/mcp/graph", raw, rpc.tools_list()).status_code == 200
    assert _post(asgi_server.url + "/mcp", raw, rpc.tools_list()).status_code == 401
    # The person saw which tools they were connecting, and the space the app would use.
    assert "Memory graph" in browser.consent_pages[0] and "Personal" in browser.consent_pages[0]

    # After the app switched its space, asking again names that space on the consent page.
    from urllib.parse import urlencode

    from accounts.caller import Actor
    from memories.services.spaces import space_create

    work = space_create(actor=Actor.owner_acting(browser_user), name="Work")
    switched = sdk.call(asgi_server.url + "/mcp/graph", raw, "switch_agent", {"agent_id": str(work.id)})
    assert sdk.structured(switched)["current"]["name"] == "Work"
    assert storage.client is not None
    query = {
        "response_type": "code",
        "client_id": storage.client.client_id,
        "redirect_uri": REDIRECT_URI,
        "scope": "memory:read",
        "state": "again",
        "approval_prompt": "force",  # the same scopes again would be approved without asking
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256",
        "resource": f"{asgi_server.url}/mcp/graph",
    }
    browser.authorize(f"{asgi_server.url}/o/authorize/?{urlencode(query)}")
    again = browser.consent_pages[-1]
    assert len(browser.consent_pages) == 2 and "Memory graph" in again
    assert f'<option value="{work.id}" selected>Work</option>' in again


def test_paris_then_berlin_by_relate_reads_as_berlin_now_and_paris_before(asgi_server, alice):
    """The issue's example across two profiles: the graph writes, the evidence layer reads
    the same facts back with their clocks, and the move is recorded as a contradiction."""
    from datetime import UTC, datetime

    token = rpc.pat_token(alice)
    graph, evidence = asgi_server.url + "/mcp/graph", asgi_server.url + "/mcp/evidence"
    paris = sdk.structured(
        sdk.call(
            graph, token, "relate", {"source": "Mara Lind", "target": "Paris", "relation_type": "lives_in"}
        )
    )
    between = datetime.now(UTC).isoformat()
    berlin = sdk.structured(
        sdk.call(
            graph, token, "relate", {"source": "Mara Lind", "target": "Berlin", "relation_type": "lives_in"}
        )
    )
    assert berlin["superseded"] == [paris["relation"]["id"]]

    context = sdk.structured(sdk.call(graph, token, "get_context", {"entity_name": "mara lind"}))
    current = [r["object"]["name"] for r in context["relations"] if r["type"] == "lives_in" and r["current"]]
    assert current == ["Berlin"]

    def lives_in(facts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {
            f["relation"]["object"]["name"]: f
            for f in facts
            if f["fact_type"] == "relation" and f["relation"]["type"] == "lives_in"
        }

    now = lives_in(
        sdk.structured(sdk.call(evidence, token, "facts_context", {"query": "Where does Mara Lind live?"}))[
            "facts"
        ]
    )
    assert set(now) == {"Berlin"}
    then = sdk.structured(
        sdk.call(evidence, token, "facts_context", {"query": "Where does Mara Lind live?", "at": between})
    )
    assert then["validity"]["view"] == "as_of"
    earlier = lives_in(then["facts"])
    assert set(earlier) == {"Paris"}
    assert earlier["Paris"]["contradiction_count"] == 1 and earlier["Paris"]["evidence_count"] == 1


# The tools each profile's instructions must name: the contract's workflow (graph-mcp.txt, "Typical
# workflow" and its system prompt; evidence-mcp.txt, "Agent poll algorithm"), the core four.
WORKFLOW = {
    "core": {"recall", "remember", "forget"},
    "graph": {"remember", "relate", "recall", "get_context", "invalidate"},
    "evidence": {
        "ingest",
        "pipeline_readiness",
        "combined_context",
        "facts_context",
        "claims_and_sources_context",
    },
    "ingest": {"ingest", "pipeline_readiness", "recall"},
}


@pytest.mark.parametrize("profile", list(PATHS))
def test_each_urls_instructions_name_only_its_own_tools_and_its_contracts_workflow(
    asgi_server, alice, profile
):
    """contracts/graph-mcp.txt, System prompt: "TOOLS: remember(...) ... invalidate(memory_id, reason?) ...
    BEST PRACTICES: ... Use invalidate() + remember() to correct stale information"; evidence-mcp.txt,
    pipeline_readiness: "Agent poll algorithm: 1. ingest → read version_id, created. ... 5. On ready=true:
    call the appropriate assured operation (often combined_context)". What `initialize` tells an agent
    names the tools of the URL it connected to, and that URL's contract's workflow, over HTTP and over
    the stdio proxy alike."""
    token = rpc.pat_token(alice)

    async def steps(session: ClientSession) -> tuple[str, list[str]]:
        hello = session.initialize_result
        assert hello is not None
        return hello.instructions or "", [tool.name for tool in (await session.list_tools()).tools]

    instructions, offered = sdk.session_run(asgi_server.url + PATHS[profile], token, steps)
    named = set(re.findall(r"`([a-z_]+)", instructions))
    assert named <= set(offered), (profile, named - set(offered))
    assert WORKFLOW[profile] <= named, (profile, WORKFLOW[profile] - named)
    # What the issue found: tools of another URL, named in words.
    foreign = {"recall", "remember", "forget", "answer"} - set(offered)
    assert not {word for word in re.findall(r"[a-z_]+", instructions) if word in foreign}, (
        profile,
        instructions,
    )
    if profile == "graph":
        assert "hard=true" not in instructions and "hard: true" not in instructions
    # The stdio proxy says the same at its initialize.
    client = DeepRecallClient(asgi_server.url, token, timeout=60)
    try:
        hello = json.loads(StdioProxy(client, profile).handle_line(json.dumps(rpc.initialize())) or "{}")
    finally:
        client.close()
    assert hello["result"]["instructions"] == instructions


def test_get_operations_says_which_profile_each_operation_belongs_to_and_lists_by_profile(asgi_server, alice):
    """contracts/evidence-mcp.txt, Tool surface: "MCP, the API's /operations, and the CLI's remember
    operations list all render the same four registry-backed operations." GET /api/v1/operations says,
    for each operation, the profiles (MCP URLs) that offer it, and lists each profile with its tools in
    the order its URL's tools/list gives them."""
    token = rpc.pat_token(alice)
    headers = {"Authorization": f"Bearer {token}"}
    listed = httpx.get(f"{asgi_server.url}/api/v1/operations", headers=headers, timeout=30).json()
    profiles = {profile["name"]: profile for profile in listed["profiles"]}
    assert list(profiles) == list(PATHS)

    async def tools(session: ClientSession) -> list[str]:
        return [tool.name for tool in (await session.list_tools()).tools]

    for name, path in PATHS.items():
        profile = profiles[name]
        assert profile["path"] == path and profile["instructions"]
        assert profile["tools"] == sdk.session_run(asgi_server.url + path, token, tools), name
        assert profile["resources"] == (GRAPH_RESOURCES if name == "graph" else [])
        # Each operation names its profiles: together they give the same lists.
        offering = [op for op in listed["operations"] if name in op["profiles"]]
        assert sorted(op["tool"] for op in offering) == sorted(profile["tools"]), name
        one = httpx.get(
            f"{asgi_server.url}/api/v1/operations?profile={name}", headers=headers, timeout=30
        ).json()
        assert one["profile"] == profile
    assert all(op["profiles"] for op in listed["operations"])
    # docs/api.md's table of operations by profile says the same.
    table = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    for name in PATHS:
        (row,) = [line for line in table.splitlines() if line.startswith(f"  | `{name}` (")]
        cell = row.split("|")[2]
        offering = [op for op in listed["operations"] if name in op["profiles"]]
        assert set(re.findall(r"`([a-z_]+)`", cell)) == {op["name"] for op in offering} | {
            op["tool"] for op in offering
        }, name


def test_every_recall_hit_on_every_profile_names_its_space_and_its_source(asgi_server, alice):
    """The issue: "Users of other memory services ask to see which space and which source every hit
    came from." contracts/evidence-mcp.txt: "Query claims to inspect testimony; query facts to answer
    current or historical truth questions, then follow the bridge to see why the system believes or
    believed the fact." Every hit of recall (/mcp, /mcp/ingest, /mcp/graph) and every fact and claim of
    the evidence tools says its space {id, name} and its source {id, origin, title, document}."""
    token = rpc.pat_token(alice)

    async def ingest(session: ClientSession) -> dict[str, Any]:
        result = sdk.structured(
            await session.call_tool(
                "ingest",
                {
                    "content": "The boiler was serviced by Heatwise in May.",
                    "title": "Boiler log",
                    "source_kind": "notes",
                    "source_ref": "boiler-log",
                },
            )
        )
        return result

    ingested = sdk.session_run(asgi_server.url + PATHS["evidence"], token, ingest)
    assert wait_for_job(ingested["job_id"]).status == "succeeded"
    said = sdk.call(
        asgi_server.url + PATHS["core"], token, "remember", {"content": "The boiler is in the cellar."}
    )
    assert wait_for_job(sdk.structured(said)["job_id"]).status == "succeeded"
    related = sdk.call(
        asgi_server.url + PATHS["graph"],
        token,
        "relate",
        {"source": "Heatwise", "target": "boiler", "relation_type": "related_to"},
    )
    assert related.is_error is not True, related
    space = sdk.structured(related)["space"]
    document = {"kind": "notes", "ref": "boiler-log", "version": 1}

    def check(item: dict[str, Any], where: str) -> None:
        assert item["space"] == space, (where, item)
        source = item["source"]
        assert set(source) == {"id", "origin", "title", "document"}, (where, source)
        if source["origin"] == "document":
            assert source["id"] == ingested["version_id"], (where, source)
            assert (source["title"], source["document"]) == ("Boiler log", document), (where, source)

    for profile in ("core", "ingest", "graph"):
        arguments = {"query": "boiler", **({"limit": 10} if profile == "graph" else {"top_k": 10})}
        hits = sdk.structured(sdk.call(asgi_server.url + PATHS[profile], token, "recall", arguments))[
            "memories"
        ]
        assert {hit["source"]["origin"] for hit in hits} >= {"document", "remember"}, (profile, hits)
        for hit in hits:
            check(hit, profile)
            assert hit["source"]["id"] == hit["provenance"]["source_id"]
    facts = sdk.structured(
        sdk.call(asgi_server.url + PATHS["evidence"], token, "combined_context", {"query": "boiler Heatwise"})
    )
    assert {fact["fact_type"] for fact in facts["facts"]["facts"]} == {"memory", "relation"}
    for fact in facts["facts"]["facts"]:
        check(fact, "facts")
        if fact["fact_type"] == "relation":
            assert fact["source"]["origin"] == "relate"
        else:
            assert fact["source"]["id"] == fact["source_id"]
    assert facts["claims_and_sources"]["claims"]
    for claim in facts["claims_and_sources"]["claims"]:
        assert claim["space"] == space, claim
