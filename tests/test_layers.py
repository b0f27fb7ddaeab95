"""The layer order docs/layout.md draws, kept true by import-linter's contracts in pyproject.toml
(`[tool.importlinter]`): a module imports only the layers below its own, and accounts imports
nothing of memories but its errors. A new upward import fails here, naming the file and line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_it_keeps_every_import_below_its_layer():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    # --no-cache: the contract is judged on the tree as it is, never on a graph cached before an edit.
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    # A layer that names no module is refused by import-linter itself (exit 1, "does not exist"),
    # so a renamed package cannot leave the contract checking nothing.
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout
