"""The dashboard in a real browser: headless Debian Chromium driven by Playwright.

Against a real uvicorn process with a real Celery worker behind it (the note
and the upload really go through the pipeline). Chromium comes from Debian's
`chromium` package, installed here when missing (Playwright's own browser
download does not work in this environment); a failed install fails the tests,
it never skips them. A screenshot of each main page is saved to
`$DEEPRECALL_VAR_DIR/screenshots/dashboard/` (printed at the end of the run).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from django.utils import timezone

from tests.conftest import LiveServer
from tests.dashboard.conftest import SCREENSHOT_DIR, record_screenshot
from tests.debian import debian_ensure
from tests.helpers import oauth_app

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHROMIUM = Path("/usr/bin/chromium")
# As on this machine's notes: without the background-networking flags Chromium keeps
# trying to reach Google's hosts, which this closed network refuses.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "a long and unusual passphrase 42"
TIMEOUT_MS = 60_000


# --- set-up -----------------------------------------------------------------------------


def ensure_chromium() -> str:
    """Debian's Chromium, installed with apt-get when missing; fail (never skip) if that fails."""
    return debian_ensure(package="chromium", executable=CHROMIUM)


@pytest.fixture(scope="session")
def dashboard_server(asgi_server) -> LiveServer:
    """The site under test: the real uvicorn process with the real worker behind it."""
    return asgi_server


@pytest.fixture(scope="module")
def browser(dashboard_server) -> Iterator[Any]:
    executable = ensure_chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need the playwright package: pip install -e '.[dev]'")
    # Playwright's sync API runs an event loop in this thread, and Django refuses ORM calls
    # (the test database flush between tests) while one runs. The tests are single-threaded,
    # so nothing async actually touches the ORM. Set only now, after the server's and the
    # worker's environment was copied, and only for this module (the fixture's scope), so no
    # other test or child process runs with the check off.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOT_DIR.glob("*.png"):
        old.unlink()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


class Session:
    """One person's browser tab, with the console errors (CSP violations included) it collected."""

    def __init__(self, browser: Any, base_url: str) -> None:
        self.base_url = base_url
        self.context = browser.new_context(
            base_url=base_url, viewport={"width": 1280, "height": 900}, accept_downloads=True
        )
        self.context.set_default_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.console_errors: list[str] = []
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda exc: self.console_errors.append(str(exc)))
        self.page.on("response", self._on_response)

    def _on_console(self, message: Any) -> None:
        # A page answered 400 or 404 on purpose is logged as a failed load; failed
        # sub-resources are caught by _on_response instead, with their URL.
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.console_errors.append(message.text)

    def _on_response(self, response: Any) -> None:
        if response.status >= 400 and response.request.resource_type != "document":
            self.console_errors.append(f"{response.status} {response.request.resource_type} {response.url}")

    def goto(self, path: str) -> Any:
        return self.page.goto(path)

    def shot(self, name: str) -> None:
        path = SCREENSHOT_DIR / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        record_screenshot(path)

    def sign_up(self, email: str) -> None:
        self.goto("/accounts/signup/")
        self.page.get_by_label("Email").fill(email)
        self.page.get_by_label("Password").fill(PASSWORD)
        self.page.get_by_role("button", name="Sign up").click()
        self.page.wait_for_url(re.compile(r"/(memories/)?$"))

    def save_note(self, content: str, tags: str = "") -> str:
        """Save a note, wait on its job page until the job ends; return the job page's path."""
        self.goto("/memories/new/")
        self.page.get_by_label("Note").fill(content)
        if tags:
            self.page.get_by_label("Tags (optional)").fill(tags)
        self.page.get_by_role("button", name="Save note", exact=True).click()
        self.page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
        self.wait_for_job()
        return self.page.url.removeprefix(self.base_url)

    def wait_for_job(self) -> None:
        self.page.wait_for_selector("[data-job-api][data-job-done='true']", timeout=TIMEOUT_MS)
        assert self.page.locator("[data-job-badge]").inner_text() == "succeeded", self.page.content()[:3000]

    def csp_header(self, path: str) -> str:
        response = self.context.request.get(path)
        return str(response.headers.get("content-security-policy", ""))

    def assert_clean(self) -> None:
        assert self.console_errors == [], self.console_errors

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def person(browser, dashboard_server) -> Iterator[Session]:
    session = Session(browser, dashboard_server.url)
    yield session
    session.close()


@pytest.fixture
def second_person(browser, dashboard_server) -> Iterator[Session]:
    session = Session(browser, dashboard_server.url)
    yield session
    session.close()


def _unlabelled_fields(page: Any) -> list[str]:
    """Every visible form control in the page without an accessible label."""
    return list(
        page.evaluate(
            """() => Array.from(document.querySelectorAll('input, select, textarea'))
                .filter(el => el.type !== 'hidden' && el.offsetParent !== null)
                .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label'))
                .map(el => el.outerHTML)"""
        )
    )


def _memory_id(url: str) -> str:
    match = re.search(r"/memories/([0-9a-f-]{36})/", url)
    assert match is not None, url
    return match.group(1)


# --- flows ------------------------------------------------------------------------------


class TestMemoryLifecycle:
    def test_sign_up_save_search_pin_suppress_restore_and_hard_delete(self, person):
        page = person.page
        person.goto("/accounts/signup/")
        person.shot("01-sign-up")
        person.sign_up("ada@example.com")
        person.shot("02-memories-empty")
        assert "script-src 'self'" in person.csp_header("/memories/")

        # Save a note and watch it appear after its job.
        person.goto("/memories/new/")
        person.shot("03-save-note")
        page.get_by_label("Note").fill("My sister Ana lives in Lisbon and teaches sailing.")
        page.get_by_label("Tags (optional)").fill("family, lisbon")
        page.get_by_role("button", name="Save note", exact=True).click()
        page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
        assert page.locator("progress").count() == 1
        person.wait_for_job()
        results = page.locator("[data-job-memories] li .content a")
        results.first.wait_for()
        assert "Lisbon" in results.first.inner_text()
        person.shot("04-job-done")

        # Search for it.
        person.goto("/memories/")
        page.get_by_label("Search your memory").fill("Lisbon")
        page.get_by_label("Search your memory").press("Enter")
        page.wait_for_url(re.compile(r"q=Lisbon"))
        hit = page.locator(".memory-list .content a", has_text="Lisbon").first
        hit.wait_for()
        assert page.get_by_text("Ranked by recall").is_visible()
        person.shot("05-search-results")
        hit.click()
        page.wait_for_url(re.compile(r"/memories/[0-9a-f-]{36}/$"))
        memory_path = page.url.removeprefix(person.base_url)
        assert page.get_by_role("heading", name="Where it came from").is_visible()
        assert "Ana" in page.locator("blockquote.excerpt").inner_text()

        # Pin it.
        page.get_by_role("button", name="Pin", exact=True).click()
        page.get_by_role("button", name="Unpin", exact=True).wait_for()
        assert page.locator(".badge.pinned").first.is_visible()
        person.shot("06-memory-pinned")

        # Suppress it with a reason, then find it under Suppressed.
        page.get_by_label("Why hide it?").select_option("incorrect")
        page.get_by_role("button", name="Suppress", exact=True).click()
        page.get_by_text("Suppressed: agents no longer see it").wait_for()
        assert page.locator(".panel .badge.suppressed").first.is_visible()
        person.goto("/memories/suppressed/")
        row = page.locator(".memory-list > li", has_text="Lisbon")
        assert row.count() == 1
        person.shot("07-suppressed")
        # Not in the active list any more.
        person.goto("/memories/")
        assert page.locator(".memory-list .content", has_text="Lisbon").count() == 0

        # Restore it from the Suppressed page.
        person.goto("/memories/suppressed/")
        row.get_by_role("button", name=re.compile("^Restore")).click()
        page.get_by_text("Restored: agents can recall it again.").wait_for()
        assert page.locator(".memory-list > li", has_text="Lisbon").count() == 0
        person.goto("/memories/")
        assert page.locator(".memory-list .content", has_text="Lisbon").count() >= 1

        # Hard-delete it, typing the confirmation, and read the receipt.
        person.goto(memory_path)
        page.get_by_role("link", name="Delete permanently…").click()
        person.shot("08-hard-delete-confirm")
        page.get_by_role("button", name="Delete permanently", exact=True).click()
        assert page.locator("#id_confirm_error").inner_text() == "Type the word “delete” to confirm."
        page.get_by_label("Type “delete” to delete this memory for good").fill("delete")
        page.get_by_role("button", name="Delete permanently", exact=True).click()
        page.wait_for_url(re.compile(r"/memories/receipts/[0-9a-f-]{36}/$"))
        receipt = page.locator(".receipt").inner_text()
        assert "permanently deleted" in receipt and _memory_id(memory_path) in receipt
        person.shot("09-purge-receipt")
        assert person.goto(memory_path).status == 404
        person.assert_clean()

    def test_upload_a_markdown_file_and_see_its_memories(self, person):
        person.sign_up("grace@example.com")
        page = person.page
        person.goto("/memories/upload/")
        person.shot("10-upload")
        page.get_by_label("Document").set_input_files(
            files=[
                {
                    "name": "family.md",
                    "mimeType": "text/markdown",
                    "buffer": b"# Family\n\nMy brother Tom lives in Porto.\n\n"
                    b"Tom works at Siemens as an engineer.\n",
                }
            ]
        )
        page.get_by_role("button", name="Upload", exact=True).click()
        page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
        person.wait_for_job()
        listed = page.locator("[data-job-memories] li .content").all_inner_texts()
        assert any("Porto" in text for text in listed), listed
        person.shot("11-upload-done")
        person.goto("/jobs/")
        assert page.locator("tbody tr").count() == 1
        assert page.locator("tbody .badge.succeeded").count() == 1
        person.shot("12-jobs")
        person.assert_clean()


class TestTokensAndExport:
    def test_create_and_revoke_an_access_token(self, person, dashboard_server):
        person.sign_up("linus@example.com")
        page = person.page
        person.goto("/account/tokens/")
        page.get_by_label("Name", exact=True).fill("laptop script")
        page.get_by_role("button", name="Create token", exact=True).click()
        raw = page.locator("#new-token").input_value()
        assert raw.startswith("drp_")
        person.shot("13-token-created")
        api = f"{dashboard_server.url}/api/v1/memories"
        assert httpx.get(api, headers={"Authorization": f"Bearer {raw}"}).status_code == 200

        # Shown once: a reload does not show it again.
        person.goto("/account/tokens/")
        assert raw not in page.content()

        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Revoke laptop script").click()
        page.get_by_text("Revoked “laptop script”").wait_for()
        assert page.locator("tbody .badge.failed", has_text="Revoked").count() == 1
        assert httpx.get(api, headers={"Authorization": f"Bearer {raw}"}).status_code == 401
        person.shot("14-tokens")
        person.assert_clean()

    def test_export_downloads_everything_as_json_lines(self, person):
        person.sign_up("hedy@example.com")
        person.save_note("I prefer green tea in the morning.")
        page = person.page
        person.goto("/account/")
        person.shot("15-account")
        with page.expect_download() as info:
            page.get_by_role("button", name="Download export (.jsonl)").click()
        download = info.value
        assert download.suggested_filename.endswith(".jsonl")
        records = [json.loads(line) for line in Path(download.path()).read_text().splitlines()]
        assert records[0]["type"] == "account" and records[0]["email"] == "hedy@example.com"
        types = {record["type"] for record in records}
        assert {"account", "space", "source", "memory", "job", "audit"} <= types
        assert any(
            "green tea" in record.get("content", "") for record in records if record["type"] == "memory"
        )
        person.assert_clean()


class TestIsolation:
    def test_a_second_user_sees_none_of_the_first_users_memories_or_pages(self, person, second_person):
        person.sign_up("alice.b@example.com")
        job_path = person.save_note("My locker code is kept by Priya in Nairobi.")
        page = person.page
        page.locator("[data-job-memories] li .content a").first.click()
        page.wait_for_url(re.compile(r"/memories/[0-9a-f-]{36}/$"))
        memory_path = page.url.removeprefix(person.base_url)
        person.goto("/spaces/")
        page.get_by_label("Name", exact=True).fill("Work")
        page.get_by_role("button", name="Create space", exact=True).click()
        delete_link = page.get_by_role("link", name=re.compile("^Delete Work"))
        space_path = str(delete_link.get_attribute("href"))
        person.goto("/account/tokens/")
        page.get_by_label("Name", exact=True).fill("alice token")
        page.get_by_role("button", name="Create token", exact=True).click()
        revoke_path = str(page.locator("form[action*='/revoke']").first.get_attribute("action"))

        other = second_person
        other.sign_up("bob.b@example.com")
        other.goto("/memories/")
        assert "Priya" not in other.page.content()
        other.page.get_by_label("Search your memory").fill("Priya Nairobi")
        other.page.get_by_label("Search your memory").press("Enter")
        other.page.wait_for_url(re.compile(r"q=Priya"))
        assert "Priya" not in other.page.locator(".memory-list").all_inner_texts().__str__()
        for path in (memory_path, f"{memory_path}delete", job_path, space_path, revoke_path):
            response = other.goto(path)
            assert response.status == 404, path
            assert "Priya" not in other.page.content()
        api_job = job_path.replace("/jobs/", "/api/v1/jobs/").rstrip("/")
        assert other.context.request.get(api_job).status == 404
        for path in ("/jobs/", "/spaces/", "/memories/suppressed/", "/account/tokens/", "/account/apps/"):
            other.goto(path)
            html = other.page.content()
            assert "Priya" not in html and "Work" not in html.split("<main", 1)[1] and "alice" not in html, (
                path
            )
        # Alice still has everything.
        assert person.goto(memory_path).status == 200


class TestKeyboard:
    def _focused(self, page: Any) -> str:
        return str(
            page.evaluate(
                """() => {
                    const el = document.activeElement;
                    return el.id || el.getAttribute('name') || (el.tagName + ':' + el.textContent.trim());
                }"""
            )
        )

    def _tab_until(self, page: Any, target: str, limit: int = 40) -> list[str]:
        seen: list[str] = []
        for _ in range(limit):
            page.keyboard.press("Tab")
            seen.append(self._focused(page))
            if seen[-1] == target:
                return seen
        raise AssertionError(f"Tab never reached {target}: {seen}")

    def test_main_flows_work_with_the_keyboard_alone(self, person):
        person.sign_up("kay@example.com")
        page = person.page

        # The first Tab reaches the skip link; Enter on it, then Tab, lands in the search box.
        person.goto("/memories/")
        page.keyboard.press("Tab")
        assert self._focused(page) == "A:Skip to content"
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        assert self._focused(page) == "id_q"
        # Without the skip link, Tab walks the menus and then reaches the search box, its button next.
        person.goto("/memories/")
        walked = self._tab_until(page, "id_q")
        assert walked[0] == "A:Skip to content" and "A:Memories" in walked and "A:Save a note" in walked
        page.keyboard.press("Tab")
        assert self._focused(page) == "BUTTON:Search"

        # Save a note: Tab order is note, date, tags, space, button; Enter in a field submits.
        person.goto("/memories/new/")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")  # skip link
        order: list[str] = []
        for _ in range(12):
            page.keyboard.press("Tab")
            name = self._focused(page)
            if not order or order[-1] != name:  # a date input takes one Tab per part
                order.append(name)
            if name == "BUTTON:Save note":
                break
        assert order == ["id_content", "id_occurred_on", "id_tags", "id_space", "BUTTON:Save note"], order
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Shift+Tab")
        assert self._focused(page) == "id_tags"
        page.keyboard.type("keyboard")
        page.keyboard.press("Enter")
        # An empty note is refused in place, the field marked and described, the tags kept.
        page.wait_for_selector("#id_content_error")
        assert page.locator("#id_content").get_attribute("aria-invalid") == "true"
        assert page.locator("#id_content").get_attribute("aria-describedby") == (
            "id_content_helptext id_content_error"
        )
        assert page.locator("#id_tags").input_value() == "keyboard"
        # The first invalid field has the focus: type straight into it.
        page.wait_for_function("() => document.activeElement && document.activeElement.id === 'id_content'")
        page.keyboard.type("I walk to work every day along the river.")
        self._tab_until(page, "id_tags")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
        person.wait_for_job()

        # Search with the keyboard: type and press Enter.
        person.goto("/memories/")
        walked = self._tab_until(page, "id_q")
        page.keyboard.type("river")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"q=river"))
        page.locator(".memory-list .content a", has_text="river").first.wait_for()

        # Edit its tags with the keyboard: from the memory page's Edit link to the saved tags.
        self._tab_until(
            page, "A:" + page.locator(".memory-list .content a", has_text="river").first.inner_text()
        )
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/memories/[0-9a-f-]{36}/$"))
        self._tab_until(page, "A:Edit…", limit=60)
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/memories/[0-9a-f-]{36}/edit$"))
        self._tab_until(page, "id_tags")
        page.keyboard.press("End")
        page.keyboard.type(", walks")
        page.keyboard.press("Enter")
        page.get_by_text("Tags saved.").wait_for()
        assert page.locator(".panel .tag", has_text="walks").count() == 1
        person.assert_clean()

    def test_every_form_control_of_every_page_has_a_label(self, person):
        person.sign_up("label@example.com")
        person.save_note("Labels matter to screen reader users.")
        page = person.page
        memory = page.locator("[data-job-memories] li .content a").first.get_attribute("href")
        pages = [
            "/memories/",
            "/memories/?q=labels",
            str(memory),
            f"{memory}delete",
            "/memories/new/",
            "/memories/upload/",
            "/memories/suppressed/",
            "/jobs/",
            "/spaces/",
            "/connect/",
            "/account/",
            "/account/password/",
            "/account/tokens/",
            "/account/apps/",
            "/account/delete/",
        ]
        for path in pages:
            person.goto(path)
            page.locator("details.filters").evaluate_all("els => els.forEach(el => el.open = true)")
            assert _unlabelled_fields(page) == [], path
        person.assert_clean()


class TestPageTour:
    def test_the_remaining_pages_render_cleanly_and_work(self, person, dashboard_server):
        from oauth2_provider.models import get_access_token_model

        from accounts.models import User
        from memories.models import Job, Space

        person.sign_up("tour@example.com")
        page = person.page

        # Spaces: create, rename with an error in place, make default, delete with an explicit choice.
        person.goto("/spaces/")
        page.get_by_label("Name", exact=True).fill("Work")
        page.get_by_role("button", name="Create space", exact=True).click()
        page.get_by_text("Created the space “Work”.").wait_for()
        page.get_by_label("Name", exact=True).fill("Work")
        page.get_by_role("button", name="Create space", exact=True).click()
        assert "already have a space named" in page.locator("#id_create-name_error").inner_text()
        person.shot("16-spaces")
        page.get_by_role("button", name="Make default for Work").click()
        page.get_by_text("“Work” is now the default").wait_for()
        page.get_by_role("link", name=re.compile("^Delete Personal")).click()
        person.shot("17-space-delete")
        page.get_by_role("button", name="Delete space", exact=True).click()
        assert "Choose whether to move or delete" in page.locator("#id_memories_error").inner_text()
        page.get_by_label(re.compile("Move its 0 memories")).check()
        page.get_by_role("button", name="Delete space", exact=True).click()
        page.get_by_text("Deleted “Personal”").wait_for()

        # Connect an agent: the MCP URL and a system prompt copied with one click.
        person.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=dashboard_server.url)
        person.goto("/connect/")
        assert page.locator("#mcp-url").input_value() == f"{dashboard_server.url}/mcp"
        page.get_by_role("button", name="Copy the system prompt").click()
        page.get_by_text("Copied to the clipboard.").wait_for()
        copied = page.evaluate("() => navigator.clipboard.readText()")
        assert copied.startswith("You have long-term memory through the Deep Recall tools.")
        person.shot("18-connect")

        # Connected apps: an app the person approved (made here as the OAuth flow would), disconnected.
        user = User.objects.get(email="tour@example.com")
        application = oauth_app("Claude")
        get_access_token_model().objects.create(
            user=user,
            application=application,
            token="tour-token-" + "x" * 30,
            expires=timezone.now() + timedelta(hours=1),
            scope="memory:read memory:write",
        )
        person.goto("/account/apps/")
        row = page.locator("tbody tr", has_text="Claude")
        assert "memory:read" in row.inner_text() and "Work (default)" in row.inner_text()
        person.shot("19-connected-apps")
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Disconnect Claude").click()
        page.get_by_text("Disconnected “Claude”").wait_for()
        assert not get_access_token_model().objects.filter(user=user).exists()

        # The OAuth consent page an agent sends the person to has the same look (and no CSP errors).
        agent = oauth_app("VS Code")
        query = {
            "response_type": "code",
            "client_id": agent.client_id,
            "redirect_uri": "http://127.0.0.1:9/callback",
            "scope": "memory:read memory:write",
            "state": "st4te",
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            "code_challenge_method": "S256",
            "resource": f"{dashboard_server.url}/mcp",
        }
        person.goto(f"/o/authorize/?{urlencode(query)}")
        page.get_by_role("heading", name="Connect VS Code to your memory?").wait_for()
        person.shot("20-oauth-consent")

        # Jobs: the list updates itself while a job is in progress (this one is never sent to
        # the worker, so it stays queued until the test finishes it).
        job = Job.objects.create(owner=user, space=Space.objects.get(owner=user), kind=Job.Kind.REMEMBER)
        person.goto("/jobs/")
        page.get_by_text("1 job in progress").wait_for()
        assert page.locator("tbody .badge.queued").count() == 1
        Job.objects.filter(id=job.id).update(status=Job.Status.SUCCEEDED, finished_at=timezone.now())
        page.locator("tbody .badge.succeeded").wait_for(timeout=10_000)
        assert page.locator("[data-refresh-while-running]").get_attribute("data-running") == "0"

        # Password change, with errors in place.
        person.goto("/account/password/")
        page.get_by_role("button", name="Change password", exact=True).click()
        assert page.locator("#id_old_password_error").is_visible()
        person.shot("21-password-change")

        # Delete the account: typed email + password, then the receipt, signed out.
        person.goto("/account/delete/")
        person.shot("22-account-delete")
        page.get_by_label("Type your email to confirm").fill("tour@example.com")
        page.get_by_label("Current password").fill(PASSWORD)
        page.get_by_role("button", name="Delete my account and all my data").click()
        page.get_by_role("heading", name="Your account is deleted").wait_for()
        person.shot("23-account-deleted")
        assert not User.objects.filter(email="tour@example.com").exists()
        assert person.goto("/memories/").url.split("?")[0].endswith("/accounts/login/")
        person.shot("24-log-in")
        person.assert_clean()


class TestWhatComesBack:
    """What gets stored and what comes back, as a person sees it (issue 13)."""

    def test_nonsense_finds_nothing_a_dated_note_shows_its_date_and_a_table_reads_as_rows(self, person):
        page = person.page
        person.sign_up("katherine@example.com")

        # A dated note: the form's date is when it happened, and "yesterday" counts from it.
        person.goto("/memories/new/")
        page.get_by_label("Note").fill("Yesterday I had dinner with Marco at the harbour.")
        page.get_by_label("Date (optional)").fill("2026-03-14")
        page.get_by_role("button", name="Save note", exact=True).click()
        page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
        person.wait_for_job()
        page.locator("[data-job-memories] li .content a").first.click()
        page.wait_for_url(re.compile(r"/memories/[0-9a-f-]{36}/$"))
        when = page.locator("section[aria-labelledby='clocks-title']").inner_text()
        assert "Happened" in when and "13 Mar 2026" in when, when
        # The heading is the memory itself; its kind is said in plain words.
        heading = page.get_by_role("heading", level=1).inner_text()
        assert heading == "Yesterday I had dinner with Marco at the harbour.", heading
        assert (
            "Event" in page.locator("main").inner_text()
            and "Episode" not in page.locator("main").inner_text()
        )
        person.shot("13-dated-note")

        # An uploaded Markdown table: one readable memory per row, not the pipes.
        person.goto("/memories/upload/")
        page.get_by_label("Document").set_input_files(
            files=[
                {
                    "name": "books.md",
                    "mimeType": "text/markdown",
                    "buffer": b"# Books\n\n| Book | Rating |\n|---|---|\n"
                    b"| Piranesi | 5/5 |\n| Dune | 4/5 |\n",
                }
            ]
        )
        page.get_by_role("button", name="Upload", exact=True).click()
        page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
        person.wait_for_job()
        listed = page.locator("[data-job-memories] li .content").all_inner_texts()
        assert sorted(text.strip() for text in listed) == ["Dune: rating 4/5", "Piranesi: rating 5/5"], listed
        assert not any("|" in text for text in listed)
        person.shot("14-markdown-table-rows")

        # A search that matches words shows why; nonsense says nothing matches.
        person.goto("/memories/?" + urlencode({"q": "Piranesi rating"}))
        assert page.locator(".memory-list mark", has_text="Piranesi").count() == 1
        # The dinner note was saved minutes before, with no conversation in common: not a result.
        assert page.locator(".memory-list > li").count() == 2
        person.shot("15-search-highlights")
        person.goto("/memories/?" + urlencode({"q": "zzqx flibbertigibbet"}))
        assert page.get_by_role("heading", name="Nothing matches “zzqx flibbertigibbet”").is_visible()
        assert page.locator(".memory-list").count() == 0
        person.shot("16-nothing-matches")
        person.assert_clean()
