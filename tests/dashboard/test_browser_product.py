"""The dashboard as a product, in Chromium (the set-up of test_browser.py): editing a memory,
bulk actions, tokens shown once, error pages, the collapsed menu and pages that fit a 390 px
phone, with axe-core finding no serious violation on any page at either width. Screenshots go to
the same folder as test_browser.py's, prefixed `p-`.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.dashboard.a11y import serious_violations
from tests.dashboard.test_browser import (  # noqa: F401 - fixtures used by name
    Session,
    browser,
    dashboard_server,
    person,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def _check(session: Session, name: str) -> None:
    """axe-core clean and a screenshot, at desktop width and at 390 px (where the page must not be
    wider than the screen and the header must stay one bar)."""
    page = session.page
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.wait_for_timeout(50)
        assert serious_violations(page) == [], (name, label)
        if label == "phone":
            widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
            wide = page.evaluate(
                """() => Array.from(document.querySelectorAll('body *'))
                    .filter(el => el.getBoundingClientRect().right > window.innerWidth + 1)
                    .filter(el => !el.parentElement.closest('.table-wrap, pre, table'))
                    .slice(0, 8)
                    .map(el => el.tagName + '.' + el.className + ' ' + el.getBoundingClientRect().right)"""
            )
            assert widths[0] <= widths[1], (name, widths, wide)
            header = page.evaluate(
                "() => document.querySelector('header.site-header').getBoundingClientRect().height"
            )
            assert header <= 60, (name, header)
        session.shot(f"p-{name}-{label}")
    page.set_viewport_size(DESKTOP)


def _memory_from_db(email: str, content: str, **fields: Any) -> Any:
    import hashlib

    from accounts.models import User
    from memories.models import Evidence, Memory, Source
    from memories.services.spaces import space_create_default

    owner = User.objects.get(email=email)
    space = space_create_default(owner=owner)
    source = Source.objects.create(
        owner=owner,
        space=space,
        origin=Source.Origin.REMEMBER,
        content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
    )
    fields.setdefault("kind", Memory.Kind.FACT)
    memory = Memory.objects.create(owner=owner, space=space, source=source, content=content, **fields)
    Evidence.objects.create(owner=owner, source=source, memory=memory)
    return memory


class TestEditAndHistory:
    def test_editing_the_words_makes_a_new_version_with_the_old_one_in_its_history(self, person):  # noqa: F811 - the fixture
        person.sign_up("edna@example.com")
        page = person.page
        person.save_note("My sister Ana lives in Lisbon.")
        page.locator("[data-job-memories] li .content a").first.click()
        page.wait_for_url(re.compile(r"/memories/[0-9a-f-]{36}/$"))
        assert page.get_by_role("heading", level=1).inner_text().startswith("My sister Ana lives in Lisbon")
        page.get_by_role("link", name="Edit…").click()
        _check(person, "memory-edit")
        page.get_by_label("Memory", exact=True).fill("My sister Ana lives in Porto.")
        page.get_by_label("Tags").fill("family")
        page.get_by_role("button", name="Save changes").click()
        page.wait_for_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"))
        person.wait_for_job()
        page.locator("[data-job-memories] li .content a", has_text="Porto").first.click()
        page.wait_for_url(re.compile(r"/memories/[0-9a-f-]{36}/$"))
        assert page.get_by_role("heading", level=1).inner_text().startswith("My sister Ana lives in Porto")
        chain = page.locator("ol.history-chain > li")
        assert chain.count() == 2
        assert "Lisbon" in chain.nth(0).inner_text() and "Replaced" in chain.nth(0).inner_text()
        assert "This version (current)" in chain.nth(1).inner_text()
        _check(person, "memory-history")
        # The old version says what replaced it and offers no edit.
        chain.nth(0).get_by_role("link").click()
        page.wait_for_url(re.compile(r"/memories/[0-9a-f-]{36}/$"))
        assert page.get_by_role("link", name="Edit…").count() == 0
        assert "Current" in page.locator("ol.history-chain").inner_text()
        person.assert_clean()


class TestBulk:
    def test_select_several_then_suppress_move_and_delete_with_counts(self, person):  # noqa: F811 - the fixture
        from accounts.caller import Actor
        from accounts.models import User
        from memories.models import Memory
        from memories.services.spaces import space_create

        person.sign_up("bulk@example.com")
        page = person.page
        for i in range(4):
            _memory_from_db("bulk@example.com", f"Bulk fact number {i}.")
        space_create(actor=Actor.owner_acting(User.objects.get(email="bulk@example.com")), name="Work")
        person.goto("/memories/")
        _check(person, "memory-list-bulk")

        page.get_by_label("Select “Bulk fact number 0.”").check()
        page.get_by_label("Select “Bulk fact number 1.”").check()
        page.get_by_label("With the selected memories").select_option("suppress")
        page.get_by_role("button", name="Apply to selected").click()
        page.get_by_role("heading", name="Suppress 2 memories?").wait_for()
        _check(person, "bulk-confirm")
        page.get_by_role("button", name="Suppress 2 memories").click()
        page.get_by_text("Suppressed 2 memories").wait_for()

        page.get_by_label("Select “Bulk fact number 2.”").check()
        page.get_by_label("With the selected memories").select_option("move")
        page.get_by_label("Move to space").select_option(label="Work")
        page.get_by_role("button", name="Apply to selected").click()
        page.get_by_role("button", name="Move 1 memory").click()
        page.get_by_text("Moved 1 memory into “Work”.").wait_for()
        assert Memory.objects.get(content="Bulk fact number 2.").space.name == "Work"

        page.get_by_label("Select “Bulk fact number 3.”").check()
        page.get_by_label("With the selected memories").select_option("delete")
        page.get_by_role("button", name="Apply to selected").click()
        page.get_by_label(re.compile("Type “delete” to delete it")).fill("delete")
        page.get_by_role("button", name="Delete 1 memory permanently").click()
        page.wait_for_url(re.compile(r"/memories/receipts/[0-9a-f-]{36}/$"))
        assert not Memory.objects.filter(content="Bulk fact number 3.").exists()
        person.assert_clean()


class TestTokensShownOnce:
    def test_a_reload_after_creating_a_token_creates_no_second_one(self, person):  # noqa: F811 - the fixture
        from accounts.models import PersonalAccessToken

        person.sign_up("tok@example.com")
        page = person.page
        person.goto("/account/tokens/")
        page.get_by_label("Name", exact=True).fill("phone")
        page.get_by_role("button", name="Create token", exact=True).click()
        raw = page.locator("#new-token").input_value()
        assert raw.startswith("drp_")
        _check(person, "tokens-created")
        page.reload()
        assert raw not in page.content()
        assert PersonalAccessToken.objects.filter(user__email="tok@example.com").count() == 1
        person.assert_clean()


class TestFramePages:
    def test_menu_errors_connect_relations_and_account_fit_a_phone_and_pass_axe(self, person):  # noqa: F811 - the fixture
        from accounts.caller import ALL_SCOPES, Caller
        from accounts.models import User
        from memories.services.relations import relation_record

        person.sign_up("phone@example.com")
        page = person.page
        user = User.objects.get(email="phone@example.com")
        caller = Caller(user=user, scopes=ALL_SCOPES, via="session")
        for target in ("Paris", "Berlin"):
            relation_record(
                caller=caller, source_name="Mara Lind", target_name=target, relation_type="lives_in"
            )
        memory = _memory_from_db("phone@example.com", "A note with a long unbroken word " + "x" * 80)

        # The collapsed menu: one button opens every link.
        person.goto("/memories/")
        page.set_viewport_size(PHONE)
        toggle = page.get_by_role("button", name="Menu")
        assert toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false"
        assert not page.get_by_role("link", name="Connect an agent").is_visible()
        toggle.click()
        assert toggle.get_attribute("aria-expanded") == "true"
        assert page.get_by_role("link", name="Connect an agent").is_visible()
        person.shot("p-menu-open-phone")
        page.set_viewport_size(DESKTOP)
        assert not toggle.is_visible() and page.get_by_role("link", name="Connect an agent").is_visible()

        for path, name in [
            ("/memories/", "memories"),
            (f"/memories/{memory.id}/", "memory"),
            ("/relations/", "relations"),
            ("/relations/?state=current", "relations-current"),
            ("/connect/", "connect"),
            ("/account/tokens/", "tokens"),
            ("/account/", "account"),
            ("/account/password/", "password"),
            ("/spaces/", "spaces"),
            ("/jobs/", "jobs"),
        ]:
            assert person.goto(path).status == 200, path
            _check(person, name)
        person.goto("/relations/?state=current")
        assert page.locator("table tbody tr", has_text="Berlin").count() == 1
        assert page.locator("table tbody tr", has_text="Paris").count() == 0

        # Error pages inside the frame.
        assert person.goto("/no-such-page/").status == 404
        assert page.get_by_role("heading", name="Not found").is_visible()
        _check(person, "error-404")
        assert person.goto("/admin/").status == 403
        assert page.get_by_role("heading", name="This is the operators' area").is_visible()
        _check(person, "error-admin")
        person.assert_clean()
