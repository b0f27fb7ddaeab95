"""REST reads: GET /api/v1/memories, /memories/{id}, /jobs, /jobs/{id}.

Data is built with the ORM; requests go through the real authentication
(a logged-in session, or a personal access token).
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import User
from accounts.services import pat_create
from memories.models import Entity, Evidence, Job, Memory, Source, Space
from memories.selectors.spaces import space_default
from tests.helpers import link, oauth_app

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
ERROR_KEYS = {"code", "message", "retryable", "agent_action", "request_id"}


# --- builders (also used by test_spaces.py and test_export.py) -----------------------------


def default_space(owner: User) -> Space:
    space = space_default(owner=owner)
    assert space is not None
    return space


def make_source(
    owner: User, content: str = "I said something", *, space: Space | None = None, **fields: Any
) -> Source:
    return Source.objects.create(
        owner=owner,
        space=space or default_space(owner),
        origin="remember",
        content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
        **fields,
    )


def make_memory(
    owner: User,
    content: str = "Likes tea",
    *,
    space: Space | None = None,
    source: Source | None = None,
    evidence: bool = True,
    **fields: Any,
) -> Memory:
    space = space or default_space(owner)
    source = source or make_source(owner, f"source of {content}", space=space)
    fields.setdefault("kind", "fact")
    memory = Memory.objects.create(owner=owner, space=space, source=source, content=content, **fields)
    if evidence:
        Evidence.objects.create(owner=owner, source=source, memory=memory, recorded_at=memory.recorded_at)
    return memory


def make_job(owner: User, *, space: Space | None = None, **fields: Any) -> Job:
    fields.setdefault("kind", "remember")
    return Job.objects.create(owner=owner, space=space or default_space(owner), **fields)


def logged_in(user: User) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) >= ERROR_KEYS
    assert body["error"]["code"] == code
    return body["error"]


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


@pytest.fixture
def api(alice) -> APIClient:
    return logged_in(alice)


# --- list ---------------------------------------------------------------------------------


class TestMemoryList:
    def test_it_lists_newest_first_in_the_documented_shape(self, api, alice):
        agent = oauth_app("Claude", alice, "https://agent.example.com/cb")
        job = make_job(alice)
        entity = Entity.objects.create(
            owner=alice, space=default_space(alice), name="Berlin", normalized_name="berlin", type="Location"
        )
        older = make_memory(alice, "Lives in Paris", recorded_at=T0)
        newer = make_memory(
            alice,
            "Lives in Berlin",
            recorded_at=T0 + timedelta(hours=1),
            tags=["home"],
            agent=agent,
            job=job,
            valid_from=T0,
            embedding=[0.1] * 384,
            session_id=uuid.uuid4(),
        )
        link(newer, entity)

        response = api.get("/api/v1/memories")

        assert ids(response) == [str(newer.id), str(older.id)]
        body = response.json()
        assert body["next"] is None and body["previous"] is None
        row = body["results"][0]
        assert row == {
            "id": str(newer.id),
            "content": "Lives in Berlin",
            "kind": "fact",
            "category": None,
            "tags": ["home"],
            "entities": [{"id": str(entity.id), "name": "Berlin", "type": "Location"}],
            "status": "active",
            "pinned": False,
            "confidence": 0.9,
            "space": {"id": str(newer.space_id), "name": "Personal"},
            "clocks": {
                "occurred_at": None,
                "valid_from": "2025-03-01T09:00:00+00:00",
                "valid_until": None,
                "due_at": None,
                "stated_at": None,
                "starts_by": None,
                "recorded_at": "2025-03-01T10:00:00+00:00",
                "superseded_at": None,
                "superseded_by": None,
            },
            "provenance": {
                "source_id": str(newer.source_id),
                "job_id": str(job.id),
                "agent": {"id": agent.id, "name": "Claude"},
                "session_id": str(newer.session_id),
                # Built here without a segmenter: no span in its source.
                "span": None,
            },
            "evidence_count": 1,
        }
        assert "embedding" not in response.content.decode()

    def test_it_filters_by_kind(self, api, alice):
        make_memory(alice, "A fact", kind="fact")
        episode = make_memory(alice, "An episode", kind="episode")
        assert ids(api.get("/api/v1/memories", {"kind": "episode"})) == [str(episode.id)]

    def test_it_filters_by_tags_all_of_which_must_match(self, api, alice):
        both = make_memory(alice, "both", tags=["work", "urgent"], recorded_at=T0)
        make_memory(alice, "work only", tags=["work"], recorded_at=T0 + timedelta(minutes=1))
        assert ids(api.get("/api/v1/memories?tag=work&tag=urgent")) == [str(both.id)]
        assert len(ids(api.get("/api/v1/memories?tag=work"))) == 2

    def test_it_filters_by_status_including_suppressed_and_all(self, api, alice):
        active = make_memory(alice, "active", recorded_at=T0 + timedelta(minutes=1))
        hidden = make_memory(alice, "hidden", status="suppressed", recorded_at=T0)
        assert ids(api.get("/api/v1/memories")) == [str(active.id)]
        assert ids(api.get("/api/v1/memories", {"status": "suppressed"})) == [str(hidden.id)]
        assert ids(api.get("/api/v1/memories", {"status": "all"})) == [str(active.id), str(hidden.id)]

    def test_it_filters_by_pinned(self, api, alice):
        pinned = make_memory(alice, "pinned", pinned=True)
        loose = make_memory(alice, "loose")
        assert ids(api.get("/api/v1/memories", {"pinned": "true"})) == [str(pinned.id)]
        assert ids(api.get("/api/v1/memories", {"pinned": "false"})) == [str(loose.id)]

    def test_it_filters_by_space(self, api, alice):
        work = Space.objects.create(owner=alice, name="Work")
        in_work = make_memory(alice, "in work", space=work)
        make_memory(alice, "personal")
        assert ids(api.get("/api/v1/memories", {"space": str(work.id)})) == [str(in_work.id)]

    def test_it_refuses_a_space_that_is_not_the_callers(self, api, bob):
        response = api.get("/api/v1/memories", {"space": str(default_space(bob).id)})
        assert_error(response, 404, "space_not_found")

    def test_it_filters_by_recorded_range_half_open(self, api, alice):
        early = make_memory(alice, "early", recorded_at=T0)
        middle = make_memory(alice, "middle", recorded_at=T0 + timedelta(days=1))
        make_memory(alice, "late", recorded_at=T0 + timedelta(days=2))
        response = api.get(
            "/api/v1/memories",
            {"recorded_from": T0.isoformat(), "recorded_to": (T0 + timedelta(days=2)).isoformat()},
        )
        assert ids(response) == [str(middle.id), str(early.id)]
        assert ids(api.get("/api/v1/memories", {"recorded_to": "2025-03-02"})) == [str(early.id)]

    def test_it_filters_by_occurred_range_over_every_world_clock(self, api, alice):
        in_march = T0 + timedelta(days=5)
        episode = make_memory(alice, "went", kind="episode", occurred_at=in_march, recorded_at=T0)
        fact = make_memory(alice, "holds", valid_from=in_march, recorded_at=T0 + timedelta(seconds=1))
        plan = make_memory(
            alice, "will", kind="foresight", due_at=in_march, recorded_at=T0 + timedelta(seconds=2)
        )
        make_memory(alice, "april", kind="episode", occurred_at=datetime(2025, 4, 2, tzinfo=UTC))
        make_memory(alice, "timeless")
        response = api.get("/api/v1/memories", {"occurred_from": "2025-03-01", "occurred_to": "2025-04-01"})
        assert ids(response) == [str(plan.id), str(fact.id), str(episode.id)]

    def test_it_leaves_out_superseded_memories_unless_asked(self, api, alice):
        new = make_memory(alice, "Lives in Berlin", recorded_at=T0 + timedelta(days=10))
        old = make_memory(
            alice, "Lives in Paris", recorded_at=T0, superseded_at=T0 + timedelta(days=10), superseded_by=new
        )
        assert ids(api.get("/api/v1/memories")) == [str(new.id)]
        assert ids(api.get("/api/v1/memories", {"include_superseded": "true"})) == [str(new.id), str(old.id)]

    def test_it_shows_what_was_known_at_a_time(self, api, alice):
        switch = T0 + timedelta(days=10)
        new = make_memory(alice, "Lives in Berlin", recorded_at=switch)
        old = make_memory(alice, "Lives in Paris", recorded_at=T0, superseded_at=switch, superseded_by=new)
        before = (switch - timedelta(days=1)).isoformat()
        after = (switch + timedelta(days=1)).isoformat()
        assert ids(api.get("/api/v1/memories", {"at": before})) == [str(old.id)]
        assert ids(api.get("/api/v1/memories", {"at": after})) == [str(new.id)]
        assert ids(api.get("/api/v1/memories", {"at": (T0 - timedelta(days=1)).isoformat()})) == []

    def test_it_counts_distinct_claimants_that_support_it_as_evidence(self, api, alice):
        memory = make_memory(alice, "Likes tea", source=make_source(alice, "I like tea", claimant="user"))
        for content, claimant, stance in (
            ("Tea, please", "agent:7", "supports"),  # another claimant: counts
            ("I like tea, really", "user", "supports"),  # the same claimant again: does not
            ("Tea for her", "agent:7", "supports"),  # nor for an agent
            ("She hates tea", "agent:8", "contradicts"),  # a contradiction is not support
        ):
            Evidence.objects.create(
                owner=alice,
                source=make_source(alice, content, claimant=claimant),
                memory=memory,
                stance=stance,
            )
        assert api.get("/api/v1/memories").json()["results"][0]["evidence_count"] == 2

    def test_it_loads_a_page_in_a_fixed_number_of_queries(self, api, alice, django_assert_max_num_queries):
        agent = oauth_app("Claude", alice, "https://agent.example.com/cb")
        space = default_space(alice)
        for n in range(20):
            memory = make_memory(alice, f"memory {n}", agent=agent, recorded_at=T0 + timedelta(minutes=n))
            link(
                memory,
                Entity.objects.create(
                    owner=alice, space=space, name=f"E{n}", normalized_name=f"e{n}", type="Concept"
                ),
            )
        # session + user, the page, its entities: not one query per row.
        with django_assert_max_num_queries(6):
            response = api.get("/api/v1/memories")
        assert len(ids(response)) == 20


class TestCursorPagination:
    def _walk(self, api, url: str, direction: str) -> list[list[str]]:
        pages = []
        while url:
            response = api.get(url)
            pages.append(ids(response))
            url = response.json()[direction]
        return pages

    def test_it_pages_across_three_pages_without_duplicates_or_gaps(self, api, alice):
        # Ties on recorded_at on purpose: the id breaks them.
        memories = [
            make_memory(alice, f"m{n}", recorded_at=T0 + timedelta(minutes=n // 3)) for n in range(45)
        ]
        expected = [str(m.id) for m in sorted(memories, key=lambda m: (m.recorded_at, m.id), reverse=True)]

        pages = self._walk(api, "/api/v1/memories?page_size=20", "next")

        assert [len(page) for page in pages] == [20, 20, 5]
        assert [row for page in pages for row in page] == expected

    def test_it_pages_back_with_previous(self, api, alice):
        for n in range(45):
            make_memory(alice, f"m{n}", recorded_at=T0 + timedelta(minutes=n // 2))
        first = api.get("/api/v1/memories?page_size=20").json()
        second = api.get(first["next"]).json()
        third = api.get(second["next"]).json()
        assert third["next"] is None

        back_to_second = api.get(third["previous"]).json()
        back_to_first = api.get(back_to_second["previous"]).json()

        assert [r["id"] for r in back_to_second["results"]] == [r["id"] for r in second["results"]]
        assert [r["id"] for r in back_to_first["results"]] == [r["id"] for r in first["results"]]
        assert back_to_first["previous"] is None

    def test_it_keeps_filters_in_the_links_and_stays_stable_when_rows_arrive(self, api, alice):
        for n in range(5):
            make_memory(alice, f"e{n}", kind="episode", recorded_at=T0 + timedelta(minutes=n))
        make_memory(alice, "a fact", kind="fact", recorded_at=T0)
        first = api.get("/api/v1/memories", {"kind": "episode", "page_size": 2}).json()
        assert "kind=episode" in first["next"] and "page_size=2" in first["next"]
        make_memory(alice, "newest", kind="episode", recorded_at=T0 + timedelta(days=1))

        rest = self._walk(api, first["next"], "next")

        seen = [r["id"] for r in first["results"]] + [row for page in rest for row in page]
        assert len(seen) == len(set(seen)) == 5


class TestStrictParameters:
    def test_it_refuses_an_unknown_parameter(self, api, alice):
        error = assert_error(api.get("/api/v1/memories", {"tags": "work"}), 400, "unknown_parameter")
        assert error["details"]["parameter"] == "tags"
        assert "tag" in error["details"]["allowed"]

    @pytest.mark.parametrize(
        ("name", "value"),
        [
            ("recorded_from", "yesterday"),
            ("recorded_to", "2025-13-01"),
            ("occurred_from", "01/03/2025"),
            ("at", "now"),
            ("page_size", "0"),
            ("page_size", "101"),
            ("page_size", "true"),
            ("page_size", "-1"),
            ("page_size", "2.5"),
            ("kind", "opinion"),
            ("status", "deleted"),
            ("pinned", "yes"),
            ("include_superseded", "1"),
            ("space", "work"),
            # Only the canonical 8-4-4-4-12 form is an id (Python's uuid.UUID takes all of these).
            ("space", "urn:uuid:0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51"),
            ("space", "{0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51}"),
            ("space", "0b0c6c395d5c4a578d0a6e1f1bde0c51"),
            ("cursor", "not-a-cursor"),
            ("tag", ""),
        ],
    )
    def test_it_refuses_a_bad_value_naming_the_parameter(self, api, alice, name, value):
        error = assert_error(api.get("/api/v1/memories", {name: value}), 400, "invalid_parameter")
        assert error["details"]["parameter"] == name

    @pytest.mark.parametrize(
        "content",
        [
            b'["n", "2025-03-01T09:00:00+00:00", 7]',
            b'{"a": 1}',
            b'["x", "now", "id"]',
            b"\xff",
            b"[]",
            b'{"side": "n", "at": "2025-03-01T09:00:00+00:00", "id": 7}',
            b'{"side": "x", "at": "2025-03-01T09:00:00+00:00", "id": "%s"}' % str(uuid.uuid4()).encode(),
            b'{"side": "n", "at": "2025-03-01T09:00:00", "id": "%s"}' % str(uuid.uuid4()).encode(),
            b"[" * 2000,  # nested deeper than the JSON parser recurses
        ],
    )
    def test_it_refuses_a_forged_cursor(self, api, alice, content):
        cursor = base64.urlsafe_b64encode(content).decode()
        error = assert_error(api.get("/api/v1/memories", {"cursor": cursor}), 400, "invalid_parameter")
        assert error["details"]["parameter"] == "cursor"

    def test_it_refuses_a_single_valued_parameter_given_twice(self, api, alice):
        error = assert_error(api.get("/api/v1/memories?kind=fact&kind=episode"), 400, "invalid_parameter")
        assert error["details"]["parameter"] == "kind"

    def test_it_refuses_an_inverted_range(self, api, alice):
        response = api.get("/api/v1/memories", {"recorded_from": "2025-03-02", "recorded_to": "2025-03-01"})
        assert assert_error(response, 400, "invalid_parameter")["details"]["parameter"] == "recorded_to"

    def test_it_reads_an_offset_whose_plus_was_not_url_encoded(self, api, alice):
        memory = make_memory(alice, "at nine UTC", recorded_at=T0)
        # "+01:00" sent raw arrives as " 01:00"; 10:00+01:00 is 09:00 UTC.
        assert ids(api.get("/api/v1/memories?recorded_from=2025-03-01T10:00:00+01:00")) == [str(memory.id)]
        assert ids(api.get("/api/v1/memories?recorded_from=2025-03-01T10:00:01+01:00")) == []

    def test_it_accepts_page_size_bounds(self, api, alice):
        make_memory(alice, "one")
        assert len(ids(api.get("/api/v1/memories", {"page_size": "1"}))) == 1
        assert len(ids(api.get("/api/v1/memories", {"page_size": "100"}))) == 1

    def test_it_refuses_parameters_on_a_detail_endpoint(self, api, alice):
        memory = make_memory(alice)
        assert_error(api.get(f"/api/v1/memories/{memory.id}", {"full": "1"}), 400, "unknown_parameter")


# --- detail -------------------------------------------------------------------------------


class TestMemoryDetail:
    def test_it_shows_the_history_chain_both_ways(self, api, alice):
        v3 = make_memory(alice, "Lives in Rome", recorded_at=T0 + timedelta(days=20))
        v2 = make_memory(
            alice,
            "Lives in Berlin",
            recorded_at=T0 + timedelta(days=10),
            superseded_at=v3.recorded_at,
            superseded_by=v3,
        )
        v1 = make_memory(
            alice, "Lives in Paris", recorded_at=T0, superseded_at=v2.recorded_at, superseded_by=v2
        )
        make_memory(alice, "Likes tea")

        history = api.get(f"/api/v1/memories/{v2.id}").json()["history"]
        assert history == [
            {
                "id": str(v1.id),
                "content": "Lives in Paris",
                "recorded_at": v1.recorded_at.isoformat(),
                "superseded_at": v2.recorded_at.isoformat(),
                "superseded_by": str(v2.id),
                "valid_from": v1.recorded_at.isoformat(),
                "valid_until": None,
                "source_id": str(v1.source_id) if v1.source_id else None,
            },
            {
                "id": str(v3.id),
                "content": "Lives in Rome",
                "recorded_at": v3.recorded_at.isoformat(),
                "superseded_at": None,
                "superseded_by": None,
                "valid_from": v3.recorded_at.isoformat(),
                "valid_until": None,
                "source_id": str(v3.source_id) if v3.source_id else None,
            },
        ]
        assert [h["id"] for h in api.get(f"/api/v1/memories/{v3.id}").json()["history"]] == [
            str(v1.id),
            str(v2.id),
        ]

    def test_it_counts_evidence_by_distinct_claimant_and_lists_every_source(self, api, alice):
        memory = make_memory(
            alice, "Likes tea", recorded_at=T0, source=make_source(alice, "Tea", claimant="user")
        )
        second = make_source(alice, "Tea again", claimant="agent:3")
        Evidence.objects.create(owner=alice, source=second, memory=memory, recorded_at=T0 + timedelta(days=1))
        Evidence.objects.create(
            owner=alice,
            source=second,
            memory=memory,
            stance="contradicts",
            recorded_at=T0 + timedelta(days=2),
        )

        body = api.get(f"/api/v1/memories/{memory.id}").json()

        assert body["evidence_count"] == 2
        assert [(e["source_id"], e["stance"]) for e in body["evidence"]] == [
            (str(memory.source_id), "supports"),
            (str(second.id), "supports"),
            (str(second.id), "contradicts"),
        ]

    def test_it_shows_the_first_500_characters_of_the_source(self, api, alice):
        source = make_source(alice, "x" * 600 + "tail")
        memory = make_memory(alice, "Something", source=source)
        excerpt = api.get(f"/api/v1/memories/{memory.id}").json()["source_excerpt"]
        assert excerpt == "x" * 500

    def test_it_shows_no_excerpt_of_a_purged_source(self, api, alice):
        source = make_source(alice, "secret words", purged_at=T0)
        memory = make_memory(alice, "Something", source=source)
        assert api.get(f"/api/v1/memories/{memory.id}").json()["source_excerpt"] == ""

    def test_it_shows_a_suppressed_memory_to_its_owner(self, api, alice):
        memory = make_memory(alice, "hidden", status="suppressed")
        assert api.get(f"/api/v1/memories/{memory.id}").json()["status"] == "suppressed"

    def test_it_answers_memory_not_found_for_an_unknown_id(self, api, alice):
        assert_error(api.get(f"/api/v1/memories/{uuid.uuid4()}"), 404, "memory_not_found")


# --- jobs ---------------------------------------------------------------------------------


class TestJobs:
    def test_it_lists_jobs_newest_first_with_their_memory_ids(self, api, alice):
        old = make_job(alice, created_at=T0)
        new = make_job(
            alice,
            created_at=T0 + timedelta(hours=1),
            status="succeeded",
            attempts=1,
            started_at=T0 + timedelta(hours=1),
            finished_at=T0 + timedelta(hours=1, seconds=2, milliseconds=5),
        )
        memory = make_memory(alice, "from the job", job=new)

        response = api.get("/api/v1/jobs")

        assert ids(response) == [str(new.id), str(old.id)]
        row = response.json()["results"][0]
        assert row["memory_ids"] == [str(memory.id)]
        assert row["duration_ms"] == 2005 and row["error"] is None and row["status"] == "succeeded"
        assert "memories" not in row

    def test_it_filters_jobs_by_status(self, api, alice):
        failed = make_job(alice, status="failed", error_code="extraction_failed", error_message="It broke.")
        make_job(alice, status="queued")
        response = api.get("/api/v1/jobs", {"status": "failed"})
        assert ids(response) == [str(failed.id)]
        assert response.json()["results"][0]["error"] == {"code": "extraction_failed", "message": "It broke."}
        assert_error(api.get("/api/v1/jobs", {"status": "done"}), 400, "invalid_parameter")
        assert_error(api.get("/api/v1/jobs", {"kind": "remember"}), 400, "unknown_parameter")

    def test_it_pages_jobs(self, api, alice):
        jobs = [make_job(alice, created_at=T0 + timedelta(minutes=n)) for n in range(5)]
        first = api.get("/api/v1/jobs", {"page_size": 3}).json()
        second = api.get(first["next"]).json()
        got = [r["id"] for r in first["results"] + second["results"]]
        assert got == [str(j.id) for j in reversed(jobs)] and second["next"] is None

    def test_it_shows_a_job_with_its_memories(self, api, alice):
        job = make_job(alice, status="running", started_at=T0)
        first = make_memory(alice, "first", job=job, recorded_at=T0)
        second = make_memory(alice, "second", job=job, recorded_at=T0 + timedelta(seconds=1))
        make_memory(alice, "another job's")

        body = api.get(f"/api/v1/jobs/{job.id}").json()

        assert body["id"] == str(job.id) and body["status"] == "running" and body["duration_ms"] is None
        assert body["memory_ids"] == [str(first.id), str(second.id)]
        assert [m["id"] for m in body["memories"]] == [str(first.id), str(second.id)]
        assert body["memories"][0]["content"] == "first"

    def test_it_answers_job_not_found_for_an_unknown_id(self, api, alice):
        assert_error(api.get(f"/api/v1/jobs/{uuid.uuid4()}"), 404, "job_not_found")


# --- authentication and scopes ----------------------------------------------------------


READ_PATHS = ["/api/v1/memories", "/api/v1/jobs", "/api/v1/spaces", "/api/v1/export"]


class TestAuthentication:
    @pytest.mark.parametrize("path", READ_PATHS)
    def test_it_refuses_an_anonymous_request_with_401(self, client, alice, path):
        response = client.get(path)
        error = assert_error(response, 401, "not_authenticated")
        assert error["request_id"] == response["X-Request-ID"]
        assert response["WWW-Authenticate"].startswith("Bearer")

    def test_it_refuses_anonymous_detail_requests_with_401(self, client, alice):
        memory = make_memory(alice)
        job = make_job(alice)
        for path in (
            f"/api/v1/memories/{memory.id}",
            f"/api/v1/jobs/{job.id}",
            f"/api/v1/spaces/{memory.space_id}",
        ):
            assert_error(client.get(path), 401, "not_authenticated")

    def test_it_serves_a_personal_access_token_with_the_read_scope(self, client, alice):
        memory = make_memory(alice)
        _, raw = pat_create(user=alice, name="cli", scopes=["memory:read"])
        response = client.get("/api/v1/memories", HTTP_AUTHORIZATION=f"Bearer {raw}")
        assert ids(response) == [str(memory.id)]

    def test_it_refuses_a_token_without_the_read_scope(self, client, alice):
        _, raw = pat_create(user=alice, name="writer", scopes=["memory:write"])
        for path in READ_PATHS:
            response = client.get(path, HTTP_AUTHORIZATION=f"Bearer {raw}")
            assert (
                assert_error(response, 403, "insufficient_scope")["details"]["required_scope"]
                == "memory:read"
            )


# --- the outsider -----------------------------------------------------------------------


class TestOutsider:
    @pytest.fixture
    def alices(self, alice) -> dict[str, Any]:
        job = make_job(alice)
        memory = make_memory(alice, "Alice's secret", job=job)
        return {"memory": memory, "job": job}

    def test_it_shows_charlie_none_of_alices_memories(self, alice, charlie, alices):
        charlie_api = logged_in(charlie)
        for status in ("active", "suppressed", "all"):
            assert (
                ids(charlie_api.get("/api/v1/memories", {"status": status, "include_superseded": "true"}))
                == []
            )
        assert "secret" not in charlie_api.get("/api/v1/memories").content.decode()

    def test_it_answers_memory_not_found_for_alices_memory(self, alice, charlie, alices):
        response = logged_in(charlie).get(f"/api/v1/memories/{alices['memory'].id}")
        assert_error(response, 404, "memory_not_found")
        assert "secret" not in response.content.decode()

    def test_it_shows_charlie_none_of_alices_jobs(self, alice, charlie, alices):
        assert ids(logged_in(charlie).get("/api/v1/jobs")) == []

    def test_it_answers_job_not_found_for_alices_job(self, alice, charlie, alices):
        assert_error(logged_in(charlie).get(f"/api/v1/jobs/{alices['job'].id}"), 404, "job_not_found")

    def test_it_refuses_charlie_a_filter_on_alices_space(self, alice, charlie, alices):
        response = logged_in(charlie).get("/api/v1/memories", {"space": str(alices["memory"].space_id)})
        assert_error(response, 404, "space_not_found")

    def test_it_gives_charlie_no_cursor_into_alices_rows(self, alice, charlie, alices):
        for n in range(3):
            make_memory(alice, f"more {n}", recorded_at=T0 + timedelta(minutes=n))
        next_link = logged_in(alice).get("/api/v1/memories", {"page_size": 1}).json()["next"]
        assert ids(logged_in(charlie).get(next_link)) == []
