"""Property-based tests of the profile tools (graph, evidence, ingest) at their own endpoints.

The same invariant as test_fuzz.py, for every tool a profile adds, over both protocol
revisions: never a 5xx, a leak or an `internal_error`; a refused call stores nothing (every
table a profile tool can write is counted); an unknown field is always refused. The fields
come from the registry, so a new field of a tool is fuzzed without editing this file.
Bounded and reproducible: derandomized, a fixed number of examples, no example database.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memories.models import Entity, Evidence, GrantSpace, Job, Relation
from memories.operations.registry import PROFILES, operations
from tests.helpers import wait_for_job
from tests.mcp_gateway import rpc
from tests.mcp_gateway.rpc import LEGACY, MODERN
from tests.mcp_gateway.test_fuzz import FUZZ as BASE_FUZZ
from tests.mcp_gateway.test_fuzz import _has_unstorable_text, json_values, oddity, strings

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# The settings of test_fuzz.py, with fewer examples: ten tools share them here.
FUZZ = settings(BASE_FUZZ, max_examples=80)

NIL = "00000000-0000-0000-0000-000000000000"
# A valid call of each profile tool (by registry name); the fuzz replaces or adds fields around it.
VALID: dict[str, dict[str, Any]] = {
    "graph_remember": {"content": "Mara Lind lives in Oslo.", "category": "fact"},
    "graph_recall": {"query": "Where does Mara live?"},
    "get_context": {"entity_name": "Mara Lind"},
    "list_entities": {},
    "invalidate": {"memory_id": NIL},
    "relate": {"source": "Mara Lind", "target": "Oslo", "relation_type": "lives_in"},
    "switch_agent": {"agent_id": NIL},
    "resolve_entity": {"query": "Mara"},
    "facts_context": {"query": "Where does Mara live?"},
    "claims_and_sources_context": {"query": "Where does Mara live?"},
    "combined_context": {"query": "Where does Mara live?"},
    "ingest": {"content": "The boiler was serviced in May."},
    "pipeline_readiness": {"job_ids": [NIL]},
    "query_space": {},
    "describe_view": {"view": "memories"},
    "validate_query": {"sql": "SELECT count(*) FROM memories"},
    "query": {"sql": "SELECT kind, count(*) FROM memories GROUP BY kind"},
    "list_saved_queries": {},
    "describe_saved_query": {"name": "examples.memories_by_month"},
    "run_saved_query": {"name": "examples.memories_by_month"},
}
# (URL path, registry name, MCP tool name) of every tool a profile offers beyond the core four.
TOOLS = [
    (profile.path, op.name, op.tool_name)
    for profile in PROFILES.values()
    if profile.name != "core"
    for op in operations(profile.name)
    if "core" not in op.profiles
]
PROPERTIES = {
    op.name: sorted(op.input_schema["properties"]) for op in operations() if "core" not in op.profiles
}


def test_every_profile_tool_is_fuzzed():
    # A tool offered on two profile URLs (ingest is also on the evidence URL) is fuzzed on both.
    assert {name for _, name, _ in TOOLS} == set(VALID)
    assert any(t[:2] == ("/mcp/evidence", "ingest") for t in TOOLS)
    assert any(t[:2] == ("/mcp/ingest", "ingest") for t in TOOLS)


def counts() -> dict[str, int]:
    return {
        **rpc.row_counts(),
        "entities": Entity.objects.count(),
        "relations": Relation.objects.count(),
        "evidence": Evidence.objects.count(),
        "grants": GrantSpace.objects.count(),
    }


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=120) as client:
        yield client


@pytest.fixture
def token(alice) -> str:
    return rpc.pat_token(alice)


def check(response: httpx.Response, before: dict[str, int], what: Any) -> dict[str, Any] | None:
    """Clean, never our fault, and nothing stored unless the call succeeded. The tool result."""
    rpc.assert_clean(response)
    assert response.status_code in (200, 400, 413), (what, response.status_code, response.text[:500])
    result = None
    if response.status_code == 400:
        # Only a body the transport cannot parse (a lone surrogate on 2025-11-25) is a 400.
        assert rpc.parse(response)["error"]["code"] in (-32700, -32600), (what, response.text[:500])
    if response.status_code == 200:
        answer = rpc.parse(response)
        result = answer.get("result")
        assert isinstance(result, dict), (what, answer)
        rpc.check_tool_result(result)
        payload = result["structuredContent"]
        if result.get("isError"):
            assert payload["code"] != "internal_error", (what, payload)
            if payload["code"] == "save_failed":
                # Graph remember waited for its job, which stored nothing: the save itself (its
                # source and the failed job) is kept as a record, as for every save.
                grown = {k: v - before[k] for k, v in counts().items() if v != before[k]}
                assert grown == {"sources": 1, "jobs": 1}, (what, grown)
                return dict(result)
        else:
            if "job_id" in payload and payload.get("created"):
                job = wait_for_job(payload["job_id"], timeout=180)
                assert job.status == Job.Status.SUCCEEDED or job.error_code not in ("", "internal_error"), (
                    what,
                    job.error_code,
                )
            return dict(result)
    assert counts() == before, (what, response.status_code, response.text[:500])
    return result


@FUZZ
@given(
    data=st.data(),
    tool=st.sampled_from(TOOLS),
    protocol=st.sampled_from([LEGACY, MODERN]),
)
def test_odd_values_in_known_fields_are_answered_cleanly(asgi_server, token, http, data, tool, protocol):
    path, name, tool_name = tool
    fields = PROPERTIES[name]
    if not fields:
        return
    chosen = data.draw(st.lists(st.sampled_from(fields), min_size=1, max_size=2, unique=True))
    values = {field: data.draw(st.one_of(strings, json_values), label=field) for field in chosen}
    body = rpc.tools_call(tool_name, {**VALID[name], **values}, protocol=protocol)
    before = counts()
    response = rpc.post(asgi_server.url + path, body, token=token, protocol=protocol, client=http)
    check(response, before, (name, str(values)[:300]))


@FUZZ
@given(
    tool=st.sampled_from(TOOLS),
    extra=st.dictionaries(
        st.one_of(st.text(min_size=1, max_size=20), oddity),
        json_values,
        min_size=1,
        max_size=3,
    ),
    protocol=st.sampled_from([LEGACY, MODERN]),
)
def test_an_unknown_field_is_always_refused_and_stores_nothing(
    asgi_server, token, http, tool, extra, protocol
):
    path, name, tool_name = tool
    extra = {key: value for key, value in extra.items() if key not in PROPERTIES[name]}
    if not extra:
        return
    body = rpc.tools_call(tool_name, {**VALID[name], **extra}, protocol=protocol)
    before = counts()
    response = rpc.post(asgi_server.url + path, body, token=token, protocol=protocol, client=http)
    result = check(response, before, (name, extra))
    if response.status_code in (400, 413):
        return
    answer = rpc.parse(response)
    if "error" in answer:  # the 2025-11-25 parser refuses lone surrogates outright
        assert protocol == LEGACY and answer["error"]["code"] == -32700, answer
        return
    assert result is not None and result["isError"] is True, (name, extra, result)
    if result["structuredContent"]["code"] == "body_too_large":
        return  # a huge value: refused before it is parsed, as the call's error result
    if not _has_unstorable_text(json.loads(json.dumps(extra))):
        assert result["structuredContent"]["code"] == "unknown_field", (name, extra, result)
