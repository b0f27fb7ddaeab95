"""Debian packages the tests need (Chromium for the browser tests, redis-server for the fault
suite), installed with apt-get when missing: a missing package fails the test, never skips it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def debian_ensure(*, package: str, executable: Path) -> str:
    """`executable`, installing Debian's `package` with apt-get first when it is missing."""
    if executable.exists():
        return str(executable)
    if shutil.which("apt-get") is None:
        pytest.fail(f"{executable} is missing and there is no apt-get to install Debian's {package} package")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", package]):
        try:
            result = subprocess.run(
                command, env=env, capture_output=True, text=True, timeout=1200, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.fail(f"installing {package}: `{' '.join(command)}` did not finish: {exc}")
        if result.returncode != 0:
            pytest.fail(
                f"installing {package}: `{' '.join(command)}` exited {result.returncode}:\n"
                f"{(result.stdout + result.stderr)[-3000:]}"
            )
    if not executable.exists():
        pytest.fail(f"apt-get installed {package} but {executable} is still missing")
    return str(executable)
