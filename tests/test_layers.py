"""The layer order docs/layout.md draws, kept true by import-linter's contracts in pyproject.toml
(`[tool.importlinter]`): a module imports only the layers below its own, and accounts imports
nothing of memories but its errors. A new upward import fails here, naming the file and line;
and no modules import each other in a circle, lazily or not.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("config", "mcp_gateway", "memories", "accounts")


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


def _circles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """The import graph's strongly connected parts of more than one module (Tarjan): each a circle."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module) & modules:
            if imported not in order:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], order[imported])
        if low[module] == order[module]:
            part = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                part.append(member)
                if member == module:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for module in sorted(modules):
        if module not in order:
            visit(module)
    return found


def test_it_has_no_import_circle():
    # The layers forbid an upward import, but two modules of one layer could still import each other
    # (lazily, inside a function): the save path once held a circle of 21 files that way.
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert Path(importlib.import_module("memories").__file__ or "").is_relative_to(ROOT)
    modules = {module for module in graph.modules if ".migrations" not in module}
    assert len(modules) > 150, sorted(modules)
    assert _circles(graph, modules) == []
