"""The import page in a real browser (headless Debian Chromium, Playwright): pick a file, watch the
progress bar follow the worker, read the result (what an export restored appears when the import
ends), undo it. Against the real uvicorn process and the
real worker, as tests/dashboard/test_browser.py."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from accounts.models import User
from memories.models import Memory, Relation
from memories.services.account import user_sign_up
from tests.conftest import session_worker_suspended
from tests.dashboard.test_browser import TIMEOUT_MS, browser, dashboard_server, person  # noqa: F401
from tests.helpers import pat_client, wait_for_job
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


def _export_of_a_history(tmp_path: Path) -> tuple[Path, User]:
    """Another account's history made through REST (two spaces, a pinned memory, a relation from
    `relate`), and its Deep Recall export as a file."""
    old = user_sign_up(email="lin.old@example.com", password="correct horse battery staple")
    client = pat_client(old)
    work = client.post("/api/v1/spaces", {"name": "Work"}, format="json").json()["id"]
    jobs = [
        client.post("/api/v1/memories", {"content": content, **fields}, format="json").json()["job"]["id"]
        for content, fields in [
            ("I live in Lisbon with my partner.", {}),
            ("My passport number is P7654321.", {}),
            ("I work at Fado Systems as a designer.", {"space": work}),
        ]
    ]
    assert all(wait_for_job(job).status == "succeeded" for job in jobs)
    passport = Memory.objects.get(owner=old, content="My passport number is P7654321.")
    assert client.post(f"/api/v1/memories/{passport.id}/pin").status_code == 200
    related = {"source": "Lin", "target": "Lisbon", "relation_type": "lives_in"}
    assert client.post("/api/v1/operations/relate", related, format="json").status_code == 200
    response = client.get("/api/v1/export")
    assert response.status_code == 200
    export = tmp_path / "deeprecall-export.jsonl"
    export.write_bytes(response.getvalue())
    return export, old


def test_it_says_what_an_export_restored_once_the_import_ends(person, tmp_path):  # noqa: F811
    export, old = _export_of_a_history(tmp_path)
    page = person.page
    person.sign_up("lin@example.com")
    person.goto("/imports/")
    # The worker waits while the page is first shown: the result must come to the page by itself.
    with session_worker_suspended():
        page.get_by_label("Export file").set_input_files(str(export))
        page.get_by_role("button", name="Import", exact=True).click()
        page.wait_for_url(re.compile(r"/imports/[0-9a-f-]{36}/$"))
        assert page.locator("[data-import-badge]").inner_text() == "queued"
        assert page.locator("[data-import-restored]").count() == 0
    restored = page.locator("[data-import-restored]")
    restored.wait_for(timeout=TIMEOUT_MS)
    assert page.locator("[data-import-badge]").inner_text() == "succeeded"
    shown = " ".join(restored.inner_text().split())
    memories = Memory.objects.filter(owner=old).count()
    relations = Relation.objects.filter(owner=old).count()
    assert f"{memories} memories as you had kept them" in shown, shown
    assert "1 space you did not have, created for what was said in it." in shown, shown
    assert f"{relations} relation" in shown and "your agents recorded" in shown, shown
    person.shot("imports-04-restored")
    person.assert_clean()
