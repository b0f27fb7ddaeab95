"""Every dashboard page through Django's test client: what it shows, how it validates, who may see it.

Alice owns things, Bob has his own, Charlie is the outsider who must get a 404 for
every URL of Alice's. Jobs here stay queued (no worker): the pages around them are
what is tested; tests/dashboard/test_browser.py runs the real pipeline.
"""

from __future__ import annotations

import html as html_module
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from accounts.caller import Actor
from accounts.models import PersonalAccessToken, User
from accounts.services import pat_create
from memories.dashboard import views as dashboard_views
from memories.dashboard.csp import POLICY
from memories.embeddings import embed
from memories.models import AuditEvent, Entity, Job, Memory, Source, Space
from memories.services.spaces import space_create
from tests.conftest import PASSWORD
from tests.helpers import link, oauth_app

pytestmark = pytest.mark.django_db

CSP = "memories.dashboard.csp.ContentSecurityPolicyMiddleware"


def _unmarked(html: str) -> str:
    """The page without the search highlights, so a memory's text reads as one string."""
    return html.replace("<mark>", "").replace("</mark>", "")


def _html(response) -> str:
    return response.content.decode()


def _field_error(response, field_id: str) -> str:
    """The error text shown next to a field (the element its aria-describedby names)."""
    html = _html(response)
    match = re.search(rf'<ul class="errorlist" id="{field_id}_error">(.*?)</ul>', html, re.S)
    assert match is not None, f"no error shown for {field_id}"
    # The control is marked invalid (each input of a radio or checkbox group: id_x_0, id_x_1...).
    control = rf'id="{field_id}(?:_0)?"'
    assert re.search(rf'{control}[^>]*aria-invalid="true"|aria-invalid="true"[^>]*{control}', html), field_id
    return html_module.unescape(re.sub(r"<[^>]+>", "", match.group(1)).strip())


def _oauth_app(user: User, name: str = "Claude", *, expires_in: timedelta = timedelta(hours=1)):
    application = oauth_app(name)
    token = get_access_token_model().objects.create(
        user=user,
        application=application,
        token=f"{name}-{user.pk}-access",
        expires=datetime.now(UTC) + expires_in,
        scope="memory:read memory:write",
    )
    return application, token


# --- access -----------------------------------------------------------------------------


class TestAccess:
    PAGES = [
        "dashboard:memories",
        "dashboard:suppressed",
        "dashboard:save",
        "dashboard:upload",
        "dashboard:upload-image",
        "dashboard:jobs",
        "dashboard:relations",
        "dashboard:spaces",
        "dashboard:connect",
        "account:account",
        "account:password-change",
        "account:tokens",
        "account:apps",
        "account:delete",
    ]

    @pytest.mark.parametrize("name", PAGES)
    def test_it_sends_a_visitor_to_log_in(self, client, name):
        response = client.get(reverse(name))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("accounts:login"))

    @pytest.mark.parametrize("name", PAGES)
    def test_every_page_renders_with_labels_and_no_inline_script(self, alice_client, name):
        response = alice_client.get(reverse(name))
        assert response.status_code == 200
        html = _html(response)
        # No inline script, handler attribute or style attribute a strict CSP would block.
        assert not re.search(r"<script(?![^>]*\bsrc=)", html)
        assert not re.search(r"\son[a-z]+=", html)
        assert not re.search(r"\sstyle=", html)
        # Every visible control has a <label for=...> or an aria-label.
        for tag in re.findall(r"<(?:input|select|textarea)\b[^>]*>", html):
            if 'type="hidden"' in tag:
                continue
            control_id = re.search(r'\bid="([^"]+)"', tag)
            assert control_id is not None or "aria-label" in tag, tag
            if control_id and "aria-label" not in tag:
                assert f'for="{control_id.group(1)}"' in html, tag

    def test_the_content_security_policy_allows_no_inline_script(self, alice_client, settings):
        settings.MIDDLEWARE = [settings.MIDDLEWARE[0], CSP, *settings.MIDDLEWARE[1:]]
        response = alice_client.get(reverse("dashboard:memories"))
        assert response["Content-Security-Policy"] == POLICY
        assert "script-src 'self'" in POLICY and "unsafe-inline" not in POLICY

    def test_writes_need_the_csrf_token(self, alice, make_memory):
        memory = make_memory(alice, "Likes tea")
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        for name, args in [
            ("dashboard:memory-pin", [memory.id]),
            ("dashboard:memory-suppress", [memory.id]),
            ("dashboard:memory-delete", [memory.id]),
            ("dashboard:save", []),
            ("account:tokens", []),
            ("account:export", []),
            ("account:delete", []),
        ]:
            response = client.post(
                reverse(name, args=args), {"confirm": "delete", "content": "x", "name": "x"}
            )
            assert response.status_code == 403, name
        memory.refresh_from_db()
        assert not memory.pinned and memory.status == "active"
        assert not PersonalAccessToken.objects.exists()

    def test_actions_refuse_get(self, alice_client, alice, make_memory):
        memory = make_memory(alice, "Likes tea")
        for name in ("dashboard:memory-pin", "dashboard:memory-unpin", "dashboard:memory-restore"):
            assert alice_client.get(reverse(name, args=[memory.id])).status_code == 405
        assert alice_client.get(reverse("account:export")).status_code == 405

    def test_home_is_the_memories_page(self, alice_client, alice, make_memory):
        make_memory(alice, "Alice likes green tea")
        response = alice_client.get(reverse("home"))
        assert response.status_code == 200
        assert "Alice likes green tea" in _html(response)
        assert "Your memories" in _html(response)


class TestOutsider:
    """Charlie gets a 404 for every URL of Alice's, and nothing of hers changes."""

    @pytest.fixture
    def alices(self, alice, make_memory):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        memory = make_memory(alice, "Alice's secret plan", pinned=False)
        job = Job.objects.create(owner=alice, space=memory.space, kind="remember")
        _, _raw = pat_create(user=alice, name="alice cli", scopes=["memory:read"])
        token = PersonalAccessToken.objects.get(user=alice)
        application, _access = _oauth_app(alice)
        event = AuditEvent.objects.create(
            owner_id_snapshot=alice.id, action="hard_deleted", target_type="memory", detail={"purged": {}}
        )
        return {
            "memory": memory,
            "space": work,
            "job": job,
            "token": token,
            "application": application,
            "event": event,
        }

    def test_it_gets_404_for_every_page_of_alices(self, charlie_client, alices):
        m, s = alices["memory"].id, alices["space"].id
        urls = [
            reverse("dashboard:memory", args=[m]),
            reverse("dashboard:memory-delete", args=[m]),
            reverse("dashboard:job", args=[alices["job"].id]),
            reverse("dashboard:space-delete", args=[s]),
            reverse("dashboard:receipt", args=[alices["event"].id]),
            reverse("account:token-revoke", args=[alices["token"].id]),
            reverse("account:app-revoke", args=[alices["application"].id]),
        ]
        for url in urls:
            response = charlie_client.get(url)
            assert response.status_code == 404, url
            assert "secret" not in _html(response)

    def test_it_gets_404_for_every_write_on_alices_things(self, charlie_client, alice, alices):
        m, s = alices["memory"].id, alices["space"].id
        posts = [
            (reverse("dashboard:memory-pin", args=[m]), {}),
            (reverse("dashboard:memory-unpin", args=[m]), {}),
            (reverse("dashboard:memory-suppress", args=[m]), {"reason": "incorrect"}),
            (reverse("dashboard:memory-suppress", args=[m]), {}),
            (reverse("dashboard:memory-restore", args=[m]), {}),
            (reverse("dashboard:memory-delete", args=[m]), {"confirm": "delete"}),
            (reverse("dashboard:space-rename", args=[s]), {f"rename-{s}-name": "Mine"}),
            (reverse("dashboard:space-default", args=[s]), {}),
            (reverse("dashboard:space-delete", args=[s]), {"memories": "delete", "confirm_name": "Work"}),
            (reverse("account:token-revoke", args=[alices["token"].id]), {"confirmed": "yes"}),
            (reverse("account:app-revoke", args=[alices["application"].id]), {"confirmed": "yes"}),
        ]
        for url, data in posts:
            assert charlie_client.post(url, data).status_code == 404, url
        memory = Memory.objects.get(id=m)
        assert memory.status == "active" and not memory.pinned
        assert Space.objects.get(id=s).name == "Work" and not Space.objects.get(id=s).is_default
        assert PersonalAccessToken.objects.get(id=alices["token"].id).revoked_at is None
        assert get_access_token_model().objects.filter(user=alice).count() == 1
        charlies = AuditEvent.objects.filter(actor_user__email="charlie@example.com")
        assert not charlies.exclude(action="account_created").exists()  # his own sign-up only

    def test_its_lists_hold_nothing_of_alices(self, charlie_client, alices):
        for name in ("dashboard:memories", "dashboard:suppressed", "dashboard:jobs", "dashboard:spaces"):
            html = _html(charlie_client.get(reverse(name)))
            assert "secret plan" not in html and "Work" not in html.split('id="main"')[1], name
        html = _html(charlie_client.get(reverse("dashboard:memories"), {"q": "secret plan", "status": "all"}))
        assert "secret plan" not in html.split("result")[1]
        assert "alice cli" not in _html(charlie_client.get(reverse("account:tokens")))
        assert '<th scope="row">Claude</th>' not in _html(charlie_client.get(reverse("account:apps")))

    def test_it_cannot_pick_alices_space_in_a_filter_or_a_form(self, charlie_client, charlie, alices):
        space = alices["space"].id
        response = charlie_client.get(reverse("dashboard:memories"), {"space": str(space)})
        assert response.status_code == 400
        assert "Select a valid choice" in _field_error(response, "id_space")
        response = charlie_client.post(reverse("dashboard:save"), {"content": "Mine", "space": str(space)})
        assert response.status_code == 400
        assert "Select a valid choice" in _field_error(response, "id_space")
        assert not Source.objects.filter(owner=charlie).exists()


# --- memories ---------------------------------------------------------------------------


class TestMemoryList:
    def test_it_lists_my_memories_newest_first_with_kind_tags_and_agent(
        self, alice_client, alice, bob, make_memory
    ):
        now = datetime.now(UTC)
        make_memory(alice, "Older fact", recorded_at=now - timedelta(days=2))
        make_memory(
            alice, "Newer episode", kind="episode", tags=["travel"], recorded_at=now - timedelta(days=1)
        )
        make_memory(bob, "Bob's own memory")
        html = _html(alice_client.get(reverse("dashboard:memories")))
        assert html.index("Newer episode") < html.index("Older fact")
        assert "Bob's own memory" not in html
        assert '<span class="tag">travel</span>' in html and "Event" in html and "by you" in html
        assert "2 memories" in html

    def test_it_names_the_agent_that_saved_a_memory(self, alice_client, alice, make_memory):
        application, _ = _oauth_app(alice, "Claude Desktop")
        make_memory(alice, "Saved by an agent", agent=application)
        assert "by Claude Desktop" in _html(alice_client.get(reverse("dashboard:memories")))

    def test_it_filters_by_kind_tag_pinned_status_space_and_dates(self, alice_client, alice, make_memory):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        old = datetime(2024, 3, 1, 12, tzinfo=UTC)
        make_memory(alice, "fact in march", recorded_at=old, tags=["a", "b"])
        make_memory(
            alice, "pinned episode", kind="episode", pinned=True, occurred_at=datetime(2023, 5, 7, tzinfo=UTC)
        )
        make_memory(alice, "work fact", space=work)
        make_memory(alice, "hidden fact", status="suppressed")
        url = reverse("dashboard:memories")

        def shown(**params) -> set[str]:
            html = _html(alice_client.get(url, params))
            return {c for c in ("fact in march", "pinned episode", "work fact", "hidden fact") if c in html}

        assert shown() == {"fact in march", "pinned episode", "work fact"}
        assert shown(kind="episode") == {"pinned episode"}
        assert shown(tag="a, b") == {"fact in march"}
        assert shown(tag="a, c") == set()
        assert shown(pinned="yes") == {"pinned episode"}
        assert shown(pinned="no") == {"fact in march", "work fact"}
        assert shown(status="suppressed") == {"hidden fact"}
        assert shown(status="all") == {"fact in march", "pinned episode", "work fact", "hidden fact"}
        assert shown(space=str(work.id)) == {"work fact"}
        assert shown(date_from="2024-03-01", date_to="2024-03-01") == {"fact in march"}
        assert shown(date_by="occurred", date_from="2023-05-07", date_to="2023-05-07") == {"pinned episode"}

    def test_it_shows_filter_errors_in_place(self, alice_client):
        response = alice_client.get(
            reverse("dashboard:memories"),
            {"date_from": "2024-03-02", "date_to": "2024-03-01", "kind": "poem"},
        )
        assert response.status_code == 400
        assert _field_error(response, "id_date_to") == "The end date is before the start date."
        assert "Select a valid choice" in _field_error(response, "id_kind")
        assert '<details class="filters" open>' in _html(response)

    def test_it_paginates(self, alice_client, alice, make_memory):
        start = datetime(2024, 1, 1, tzinfo=UTC)
        for n in range(30):
            make_memory(alice, f"memory number {n:02d}", recorded_at=start + timedelta(minutes=n))
        first = _html(alice_client.get(reverse("dashboard:memories")))
        assert "memory number 29" in first and "memory number 04" not in first
        assert "Page 1 of 2" in first and "?page=2" in first
        second = _html(alice_client.get(reverse("dashboard:memories"), {"page": 2}))
        assert "memory number 04" in second and "memory number 29" not in second

    def test_the_search_box_ranks_by_recall_over_every_space(self, alice_client, alice, bob, make_memory):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        texts = ["Ana lives in Lisbon", "Ana lives near the Lisbon office", "Unrelated note about coffee"]
        vectors = dict(zip(texts, embed(texts), strict=True))
        wanted = make_memory(alice, texts[0], embedding=vectors[texts[0]])
        in_work = make_memory(alice, texts[1], space=work, embedding=vectors[texts[1]])
        # An episode: the kind filter leaves it out, however close recall ranks it.
        make_memory(alice, texts[2], kind="episode", embedding=vectors[texts[2]])
        make_memory(bob, "Ana lives in Lisbon too, says Bob", embedding=vectors[texts[0]])
        html = _html(
            alice_client.get(reverse("dashboard:memories"), {"q": "where does Ana live", "kind": "fact"})
        )
        # The query's words are highlighted: why each one is listed.
        assert "<mark>Ana</mark> <mark>lives</mark> in Lisbon" in html
        results = _unmarked(html.split("result", 1)[1])
        assert wanted.content in results and in_work.content in results
        assert "Unrelated" not in results and "says Bob" not in results
        assert "Ranked by recall" in html
        only_work = _html(
            alice_client.get(
                reverse("dashboard:memories"),
                {"q": "where does Ana live", "space": str(work.id), "kind": "fact"},
            )
        ).split("result", 1)[1]
        only_work = _unmarked(only_work)
        assert in_work.content in only_work and wanted.content not in only_work

    def test_a_nonsense_search_says_nothing_matches(self, alice_client, alice, make_memory):
        texts = ["Ana lives in Lisbon", "I keep bees in my garden"]
        for text, vector in zip(texts, embed(texts), strict=True):
            make_memory(alice, text, embedding=vector)
        html = _html(alice_client.get(reverse("dashboard:memories"), {"q": "zzqx flibbertigibbet"}))
        assert "Nothing matches “zzqx flibbertigibbet”" in html
        assert "Ana lives in Lisbon" not in html and "bees" not in html

    def test_suppressed_memories_are_found_by_their_words_only_when_asked_for(
        self, alice_client, alice, bob, make_memory
    ):
        (vector,) = embed(["Ana moved to Lisbon in May"])
        make_memory(alice, "Ana moved to Lisbon in May", embedding=vector)
        make_memory(alice, "Ana suppressed note about Lisbon", status="suppressed", embedding=vector)
        make_memory(bob, "Bob also knows Lisbon", status="suppressed")
        results = _unmarked(
            _html(alice_client.get(reverse("dashboard:memories"), {"q": "ana lisbon"})).split("result", 1)[1]
        )
        assert "Ana moved to Lisbon in May" in results and "suppressed note" not in results
        everything = _unmarked(
            _html(alice_client.get(reverse("dashboard:memories"), {"q": "lisbon", "status": "all"}))
        )
        assert "Ana suppressed note about Lisbon" in everything and "Bob also" not in everything
        suppressed = _html(
            alice_client.get(reverse("dashboard:memories"), {"q": "lisbon", "status": "suppressed"})
        )
        assert "Ana suppressed note about Lisbon" in suppressed and "moved to Lisbon" not in suppressed
        assert "Memories containing every word" in suppressed


class TestMemoryPage:
    def test_it_shows_clocks_entities_provenance_evidence_and_history(self, alice_client, alice, make_memory):
        application, _ = _oauth_app(alice, "Claude")
        older = make_memory(alice, "Alice lives in Paris", recorded_at=datetime(2024, 1, 1, tzinfo=UTC))
        memory = make_memory(
            alice,
            "Alice lives in Berlin",
            agent=application,
            valid_from=datetime(2024, 6, 1, tzinfo=UTC),
            recorded_at=datetime(2024, 6, 2, tzinfo=UTC),
        )
        older.superseded_at = memory.recorded_at
        older.superseded_by = memory
        older.save()
        # Another claimant (an agent) said it too; the user saying it once more is no new evidence.
        extra = Source.objects.create(
            owner=alice,
            space=memory.space,
            origin="remember",
            content="again Berlin",
            content_hash="9" * 64,
            claimant=f"agent:{application.pk}",
        )
        memory.evidence.create(owner=alice, source=extra)
        repeat = Source.objects.create(
            owner=alice, space=memory.space, origin="remember", content="Berlin!", content_hash="8" * 64
        )
        memory.evidence.create(owner=alice, source=repeat)
        berlin = Entity.objects.create(
            owner=alice, space=memory.space, name="Berlin", normalized_name="berlin", type="Location"
        )
        link(memory, berlin)
        html = _html(alice_client.get(reverse("dashboard:memory", args=[memory.id])))
        assert "Alice lives in Berlin" in html
        assert "1 Jun 2024, 00:00" in html and "2 Jun 2024, 00:00" in html
        assert 'Berlin <span class="muted">(Location)</span>' in html
        assert "Claude" in html and "2 independent sources" in html
        assert "Note: Alice lives in Berlin" in html  # the source excerpt
        # The history chain, oldest first: the replaced version, then this one, marked current.
        chain = html[html.index('class="history-chain"') :]
        assert chain.index("Alice lives in Paris") < chain.index("This version (current)")
        older_html = _html(alice_client.get(reverse("dashboard:memory", args=[older.id])))
        older_chain = older_html[older_html.index('class="history-chain"') :]
        assert older_chain.index("This version (replaced)") < older_chain.index("Alice lives in Berlin")
        assert re.search(
            r'<span class="badge succeeded">Current</span> <a href="[^"]+">Alice lives in Berlin', older_chain
        )

    def test_it_pins_and_unpins_with_an_audit_row(self, alice_client, alice, make_memory):
        memory = make_memory(alice, "Likes tea")
        response = alice_client.post(reverse("dashboard:memory-pin", args=[memory.id]))
        assert response.status_code == 302 and response["Location"] == reverse(
            "dashboard:memory", args=[memory.id]
        )
        memory.refresh_from_db()
        assert memory.pinned
        alice_client.post(reverse("dashboard:memory-unpin", args=[memory.id]))
        memory.refresh_from_db()
        assert not memory.pinned
        actions = list(AuditEvent.objects.filter(target_id=memory.id).values_list("action", "actor_user"))
        assert sorted(actions) == [("pinned", alice.id), ("unpinned", alice.id)]

    def test_it_only_goes_back_to_pages_of_this_site(self, alice_client, alice, make_memory):
        memory = make_memory(alice, "Likes tea")
        url = reverse("dashboard:memory-pin", args=[memory.id])
        assert alice_client.post(url, {"next": "https://evil.example/"})["Location"] == reverse(
            "dashboard:memory", args=[memory.id]
        )
        assert alice_client.post(url, {"next": "/memories/?q=tea"})["Location"] == "/memories/?q=tea"

    def test_suppress_needs_a_reason_and_is_audited(self, alice_client, alice, make_memory):
        memory = make_memory(alice, "Likes tea")
        url = reverse("dashboard:memory-suppress", args=[memory.id])
        response = alice_client.post(url, {"reason": "because"})
        assert response.status_code == 400
        assert "Select a valid choice" in _field_error(response, "id_reason")
        memory.refresh_from_db()
        assert memory.status == "active"
        alice_client.post(url, {"reason": "incorrect"})
        memory.refresh_from_db()
        assert memory.status == "suppressed" and memory.suppressed_reason == "incorrect"
        event = AuditEvent.objects.get(target_id=memory.id, action="suppressed")
        assert event.actor_user == alice and "tea" not in json.dumps(event.detail)

    def test_the_suppressed_page_lists_them_with_restore(self, alice_client, alice, make_memory):
        hidden = make_memory(alice, "Hidden one", status="suppressed")
        make_memory(alice, "Visible one")
        html = _html(alice_client.get(reverse("dashboard:suppressed")))
        assert "Hidden one" in html and "Visible one" not in html
        assert reverse("dashboard:memory-restore", args=[hidden.id]) in html
        response = alice_client.post(
            reverse("dashboard:memory-restore", args=[hidden.id]), {"next": reverse("dashboard:suppressed")}
        )
        assert response["Location"] == reverse("dashboard:suppressed")
        hidden.refresh_from_db()
        assert hidden.status == "active"
        assert AuditEvent.objects.filter(target_id=hidden.id, action="restored").exists()

    def test_hard_delete_needs_the_typed_word_then_shows_the_receipt(self, alice_client, alice, make_memory):
        memory = make_memory(alice, "Private thing")
        url = reverse("dashboard:memory-delete", args=[memory.id])
        assert "Type “delete”" in _html(alice_client.get(url))
        response = alice_client.post(url, {"confirm": "yes"})
        assert response.status_code == 400
        assert _field_error(response, "id_confirm") == "Type the word “delete” to confirm."
        assert Memory.objects.filter(id=memory.id).exists()

        response = alice_client.post(url, {"confirm": " Delete "})
        assert not Memory.objects.filter(id=memory.id).exists()
        event = AuditEvent.objects.get(target_id=memory.id, action="hard_deleted")
        assert response["Location"] == reverse("dashboard:receipt", args=[event.id])
        receipt = _html(alice_client.get(response["Location"]))
        assert str(memory.id) in receipt and str(event.id) in receipt
        assert re.search(r"<dt>Memories</dt><dd>1</dd>", receipt)
        assert re.search(r"<dt>Sources deleted</dt><dd>1</dd>", receipt)
        assert "Private thing" not in receipt
        assert alice_client.get(reverse("dashboard:memory", args=[memory.id])).status_code == 404


# --- save, upload, jobs -----------------------------------------------------------------


class TestSaveAndUpload:
    def test_it_saves_a_note_with_date_tags_and_space_and_shows_its_job(self, alice_client, alice):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        response = alice_client.post(
            reverse("dashboard:save"),
            {
                "content": "  Met Ana yesterday.  ",
                "occurred_on": "2024-05-08",
                "tags": "family, ana, family",
                "space": str(work.id),
            },
        )
        job = Job.objects.get(owner=alice)
        assert response.status_code == 302 and response["Location"] == reverse("dashboard:job", args=[job.id])
        assert job.options == {"tags": ["family", "ana"]} and job.space == work
        assert job.source.content == "Met Ana yesterday." and job.source.agent is None
        assert job.source.refers_to == datetime(2024, 5, 8, 12, tzinfo=UTC)
        page = _html(alice_client.get(response["Location"]))
        assert reverse("api-job", args=[job.id]) in page and 'data-job-done="false"' in page
        assert "Waiting for a worker" in page

    def test_it_shows_note_errors_in_place_and_stores_nothing(self, alice_client, alice):
        response = alice_client.post(
            reverse("dashboard:save"), {"content": "   ", "occurred_on": "yesterday", "tags": "x" * 101}
        )
        assert response.status_code == 400
        assert _field_error(response, "id_content") == "This field is required."
        assert _field_error(response, "id_occurred_on") == "Enter a valid date."
        assert _field_error(response, "id_tags") == "A tag has at most 100 characters."
        assert not Source.objects.filter(owner=alice).exists()

    def test_it_uploads_a_markdown_document(self, alice_client, alice):
        from django.core.files.uploadedfile import SimpleUploadedFile

        space = Space.objects.get(owner=alice)
        upload = SimpleUploadedFile(
            "notes.md", b"# Notes\n\nTom lives in Porto.\n", content_type="text/markdown"
        )
        response = alice_client.post(reverse("dashboard:upload"), {"file": upload, "space": str(space.id)})
        job = Job.objects.get(owner=alice)
        assert response["Location"] == reverse("dashboard:job", args=[job.id])
        assert job.kind == "ingest" and job.source.filename == "notes.md"
        again = SimpleUploadedFile(
            "notes.md", b"# Notes\n\nTom lives in Porto.\n", content_type="text/markdown"
        )
        response = alice_client.post(
            reverse("dashboard:upload"), {"file": again, "space": str(space.id)}, follow=True
        )
        assert "uploaded before; nothing new was stored" in _html(response)
        assert Job.objects.filter(owner=alice).count() == 1

    def test_it_refuses_a_bad_upload_in_place(self, alice_client, alice, settings):
        from django.core.files.uploadedfile import SimpleUploadedFile

        space = Space.objects.get(owner=alice)
        response = alice_client.post(reverse("dashboard:upload"), {"space": str(space.id)})
        assert response.status_code == 400 and _field_error(response, "id_file") == "This field is required."
        binary = SimpleUploadedFile("tool.exe", b"MZ\x00\x01binary", content_type="application/octet-stream")
        response = alice_client.post(reverse("dashboard:upload"), {"file": binary, "space": str(space.id)})
        assert response.status_code == 400 and _field_error(response, "id_file")
        settings.DOCUMENT_MAX_BYTES = 1024
        big = SimpleUploadedFile("big.md", b"a" * 2048, content_type="text/markdown")
        response = alice_client.post(reverse("dashboard:upload"), {"file": big, "space": str(space.id)})
        assert response.status_code == 400 and "larger than" in _field_error(response, "id_file")
        assert not Source.objects.filter(owner=alice).exists()

    def test_a_document_found_unreadable_by_the_worker_fails_on_its_job_page(self, alice_client, alice):
        from django.core.files.uploadedfile import SimpleUploadedFile

        from memories.worker.run import job_process

        space = Space.objects.get(owner=alice)
        broken = SimpleUploadedFile("broken.pdf", b"%PDF-1.4 garbage", content_type="application/pdf")
        response = alice_client.post(reverse("dashboard:upload"), {"file": broken, "space": str(space.id)})
        job = Job.objects.get(owner=alice)
        # The type is right, so the upload is taken; only reading it (the worker) finds it damaged.
        assert response["Location"] == reverse("dashboard:job", args=[job.id])
        job_process(job_id=job.id)  # what the worker runs, here in the test's transaction
        page = _html(alice_client.get(response["Location"]))
        assert 'data-job-done="true"' in page and "Failed." in page
        assert "This PDF could not be read" in page and "(document_unreadable)" in page
        assert Source.objects.get(owner=alice).raw is None

    def test_the_jobs_page_lists_mine_and_says_when_some_run(self, alice_client, alice, bob, make_memory):
        space = Space.objects.get(owner=alice)
        done = Job.objects.create(
            owner=alice,
            space=space,
            kind="remember",
            status="succeeded",
            attempts=1,
            started_at=datetime(2024, 1, 1, 10, 0, 0, tzinfo=UTC),
            finished_at=datetime(2024, 1, 1, 10, 0, 2, 500000, tzinfo=UTC),
        )
        make_memory(alice, "from the job", job=done)
        Job.objects.create(owner=alice, space=space, kind="ingest", status="running")
        Job.objects.create(
            owner=alice,
            space=space,
            kind="remember",
            status="failed",
            error_code="x",
            error_message="It broke.",
        )
        Job.objects.create(owner=bob, space=Space.objects.get(owner=bob), kind="remember", status="running")
        html = _html(alice_client.get(reverse("dashboard:jobs")))
        assert 'data-running="1"' in html and "1 job in progress" in html
        assert html.count("<tr>") == 4  # header + three of Alice's
        assert "2.5 s" in html and "It broke." in html

    def test_a_finished_job_lists_its_memories(self, alice_client, alice, make_memory):
        job = Job.objects.create(
            owner=alice, space=Space.objects.get(owner=alice), kind="remember", status="succeeded"
        )
        make_memory(alice, "result of the job", job=job)
        html = _html(alice_client.get(reverse("dashboard:job", args=[job.id])))
        assert 'data-job-done="true"' in html and "result of the job" in html and "Done: 1 memory." in html


# --- spaces -----------------------------------------------------------------------------


class TestSpaces:
    def test_it_creates_a_space_and_shows_name_errors_in_place(self, alice_client, alice):
        response = alice_client.post(reverse("dashboard:spaces"), {"create-name": "Work"})
        assert response.status_code == 302
        assert Space.objects.filter(owner=alice, name="Work").exists()
        response = alice_client.post(reverse("dashboard:spaces"), {"create-name": "Work"})
        assert response.status_code == 400
        assert _field_error(response, "id_create-name") == "You already have a space named 'Work'."
        response = alice_client.post(reverse("dashboard:spaces"), {"create-name": "   "})
        assert response.status_code == 400 and _field_error(response, "id_create-name")
        assert AuditEvent.objects.filter(owner_id_snapshot=alice.id, action="space_created").count() == 1

    def test_it_renames_with_errors_in_the_row(self, alice_client, alice):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        personal = Space.objects.get(owner=alice, is_default=True)
        url = reverse("dashboard:space-rename", args=[work.id])
        response = alice_client.post(url, {f"rename-{work.id}-name": "Personal"})
        assert response.status_code == 400
        assert "already have a space" in _field_error(response, f"id_rename-{work.id}-name")
        assert alice_client.post(url, {f"rename-{work.id}-name": "Job"}).status_code == 302
        work.refresh_from_db()
        personal.refresh_from_db()
        assert work.name == "Job" and personal.name == "Personal"

    def test_names_are_unique_ignoring_case(self, alice_client, alice):
        space_create(actor=Actor.owner_acting(alice), name="Work")
        response = alice_client.post(reverse("dashboard:spaces"), {"create-name": "work"})
        assert response.status_code == 400
        assert "already have a space named" in _field_error(response, "id_create-name")
        assert Space.objects.filter(owner=alice, name__iexact="work").count() == 1

    def test_choosing_the_current_space_filters_the_list_and_keeps_the_default(
        self, alice_client, alice, bob, make_memory
    ):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        make_memory(alice, "a work memory", space=work)
        make_memory(alice, "a personal memory")
        response = alice_client.post(reverse("dashboard:space-current"), {"space": str(work.id)})
        assert response.status_code == 302
        html = _html(alice_client.get(reverse("dashboard:memories")))
        assert "a work memory" in html and "a personal memory" not in html
        assert "Agents still save into your default space" in html
        assert Space.objects.get(owner=alice, is_default=True).name == "Personal"
        alice_client.post(reverse("dashboard:space-current"), {"space": ""})
        html = _html(alice_client.get(reverse("dashboard:memories")))
        assert "a work memory" in html and "a personal memory" in html
        # Another account's space cannot be chosen.
        bobs = space_create(actor=Actor.owner_acting(bob), name="Bob's")
        assert (
            alice_client.post(reverse("dashboard:space-current"), {"space": str(bobs.id)}).status_code == 404
        )

    def test_choosing_the_current_space_needs_the_csrf_token(self, alice):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        assert client.post(reverse("dashboard:space-current"), {"space": str(work.id)}).status_code == 403
        assert "dashboard_current_space" not in client.session

    def test_it_makes_another_space_the_default(self, alice_client, alice):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        alice_client.post(reverse("dashboard:space-default", args=[work.id]))
        assert Space.objects.get(owner=alice, is_default=True) == work

    def test_delete_needs_an_explicit_choice_and_can_move_the_memories(
        self, alice_client, alice, make_memory
    ):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        make_memory(alice, "work memory", space=work)
        url = reverse("dashboard:space-delete", args=[work.id])
        page = _html(alice_client.get(url))
        assert "Move its 1 memory," in page and "1 memories" not in page and "checked" not in page
        response = alice_client.post(url, {})
        assert response.status_code == 400
        assert _field_error(response, "id_memories") == "Choose whether to move or delete the memories."
        assert alice_client.post(url, {"memories": "move"})["Location"] == reverse("dashboard:spaces")
        assert "Deleted “Work”; its 1 memory was moved" in _html(
            alice_client.get(reverse("dashboard:spaces"))
        )
        assert not Space.objects.filter(id=work.id).exists()
        assert Memory.objects.get(content="work memory").space.is_default

    def test_deleting_the_memories_needs_the_typed_name_and_gives_a_receipt(
        self, alice_client, alice, make_memory
    ):
        work = space_create(actor=Actor.owner_acting(alice), name="Work")
        make_memory(alice, "work memory", space=work)
        url = reverse("dashboard:space-delete", args=[work.id])
        response = alice_client.post(url, {"memories": "delete", "confirm_name": "work"})
        assert response.status_code == 400
        assert _field_error(response, "id_confirm_name") == "Type “Work” exactly to delete its memories."
        response = alice_client.post(url, {"memories": "delete", "confirm_name": "Work"})
        event = AuditEvent.objects.get(target_id=work.id, action="hard_deleted")
        assert response["Location"] == reverse("dashboard:receipt", args=[event.id])
        assert "The space&#x27;s memories were" in _html(
            alice_client.get(response["Location"])
        ) or "space's" in _html(alice_client.get(response["Location"]))
        assert not Memory.objects.filter(content="work memory").exists()

    def test_the_default_space_cannot_be_deleted(self, alice_client, alice):
        personal = Space.objects.get(owner=alice)
        response = alice_client.post(
            reverse("dashboard:space-delete", args=[personal.id]), {"memories": "move"}
        )
        assert response.status_code == 400
        assert "make another space the default" in _html(response)
        assert Space.objects.filter(id=personal.id).exists()


# --- connect ----------------------------------------------------------------------------


class TestConnect:
    def test_it_shows_the_mcp_url_the_set_up_steps_and_the_system_prompt(self, alice_client, settings):
        html = _html(alice_client.get(reverse("dashboard:connect")))
        assert f'value="{settings.PUBLIC_URL}/mcp"' in html
        for heading in ("Claude", "ChatGPT", "VS Code", "deeprecall mcp"):
            assert heading in html
        assert 'data-copy="system-prompt"' in html
        assert "You have long-term memory through the Deep Recall tools." in html

    def test_every_snippet_has_a_copy_button_and_the_stdio_steps_need_no_checkout(self, alice_client):
        html = _html(alice_client.get(reverse("dashboard:connect")))
        for snippet in re.findall(r'<pre id="(snippet-[a-z-]+)"', html):
            assert f'data-copy="{snippet}"' in html, snippet
        assert len(re.findall(r'<pre id="snippet-', html)) == 3
        assert "pip install -e" not in html
        assert reverse("dashboard:stdio-proxy") in html
        assert html.count('class="callout warning"') == 2 and "Needs a public https:// address." in html

    def test_the_proxy_downloads_as_one_file_that_needs_only_httpx(self, alice_client, client):
        url = reverse("dashboard:stdio-proxy")
        assert client.get(url).status_code == 302  # a visitor signs in first
        response = alice_client.get(url)
        assert response.status_code == 200
        assert response["Content-Disposition"] == 'attachment; filename="deeprecall_proxy.py"'
        text = response.content.decode()
        imports = set(re.findall(r"^(?:import|from) ([a-z_.]+)", text, re.M))
        assert "httpx" in imports and not any(
            name.split(".")[0] in {"django", "memories", "config"} for name in imports
        )
        assert 'if __name__ == "__main__":' in text

    def test_it_explains_each_tool_profile_with_its_url_and_the_tools_agents_see(
        self, alice_client, settings
    ):
        from mcp_gateway.tools import tool_definitions
        from memories.operations.registry import PROFILES
        from tests.mcp_gateway.test_graph_contract import CONTRACT_TOOLS

        html = _html(alice_client.get(reverse("dashboard:connect")))
        assert "Which URL? Tool profiles" in html
        core = [tool.name for tool in tool_definitions("core")]
        for profile in PROFILES.values():
            before, found, after = html.partition(f'id="profile-url-{profile.name}">')
            assert found, profile.name
            assert after.startswith(f"{settings.PUBLIC_URL}{profile.path}<"), profile.name
            row = before.rpartition("<tr>")[2]
            listed = re.findall(r"<code>([a-z_]+)</code>", row)
            # What MCP tools/list gives at that URL, under the same names: the core four shown once
            # as "the core four" where a profile adds to them, and a contract's tools exactly.
            offered = [tool.name for tool in tool_definitions(profile.name)]
            if "the core four, and" in row:
                assert offered[: len(core)] == core and listed == offered[len(core) :], profile.name
            else:
                assert listed == offered, profile.name
        graph_row = html.partition('id="profile-url-graph">')[0].rpartition("<tr>")[2]
        assert re.findall(r"<code>([a-z_]+)</code>", graph_row) == CONTRACT_TOOLS
        assert "the core four" not in graph_row

    def test_the_built_in_prompt_is_the_one_in_the_docs(self):
        dashboard_views.system_prompt.cache_clear()
        assert dashboard_views.system_prompt() == dashboard_views.SYSTEM_PROMPT


# --- account ----------------------------------------------------------------------------


class TestAccount:
    def test_it_changes_the_email_after_the_password(self, alice_client, alice, bob):
        url = reverse("account:account")
        response = alice_client.post(url, {"email": "bob@example.com", "password": "wrong"})
        assert response.status_code == 400
        assert _field_error(response, "id_email") == "Another account already uses this email."
        assert _field_error(response, "id_password") == "This is not your current password."
        assert (
            alice_client.post(url, {"email": "Alice2@Example.com", "password": PASSWORD}).status_code == 302
        )
        alice.refresh_from_db()
        assert alice.email == "alice2@example.com"
        assert AuditEvent.objects.filter(
            target_id=alice.id, action="updated", detail={"changed": "email"}
        ).exists()

    def test_it_changes_the_password_and_keeps_the_session(self, alice_client, alice):
        url = reverse("account:password-change")
        response = alice_client.post(
            url, {"old_password": "nope", "new_password1": "a", "new_password2": "b"}
        )
        assert response.status_code == 400
        assert _field_error(response, "id_old_password")
        assert _field_error(response, "id_new_password2")
        new = "another long passphrase 77"
        response = alice_client.post(
            url, {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
        )
        assert response["Location"] == reverse("account:account")
        alice.refresh_from_db()
        assert alice.check_password(new)
        assert alice_client.get(reverse("account:account")).status_code == 200

    def test_password_reset_sends_a_link_that_sets_a_new_password(self, client, alice):
        response = client.post(reverse("account:password-reset"), {"email": "ALICE@example.com"})
        assert response["Location"] == reverse("account:password-reset-done")
        client.post(reverse("account:password-reset"), {"email": "nobody@example.com"})
        assert len(mail.outbox) == 1 and mail.outbox[0].to == ["alice@example.com"]
        link = re.search(r"http://\S+", mail.outbox[0].body).group(0)
        path = link.split("testserver", 1)[1]
        form_url = client.get(path)["Location"]  # Django swaps the token for a session marker
        new = "a fresh long passphrase 12"
        response = client.post(form_url, {"new_password1": new, "new_password2": new})
        assert response["Location"] == reverse("account:password-reset-complete")
        alice.refresh_from_db()
        assert alice.check_password(new)
        assert "invalid or has already been used" in _html(client.get(path, follow=True))

    def test_export_downloads_my_data_as_json_lines_and_is_audited(
        self, alice_client, alice, bob, make_memory
    ):
        make_memory(alice, "Alice's memory")
        make_memory(bob, "Bob's memory")
        response = alice_client.post(reverse("account:export"))
        assert response["Content-Type"] == "application/x-ndjson"
        assert response["Content-Disposition"].startswith('attachment; filename="deeprecall-export-')
        lines = b"".join(response.streaming_content).decode().splitlines()
        records = [json.loads(line) for line in lines]
        assert records[0] == {**records[0], "type": "account", "email": "alice@example.com"}
        assert [r["content"] for r in records if r["type"] == "memory"] == ["Alice's memory"]
        assert "Bob" not in "\n".join(lines)
        assert AuditEvent.objects.filter(
            owner_id_snapshot=alice.id, action="exported", actor_user=alice
        ).exists()

    def test_delete_account_needs_the_typed_email_and_password(self, alice_client, alice):
        url = reverse("account:delete")
        response = alice_client.post(url, {"email": "someone@example.com", "password": "wrong"})
        assert response.status_code == 400
        assert _field_error(response, "id_email") == "Type alice@example.com exactly to delete this account."
        assert _field_error(response, "id_password") == "This is not your current password."
        assert User.objects.filter(id=alice.id).exists()

    def test_delete_account_purges_everything_signs_out_and_shows_the_receipt(
        self, alice_client, alice, bob, make_memory
    ):
        space_create(actor=Actor.owner_acting(alice), name="Work")
        make_memory(alice, "first")
        make_memory(alice, "second")
        bobs = make_memory(bob, "bob keeps this")
        pat_create(user=alice, name="cli", scopes=["memory:read"])
        _oauth_app(alice)
        alice_id = alice.id
        response = alice_client.post(
            reverse("account:delete"), {"email": "Alice@example.com", "password": PASSWORD}
        )
        assert response.status_code == 200
        html = _html(response)
        assert "Your account is deleted" in html and str(alice_id) in html
        assert re.search(r"<dt>Memories</dt><dd>2</dd>", html) and re.search(
            r"<dt>Spaces</dt><dd>2</dd>", html
        )
        assert not User.objects.filter(id=alice_id).exists()
        assert not Memory.objects.filter(owner_id=alice_id).exists()
        assert not Source.objects.filter(owner_id=alice_id).exists()
        assert not PersonalAccessToken.objects.filter(user_id=alice_id).exists()
        assert not get_access_token_model().objects.filter(user_id=alice_id).exists()
        event = AuditEvent.objects.get(owner_id_snapshot=alice_id, action="account_deleted")
        assert str(event.id) in html and event.detail["purged"]["memories"] == 2
        assert "first" not in json.dumps(event.detail)
        assert Memory.objects.filter(id=bobs.id).exists()
        assert alice_client.get(reverse("dashboard:memories")).status_code == 302


class TestTokens:
    def test_it_creates_a_token_and_shows_it_once(self, alice_client, alice):
        response = alice_client.post(
            reverse("account:tokens"),
            {"name": "laptop", "scopes": ["memory:read"], "expires_on": "2099-01-01"},
        )
        # Post/redirect/get: the page that shows the token is a GET, so a reload creates nothing.
        assert response.status_code == 302 and response["Location"] == reverse("account:tokens")
        assert "drp_" not in _html(response)
        shown = alice_client.get(reverse("account:tokens"))
        assert shown.status_code == 200 and shown["Cache-Control"].startswith("max-age=0")
        raw = re.search(r'id="new-token"[^>]*value="(drp_[^"]+)"|value="(drp_[^"]+)"', _html(shown))
        token_value = next(group for group in raw.groups() if group)
        token = PersonalAccessToken.objects.get(user=alice)
        assert token.scopes == "memory:read" and token.expires_at == datetime(2099, 1, 1, tzinfo=UTC)
        assert token_value.startswith(token.prefix)
        reloaded = alice_client.get(reverse("account:tokens"))
        assert token_value not in _html(reloaded)
        assert PersonalAccessToken.objects.filter(user=alice).count() == 1

    def test_it_shows_token_errors_in_place(self, alice_client, alice):
        response = alice_client.post(reverse("account:tokens"), {"name": " ", "expires_on": "2001-01-01"})
        assert response.status_code == 400
        assert _field_error(response, "id_name") == "This field is required."
        assert _field_error(response, "id_scopes") == "Choose at least one thing the token may do."
        assert _field_error(response, "id_expires_on") == "Choose a day after today."
        assert not PersonalAccessToken.objects.exists()

    def test_revoking_asks_first_then_revokes_and_audits(self, alice_client, alice):
        token, _ = pat_create(user=alice, name="cli", scopes=["memory:read"])
        url = reverse("account:token-revoke", args=[token.id])
        response = alice_client.post(url, {"confirmed": ""})
        assert response.status_code == 200 and "Revoke the token “cli”?" in _html(response)
        token.refresh_from_db()
        assert token.revoked_at is None
        assert alice_client.post(url, {"confirmed": "yes"})["Location"] == reverse("account:tokens")
        token.refresh_from_db()
        assert token.revoked_at is not None
        assert AuditEvent.objects.filter(target_id=token.id, action="token_revoked").count() == 1
        alice_client.post(url, {"confirmed": "yes"})
        assert AuditEvent.objects.filter(target_id=token.id).count() == 1
        assert "Revoked" in _html(alice_client.get(reverse("account:tokens")))


class TestConnectedApps:
    def test_it_lists_apps_with_scopes_space_and_last_use(self, alice_client, alice, bob, make_memory):
        application, _ = _oauth_app(alice, "Claude")
        make_memory(alice, "saved by Claude", agent=application)
        _oauth_app(bob, "Bob's ChatGPT")
        _oauth_app(alice, "Old app", expires_in=timedelta(hours=-1))
        html = _html(alice_client.get(reverse("account:apps")))
        assert "Claude" in html and "memory:read" in html and "memory:write" in html
        assert "Personal (default)" in html
        assert "Bob&#x27;s ChatGPT" not in html and "Bob's ChatGPT" not in html
        assert "Old app" not in html

    def test_an_app_with_a_live_refresh_token_is_still_connected(self, alice_client, alice):
        application, token = _oauth_app(alice, "Refresher", expires_in=timedelta(hours=-1))
        get_refresh_token_model().objects.create(
            user=alice, application=application, token="refresh-1", access_token=token
        )
        assert "Refresher" in _html(alice_client.get(reverse("account:apps")))

    def test_disconnecting_asks_first_then_deletes_its_tokens_and_audits(self, alice_client, alice, bob):
        application, token = _oauth_app(alice, "Claude")
        get_refresh_token_model().objects.create(
            user=alice, application=application, token="refresh-2", access_token=token
        )
        _oauth_app(bob, "Claude for Bob")
        get_access_token_model().objects.create(
            user=bob,
            application=application,
            token="bob-same-app",
            expires=datetime.now(UTC) + timedelta(hours=1),
            scope="memory:read",
        )
        url = reverse("account:app-revoke", args=[application.id])
        assert "Disconnect “Claude”?" in _html(alice_client.post(url, {}))
        assert get_access_token_model().objects.filter(user=alice).exists()
        assert alice_client.post(url, {"confirmed": "yes"})["Location"] == reverse("account:apps")
        assert not get_access_token_model().objects.filter(user=alice).exists()
        assert not get_refresh_token_model().objects.filter(user=alice).exists()
        # Another person's tokens for the same app stay.
        assert get_access_token_model().objects.filter(user=bob).count() == 2
        event = AuditEvent.objects.get(owner_id_snapshot=alice.id, target_type="oauth_application")
        assert event.action == "app_revoked"
        assert event.detail == {
            "changed": "access_revoked",
            "application_id": application.id,
            "access_tokens": 1,
            "refresh_tokens": 1,
            "grants": 0,
        }
        assert '<th scope="row">Claude</th>' not in _html(alice_client.get(reverse("account:apps")))
