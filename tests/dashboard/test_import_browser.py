"""The import page in a real browser (headless Debian Chromium, Playwright): pick a file, watch the
progress bar follow the worker, read the result, undo it. Against the real uvicorn process and the
real worker, as tests/dashboard/test_browser.py."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from tests.dashboard.test_browser import TIMEOUT_MS, browser, dashboard_server, person  # noqa: F401
from tests.memories import import_fixtures as fx

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_it_imports_a_file_shows_its_progress_and_undoes_it(person, tmp_path):  # noqa: F811
    start = datetime(2024, 1, 1, tzinfo=UTC)
    statements = [
        (f"On day {i} I practised the violin for {i % 5 + 1} hours.", start + timedelta(days=i))
        for i in range(120)
    ]
    export = tmp_path / "mem0.json"
    export.write_bytes(fx.mem0_json(statements))
    page = person.page
    person.sign_up("grace@example.com")
    person.goto("/imports/")
    person.shot("imports-01-picker")
    page.get_by_label("Export file").set_input_files(str(export))
    page.get_by_role("button", name="Import", exact=True).click()
    page.wait_for_url(re.compile(r"/imports/[0-9a-f-]{36}/$"))
    bar = page.locator("[data-import-bar]")
    assert bar.count() == 1
    page.wait_for_selector("[data-import-api][data-import-done='true']", timeout=TIMEOUT_MS)
    assert page.locator("[data-import-badge]").inner_text() == "succeeded"
    status = page.locator("[data-import-status]").inner_text()
    assert status.startswith("120 of 120 items read"), status
    assert bar.evaluate("el => el.value") == bar.evaluate("el => el.max") == 120
    person.shot("imports-02-done")

    page.get_by_role("button", name="Undo the import (delete what it stored)").click()
    page.wait_for_url(re.compile(r"/imports/[0-9a-f-]{36}/$"))
    receipt = page.locator("[data-import-receipt]")
    receipt.wait_for()
    assert "permanently deleted" in receipt.inner_text()
    person.shot("imports-03-undone")
    person.goto("/imports/")
    assert "undone" in page.locator(".import-list").inner_text()
    person.assert_clean()
