"""`pip install .` as a deployment makes it: a wheel, installed outside the checkout, serving pages.

The wheel is built from a copy of this checkout and installed with `--target` (its dependencies
are this venv's), then uvicorn runs it from another folder, so nothing can come from the checkout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SKIP = shutil.ignore_patterns(".venv", ".git", "var", "node_modules", "build", "*.egg-info", "__pycache__")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source") / "deeprecall"
    shutil.copytree(ROOT, source, ignore=SKIP)
    wheels = tmp_path_factory.mktemp("wheels")
    site = tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", str(source), "-w", str(wheels)],
        check=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("deeprecall-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True, timeout=300)
    return site


def test_it_serves_the_dashboard_pages_from_an_installed_wheel(
    installed, child_env, tmp_path, unused_tcp_port
):
    env = {**child_env, "PYTHONPATH": str(installed), "DEEPRECALL_VAR_DIR": str(tmp_path / "var")}
    where = subprocess.run(
        [sys.executable, "-c", "import config; print(config.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip().startswith(str(installed)), where.stdout
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
