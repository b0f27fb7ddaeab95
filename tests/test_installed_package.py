"""`pip install .` as a deployment makes it: a wheel, installed outside the checkout, serving pages.

uvicorn runs the installed wheel (conftest's `installed_wheel`) from another folder, so nothing
can come from the checkout.
"""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_it_serves_the_dashboard_pages_from_an_installed_wheel(
    installed_wheel, child_env, tmp_path, unused_tcp_port
):
    env = {**child_env, "PYTHONPATH": str(installed_wheel), "DEEPRECALL_VAR_DIR": str(tmp_path / "var")}
    where = subprocess.run(
        [sys.executable, "-c", "import config; print(config.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip().startswith(str(installed_wheel)), where.stdout
    url = f"http://127.0.0.1:{unused_tcp_port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "config.asgi:application", "--port", str(unused_tcp_port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, "the installed server exited"
            try:
                if httpx.get(f"{url}/healthz/live", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the installed server did not start"
            time.sleep(0.5)
        # A page rendered from templates/ (which is no Python package) and the static files.
        login = httpx.get(f"{url}/accounts/login/", timeout=30)
        assert login.status_code == 200, login.text[:500]
        assert "<form" in login.text
        assert httpx.get(f"{url}/static/dashboard/dashboard.css", timeout=30).status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=30)
