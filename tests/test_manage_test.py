"""The README's test command hands pytest its own options, and `--fast` is the local loop."""

from __future__ import annotations

import re

from tests.conftest import run_manage

TENANCY = "tests/mcp_gateway/test_tenancy.py"


def _collected(output: str) -> tuple[int, int]:
    found = re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", output)
    if found:
        return int(found.group(1)), int(found.group(3))
    plain = re.search(r"(\d+) tests? collected", output)
    assert plain, output
    return int(plain.group(1)), 0


def test_pytest_options_pass_through_and_lint_can_be_skipped():
    # -k is pytest's: only the registration tests of the file stay, the rest are deselected.
    result = run_manage("test", "--skip-lint", TENANCY, "--collect-only", "-q", "-k", "registration")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "== ruff" not in result.stdout
    collected, deselected = _collected(result.stdout)
    assert collected >= 1 and deselected >= 1


def test_fast_leaves_out_the_tests_marked_slow():
    everything = run_manage(
        "test",
        "--skip-lint",
        "tests/test_service.py",
        "tests/memories/test_limits.py",
        "--collect-only",
        "-q",
    )
    fast = run_manage(
        "test", "--fast", "tests/test_service.py", "tests/memories/test_limits.py", "--collect-only", "-q"
    )
    assert everything.returncode == 0 and fast.returncode == 0, fast.stdout + fast.stderr
    assert "== ruff" not in fast.stdout
    all_count, _ = _collected(everything.stdout)
    fast_count, deselected = _collected(fast.stdout)
    # tests/test_service.py is marked slow as a whole; test_limits.py is not.
    assert deselected > 0 and fast_count + deselected == all_count
    assert "tests/test_service.py::" not in fast.stdout and "tests/memories/test_limits.py::" in fast.stdout
