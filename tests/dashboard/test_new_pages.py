"""The Overview, Ask, Agents, Activity and Graph pages through Django's test client (issue 18).

Alice owns things, Bob has his own, Charlie is the outsider: none of Alice's numbers, memories,
agents, audit rows or relations may reach him, and her ids are 404s for him.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.models import get_access_token_model

from accounts.caller import Actor
from accounts.models import AppPause
from accounts.oauth import REST_PATH, resource_url
from memories.embeddings import embed
from memories.models import AuditEvent, Entity, Evidence, Job, Relation, Source
from memories.services.audit import audit_record
from tests.helpers import oauth_app

pytestmark = pytest.mark.django_db

PAGES = ["dashboard:overview", "dashboard:ask", "dashboard:activity", "dashboard:agents", "dashboard:graph"]


def _html(response) -> str:
    return response.content.decode()


def _connected(user, name: str = "Claude"):
    application = oauth_app(name)
    get_access_token_model().objects.create(
        user=user,
        application=application,
        token=f"{name}-{user.pk}-token",
        expires=timezone.now() + timedelta(hours=1),
        scope="memory:read memory:write",
    )
    return application


def _relation(owner, make_memory, *, subject: str = "Ana", obj: str = "Lisbon"):
    memory = make_memory(owner, f"{subject} lives in {obj}")
    ends = [
        Entity.objects.get_or_create(
            owner=owner,
            space=memory.space,
            normalized_name=name.lower(),
            defaults={"name": name, "type": kind},
        )[0]
        for name, kind in ((subject, "Person"), (obj, "Location"))
    ]
    relation = Relation.objects.create(
        owner=owner, space=memory.space, subject=ends[0], object=ends[1], type=Relation.Type.LIVES_IN
    )
    Evidence.objects.create(owner=owner, source=memory.source, relation=relation)
    return relation, memory


class TestAccess:
    @pytest.mark.parametrize("name", [*PAGES, "dashboard:overview-data", "dashboard:graph-data"])
    def test_it_sends_a_visitor_to_log_in(self, client, name):
        response = client.get(reverse(name))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("accounts:login"))

    @pytest.mark.parametrize("name", PAGES)
    def test_every_page_renders_with_labels_and_no_inline_script(
        self, alice_client, alice, make_memory, name
    ):
        _relation(alice, make_memory)
        response = alice_client.get(reverse(name))
        assert response.status_code == 200
        html = _html(response)
        assert not re.search(r"<script(?![^>]*\bsrc=)", html)
        assert not re.search(r"\son[a-z]+=", html)
        assert not re.search(r"\sstyle=", html)
        for tag in re.findall(r"<(?:input|select|textarea)\b[^>]*>", html):
            if 'type="hidden"' in tag:
                continue
            control_id = re.search(r'\bid="([^"]+)"', tag)
            assert control_id is not None or "aria-label" in tag, tag
            if control_id and "aria-label" not in tag:
                assert f'for="{control_id.group(1)}"' in html, tag

    def test_pausing_and_resuming_need_the_csrf_token(self, alice):
        application = _connected(alice)
        client = Client(enforce_csrf_checks=True)
        client.force_login(alice)
        for name in ("dashboard:agent-pause", "dashboard:agent-resume"):
            assert client.post(reverse(name, args=[application.id])).status_code == 403, name
        assert not AppPause.objects.exists()

    def test_pausing_is_post_only(self, alice_client, alice):
        application = _connected(alice)
        assert alice_client.get(reverse("dashboard:agent-pause", args=[application.id])).status_code == 405
        assert not AppPause.objects.exists()


class TestOutsider:
    def test_the_outsider_sees_nothing_of_alices(self, alice, charlie, charlie_client, make_memory):
        application = _connected(alice, "Alices Claude")
        relation, memory = _relation(alice, make_memory, subject="Priya", obj="Nairobi")
        Source.objects.filter(id=memory.source_id).update(agent=application)
        memory.agent = application
        memory.save(update_fields=["agent"])
        audit_record(
            actor=Actor.owner_acting(alice),
            action=AuditEvent.Action.PINNED,
            target_type="memory",
            target_id=memory.id,
        )
        for name in PAGES:
            html = _html(charlie_client.get(reverse(name)))
            assert "Priya" not in html and "Nairobi" not in html and "Alices Claude" not in html, name
        assert "<td>Pinned</td>" not in _html(charlie_client.get(reverse("dashboard:activity")))
        for name in ("dashboard:overview-data", "dashboard:graph-data"):
            body = charlie_client.get(reverse(name)).json()
            assert "Priya" not in str(body) and "Alices Claude" not in str(body), name
        assert charlie_client.get(reverse("dashboard:overview-data")).json()["total"] == 0
        answer = _html(charlie_client.get(reverse("dashboard:ask"), {"q": "Where does Priya live?"}))
        assert "Nairobi" not in answer and "Nothing in your memory supports an answer" in answer
        for name, args in (
            ("dashboard:agent", [application.id]),
            ("dashboard:graph-relation", [relation.id]),
        ):
            assert charlie_client.get(reverse(name, args=args)).status_code == 404, name
        for name in ("dashboard:agent-pause", "dashboard:agent-resume"):
            assert charlie_client.post(reverse(name, args=[application.id])).status_code == 404, name
        assert not AppPause.objects.exists()
        # A filter naming Alice's app shows Charlie nothing either (it is not one of his choices).
        response = charlie_client.get(reverse("dashboard:activity"), {"who": str(application.id)})
        assert response.status_code == 400 and "<td>Pinned</td>" not in _html(response)


class TestAsk:
    def test_it_answers_from_the_memories_and_links_each_citation(
        self, alice_client, alice, bob, make_memory
    ):
        texts = ["My sister Ana lives in Lisbon.", "I keep bees in my garden."]
        vectors = embed(texts)
        cited = make_memory(alice, texts[0], embedding=vectors[0])
        make_memory(alice, texts[1], embedding=vectors[1])
        make_memory(bob, "Bob's sister Ana lives in Oslo.", embedding=vectors[0])
        response = alice_client.get(reverse("dashboard:ask"), {"q": "Where does my sister Ana live?"})
        assert response.status_code == 200
        html = _html(response)
        answer = re.search(r"data-answer-text>(.*?)</p>", html, re.S)
        assert answer is not None and "Lisbon" in answer.group(1), html
        link = reverse("dashboard:memory", args=[cited.id])
        assert f'<a class="citation" href="{link}" aria-label="Source 1">[1]</a>' in answer.group(1)
        assert f'data-cited="{cited.id}"' in html
        assert "Oslo" not in html and "bees" not in html

    def test_it_says_when_nothing_supports_an_answer(self, alice_client, alice, make_memory):
        (vector,) = embed(["I keep bees in my garden."])
        make_memory(alice, "I keep bees in my garden.", embedding=vector)
        html = _html(alice_client.get(reverse("dashboard:ask"), {"q": "What is my passport number?"}))
        assert "Nothing in your memory supports an answer" in html
        assert 'class="citation"' not in html

    def test_a_question_over_the_limit_is_refused_in_place(self, alice_client):
        response = alice_client.get(reverse("dashboard:ask"), {"q": "why " * 1001})
        assert response.status_code == 400
        html = _html(response)
        assert 'id="id_ask_q_error"' in html and 'aria-invalid="true"' in html


class TestAgents:
    def test_it_counts_what_each_app_saved_and_lists_its_memories_and_jobs(
        self, alice_client, alice, make_memory
    ):
        claude = _connected(alice, "Claude")
        _connected(alice, "VS Code")
        for text in ("Likes tea", "Works at Siemens"):
            memory = make_memory(alice, text)
            memory.agent = claude
            memory.save(update_fields=["agent"])
            Source.objects.filter(id=memory.source_id).update(agent=claude)
        make_memory(alice, "Saved from the dashboard")
        job = Job.objects.create(owner=alice, space=memory.space, kind=Job.Kind.REMEMBER, agent=claude)
        html = _html(alice_client.get(reverse("dashboard:agents")))
        row = re.search(r"<tr>\s*<th scope=\"row\"><a [^>]*>Claude</a></th>(.*?)</tr>", html, re.S)
        assert row is not None, html
        cells = re.findall(r"<td>(.*?)</td>", row.group(1), re.S)
        assert cells[1:4] == ["2", "2", "1"], cells
        assert "VS Code" in html
        detail = _html(alice_client.get(reverse("dashboard:agent", args=[claude.id])))
        assert "Likes tea" in detail and "Works at Siemens" in detail
        assert "Saved from the dashboard" not in detail
        assert reverse("dashboard:job", args=[job.id]) in detail
        jobs = _html(alice_client.get(reverse("dashboard:jobs")))
        assert f'<a href="{reverse("dashboard:agent", args=[claude.id])}">Claude</a>' in jobs

    def test_pausing_refuses_the_apps_token_and_resuming_lets_it_back(self, alice_client, alice):
        application = _connected(alice)
        token = get_access_token_model().objects.get(application=application)
        token.resource = [resource_url(REST_PATH)]
        token.save()
        api = Client(HTTP_AUTHORIZATION=f"Bearer {token.token}")
        assert api.get("/api/v1/memories").status_code == 200
        response = alice_client.post(reverse("dashboard:agent-pause", args=[application.id]), follow=True)
        assert "Paused “Claude”" in _html(response) and "Resume Claude" in _html(response)
        refused = api.get("/api/v1/memories")
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "app_paused"
        alice_client.post(reverse("dashboard:agent-resume", args=[application.id]))
        assert api.get("/api/v1/memories").status_code == 200


class TestActivity:
    def test_it_filters_by_agent_action_and_date(self, alice_client, alice, make_memory):
        claude = _connected(alice)
        memory = make_memory(alice, "Likes tea")
        you = Actor.owner_acting(alice)
        agent = Actor(owner=alice, user=alice, agent_id=claude.id)
        audit_record(actor=you, action=AuditEvent.Action.PINNED, target_type="memory", target_id=memory.id)
        old = audit_record(
            actor=agent, action=AuditEvent.Action.CREATED, target_type="memory", target_id=memory.id
        )
        AuditEvent.objects.filter(id=old.id).update(created_at=timezone.now() - timedelta(days=40))

        def actions(**query: str) -> list[str]:
            html = _html(alice_client.get(reverse("dashboard:activity"), query))
            return re.findall(r"<td>(Pinned|Created)</td>", html)

        assert actions() == ["Pinned", "Created"]
        assert actions(who=str(claude.id)) == ["Created"]
        assert actions(who="you") == ["Pinned"]
        assert actions(action="pinned") == ["Pinned"]
        since = (timezone.localdate() - timedelta(days=7)).isoformat()
        assert actions(date_from=since) == ["Pinned"]
        assert actions(date_to=(timezone.localdate() - timedelta(days=30)).isoformat()) == ["Created"]

    def test_it_refuses_an_end_before_the_start_in_place(self, alice_client):
        response = alice_client.get(
            reverse("dashboard:activity"), {"date_from": "2026-05-02", "date_to": "2026-05-01"}
        )
        assert response.status_code == 400
        assert 'id="id_date_to_error"' in _html(response)

    def test_it_is_paginated(self, alice_client, alice):
        for _ in range(51):
            audit_record(
                actor=Actor.owner_acting(alice), action=AuditEvent.Action.EXPORTED, target_type="account"
            )
        first = _html(alice_client.get(reverse("dashboard:activity")))
        assert first.count("<td>Exported</td>") == 50 and "Page 1 of 2" in first
        second = _html(alice_client.get(reverse("dashboard:activity"), {"page": 2}))
        assert second.count("<td>Exported</td>") == 1


class TestOverview:
    def test_its_numbers_come_from_the_data(self, alice_client, alice, bob, make_memory):
        claude = _connected(alice)
        make_memory(alice, "Likes tea")
        episode = make_memory(alice, "Went sailing", kind="episode")
        episode.agent = claude
        episode.save(update_fields=["agent"])
        make_memory(alice, "Hidden", status="suppressed")
        make_memory(bob, "Bob's")
        data = alice_client.get(reverse("dashboard:overview-data")).json()
        assert data["total"] == 2
        assert {row["kind"]: row["memories"] for row in data["kinds"]} == {
            "fact": 1,
            "episode": 1,
            "foresight": 0,
        }
        assert sorted((row["agent"], row["memories"]) for row in data["agents"]) == [
            ("Claude", 1),
            ("You (no agent)", 1),
        ]
        assert len(data["days"]) == 30
        today = data["days"][-1]
        assert today["day"] == timezone.localdate().isoformat()
        assert today["memories"] == 3 and today["saves"] == 3 and today["active"] == 2
        assert data["days"][-2]["active"] == 0
        html = _html(alice_client.get(reverse("dashboard:overview")))
        assert "2 active memories" in html and 'data-overview-src="/overview/data.json"' in html
        assert "/static/dashboard/vendor/chart-4.6.1.umd.min.js" in html


class TestGraph:
    def test_it_draws_current_relations_and_links_each_to_its_evidence(
        self, alice_client, alice, make_memory
    ):
        relation, memory = _relation(alice, make_memory)
        old, _ = _relation(alice, make_memory, subject="Ana", obj="Porto")
        Relation.objects.filter(id=old.id).update(superseded_at=timezone.now(), superseded_by=relation)
        data = alice_client.get(reverse("dashboard:graph-data")).json()
        assert [edge["id"] for edge in data["edges"]] == [str(relation.id)]
        assert {node["name"] for node in data["nodes"]} == {"Ana", "Lisbon"}
        html = _html(alice_client.get(reverse("dashboard:graph")))
        evidence_url = reverse("dashboard:graph-relation", args=[relation.id])
        assert evidence_url in html and reverse("dashboard:graph-relation", args=[old.id]) not in html
        evidence = _html(alice_client.get(evidence_url))
        assert "Ana lives in Lisbon" in evidence
        assert reverse("dashboard:memory", args=[memory.id]) in evidence
        assert "Note: Ana lives in Lisbon" in evidence  # the source's own words
