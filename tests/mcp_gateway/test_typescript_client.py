"""The official TypeScript MCP SDK (@modelcontextprotocol/sdk from npm) against the real endpoint.

`js/oauth_client.mjs` is the agent: the SDK's `Client` and
`StreamableHTTPClientTransport` with an in-memory `OAuthClientProvider`. It
registers itself (DCR), sends the person to authorize (this test plays the
browser: logs in, approves the consent page), exchanges the code with PKCE and
`resource`, reconnects, lists the tools and calls `recall`.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from typing import Any

import jsonschema
import pytest
from oauth2_provider.models import get_access_token_model, get_application_model

from memories.models import Memory
from memories.operations import registry
from tests.helpers import pat_client, wait_for_job
from tests.mcp_gateway.node import node_tools
from tests.mcp_gateway.oauth_browser import Browser

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CLIENT_NAME = "TS SDK Agent"
REDIRECT_PORT = 33419
TIMEOUT = 120


class NodeAgent:
    """The Node script as a child process, spoken to one JSON line at a time."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: str) -> None:
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def read(self, deadline: float) -> dict[str, Any] | None:
        """The next JSON line, or None at the end of the output."""
        while True:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                stderr = self.diagnostics()
                raise AssertionError(f"the node client said nothing in time; stderr:\n{stderr}") from None
            if line is None:
                return None
            if line.strip().startswith("{"):
                return dict(json.loads(line))

    def write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def diagnostics(self) -> str:
        return "".join(self.stderr)[-4000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def run_agent(server_url: str, browser: Browser, **env: str) -> tuple[int, list[dict[str, Any]], str]:
    """Run js/oauth_client.mjs against `server_url`, playing the person whenever it asks."""
    tools = node_tools()
    agent = NodeAgent(
        [str(tools.node), str(tools.oauth_client)],
        env={
            **os.environ,
            "MCP_URL": f"{server_url}/mcp",
            "MCP_CLIENT_NAME": CLIENT_NAME,
            "MCP_REDIRECT_PORT": str(REDIRECT_PORT),
            **env,
        },
        cwd=str(tools.js_dir),
    )
    messages: list[dict[str, Any]] = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while (message := agent.read(deadline)) is not None:
            if "authorize" in message:
                query = browser.authorize(message["authorize"])
                agent.write({"code": query.get("code"), "state": query.get("state")})
            messages.append(message)
        returncode = agent.proc.wait(timeout=max(1, deadline - time.monotonic()))
    finally:
        agent.stop()
    return returncode, messages, agent.diagnostics()


def _step(messages: list[dict[str, Any]], name: str) -> dict[str, Any]:
    found = [m for m in messages if m.get("step") == name]
    assert len(found) == 1, messages
    return found[0]


def test_the_typescript_sdk_registers_authorizes_lists_tools_and_recalls(asgi_server, browser_user):
    alice = browser_user
    # Something to find: saved over REST, processed by the real worker.
    saved = pat_client(alice).post(
        "/api/v1/memories", {"content": "I keep bees on the roof of my flat in Lisbon."}, format="json"
    )
    assert saved.status_code in (201, 202), saved.json()
    assert wait_for_job(saved.json()["job"]["id"]).status == "succeeded"
    assert Memory.objects.filter(owner=alice).exists()

    browser = Browser(asgi_server.url, alice.email)
    calls = [
        {"name": "recall", "arguments": {"query": "bees on the roof"}},
        {"name": "remember", "arguments": {"content": "The hive on the roof swarmed in May."}},
    ]
    returncode, messages, stderr = run_agent(asgi_server.url, browser, MCP_CALLS=json.dumps(calls))
    assert returncode == 0, (messages, stderr)
    assert not [m for m in messages if "error" in m], (messages, stderr)

    # The person was sent to authorize exactly once and saw our consent page naming the app.
    assert len([m for m in messages if "authorize" in m]) == 1, messages
    assert len(browser.consent_pages) == 1
    consent = browser.consent_pages[0]
    assert CLIENT_NAME in consent and "Read your memories" in consent and "Personal" in consent
    # The SDK asked for what the 401 named, every scope of /mcp; the person could untick writing.
    assert (
        'value="memory:write" id="id_granted_1" checked' in consent and "Save and forget memories" in consent
    )

    connected = _step(messages, "connect")["result"]
    assert connected["server"]["name"] == "deeprecall"
    assert connected["authorizations"] == 1
    assert sorted(connected["scope"].split()) == ["memory:read", "memory:write"]

    # Dynamic client registration made an OAuth application with the client's name.
    application = get_application_model().objects.get(client_id=connected["client_id"])
    assert application.name == CLIENT_NAME
    assert application.client_type == "public"
    assert f"http://127.0.0.1:{REDIRECT_PORT}/callback" in application.redirect_uris.split()

    # The token the SDK got is alice's, for both scopes, with this server's /mcp as its audience.
    # (DCR also minted an RFC 7592 registration-management token for the app, with no user.)
    token = get_access_token_model().objects.get(application=application, user=alice)
    assert sorted(token.scope.split()) == ["memory:read", "memory:write"]
    assert [str(r).rstrip("/") for r in token.resource or []] == [f"{asgi_server.url}/mcp"]

    # tools/list is the registry's core profile, with its schemas.
    listed = _step(messages, "listTools")["result"]["tools"]
    core = registry.operations("core")
    assert [t["name"] for t in listed] == [op.name for op in core]
    for tool, op in zip(listed, core, strict=True):
        assert tool["inputSchema"] == op.input_schema
        assert tool["outputSchema"] == op.describe()["mcp_output_schema"]

    # recall: a successful result whose structured output fits the registry's schema,
    # mirrored in one text block, and which finds the saved memory.
    recall, remember = [m for m in messages if m.get("step") == "callTool"]
    assert recall["tool"] == "recall"
    result = recall["result"]
    assert not result.get("isError"), result
    structured = result["structuredContent"]
    jsonschema.validate(structured, registry.get_operation("recall").output_schema)
    assert {"at", "memories", "total", "freshness"} <= set(structured)
    assert [c["type"] for c in result["content"]] == ["text"]
    assert json.loads(result["content"][0]["text"]) == structured
    assert structured["total"] == len(structured["memories"]) >= 1
    assert any("bees" in m["content"] for m in structured["memories"]), structured
    # remember: a TypeScript SDK agent writes, with no step-up and no manual step (typescript-sdk#2255).
    assert remember["tool"] == "remember" and not remember["result"].get("isError"), remember
    job = wait_for_job(remember["result"]["structuredContent"]["job_id"])
    assert job.status == "succeeded"
    saved = Memory.objects.get(job=job)
    assert "swarmed" in saved.content and saved.agent == application
    assert _step(messages, "done")["result"]["authorizations"] == 1
