"""The official TypeScript MCP SDK against the tool profiles (/mcp/graph, /mcp/evidence, /mcp/ingest).

`js/token_client.mjs` connects with a bearer token, runs a list of steps (tools, calls,
resources) and prints each result. The SDK checks every structured result against the
tool's output schema itself, so a shape that drifted from its schema fails here too.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from memories.models import Job, Memory, Relation
from memories.selectors.spaces import space_default
from tests.helpers import wait_for_job
from tests.mcp_gateway import rpc
from tests.mcp_gateway.node import node_tools
from tests.mcp_gateway.test_graph_contract import CONTRACT_TOOLS

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def run_steps(url: str, token: str, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tools = node_tools()
    done = subprocess.run(
        [str(tools.node), str(tools.js_dir / "token_client.mjs")],
        cwd=str(tools.js_dir),
        env={**os.environ, "MCP_URL": url, "MCP_TOKEN": token, "MCP_STEPS": json.dumps(steps)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [line["step"] for line in lines] == list(range(len(steps))), done.stdout[-3000:]
    return lines


def structured(line: dict[str, Any]) -> dict[str, Any]:
    assert "result" in line, line
    result = line["result"]
    assert result.get("isError") is not True, result
    return dict(result["structuredContent"])


def test_the_graph_profile_tools_and_resources_through_the_typescript_sdk(asgi_server, alice, charlie):
    url = asgi_server.url + "/mcp/graph"
    lines = run_steps(
        url,
        rpc.pat_token(alice),
        [
            {"list_tools": True},
            {
                "call": "relate",
                "arguments": {"source": "Mara Lind", "target": "Oslo", "relation_type": "lives_in"},
            },
            {
                "call": "relate",
                "arguments": {"source": "Mara Lind", "target": "Bergen", "relation_type": "lives_in"},
            },
            {"call": "get_context", "arguments": {"entity_name": "mara lind"}},
            {"list_resources": True},
            {"read_resource": "graph://stats"},
            {"read_resource": "graph://secrets"},
            {
                "call": "relate",
                "arguments": {"source": "Mara Lind", "target": "Oslo", "relation_type": "lives"},
            },
            {"call": "invalidate", "arguments": {"memory_id": "00000000-0000-0000-0000-000000000000"}},
            {
                "call": "remember",
                "arguments": {
                    "content": "Mara Lind prefers the night train.",
                    "category": "preference",
                    "entities": [{"name": "Mara Lind", "type": "Person"}],
                    "confidence": 1,
                },
            },
        ],
    )
    names = [tool["name"] for tool in lines[0]["result"]["tools"]]
    # The contract's seven, in its order.
    assert names == CONTRACT_TOOLS
    oslo, bergen, context = structured(lines[1]), structured(lines[2]), structured(lines[3])
    assert bergen["superseded"] == [oslo["relation"]["id"]]
    relation = Relation.objects.get(id=bergen["relation"]["id"])
    assert relation.owner == alice and relation.superseded_at is None
    assert Relation.objects.get(id=oslo["relation"]["id"]).superseded_by_id == relation.id
    current = [r["object"]["name"] for r in context["relations"] if r["current"]]
    assert current == ["Bergen"]
    uris = [resource["uri"] for resource in lines[4]["result"]["resources"]]
    assert uris == ["graph://entities", "graph://memories", "graph://relations", "graph://stats"]
    stats = json.loads(lines[5]["result"]["contents"][0]["text"])
    space = space_default(owner=alice)
    assert stats["relations"] == {
        "current": Relation.objects.filter(owner=alice, space=space, superseded_at__isnull=True).count(),
        "total": Relation.objects.filter(owner=alice, space=space).count(),
    }
    assert lines[6]["error"]["code"] == -32002
    assert "result" in lines[7], lines[7]
    # Failures reach the agent as our error object, not as an SDK complaint about the schema
    # (the SDK validates isError results too: see schemas.result_or_error).
    refused = lines[7]["result"]
    assert refused["isError"] is True and refused["structuredContent"]["code"] == "invalid_value"
    assert refused["structuredContent"]["agent_action"]
    assert "result" in lines[8], lines[8]
    assert lines[8]["result"]["structuredContent"]["code"] == "memory_not_found"
    saved = structured(lines[9])
    assert saved["status"] == "stored" and saved["memories"][0]["category"] == "preference"
    assert Memory.objects.get(id=saved["memory_id"]).owner == alice
    assert Relation.objects.filter(owner=alice).count() == 2

    # The outsider, through the same SDK: none of it is there for him.
    outsider = run_steps(
        url,
        rpc.pat_token(charlie),
        [
            {"call": "get_context", "arguments": {"entity_name": "Mara Lind"}},
            {"read_resource": "graph://relations"},
        ],
    )
    missing = outsider[0]["result"]
    assert missing["isError"] is True and missing["structuredContent"]["code"] == "entity_not_found"
    text = outsider[1]["result"]["contents"][0]["text"]
    assert "Mara" not in text and "Oslo" not in text and json.loads(text)["count"] == 0


def test_ingest_then_evidence_through_the_typescript_sdk(asgi_server, alice):
    token = rpc.pat_token(alice)
    ingested = run_steps(
        asgi_server.url + "/mcp/ingest",
        token,
        [{"call": "ingest", "arguments": {"content": "Mara Lind works at the Oslo Opera.", "title": "Note"}}],
    )
    job_id = structured(ingested[0])["job_id"]
    assert wait_for_job(job_id).status == Job.Status.SUCCEEDED
    ready, facts = run_steps(
        asgi_server.url + "/mcp/ingest",
        token,
        [{"call": "pipeline_readiness", "arguments": {"job_ids": [job_id]}}],
    ) + run_steps(
        asgi_server.url + "/mcp/evidence",
        token,
        [{"call": "facts_context", "arguments": {"query": "Where does Mara Lind work?", "k": 5}}],
    )
    readiness = structured(ready)
    assert readiness["stop_polling"] is True and readiness["jobs"][0]["searchable"] is True
    context = structured(facts)
    memory = Memory.objects.get(owner=alice, job_id=job_id)
    assert context["grain"] == "fact" and context["negative"] is None
    assert [fact["id"] for fact in context["facts"]][:1] == [str(memory.id)]
    assert context["facts"][0]["evidence_count"] == 1
