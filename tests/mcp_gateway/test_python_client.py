"""The official Python MCP SDK against the real endpoint: OAuth (DCR, PKCE, resource), tools, step-up."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from memories.models import Memory
from tests.helpers import wait_for_job
from tests.mcp_gateway.oauth_browser import Browser

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

REDIRECT_URI = "http://127.0.0.1:33418/callback"


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def oauth_provider(
    server_url: str, browser: Browser, scope: str, storage: MemoryStorage, path: str = "/mcp"
) -> OAuthClientProvider:
    pending: dict[str, str] = {}

    async def redirect_handler(authorization_url: str) -> None:
        pending.update(await asyncio.to_thread(browser.authorize, authorization_url))

    async def callback_handler() -> AuthorizationCodeResult:
        assert "code" in pending, pending
        # What a client's redirect listener receives, `iss` (RFC 9207) included: the SDK checks it.
        result = AuthorizationCodeResult(
            code=pending["code"], state=pending.get("state"), iss=pending.get("iss")
        )
        pending.clear()
        return result

    return OAuthClientProvider(
        server_url=f"{server_url}{path}",
        client_metadata=OAuthClientMetadata(
            client_name="Test Agent",
            redirect_uris=[AnyUrl(REDIRECT_URI)],
            scope=scope,
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )


async def _session_run(server_url: str, auth: OAuthClientProvider, steps: Any, path: str = "/mcp") -> Any:
    async with (
        httpx2.AsyncClient(auth=auth, timeout=60) as http,
        streamable_http_client(f"{server_url}{path}", http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        return await steps(session)


def test_it_connects_with_oauth_lists_tools_calls_them_and_steps_up(asgi_server, browser_user):
    alice = browser_user
    # Asked for both scopes at connect, the person unticks memory:write; the write tool's 403 makes
    # the SDK step up, and the person allows it the second time.
    browser = Browser(asgi_server.url, alice.email, withhold=[{"memory:write"}])
    storage = MemoryStorage()
    auth = oauth_provider(asgi_server.url, browser, "memory:read", storage)

    async def steps(session: ClientSession) -> dict[str, Any]:
        tools = await session.list_tools()
        names = [t.name for t in tools.tools]
        saved = await session.call_tool("remember", {"content": "I keep bees on the roof in Lisbon."})
        missing = await session.call_tool("forget", {"memory_id": "00000000-0000-0000-0000-000000000000"})
        return {"names": names, "saved": saved, "missing": missing}

    result = asyncio.run(_session_run(asgi_server.url, auth, steps))
    assert {"remember", "forget"} <= set(result["names"])
    assert result["saved"].is_error is False, result["saved"]
    job = wait_for_job(result["saved"].structured_content["job_id"])
    memory = Memory.objects.get(job=job)
    # The OAuth application registered by the client is the agent on the memory.
    assert memory.owner == alice and memory.agent is not None and memory.agent.name == "Test Agent"
    assert result["missing"].is_error is True
    assert result["missing"].structured_content["code"] == "memory_not_found"
    # Two consents: the first granted memory:read only, then the step-up that added memory:write.
    assert len(browser.consent_pages) == 2
    assert 'value="memory:write"' in browser.consent_pages[0]
    assert "Test Agent" in browser.consent_pages[0] and "Personal" in browser.consent_pages[0]
    assert storage.tokens is not None and set(storage.tokens.scope.split()) == {"memory:read", "memory:write"}
