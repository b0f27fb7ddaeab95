"""Two processes, one budget: the rate limits live in the cache every process shares.

The in-process test client and a real uvicorn server (another process, on the test database)
spend one user's save budget and one OAuth client's failed-token budget together. Counted per
process, the server would accept what the test process already spent.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from django.test import Client

from tests.conftest import LiveServer, start_live_server, stop_live_server
from tests.helpers import oauth_app, pat_client
from tests.mcp_gateway import rpc
from tests.mcp_gateway.rpc import Rpc

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SAVES = 2
TOKEN_FAILURES = 3


@pytest.fixture(scope="module")
def limited_server(child_env, tmp_path_factory) -> Iterator[LiveServer]:
    env = {**child_env, "RATE_LIMIT_SAVE": f"{SAVES}/h", "RATE_LIMIT_TOKEN": f"{TOKEN_FAILURES}/h"}
    server = start_live_server(env, tmp_path_factory.mktemp("limited"), name="limited")
    yield server
    stop_live_server(server)


@pytest.fixture
def same_limits(settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "save": f"{SAVES}/h", "token": f"{TOKEN_FAILURES}/h"}


def test_saves_spent_in_one_process_are_refused_by_the_other(
    alice, limited_server, same_limits, no_worker_broker
):
    client = pat_client(alice)
    for i in range(SAVES):
        response = client.post("/api/v1/memories", {"content": f"Fact number {i}."}, format="json")
        assert response.status_code in (201, 202), response.json()

    token = rpc.pat_token(alice)
    with httpx.Client(timeout=60) as http:
        refused = http.post(
            f"{limited_server.url}/api/v1/memories",
            json={"content": "One too many."},
            headers={"Authorization": f"Bearer {token}"},
        )
        mcp = Rpc(f"{limited_server.url}/mcp", token, client=http)
        mcp.connect()
        tool_error = mcp.error("remember", {"content": "One too many, over MCP."})

    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "rate_limited" and error["retryable"] is True
    assert int(refused.headers["Retry-After"]) == error["details"]["retry_after"] > 0
    assert tool_error["code"] == "rate_limited"
    assert tool_error["retryable"] is True
    assert tool_error["details"]["retry_after"] > 0


def test_failed_token_requests_in_one_process_count_in_the_other(alice, limited_server, same_limits):
    app = oauth_app("Guessing Agent", alice)
    guess = {
        "grant_type": "authorization_code",
        "code": "guessed-code",
        "client_id": app.client_id,
        "redirect_uri": "http://127.0.0.1:9/callback",
        "code_verifier": "v" * 43,
    }
    for _ in range(TOKEN_FAILURES):
        assert Client().post("/o/token/", guess, REMOTE_ADDR="127.0.0.1").status_code == 400
    refused = httpx.post(f"{limited_server.url}/o/token/", data=guess, timeout=60)
    assert refused.status_code == 429
    assert refused.json()["error"] == "rate_limited"
    assert int(refused.headers["Retry-After"]) > 0
