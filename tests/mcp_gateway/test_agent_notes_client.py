"""An agent's memory notes through a real MCP client (the official Python SDK, OAuth as a client does
it, the real server and worker): notes written in the third person ("User prefers aisle seats ...")
are the person's own facts to the update engine, so the person's later change ("I prefer window
seats ... now", "I moved to Utrecht") replaces the note, keeps it as history, and leaves the job
note the same turn says still holds."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import ClientSession

from memories.models import Memory
from tests.helpers import wait_for_job
from tests.mcp_gateway.oauth_browser import Browser
from tests.mcp_gateway.test_python_client import MemoryStorage, _session_run, oauth_provider

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_an_agents_notes_about_the_user_are_replaced_by_the_persons_change(asgi_server, browser_user):
    alice = browser_user
    auth = oauth_provider(
        asgi_server.url, Browser(asgi_server.url, alice.email), "memory:read memory:write", MemoryStorage()
    )

    async def save(session: ClientSession, content: str) -> str:
        result = await session.call_tool("remember", {"content": content})
        assert result.is_error is False, result
        job_id = result.structured_content["job_id"]
        # One save at a time, as an agent that waits for each: the next is judged against this one.
        await asyncio.to_thread(wait_for_job, job_id)
        return str(job_id)

    async def steps(session: ClientSession) -> dict[str, Any]:
        home = await save(session, "User lives in Rotterdam.")
        job = await save(session, "User works at the Port of Rotterdam.")
        seats = await save(session, "User prefers aisle seats on long flights.")
        move = await save(session, "I moved to Utrecht last month but still work at the port.")
        window = await save(session, "I prefer window seats on long flights now.")
        found = await session.call_tool("recall", {"query": "Where do I live?", "top_k": 5})
        return {"home": home, "job": job, "seats": seats, "move": move, "window": window, "found": found}

    result = asyncio.run(_session_run(asgi_server.url, auth, steps))
    home = Memory.objects.get(job_id=result["home"])
    job = Memory.objects.get(job_id=result["job"])
    move = Memory.objects.get(job_id=result["move"])
    seats = Memory.objects.get(job_id=result["seats"])
    window = Memory.objects.get(job_id=result["window"])
    # The agent's note and the person's words are one subject: a preference has no slot, so only
    # the note read in the person's words ("I prefer aisle seats ...") lets the change replace it.
    assert seats.superseded_by_id == window.id
    assert home.superseded_by_id == move.id
    assert job.superseded_at is None  # "still work at the port": what holds is not replaced
    assert result["found"].is_error is False, result["found"]
    contents = [hit["content"] for hit in result["found"].structured_content["memories"]]
    assert contents and "Utrecht" in contents[0], contents
    assert "User lives in Rotterdam." not in contents  # history, not what holds now
