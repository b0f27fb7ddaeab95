"""The MCP Inspector CLI (@modelcontextprotocol/inspector --cli) against the real endpoint.

What a developer does by hand to try Deep Recall: point the Inspector at `/mcp`
with a personal access token as the bearer, list the tools, call `recall`.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from accounts.services import pat_create
from memories.models import Source
from memories.operations import registry
from tests.helpers import pat_client, wait_for_job
from tests.mcp_gateway.node import node_tools

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

TIMEOUT = 120


def inspector(
    server_url: str, token: str, home: Path, *args: str, path: str = "/mcp"
) -> subprocess.CompletedProcess[str]:
    """`mcp-inspector --cli <server><path> --transport http --header "Authorization: Bearer ..." <args>`."""
    tools = node_tools()
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [
            str(tools.node),
            str(tools.inspector),
            "--cli",
            f"{server_url}{path}",
            "--transport",
            "http",
            "--header",
            f"Authorization: Bearer {token}",
            # Never start an interactive OAuth login: the bearer header is the credential.
            "--stored-auth-only",
            "--format",
            "json",
            *args,
        ],
        cwd=str(tools.js_dir),
        # The Inspector keeps a catalog and client config under ~/.mcp-inspector: keep them private.
        env={
            **os.environ,
            "HOME": str(home),
            "MCP_CATALOG_PATH": str(home / "mcp.json"),
            "MCP_CLIENT_CONFIG_PATH": str(home / "client.json"),
            "NO_COLOR": "1",
        },
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _result(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The MCP result from `--format json` output: one object, `{"result": ...}`."""
    assert result.returncode == 0, (result.returncode, result.stdout[-3000:], result.stderr[-3000:])
    body = json.loads(result.stdout)
    assert set(body) == {"result"}, body
    return dict(body["result"])


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_cli_lists_tools_and_calls_recall_with_a_pat(asgi_server, alice, tmp_path, era):
    saved = pat_client(alice).post(
        "/api/v1/memories", {"content": "My sister Ana lives in Porto and teaches maths."}, format="json"
    )
    assert saved.status_code in (201, 202), saved.json()
    assert wait_for_job(saved.json()["job"]["id"]).status == "succeeded"
    _, raw = pat_create(user=alice, name="inspector", scopes=["memory:read"])
    home = tmp_path / "home"

    # Both protocol revisions the endpoint speaks: legacy (initialize, 2025-11-25) and modern (2026-07-28).
    listed = _result(inspector(asgi_server.url, raw, home, "--protocol-era", era, "--method", "tools/list"))
    core = registry.operations("core")
    assert [t["name"] for t in listed["tools"]] == [op.name for op in core]
    for tool, op in zip(listed["tools"], core, strict=True):
        assert tool["inputSchema"] == op.input_schema
        assert tool["outputSchema"] == op.describe()["mcp_output_schema"]

    called = _result(
        inspector(
            asgi_server.url,
            raw,
            home,
            "--protocol-era",
            era,
            "--method",
            "tools/call",
            "--tool-name",
            "recall",
            "--tool-arg",
            "query=Where does Ana live?",
        )
    )
    assert called.get("isError") is False, called
    structured = called["structuredContent"]
    jsonschema.validate(structured, registry.get_operation("recall").output_schema)
    assert [c["type"] for c in called["content"]] == ["text"]
    assert json.loads(called["content"][0]["text"]) == structured
    assert any("Porto" in m["content"] for m in structured["memories"]), structured


def test_the_inspector_cli_is_refused_without_a_valid_token(asgi_server, tmp_path):
    result = inspector(asgi_server.url, "drp_not-a-real-token", tmp_path / "home", "--method", "tools/list")
    assert result.returncode != 0
    assert result.stdout.strip() == ""
    assert "invalid_token" in result.stderr, result.stderr


def test_the_inspector_cli_cannot_write_with_a_read_only_token(asgi_server, alice, tmp_path):
    _, read_only = pat_create(user=alice, name="inspector", scopes=["memory:read"])
    result = inspector(
        asgi_server.url,
        read_only,
        tmp_path / "home",
        "--method",
        "tools/call",
        "--tool-name",
        "remember",
        "--tool-arg",
        "content=This must not be saved.",
    )
    assert result.returncode != 0
    assert result.stdout.strip() == ""
    assert "memory:write" in result.stderr, result.stderr  # the 403 insufficient_scope challenge
    assert not Source.objects.filter(owner=alice).exists()


@pytest.mark.parametrize("profile", list(registry.PROFILES))
def test_the_inspectors_strict_mode_finds_no_portability_problem_in_any_tool_schema(
    asgi_server, alice, tmp_path, profile
):
    """The Inspector's `--strict` lint (`type-union`): "`type` is an array ... less portable: a client
    that maps tool schemas onto a single-`type` dialect (such as the OpenAPI subset used for Gemini
    function declarations) may reject the tool or drop the constraint." Every URL's tools use the form
    strict clients accept (`anyOf` with {"type": "null"}), and validate exactly as before."""
    _, raw = pat_create(user=alice, name="inspector", scopes=["memory:read", "memory:write"])
    path = registry.PROFILES[profile].path
    listed = inspector(
        asgi_server.url, raw, tmp_path / "home", "--method", "tools/list", "--strict", path=path
    )
    assert listed.returncode == 0, (listed.returncode, listed.stdout[-3000:], listed.stderr[-3000:])
    body = json.loads(listed.stdout)
    assert body.get("schemaFindings", []) == [], json.dumps(body.get("schemaFindings"))[:3000]
    assert "Warning" not in listed.stderr and "portability" not in listed.stderr, listed.stderr[-3000:]
    assert [tool["name"] for tool in body["result"]["tools"]] == [
        op.tool_name for op in registry.operations(profile)
    ]
