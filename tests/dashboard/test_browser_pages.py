"""The Overview, Ask, Graph, Agents and Activity pages in a real browser (issue 18).

The same headless Chromium, uvicorn process and Celery worker as test_browser.py (its fixtures
are reused). Each page is checked at desktop width and at 390 px (a phone), with axe-core
(vendored under vendor/, MPL-2.0) reporting no serious or critical violation, no CSP violation
or console error, and a screenshot saved. The Ask flow is also walked with the keyboard alone.
"""

from __future__ import annotations

import re
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.utils import timezone

from tests.dashboard import test_browser as base
from tests.dashboard.test_browser import TIMEOUT_MS, Session
from tests.helpers import oauth_app

# The same site, browser and tab fixtures as test_browser.py.
dashboard_server = base.dashboard_server
browser = base.browser
person = base.person

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent / "vendor" / "axe-4.14.1.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def axe_serious(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page, as "rule: first target" lines.

    Evaluated through the DevTools protocol, which the page's CSP does not govern, so the site's
    own policy stays exactly as served."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text())
    results = page.evaluate("async () => await window.axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{violation['id']}: {violation['nodes'][0]['target']}"
        for violation in results["violations"]
        if violation["impact"] in ("serious", "critical")
    ]


def check_page(person: Session, path: str, name: str) -> None:
    """The page at both widths: no serious axe violation, nothing wider than the screen, a shot."""
    page = person.page
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        person.goto(path)
        page.wait_for_load_state("networkidle")
        assert axe_serious(page) == [], (path, label)
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        wide = page.evaluate(
            """() => Array.from(document.querySelectorAll('body *'))
                .filter(el => el.getBoundingClientRect().right > window.innerWidth + 0.5)
                .slice(0, 8)
                .map(el => el.tagName + '.' + el.className + ' ' + el.getBoundingClientRect().right)"""
        )
        assert overflow <= 0, (path, label, overflow, wide)
        person.shot(f"issue18-{name}-{label}")
    page.set_viewport_size(DESKTOP)


def agent_token(email: str, name: str, base_url: str) -> tuple[Any, str]:
    """An OAuth app the person approved, with a REST token of its own (as the OAuth flow makes)."""
    from oauth2_provider.models import get_access_token_model

    from accounts.models import User
    from accounts.oauth import REST_PATH

    application = oauth_app(name)
    raw = f"{name.replace(' ', '-')}-browser-token-" + "z" * 24
    get_access_token_model().objects.create(
        user=User.objects.get(email=email),
        application=application,
        token=raw,
        expires=timezone.now() + timedelta(hours=1),
        scope="memory:read memory:write",
        # The server's own address: it names its resources after the URL it is served at.
        resource=[f"{base_url}{REST_PATH}"],
    )
    return application, raw


def agent_remember(base_url: str, raw: str, content: str) -> None:
    headers = {"Authorization": f"Bearer {raw}"}
    response = httpx.post(
        f"{base_url}/api/v1/operations/remember", json={"content": content}, headers=headers
    )
    assert response.status_code == 200, response.text
    job_url = f"{base_url}/api/v1/jobs/{response.json()['job_id']}"
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        status = httpx.get(job_url, headers=headers).json()["status"]
        if status in ("succeeded", "failed"):
            assert status == "succeeded"
            return
        time.sleep(0.2)
    raise AssertionError(f"{job_url} did not finish")


class TestNewPages:
    def test_overview_graph_agents_and_activity_work_at_both_widths(self, person, dashboard_server):
        email = "nadia@example.com"
        person.sign_up(email)
        page = person.page
        person.save_note("My brother Tom works at Siemens in Munich.")
        _, raw = agent_token(email, "Claude", dashboard_server.url)
        agent_remember(dashboard_server.url, raw, "I prefer green tea in the morning.")
        # The agent links two entities (the graph profile's relate, run over REST).
        related = httpx.post(
            f"{dashboard_server.url}/api/v1/operations/relate",
            json={"source": "Tom", "target": "Siemens", "relation_type": "works_at"},
            headers={"Authorization": f"Bearer {raw}"},
            # The server embeds the relation's sentence, loading its model on first use.
            timeout=TIMEOUT_MS / 1000,
        )
        assert related.status_code == 200, related.text

        # Overview: the charts are drawn from the JSON endpoint, the tables hold the same numbers.
        person.goto("/overview/")
        page.wait_for_selector("[data-overview-src][data-drawn='true']")
        assert page.locator("canvas[data-chart]").count() == 3
        agents_table = page.locator("table[data-table='agents']").inner_text()
        assert "Claude" in agents_table and "You (no agent)" in agents_table
        check_page(person, "/overview/", "overview")

        # Graph: drawn with Cytoscape, every relation in the table links to its evidence.
        person.goto("/graph/")
        box = page.locator("[data-graph-src]")
        box.wait_for()
        page.wait_for_function("() => document.querySelector('[data-graph-src]').dataset.drawn > 0")
        assert box.locator("canvas").count() >= 1
        check_page(person, "/graph/", "graph")
        page.locator("[data-graph-table] a", has_text="Evidence").first.click()
        page.wait_for_url(re.compile(r"/graph/relations/[0-9a-f-]{36}/$"))
        evidence = page.locator("[data-relation-evidence]").inner_text()
        assert "Siemens" in evidence
        relation_path = page.url.removeprefix(person.base_url)
        check_page(person, relation_path, "relation-evidence")

        # Agents: Claude's counts and memory; pausing refuses its token, resuming lets it back.
        person.goto("/agents/")
        row = page.locator("tbody tr", has_text="Claude")
        assert "Connected" in row.inner_text()
        check_page(person, "/agents/", "agents")
        row.get_by_role("link", name="Claude").click()
        page.wait_for_url(re.compile(r"/agents/\d+/$"))
        assert "green tea" in page.locator("[data-agent-memories]").inner_text()
        agent_path = page.url.removeprefix(person.base_url)
        page.get_by_role("button", name="Pause Claude").click()
        page.get_by_text("Paused “Claude”").wait_for()
        refused = httpx.get(
            f"{dashboard_server.url}/api/v1/memories", headers={"Authorization": f"Bearer {raw}"}
        )
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "app_paused"
        check_page(person, agent_path, "agent-paused")
        page.get_by_role("button", name="Resume Claude").click()
        page.get_by_text("Resumed “Claude”").wait_for()
        allowed = httpx.get(
            f"{dashboard_server.url}/api/v1/memories", headers={"Authorization": f"Bearer {raw}"}
        )
        assert allowed.status_code == 200

        # Jobs say who started them.
        person.goto("/jobs/")
        assert page.locator("tbody tr", has_text="Claude").count() == 1
        check_page(person, "/jobs/", "jobs-who")

        # Activity: the audit trail, filtered by who.
        person.goto("/activity/")
        check_page(person, "/activity/", "activity")
        page.get_by_label("Who").select_option(label="Claude")
        page.get_by_role("button", name="Apply filters").click()
        page.wait_for_url(re.compile(r"who=\d+"))
        rows = page.locator("[data-activity] tbody tr")
        assert rows.count() >= 1
        assert all("Claude" in text for text in rows.all_inner_texts())
        person.assert_clean()

    def test_ask_with_the_keyboard_alone_and_follow_a_citation(self, person):
        person.sign_up("ines@example.com")
        page = person.page
        person.save_note("My sister Ana lives in Lisbon and teaches sailing.")
        person.goto("/ask/")
        check_page(person, "/ask/", "ask-empty")

        # Skip link, then Tab lands in the question box; type and press Enter.
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.id") == "id_ask_q"
        page.keyboard.type("Where does my sister Ana live?")
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/ask/\?q="))
        answer = page.locator("[data-answer-text]")
        assert "Lisbon" in answer.inner_text()
        path = page.url.removeprefix(person.base_url)
        check_page(person, path, "ask-answer")

        # Tab from the question box reaches the button, then the first citation; Enter follows it.
        person.goto(path)
        page.locator("#id_ask_q").focus()
        for _ in range(6):
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.classList.contains('citation')"):
                break
        assert page.evaluate("() => document.activeElement.getAttribute('aria-label')") == "Source 1"
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/memories/[0-9a-f-]{36}/$"))
        assert "Lisbon" in page.locator("main").inner_text()
        person.assert_clean()
