"""Entity identity: one entity per name in a space, its type refined by the mentions; the key
(`normalize_entity_name`); the known-names selector; end to end with the real worker."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, transaction

from memories.models import Entity, Memory, Space
from memories.pipeline.entities import normalize_entity_name
from memories.selectors.graph import entity_names_known
from memories.services.entities import entity_record
from tests.helpers import pat_client
from tests.memories.test_api_read import default_space
from tests.memories.test_recall import _recall, _save


def record(space: Space, name: str, type_: str) -> Entity:
    entity, _ = entity_record(owner_id=space.owner_id, space_id=space.id, name=name, type_=type_)
    return entity


class TestKey:
    @pytest.mark.parametrize(
        ("name", "key"),
        [
            ("Acme", "acme"),
            ("Acme Corp", "acme"),
            ("ACME, Inc.", "acme"),
            ("Acme GmbH", "acme"),
            ("Acme Ltd", "acme"),
            ("Acme & Co", "acme"),
            ("Acme Corp Ltd", "acme"),
            ("The Guardian", "guardian"),
            ("Bob's", "bob"),
            ("\u201cAcme\u201d", "acme"),
            ("Yahoo!", "yahoo"),
            ("  Zo\u00eb   M\u00fcller ", "zoe muller"),
        ],
    )
    def test_it_drops_what_does_not_change_the_thing_named(self, name, key):
        assert normalize_entity_name(name) == key

    @pytest.mark.parametrize(
        "name",
        ["Bob Smith", "Oxford University", "Acme Labs", "Bank of America", "Costco", "The", "Inc", "$5.50"],
    )
    def test_it_keeps_what_can_name_another_thing(self, name):
        # A name that is all suffix, or "the" alone, keeps itself rather than becoming empty.
        assert normalize_entity_name(name) == " ".join(name.casefold().split())


@pytest.mark.django_db
class TestEntityRecord:
    def test_it_makes_one_entity_of_every_spelling_and_keeps_the_others_as_aliases(self, alice):
        space = default_space(alice)
        acme, created = entity_record(owner_id=alice.id, space_id=space.id, name="Acme", type_="Organization")
        assert created
        for spelling in ("Acme Corp", "ACME, Inc.", "acme", "Acme Corp"):
            again, created = entity_record(
                owner_id=alice.id, space_id=space.id, name=spelling, type_="Organization"
            )
            assert again.id == acme.id and not created
        acme.refresh_from_db()
        assert acme.name == "Acme" and acme.normalized_name == "acme"
        assert acme.aliases == ["Acme Corp", "ACME, Inc."]
        assert acme.attributes["type_votes"] == {"Organization": 5}
        assert Entity.objects.filter(owner=alice).count() == 1

    def test_a_specific_type_replaces_concept_and_concept_never_replaces_it(self, alice):
        space = default_space(alice)
        assert record(space, "Acme", "Concept").type == "Concept"
        assert record(space, "Acme", "Concept").type == "Concept"
        assert record(space, "Acme", "Organization").type == "Organization"
        for _ in range(3):
            assert record(space, "Acme", "Concept").type == "Organization"
        assert Entity.objects.get(owner=alice).attributes["type_votes"] == {"Concept": 5, "Organization": 1}

    def test_between_specific_types_more_mentions_win_and_a_tie_keeps_the_type(self, alice):
        space = default_space(alice)
        assert record(space, "Jordan", "Location").type == "Location"
        assert record(space, "Jordan", "Person").type == "Location"  # 1 : 1
        assert record(space, "Jordan", "Person").type == "Person"  # 2 : 1
        assert record(space, "Jordan", "Location").type == "Person"  # 2 : 2

    def test_a_row_from_before_the_votes_counts_as_one_mention_of_its_type(self, alice):
        space = default_space(alice)
        Entity.objects.create(owner=alice, space=space, name="Lyon", normalized_name="lyon", type="Location")
        assert record(space, "Lyon", "Person").type == "Location"
        assert Entity.objects.get(owner=alice).attributes["type_votes"] == {"Location": 1, "Person": 1}

    def test_different_names_stay_different_entities(self, alice):
        space = default_space(alice)
        # Two Bobs exist; Oxford the city is not its university; Acme Labs may not be Acme.
        names = ["Bob", "Bob Smith", "Oxford", "Oxford University", "Acme", "Acme Labs"]
        ids = {record(space, name, "Concept").id for name in names}
        assert len(ids) == len(names)

    def test_each_space_and_each_owner_has_its_own_entity(self, alice, charlie):
        personal = default_space(alice)
        work = Space.objects.create(owner=alice, name="Work")
        theirs = default_space(charlie)
        ids = {record(space, "Acme", "Organization").id for space in (personal, work, theirs)}
        assert len(ids) == 3
        assert Entity.objects.get(owner=charlie).space_id == theirs.id

    def test_it_refuses_a_name_without_a_key_or_an_unknown_type(self, alice):
        space = default_space(alice)
        with pytest.raises(ValueError):
            record(space, " ,. ", "Concept")
        with pytest.raises(ValueError):
            record(space, "Acme", "Company")
        assert not Entity.objects.exists()


@pytest.mark.django_db(transaction=True)
class TestEntityRecordRace:
    def test_two_saves_naming_a_new_entity_at_once_make_one_entity_with_both_votes(self, alice):
        space = default_space(alice)
        inserted, failures = threading.Event(), []
        results: dict[str, tuple[Any, bool]] = {}

        def first() -> None:
            try:
                with transaction.atomic():
                    results["first"] = entity_record(
                        owner_id=alice.id, space_id=space.id, name="Kestrel", type_="Product"
                    )
                    inserted.set()
                    # The second save's INSERT of the same key waits for this commit meanwhile.
                    time.sleep(0.5)
            except BaseException as exc:
                failures.append(exc)
            finally:
                inserted.set()
                connection.close()

        def second() -> None:
            try:
                inserted.wait(10)
                with transaction.atomic():
                    results["second"] = entity_record(
                        owner_id=alice.id, space_id=space.id, name="Kestrel Inc.", type_="Product"
                    )
            except BaseException as exc:
                failures.append(exc)
            finally:
                connection.close()

        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert not failures, failures
        (entity,) = Entity.objects.filter(space=space)
        assert results["first"] == (entity, True) and results["second"] == (entity, False)
        assert entity.attributes["type_votes"] == {"Product": 2}
        assert entity.aliases == ["Kestrel Inc."]


@pytest.mark.django_db
class TestKnownNames:
    def test_it_says_which_names_the_space_holds_in_one_query(
        self, alice, charlie, django_assert_num_queries
    ):
        space = default_space(alice)
        record(space, "Acme Corp", "Organization")
        record(space, "Lyon", "Location")
        record(default_space(charlie), "Bob", "Person")
        with django_assert_num_queries(1):
            known = entity_names_known(owner=alice, space_id=space.id, names=["ACME", "Bob", "lyon", "Paris"])
        assert known == {"acme", "lyon"}
        assert entity_names_known(owner=alice, space_id=space.id, names=["", "  "]) == set()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("celery_worker")
class TestEndToEnd:
    def test_two_spellings_in_two_saves_are_one_entity_that_links_them(self, alice, charlie):
        client = pat_client(alice)
        (works,) = _save(client, "Bob works at Acme.")
        (based,) = _save(client, "My employer Acme Corp is based in Lyon.")

        acme = Entity.objects.get(owner=alice, normalized_name="acme")
        assert acme.type == "Organization" and acme.aliases == ["Acme Corp"]
        linked = {str(i) for i in Memory.objects.filter(entities=acme).values_list("id", flat=True)}
        assert linked == {works, based}
        hits = [
            hit["id"]
            for hit in _recall(client, query="Where is Bob's company based?", expand_entities=True)[
                "memories"
            ]
        ]
        assert works in hits and based in hits

        # Charlie's Acme is his own; he sees nothing of Alice's.
        outsider = pat_client(charlie)
        _save(outsider, "Charlie works at Acme Corp.")
        theirs = Entity.objects.get(owner=charlie, normalized_name="acme")
        assert theirs.id != acme.id
        seen = _recall(outsider, query="Where is Bob's company based?", expand_entities=True)["memories"]
        assert {hit["id"] for hit in seen}.isdisjoint({works, based})
        assert Memory.objects.filter(entities=acme).count() == 2
