"""The round trip of our own export (issue 44) attacked from the outside, as a hostile or careless
person would: an export edited to name another owner's rows, memories pointing at the wrong source,
duplicate ids, successors that are the memory itself or form a cycle, clocks out of order or out of
range, thousands of spaces, labels no save would accept, claims with names no `relate` would take,
the same file into the same account, undo after an edit, undo beside a running import, and a
forgotten memory that must stay out of every answer.

Each attack imports through REST and runs the import with the real worker's code (job_process, in
this process, as test_import_attacks.py does). The rules every answer keeps: a clear error in the one
shape or a clean import; nothing of another owner seen or changed; an undo that removes what the
import made and leaves the rest; limits that hold. test_import_attacks.py holds the attacks on the
other formats (and on requests, archives and tokens), not repeated here."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from accounts.models import User
from memories.limits import SPACES_MAX, TAG_MAX_LENGTH, TAGS_MAX
from memories.models import Entity, Evidence, Import, Job, Memory, MemoryEntity, Relation, Source, Space
from memories.worker.run import job_process
from tests.helpers import READ, error_of, pat_client, words_of
from tests.memories.import_fixtures import post_file, stored_import

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("no_worker_broker")]

Record = dict[str, Any]
PIN = "My old bank PIN is 4821."
OWNED = (Memory, Relation, Evidence, Source, Entity, MemoryEntity, Space, Import)


# --- a history, its export, and the import of an edited copy ---------------------------------------


def _save(client: Any, content: str, **fields: Any) -> str:
    response = client.post("/api/v1/memories", {"content": content, **fields}, format="json")
    assert response.status_code in (201, 202), response.json()
    job_id = response.json()["job"]["id"]
    job_process(job_id=job_id)
    job = Job.objects.get(id=job_id)
    assert job.status == Job.Status.SUCCEEDED, (content, job.error_code)
    memory = Memory.objects.filter(job_id=job_id).order_by("recorded_at").first()
    assert memory is not None
    return str(memory.id)


def _operation(client: Any, name: str, **arguments: Any) -> Any:
    response = client.post(f"/api/v1/operations/{name}", arguments, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def _history(user: User) -> Any:
    """A small varied history: a fact replaced by a move, a tagged memory, another space, a pinned
    and a forgotten memory, and `relate` claims (one replaced by a later one)."""
    client = pat_client(user)
    work = client.post("/api/v1/spaces", {"name": "Work"}, format="json").json()["id"]
    _save(client, "I live in Paris with my sister.", tags=["home"])
    _save(client, "I moved to Berlin last week.")
    _save(client, "I work at Siemens as an engineer.", space=work)
    pinned = _save(client, "My passport number is X1234567.")
    forgotten = _save(client, PIN)
    assert client.post(f"/api/v1/memories/{pinned}/pin").status_code == 200
    response = client.post(
        f"/api/v1/memories/{forgotten}/suppress", {"reason_code": "private"}, format="json"
    )
    assert response.status_code == 200
    _operation(client, "relate", source="Alex", target="Paris", relation_type="lives_in")
    _operation(client, "relate", source="Alex", target="Berlin", relation_type="lives_in")
    return client


def _export(client: Any) -> list[Record]:
    response = client.get("/api/v1/export")
    assert response.status_code == 200
    return [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]


_CACHED: list[list[Record]] = []


def _exported() -> list[Record]:
    """A copy of one export of `_history` (made once: a file, whatever its rows became since)."""
    if not _CACHED:
        user = User.objects.create_user(email="exporter@example.com", password="x" * 20)
        _CACHED.append(_export(_history(user)))
        user.delete()
    return json.loads(json.dumps(_CACHED[0]))


def _file(records: list[Record]) -> bytes:
    return "\n".join(json.dumps(record) for record in records).encode()


def _of(records: list[Record], kind: str, **match: Any) -> list[Record]:
    return [r for r in records if r["type"] == kind and all(r.get(k) == v for k, v in match.items())]


def _memory(records: list[Record], content: str) -> Record:
    found = [r for r in _of(records, "memory") if r["content"] == content]
    assert found, content
    return found[0]


def _import(owner: User, data: bytes, client: Any = None) -> Import:
    """The file imported through REST, run by the worker's code; the import as stored."""
    made: Import = stored_import(
        owner, post_file(client or pat_client(owner), data, "deeprecall-export.jsonl")
    )
    return made


def _shown(made: Import, client: Any) -> dict[str, Any]:
    response = client.get(f"/api/v1/imports/{made.id}")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()["import"]
    return body


def _rows(owner: User) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the owner, with the fields an import could change."""
    return {
        "memories": sorted(
            Memory.objects.filter(owner=owner).values_list(
                "id", "content", "tags", "pinned", "status", "superseded_at", "superseded_by_id", "space_id"
            )
        ),
        "relations": sorted(
            Relation.objects.filter(owner=owner).values_list(
                "id", "superseded_at", "superseded_by_id", "invalidated_at", "space_id"
            )
        ),
        "sources": sorted(Source.objects.filter(owner=owner).values_list("id", "content", "space_id")),
        "entities": sorted(Entity.objects.filter(owner=owner).values_list("id", "name", "space_id")),
        "spaces": sorted(Space.objects.filter(owner=owner).values_list("id", "name")),
    }


def _counts(owner: User) -> tuple[int, ...]:
    return tuple(model.objects.filter(owner=owner).count() for model in OWNED[:-1])


def _undo(made: Import, client: Any) -> None:
    response = client.post(f"/api/v1/imports/{made.id}/undo")
    assert response.status_code == 200, response.content[:500]


def _recall(client: Any, query: str) -> str:
    return words_of(_operation(client, "recall", query=query))


# --- another owner's ids ------------------------------------------------------------------------


class TestAnotherOwnersIds:
    def test_every_id_of_the_file_renamed_to_alices_rows_touches_none_and_gives_bob_new_rows(
        self, alice, bob
    ):
        alice_client = _history(alice)
        records = _export(alice_client)
        before = _rows(alice)
        # Every id of the file made one of Alice's ids of another kind, so no id maps to its own row.
        theirs = {
            "memory": [str(i) for i in Memory.objects.filter(owner=alice).values_list("id", flat=True)],
            "relation": [str(i) for i in Relation.objects.filter(owner=alice).values_list("id", flat=True)],
        }
        for record in _of(records, "memory"):
            record["clocks"]["superseded_by"] = theirs["memory"][0]
        for record in _of(records, "relation"):
            record["superseded_by"] = theirs["relation"][0]
        made = _import(bob, _file(records))

        assert _rows(alice) == before
        mine = {
            str(i)
            for model in (Memory, Relation, Source, Entity, Space)
            for i in model.objects.filter(owner=bob).values_list("id", flat=True)
        }
        alices = {
            str(i)
            for model in (Memory, Relation, Source, Entity, Space)
            for i in model.objects.filter(owner=alice).values_list("id", flat=True)
        }
        assert mine and not mine & alices
        # Nothing of Bob's points at a row of Alice's.
        assert not Memory.objects.filter(owner=bob, superseded_by__owner=alice).exists()
        assert not Relation.objects.filter(owner=bob, superseded_by__owner=alice).exists()
        assert not Memory.objects.filter(owner=bob, space__owner=alice).exists()
        assert made.restored["memories"] > 0

    def test_the_answer_does_not_say_whether_another_owners_ids_exist(self, alice, bob):
        """The same file, once with Alice's ids and once with ids nobody has: Bob sees the same
        answer (counts, skips, states), so the import cannot be used to probe for ids."""
        _history(alice)
        records = _exported()
        real = [str(i) for i in Memory.objects.filter(owner=alice).values_list("id", flat=True)]
        real_sources = [str(i) for i in Source.objects.filter(owner=alice).values_list("id", flat=True)]

        def renamed(ids: list[str], source_ids: list[str]) -> bytes:
            edited = json.loads(json.dumps(records))
            old_sources = [r["id"] for r in _of(edited, "source")]
            mapping = dict(zip(old_sources, source_ids, strict=False))
            for record in _of(edited, "source"):
                record["id"] = mapping.get(record["id"], record["id"])
            for record, new in zip(_of(edited, "memory"), ids, strict=False):
                record["id"] = new
                record["provenance"]["source_id"] = mapping.get(
                    record["provenance"]["source_id"], record["provenance"]["source_id"]
                )
            for record in _of(edited, "relation"):
                for item in record["evidence"]:
                    item["source_id"] = mapping.get(item["source_id"], item["source_id"])
            return _file(edited)

        client = pat_client(bob)
        first = _shown(_import(bob, renamed(real, real_sources), client), client)
        _undo(Import.objects.get(id=first["id"]), client)
        fake = [f"00000000-0000-4000-8000-{n:012d}" for n in range(len(real))]
        fake_sources = [f"00000000-0000-4000-9000-{n:012d}" for n in range(len(real_sources))]
        second = _shown(_import(bob, renamed(fake, fake_sources), client), client)
        assert (first["items"], first["restored"]) == (second["items"], second["restored"])


# --- sources and ids that do not fit -------------------------------------------------------------


class TestPointers:
    def test_a_memory_pointing_at_another_items_source_gets_no_states_of_the_other(self, alice):
        records = _exported()
        passport = _memory(records, "My passport number is X1234567.")
        ramen_source = _memory(records, "I live in Paris with my sister.")["provenance"]["source_id"]
        # The pinned memory's record now claims the Paris memory's source: its pin must not land on
        # the Paris memory (the words differ).
        passport["provenance"]["source_id"] = ramen_source
        made = _import(alice, _file(records))
        assert not Memory.objects.get(owner=alice, content="I live in Paris with my sister.").pinned
        assert made.restored["not_rebuilt"] == 1

    @pytest.mark.parametrize("pointer", [None, "", "no-such-source", 12, {"x": 1}, ["a"]])
    def test_a_memory_pointing_at_nothing_lends_its_states_to_no_memory(self, alice, pointer):
        records = _exported()
        _memory(records, "My passport number is X1234567.")["provenance"]["source_id"] = pointer
        made = _import(alice, _file(records))
        # Its words come back from their source; its pin, which no memory can be paired with, not.
        assert made.items_failed == 0
        assert _current(alice, "My passport number is X1234567.").pinned is False
        assert not Memory.objects.filter(owner=alice, pinned=True).exists()

    def test_a_memory_pointing_at_a_source_of_another_space_stays_in_its_sources_space(self, alice):
        records = _exported()
        work = _of(records, "space", name="Work")[0]["id"]
        _memory(records, "I live in Paris with my sister.")["space_id"] = work
        _import(alice, _file(records))
        memory = Memory.objects.get(owner=alice, content="I live in Paris with my sister.")
        assert memory.space.is_default

    def test_duplicate_memory_ids_apply_one_state_and_do_not_fail(self, alice):
        records = _exported()
        paris = _memory(records, "I live in Paris with my sister.")
        twin = {**json.loads(json.dumps(paris)), "tags": ["twin"], "pinned": True}
        records.insert(records.index(paris) + 1, twin)
        made = _import(alice, _file(records))
        memory = Memory.objects.get(owner=alice, content="I live in Paris with my sister.")
        # The first record of an id is the memory; a second of the same id is an edit's leftover.
        assert memory.tags == ["home"] and not memory.pinned
        assert made.items_failed == 0

    def test_duplicate_source_ids_store_one_source(self, alice):
        records = _exported()
        source = _of(records, "source", origin="rest")[0]
        records.insert(records.index(source) + 1, {**source, "content": "I have a dog named Rex."})
        made = _import(alice, _file(records))
        assert Source.objects.filter(owner=alice, source_ref=source["id"]).count() == 1
        assert made.skipped_reasons.get("duplicate_in_file") == 1


# --- successors and clocks ------------------------------------------------------------------------


def _current(owner: User, content: str) -> Memory:
    return Memory.objects.get(owner=owner, content=content)


class TestSuccessors:
    def test_a_memory_replaced_by_itself_stays_current(self, alice):
        records = _exported()
        berlin = _memory(records, "I moved to Berlin last week.")
        berlin["clocks"]["superseded_by"] = berlin["id"]
        berlin["clocks"]["superseded_at"] = berlin["clocks"]["recorded_at"]
        _import(alice, _file(records))
        memory = _current(alice, "I moved to Berlin last week.")
        assert memory.superseded_by_id != memory.id and memory.superseded_at is None

    def test_two_memories_replacing_each_other_leave_one_current(self, alice):
        records = _exported()
        paris, berlin = (
            _memory(records, "I live in Paris with my sister."),
            _memory(records, "I moved to Berlin last week."),
        )
        berlin["clocks"]["superseded_by"] = paris["id"]
        berlin["clocks"]["superseded_at"] = berlin["clocks"]["recorded_at"]
        _import(alice, _file(records))
        # Neither link is taken: the engine's stands, the move replacing the old home.
        assert _current(alice, berlin["content"]).superseded_at is None
        replaced = _current(alice, paris["content"]).superseded_by
        assert replaced is not None and replaced.content == berlin["content"]

    def test_relations_replacing_each_other_or_themselves_leave_one_current(self, alice):
        records = _exported()
        relations = _of(records, "relation")
        assert len(relations) == 2
        relations[0]["superseded_by"], relations[1]["superseded_by"] = relations[1]["id"], relations[0]["id"]
        relations[0]["superseded_at"] = relations[1]["superseded_at"] = relations[0]["recorded_at"]
        _import(alice, _file(records))
        rows = list(Relation.objects.filter(owner=alice))
        assert len(rows) == 2 and sum(1 for r in rows if r.superseded_at is None) == 1
        assert all(r.superseded_by_id != r.id for r in rows)


NOW_PLUS_YEARS = (timezone.now() + timedelta(days=3650)).isoformat()


class TestClocks:
    @pytest.mark.parametrize(
        "value",
        [
            "9999-12-31T23:59:59+00:00",
            NOW_PLUS_YEARS,
            "0001-01-01T00:00:00+00:00",
            "yesterday",
            math.nan,
            1e300,
            True,
            [],
            {},
        ],
    )
    def test_a_system_clock_no_one_could_have_recorded_is_not_taken(self, alice, value):
        records = _exported()
        paris = _memory(records, "I live in Paris with my sister.")
        berlin = _memory(records, "I moved to Berlin last week.")
        paris["clocks"]["superseded_at"] = value
        berlin["clocks"]["recorded_at"] = value
        _import(alice, _file(records))
        now = timezone.now()
        for memory in Memory.objects.filter(owner=alice):
            assert memory.recorded_at <= now
            assert memory.superseded_at is None or memory.recorded_at <= memory.superseded_at <= now
        # The move still replaces the old home: what is current is the move.
        assert _current(alice, "I moved to Berlin last week.").superseded_at is None
        assert _current(alice, "I live in Paris with my sister.").superseded_by is not None

    def test_valid_until_before_valid_from_is_not_taken(self, alice):
        records = _exported()
        siemens = _memory(records, "I work at Siemens as an engineer.")
        siemens["clocks"]["valid_from"] = "2024-06-01T00:00:00+00:00"
        siemens["clocks"]["valid_until"] = "2020-01-01T00:00:00+00:00"
        _import(alice, _file(records))
        memory = _current(alice, "I work at Siemens as an engineer.")
        assert (
            memory.valid_until is None or memory.valid_from is None or memory.valid_from <= memory.valid_until
        )

    def test_a_relation_with_clocks_that_are_no_times_is_replayed_with_its_own(self, alice):
        records = _exported()
        for relation in _of(records, "relation"):
            relation["recorded_at"] = "garbage"
            relation["valid_from"] = "2030-01-01T00:00:00+00:00"
            relation["valid_until"] = "2001-01-01T00:00:00+00:00"
        made = _import(alice, _file(records))
        assert made.restored["relations"] == 2
        for relation in Relation.objects.filter(owner=alice):
            assert relation.recorded_at <= timezone.now()
            assert (
                relation.valid_until is None
                or relation.valid_from is None
                or relation.valid_from <= relation.valid_until
            )

    def test_a_superseded_at_before_its_own_recording_is_not_taken(self, alice):
        records = _exported()
        paris = _memory(records, "I live in Paris with my sister.")
        paris["clocks"]["superseded_at"] = "1999-01-01T00:00:00+00:00"
        _import(alice, _file(records))
        memory = _current(alice, "I live in Paris with my sister.")
        assert memory.superseded_at is not None and memory.superseded_at >= memory.recorded_at


# --- spaces ------------------------------------------------------------------------------------------


def _with_spaces(names: list[str]) -> list[Record]:
    """The export with one more space per name, each holding one saved sentence."""
    records = _exported()
    base = _of(records, "source", origin="rest")[0]
    for index, name in enumerate(names):
        space_id = f"00000000-0000-4000-a000-{index:012d}"
        records.insert(1, {"type": "space", "id": space_id, "name": name, "is_default": False})
        records.append(
            {
                **base,
                "id": f"s-{index}",
                "space_id": space_id,
                "content": f"Note number {index} is kept in a space.",
            }
        )
    return records


class TestSpaces:
    def test_a_file_naming_more_spaces_than_an_account_holds_is_refused_whole(self, alice):
        client = pat_client(alice)
        response = post_file(
            client, _file(_with_spaces([f"Space {n}" for n in range(SPACES_MAX + 5)])), "e.jsonl"
        )
        assert response.status_code == 409, response.content[:300]
        assert error_of(response)["code"] == "space_limit_reached"
        assert (
            not Import.objects.filter(owner=alice).exists() and Space.objects.filter(owner=alice).count() <= 1
        )

    def test_spaces_made_by_an_import_count_against_the_limit_with_those_there(self, alice, settings):
        client = pat_client(alice)
        for n in range(SPACES_MAX - 2):
            assert client.post("/api/v1/spaces", {"name": f"Mine {n}"}, format="json").status_code == 201
        response = post_file(client, _file(_with_spaces(["New one", "New two", "New three"])), "e.jsonl")
        assert response.status_code == 409 and error_of(response)["code"] == "space_limit_reached"
        # The REST create holds the same limit.
        client.post("/api/v1/spaces", {"name": "Last"}, format="json")
        refused = client.post("/api/v1/spaces", {"name": "One too many"}, format="json")
        assert refused.status_code == 409 and error_of(refused)["code"] == "space_limit_reached"
        assert Space.objects.filter(owner=alice).count() == SPACES_MAX

    @pytest.mark.parametrize("name", ["", "   ", "\u200b", "x" * 10_000, "Work\x00", "\ud800"])
    def test_a_space_name_no_space_can_have_is_cleaned_or_left_to_the_import_space(self, alice, name):
        made = _import(alice, _file(_with_spaces([name])))
        assert made.items_failed == 0
        for space in Space.objects.filter(owner=alice):
            assert (
                1 <= len(space.name) <= 100 and space.name == space.name.strip() and "\x00" not in space.name
            )
        assert Memory.objects.filter(owner=alice, content="Note number 0 is kept in a space.").exists()

    @pytest.mark.parametrize("name", ["personal", "  PERSONAL ", "work", "WORK"])
    def test_the_default_spaces_name_or_another_case_goes_into_the_existing_space(self, alice, name):
        client = pat_client(alice)
        client.post("/api/v1/spaces", {"name": "Work"}, format="json")
        made = _import(alice, _file(_with_spaces([name])))
        names = sorted(Space.objects.filter(owner=alice).values_list("name", flat=True))
        assert names == ["Personal", "Work"]
        note = Memory.objects.get(owner=alice, content="Note number 0 is kept in a space.")
        assert note.space.name.lower() == name.strip().lower()
        _undo(made, client)
        assert sorted(Space.objects.filter(owner=alice).values_list("name", flat=True)) == names


# --- labels and states ------------------------------------------------------------------------------


class TestLabels:
    def test_tags_beyond_what_a_save_takes_are_cut_to_the_same_rule(self, alice):
        records = _exported()
        paris = _memory(records, "I live in Paris with my sister.")
        paris["tags"] = [*(f"t{n}" for n in range(10_000)), 5, None, {"a": 1}, "", "  ", "y" * 5000]
        paris["tags"][:0] = ["  spaced  ", "spaced", "Home"]
        _import(alice, _file(records))
        tags = _current(alice, "I live in Paris with my sister.").tags
        assert len(tags) <= TAGS_MAX and all(isinstance(t, str) and t and t == t.strip() for t in tags)
        assert all(len(t) <= TAG_MAX_LENGTH for t in tags) and len(set(tags)) == len(tags)
        assert tags[:2] == ["spaced", "Home"]

    @pytest.mark.parametrize("value", [1e308, -1, math.nan, math.inf, "0.5", True, None, 1])
    def test_a_confidence_out_of_range_is_not_taken(self, alice, value):
        records = _exported()
        _memory(records, "I live in Paris with my sister.")["confidence"] = value
        _import(alice, _file(records))
        # A confidence is a number from 0 to 1 (a boolean is none); anything else is the default.
        confidence = _current(alice, "I live in Paris with my sister.").confidence
        assert confidence == (1.0 if value == 1 and value is not True else 0.9)

    def test_pinned_and_forgotten_together_stay_forgotten_and_out_of_every_answer(self, alice):
        records = _exported()
        pin = _memory(records, PIN)
        pin["pinned"] = True
        pin["suppressed_at"] = None  # forgotten, with no time
        client = pat_client(alice)
        _import(alice, _file(records), client)
        memory = _current(alice, PIN)
        assert memory.status == Memory.Status.SUPPRESSED and memory.suppressed_at is not None
        assert "4821" not in _recall(client, "What is my bank PIN?")
        assert "4821" not in _recall(client, "bank PIN 4821")

    def test_odd_states_are_read_as_the_service_knows_them(self, alice):
        records = _exported()
        paris = _memory(records, "I live in Paris with my sister.")
        paris.update(category="<script>", status="deleted", pinned="yes", suppressed_reason="x" * 999)
        pin = _memory(records, PIN)
        pin.update(suppressed_reason="nonsense", suppressed_note="n" * 100_000)
        _import(alice, _file(records))
        memory = _current(alice, "I live in Paris with my sister.")
        assert (memory.category, memory.status, memory.pinned) == ("", "active", False)
        forgotten = _current(alice, PIN)
        assert forgotten.suppressed_reason == "other" and len(forgotten.suppressed_note) <= 500


# --- claims ---------------------------------------------------------------------------------------------


def _claim_entities(records: list[Record]) -> tuple[Record, Record]:
    relation = _of(records, "relation")[0]
    subject = next(r for r in _of(records, "entity") if r["id"] == relation["subject_id"])
    obj = next(r for r in _of(records, "entity") if r["id"] == relation["object_id"])
    return subject, obj


class TestClaims:
    @pytest.mark.parametrize("name", ["", "   ", "!!!", "A" * 100_000])
    def test_a_subject_no_relate_would_take_makes_no_relation_or_a_bounded_one(self, alice, name):
        records = _exported()
        subject, _ = _claim_entities(records)
        subject["name"] = name
        made = _import(alice, _file(records))
        assert made.items_failed == 0
        for entity in Entity.objects.filter(owner=alice):
            assert 1 <= len(entity.name) <= 200

    def test_a_claim_of_100_kb_is_stored_no_longer_than_a_save_may_be(self, alice):
        records = _exported()
        for source in _of(records, "source", origin="relate"):
            source["content"] = "Alex lives in Paris. " * 5000
        _import(alice, _file(records))
        for source in Source.objects.filter(owner=alice, origin="relate"):
            assert len(source.content) <= settings.REMEMBER_MAX_CHARS

    def test_an_entity_type_not_in_the_list_takes_the_relations_default(self, alice):
        records = _exported()
        subject, obj = _claim_entities(records)
        subject["entity_type"], obj["entity_type"] = "Wizard'; DROP TABLE", None
        _import(alice, _file(records))
        assert set(Entity.objects.filter(owner=alice).values_list("type", flat=True)) <= set(
            Entity.Type.values
        )
        assert Relation.objects.filter(owner=alice).count() == 2

    def test_a_relation_type_not_in_the_list_makes_no_relation(self, alice):
        records = _exported()
        for relation in _of(records, "relation"):
            relation["relation_type"] = "owns_the_moon"
        made = _import(alice, _file(records))
        assert made.restored["relations"] == 0 and not Relation.objects.filter(owner=alice).exists()


# --- the same account, twice, with edits -----------------------------------------------------------


class TestSameAccount:
    def test_an_export_into_the_account_it_came_from_twice_changes_nothing(self, alice):
        client = _history(alice)
        records = _export(client)
        before = (_rows(alice), _counts(alice))
        first = _import(alice, _file(records), client)
        second = _import(alice, _file(records), client)
        assert (_rows(alice), _counts(alice)) == before
        for made in (first, second):
            assert made.items_stored == 0 and made.restored.get("spaces", []) == []
        _undo(first, client)
        assert (_rows(alice), _counts(alice)) == before
        assert "4821" not in _recall(client, "What is my bank PIN?")

    def test_an_account_with_some_of_the_same_memories_keeps_its_own_states(self, bob):
        records = _exported()
        client = pat_client(bob)
        mine = _save(client, "I live in Paris with my sister.", tags=["mine"])
        assert client.post(f"/api/v1/memories/{mine}/pin").status_code == 200
        before = Memory.objects.get(id=mine)
        made = _import(bob, _file(records), client)
        after = Memory.objects.get(id=mine)
        assert (after.tags, after.pinned, after.recorded_at) == (
            before.tags,
            before.pinned,
            before.recorded_at,
        )
        _undo(made, client)
        again = Memory.objects.get(id=mine)
        assert (again.tags, again.pinned, again.status) == (["mine"], True, "active")
        assert again.superseded_at is None
        assert Memory.objects.filter(owner=bob).count() == 1

    def test_undo_gives_back_a_memory_the_import_replaced_exactly_as_it_was(self, bob):
        """Bob's home is replaced by the file's (the engine judges it so); the restore then moves the
        file's memory to its exported clocks. The undo must give Bob's memory back whole, its end
        (valid_until, set by the supersession from the successor's start) cleared too."""
        records = _exported()  # made before Bob's save, as the file of an older export would be
        client = pat_client(bob)
        # Said of a time before the file's: the file's home is the newer one, whenever it was recorded.
        mine = _save(client, "I live in Madrid.", occurred_at="2020-01-01T09:00:00+00:00")
        fields = ("content", "valid_from", "valid_until", "superseded_at", "superseded_by_id", "status")
        before = Memory.objects.filter(id=mine).values_list(*fields).get()
        made = _import(bob, _file(records), client)
        replaced = Memory.objects.get(id=mine)
        assert replaced.superseded_at is not None, "the fixture must really replace Bob's home"
        _undo(made, client)
        assert Memory.objects.filter(id=mine).values_list(*fields).get() == before

    def test_a_file_that_forgot_what_the_person_still_holds_forgets_nothing_of_theirs(self, bob):
        client = pat_client(bob)
        mine = _save(client, PIN)
        _import(bob, _file(_exported()), client)
        assert Memory.objects.get(id=mine).status == Memory.Status.ACTIVE
        assert "4821" in _recall(client, "What is my bank PIN?")

    def test_undo_after_the_person_edited_a_restored_memory_keeps_the_edit(self, alice):
        records = _exported()
        client = pat_client(alice)
        made = _import(alice, _file(records), client)
        berlin = _current(alice, "I moved to Berlin last week.")
        # The dashboard's edit: a new version of the person's own, replacing the restored one.
        dashboard = Client()
        dashboard.force_login(alice)
        edit = {"content": "I moved to Hamburg last week.", "kind": "episode", "tags": "move"}
        assert dashboard.post(f"/memories/{berlin.id}/edit", edit).status_code == 302
        revision = Job.objects.filter(owner=alice).order_by("-created_at").first()
        assert revision is not None
        job_process(job_id=revision.id)
        _undo(made, client)
        assert Memory.objects.filter(
            owner=alice, content="I moved to Hamburg last week.", status="active"
        ).exists()
        assert not Memory.objects.filter(owner=alice, content="I live in Paris with my sister.").exists()
        # The space the import made held nothing of the person's: it went.
        assert list(Space.objects.filter(owner=alice).values_list("name", flat=True)) == ["Personal"]


# --- undo beside a running import ----------------------------------------------------------------------


class TestUndoBesideAnother:
    def test_undo_of_one_import_while_another_of_the_same_file_runs(self, alice, monkeypatch):
        """Import B of the same file has made its spaces (found them: A made them) and is storing
        batches when A is undone. B's items must land in a space that exists and is B's to undo."""
        from memories.worker import restore

        records = _exported()
        client = pat_client(alice)
        first = _import(alice, _file(records), client)
        response = post_file(client, _file(records), "again.jsonl")
        second = Import.objects.get(id=response.json()["import"]["id"])
        real = restore.spaces_made

        def undo_in_between(**kwargs: Any) -> Any:
            spaces = real(**kwargs)
            _undo(first, pat_client(alice))
            return spaces

        monkeypatch.setattr(restore, "spaces_made", undo_in_between)
        job_process(job_id=second.job_id)
        second.refresh_from_db()
        assert second.job.status == Job.Status.SUCCEEDED, (second.job.error_code, second.job.error_message)
        assert second.items_failed == 0 and second.items_stored > 0
        work = Memory.objects.get(owner=alice, content="I work at Siemens as an engineer.")
        assert Space.objects.filter(id=work.space_id, owner=alice, name="Work").exists()
        _undo(second, client)
        assert list(Space.objects.filter(owner=alice).values_list("name", flat=True)) == ["Personal"]
        assert _counts(alice)[:6] == (0, 0, 0, 0, 0, 0)


# --- forgotten stays forgotten -------------------------------------------------------------------------


class TestForgotten:
    def test_a_forgotten_memory_never_comes_back_in_recall_or_answer(self, alice, bob):
        alice_client = _history(alice)
        records = _export(alice_client)
        client = pat_client(bob)
        # Bob's own words are nothing alike: only the import can bring the PIN.
        _import(bob, _file(records), client)
        _import(bob, _file(records), client)
        assert Memory.objects.get(owner=bob, content=PIN).status == "suppressed"
        for query in ("What is my bank PIN?", "4821", "old bank"):
            assert "4821" not in _recall(client, query)
        answer = client.post("/api/v1/operations/answer", {"question": "What is my bank PIN?"}, format="json")
        assert answer.status_code == 200 and "4821" not in words_of(answer.json())
        # What was not forgotten is answered: the checks above can see an answer's words.
        assert "X1234567" in _recall(client, "What is my passport number?")
        shown = client.post(
            "/api/v1/operations/answer", {"question": "What is my passport number?"}, format="json"
        )
        assert shown.status_code == 200 and "X1234567" in shown.content.decode()


def test_a_read_only_token_imports_nothing(alice):
    records = _exported()
    reader = pat_client(alice, scopes=(READ,))
    response = post_file(reader, _file(records), "e.jsonl")
    assert response.status_code == 403 and error_of(response)["code"] == "insufficient_scope"
    assert not Import.objects.filter(owner=alice).exists()


# --- more: names a person cannot tell apart, links across spaces, stops half-way ---------------------


class TestMore:
    def test_two_imports_that_each_fit_but_not_together_keep_the_spaces_limit(self, alice, monkeypatch):
        """Both files pass the check at upload (each alone fits); the worker's space_named holds the
        limit under the owner's write lock, and the second's items of a space it cannot make go to
        its own space, stored all the same."""
        from memories.services import spaces

        monkeypatch.setattr(spaces, "SPACES_MAX", 5)
        client = pat_client(alice)
        first = post_file(client, _file(_with_spaces(["A1", "A2", "A3"])), "a.jsonl")
        records = _with_spaces(["B1", "B2", "B3"])
        for record in records:  # other words and ids, so the second file is not the first again
            if record["type"] == "source" and str(record["id"]).startswith("s-"):
                record["id"], record["content"] = (
                    f"b{record['id']}",
                    record["content"].replace("Note", "Memo"),
                )
        second = post_file(client, _file(records), "b.jsonl")
        assert (first.status_code, second.status_code) == (202, 202)
        made = [Import.objects.get(id=response.json()["import"]["id"]) for response in (first, second)]
        for one in made:
            job_process(job_id=one.job_id)
            one.refresh_from_db()
            assert one.job.status == Job.Status.SUCCEEDED and one.items_failed == 0
        assert Space.objects.filter(owner=alice).count() == 5
        assert Memory.objects.filter(owner=alice, content__startswith="Memo number").count() == 3
        _undo(made[1], client)
        _undo(made[0], client)
        assert list(Space.objects.filter(owner=alice).values_list("name", flat=True)) == ["Personal"]

    @pytest.mark.parametrize("name", ["\uff37\uff4f\uff52\uff4b", "Wo\u200brk", "\u2060WORK"])
    def test_a_space_name_that_only_looks_different_goes_into_the_existing_space(self, alice, name):
        client = pat_client(alice)
        client.post("/api/v1/spaces", {"name": "Work"}, format="json")
        _import(alice, _file(_with_spaces([name])), client)
        assert sorted(Space.objects.filter(owner=alice).values_list("name", flat=True)) == [
            "Personal",
            "Work",
        ]
        # The same rule for a space made by hand.
        response = client.post("/api/v1/spaces", {"name": name}, format="json")
        assert response.status_code == 409 and error_of(response)["code"] == "space_name_taken"

    def test_a_memory_replaced_by_one_of_another_space_keeps_the_engines_link(self, alice):
        records = _exported()
        paris = _memory(records, "I live in Paris with my sister.")
        siemens = _memory(records, "I work at Siemens as an engineer.")
        paris["clocks"]["superseded_by"] = siemens["id"]
        _import(alice, _file(records))
        for memory in Memory.objects.filter(owner=alice, superseded_by__isnull=False).select_related(
            "superseded_by"
        ):
            assert memory.superseded_by.space_id == memory.space_id
        replaced = _current(alice, "I live in Paris with my sister.").superseded_by
        assert replaced is not None and replaced.content == "I moved to Berlin last week."

    def test_a_memory_forgotten_before_it_was_said_is_forgotten_all_the_same(self, alice):
        records = _exported()
        _memory(records, PIN)["suppressed_at"] = "1990-01-01T00:00:00+00:00"
        client = pat_client(alice)
        _import(alice, _file(records), client)
        assert _current(alice, PIN).status == Memory.Status.SUPPRESSED
        assert "4821" not in _recall(client, "What is my bank PIN?")

    def test_an_import_cancelled_after_its_spaces_were_made_is_undone_whole(self, alice, monkeypatch):
        from memories.worker import restore

        client = pat_client(alice)
        response = post_file(client, _file(_exported()), "e.jsonl")
        made = Import.objects.get(id=response.json()["import"]["id"])
        real = restore.spaces_made

        def cancel_in_between(**kwargs: Any) -> Any:
            spaces = real(**kwargs)
            assert client.post(f"/api/v1/imports/{made.id}/cancel").status_code == 200
            return spaces

        monkeypatch.setattr(restore, "spaces_made", cancel_in_between)
        job_process(job_id=made.job_id)
        made.refresh_from_db()
        assert made.job.status == Job.Status.FAILED and made.job.error_code == "import_cancelled"
        assert Space.objects.filter(owner=alice, name="Work").exists()
        _undo(made, client)
        assert list(Space.objects.filter(owner=alice).values_list("name", flat=True)) == ["Personal"]
        assert _counts(alice)[:6] == (0, 0, 0, 0, 0, 0)

    def test_undo_keeps_a_space_the_import_made_once_the_person_put_something_in_it(self, alice):
        client = pat_client(alice)
        made = _import(alice, _file(_exported()), client)
        work = Space.objects.get(owner=alice, name="Work")
        _save(client, "My desk is on the third floor.", space=str(work.id))
        _undo(made, client)
        assert Space.objects.filter(id=work.id).exists()
        assert list(Memory.objects.filter(owner=alice).values_list("content", flat=True)) == [
            "My desk is on the third floor."
        ]


def test_each_forgotten_memory_is_handed_to_one_batch_not_to_every_batch_after():
    """An export with a moment of forgetting between every two items: as many batches as items
    (each starts after a forgetting). Each batch must be handed the memories forgotten since the
    batch before, not all forgotten before it: N x N memories for the database to match again."""
    from memories.pipeline.import_formats import import_parse
    from memories.worker import restore
    from memories.worker.imports import _parts
    from tests.memories.import_fixtures import LIMITS

    count = 2000
    start = datetime(2024, 1, 1, tzinfo=UTC)
    lines: list[Record] = [
        {"type": "account", "id": "a"},
        {"type": "space", "id": "d", "name": "P", "is_default": True},
    ]
    for n in range(count):
        said = start + timedelta(hours=n)
        text = f"I tried restaurant number {n} today."
        lines.append(
            {
                "type": "source",
                "id": f"s{n}",
                "space_id": "d",
                "origin": "rest",
                "content": text,
                "recorded_at": said.isoformat(),
            }
        )
        lines.append(
            {
                "type": "memory",
                "id": f"m{n}",
                "space_id": "d",
                "content": text,
                "status": "suppressed",
                "suppressed_at": (said + timedelta(minutes=30)).isoformat(),
                "provenance": {"source_id": f"s{n}"},
                "clocks": {"recorded_at": said.isoformat()},
            }
        )
    parsed = import_parse(data=_file(lines), filename="e.jsonl", limits=LIMITS)
    assert parsed.state is not None
    batches = _parts(parsed.items, restore.forgetting_cuts(items=parsed.items, state=parsed.state))
    assert len(batches) == count
    forgetting = restore.Forgetting(items=parsed.items, state=parsed.state)
    handed = [memory.id for batch in batches for memory in forgetting.due(batch)]
    # Each memory once, in the batch after it was forgotten (the last one after the last item: the
    # end of the import applies it with the other states).
    assert handed == [f"m{n}" for n in range(count - 1)]
    # A new attempt that starts half-way gets everything forgotten before its first batch at once.
    again = restore.Forgetting(items=parsed.items, state=parsed.state)
    assert [m.id for m in again.due(batches[100])] == [f"m{n}" for n in range(100)]
