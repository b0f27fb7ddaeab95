"""One rule for the client address, whatever the server: `accounts.throttles.client_address`, from
the real peer and DEEPRECALL_TRUSTED_PROXIES. uvicorn rewrites nothing (its proxy headers are off):
left on, it believed X-Forwarded-For from loopback whatever the setting, so Django's REMOTE_ADDR was
already what the client claimed, and a rotating header escaped the sign-in limit (issue 39).

Each served test starts the web process with the command line `manage.py up` runs
(`memories.management.commands.up.web_command`) on the test database, and signs in wrongly from
127.0.0.1 with a new X-Forwarded-For and a new email each time, so only the address limit can stop it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memories.management.commands.up import web_command
from tests.conftest import ROOT, LiveServer, start_live_server, stop_live_server

FAILURES = 3  # RATE_LIMIT_SIGNIN_ADDRESS of the served tests


def _server(child_env: dict[str, str], log_dir: Path, trusted: str | None) -> Iterator[LiveServer]:
    env = {**child_env, "RATE_LIMIT_SIGNIN_ADDRESS": f"{FAILURES}/h"}
    env.pop("DEEPRECALL_TRUSTED_PROXIES", None)
    if trusted is not None:
        env["DEEPRECALL_TRUSTED_PROXIES"] = trusted
    server = start_live_server(env, log_dir, name="forwarded")
    yield server
    stop_live_server(server)


@pytest.fixture
def untrusting_server(child_env, tmp_path) -> Iterator[LiveServer]:
    yield from _server(child_env, tmp_path, trusted=None)


@pytest.fixture
def proxied_server(child_env, tmp_path) -> Iterator[LiveServer]:
    yield from _server(child_env, tmp_path, trusted="127.0.0.1/32")


class SignIns:
    """Wrong passwords at the dashboard's sign-in page, a new email each time."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=60)
        page = self.http.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert token is not None, page.text[:800]
        self.token = token.group(1)
        self.count = 0

    def fail(self, forwarded_for: str) -> int:
        self.count += 1
        response = self.http.post(
            "/accounts/login/",
            data={
                "csrfmiddlewaretoken": self.token,
                "username": f"nobody{self.count}@example.com",
                "password": "wrong",
            },
            headers={"X-Forwarded-For": forwarded_for},
        )
        assert response.status_code in (200, 429), response.text[:800]
        return response.status_code

    def close(self) -> None:
        self.http.close()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_limits_sign_ins_from_loopback_whatever_x_forwarded_for_says(untrusting_server):
    sign_ins = SignIns(untrusting_server.url)
    try:
        statuses = [sign_ins.fail(f"198.51.100.{n}") for n in range(FAILURES + 3)]
    finally:
        sign_ins.close()
    # The peer, 127.0.0.1, is the client: the header's addresses are what a client claims.
    assert statuses == [200] * FAILURES + [429] * 3


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_believes_x_forwarded_for_from_a_trusted_proxy(proxied_server):
    sign_ins = SignIns(proxied_server.url)
    try:
        rotating = [sign_ins.fail(f"198.51.100.{n}") for n in range(FAILURES + 3)]
        one_client = [sign_ins.fail("203.0.113.7") for _ in range(FAILURES + 1)]
        # The left of the proxy's hop is what the client claims: the proxy's hop is the client.
        forged = sign_ins.fail("203.0.113.7, 192.0.2.44")
    finally:
        sign_ins.close()
    assert rotating == [200] * (FAILURES + 3)
    assert one_client == [200] * FAILURES + [429]
    assert forged == 200


def _unit_exec_start(unit: str) -> list[str]:
    text = (ROOT / "docs" / "deploy" / unit).read_text().replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    return shlex.split(line.removeprefix("ExecStart="))


def _dockerfile_cmd() -> list[str]:
    text = (ROOT / "docs" / "deploy" / "Dockerfile").read_text().replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith("CMD "))
    return [part.strip().strip('"') for part in line.removeprefix("CMD ").strip(" []").split(",")]


@pytest.mark.parametrize(
    "where,command",
    [
        ("manage.py up", web_command(host="127.0.0.1", port=8000)),
        ("deeprecall-web@.service", _unit_exec_start("deeprecall-web@.service")),
        ("the Dockerfile", _dockerfile_cmd()),
    ],
)
def test_every_web_process_leaves_the_client_address_to_django(where, command):
    assert "uvicorn" in " ".join(command), (where, command)
    assert "--no-proxy-headers" in command, where
    assert not any(part.startswith(("--proxy-headers", "--forwarded-allow-ips")) for part in command), where
