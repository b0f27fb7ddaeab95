"""The REST save's optional fields: category, entities, confidence and source_text.

POST /api/v1/memories with a real personal token, processed by the real worker: what the saver
states lands on every memory derived from the save, stated entities are linked, the raw
source_text is kept beside the Source and goes with it on a hard delete, and every bad value is
refused with its stable code before anything is stored.
"""

from __future__ import annotations

import pytest

from memories.models import Entity, Job, Memory, Source
from tests.helpers import READ, error_of, pat_client

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_worker")]

URL = "/api/v1/memories"


def _save(client, **body) -> dict:
    response = client.post(URL, {"wait": 20, **body}, format="json")
    assert response.status_code == 201, response.json()
    job = response.json()["job"]
    assert job["status"] == "succeeded", job
    return job


def _nothing_stored() -> bool:
    return not (Source.objects.exists() or Job.objects.exists() or Memory.objects.exists())


class TestStatedFields:
    def test_it_applies_category_confidence_and_entities_to_the_derived_memory(self, alice):
        client = pat_client(alice)
        job = _save(
            client,
            content="Maya prefers oat milk in her flat white.",
            category="preference",
            confidence=0.6,
            entities=[{"name": "Maya", "type": "Person"}, {"name": "Oatly", "type": "Organization"}],
        )
        (shown,) = job["memories"]
        assert shown["category"] == "preference" and shown["confidence"] == 0.6

        detail = client.get(f"{URL}/{shown['id']}").json()
        assert detail["category"] == "preference" and detail["confidence"] == 0.6
        entities = {(e["name"], e["type"]) for e in detail["entities"]}
        # A stated entity is linked even when the text never names it.
        assert {("Maya", "Person"), ("Oatly", "Organization")} <= entities

        memory = Memory.objects.get(id=shown["id"])
        assert memory.category == "preference" and memory.confidence == pytest.approx(0.6)
        oatly = memory.entities.get(normalized_name="oatly")
        assert oatly.type == "Organization" and oatly.owner == alice and oatly.space_id == memory.space_id

    def test_the_export_carries_what_the_saver_stated(self, alice):
        import json

        client = pat_client(alice)
        job = _save(
            client,
            content="Maya prefers oat milk in her flat white.",
            category="preference",
            source_text="Maya: no cow's milk for me, oat please",
        )
        response = client.get("/api/v1/export")
        records = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
        (memory,) = [r for r in records if r["type"] == "memory" and r["id"] == job["memories"][0]["id"]]
        assert memory["category"] == "preference"
        (source,) = [
            r for r in records if r["type"] == "source" and r["id"] == memory["provenance"]["source_id"]
        ]
        assert source["source_text"] == "Maya: no cow's milk for me, oat please"
        assert source["claimant"].startswith("token:")

    def test_without_them_a_memory_has_no_category_and_the_default_confidence(self, alice):
        job = _save(pat_client(alice), content="The bakery on Rua Augusta opens at seven.")
        (shown,) = job["memories"]
        assert shown["category"] is None and shown["confidence"] == 0.9
        assert Memory.objects.get(id=shown["id"]).category == ""

    def test_every_memory_of_one_save_carries_what_the_saver_stated(self, alice):
        job = _save(
            pat_client(alice),
            content="Caroline: We decided to move the launch to June.\nMelanie: I will tell the investors.",
            category="decision",
            confidence=1,
            entities=[{"name": "Launch", "type": "Decision"}],
        )
        assert len(job["memories"]) == 2
        for memory in Memory.objects.filter(job_id=job["id"]):
            assert memory.category == "decision" and memory.confidence == 1.0
            assert memory.entities.filter(name="Launch", type="Decision").exists()
        # One entity row for the space, linked to both memories.
        assert Entity.objects.filter(owner=alice, normalized_name="launch", type="Decision").count() == 1

    def test_a_zero_confidence_is_kept_not_replaced_by_the_default(self, alice):
        job = _save(pat_client(alice), content="Someone said the office might close in winter.", confidence=0)
        (shown,) = job["memories"]
        assert shown["confidence"] == 0
        assert Memory.objects.get(id=shown["id"]).confidence == 0.0


class TestSourceText:
    def test_it_is_kept_on_the_source_and_goes_with_a_hard_delete(self, alice):
        client = pat_client(alice)
        transcript = "[10:02] Alice: ugh my locker code is 4711, do not tell anyone PLUM-SECRET"
        job = _save(client, content="Alice's gym locker code is 4711.", source_text=transcript)
        (shown,) = job["memories"]
        source = Source.objects.get(id=job["source_id"])
        assert source.source_text == transcript and source.origin == "rest"
        assert Source.objects.filter(source_text__contains="PLUM-SECRET").count() == 1

        response = client.delete(f"{URL}/{shown['id']}")
        assert response.status_code == 200, response.json()
        assert not Source.objects.filter(source_text__contains="PLUM-SECRET").exists()
        assert not Source.objects.filter(content__contains="4711").exists()

    def test_it_is_purged_even_when_the_source_survives_for_another_memory(self, alice):
        client = pat_client(alice)
        job = _save(
            client,
            content="Caroline: My sister lives in Porto.\nMelanie: My brother works at CERN.",
            source_text="raw chat export with APRICOT-SECRET inside",
        )
        assert len(job["memories"]) == 2
        porto = next(m for m in job["memories"] if "Porto" in m["content"])
        response = client.delete(f"{URL}/{porto['id']}")
        assert response.status_code == 200, response.json()
        source = Source.objects.get(id=job["source_id"])  # still there: the CERN memory needs it
        assert "CERN" in source.content and "Porto" not in source.content
        assert not Source.objects.filter(source_text__contains="APRICOT-SECRET").exists()
        assert Memory.objects.filter(owner=alice, content__contains="CERN").exists()


class TestRefusals:
    @pytest.mark.parametrize(
        "fields,code",
        [
            ({"confidence": 1.5}, "value_out_of_range"),
            ({"confidence": -0.1}, "value_out_of_range"),
            ({"confidence": "high"}, "wrong_type"),
            ({"confidence": True}, "wrong_type"),
            ({"confidence": None}, "wrong_type"),
            ({"category": "rumour"}, "invalid_value"),
            ({"category": ""}, "invalid_value"),
            ({"entities": [{"name": "Maya"}]}, "missing_field"),
            ({"entities": [{"type": "Person"}]}, "missing_field"),
            ({"entities": [{"name": "Maya", "type": "Planet"}]}, "invalid_value"),
            ({"entities": [{"name": "Maya", "type": "person"}]}, "invalid_value"),
            ({"entities": [{"name": "Maya", "type": "Person", "role": "friend"}]}, "unknown_field"),
            ({"entities": [{"name": "  ", "type": "Person"}]}, "value_too_short"),
            ({"entities": [{"name": "m" * 201, "type": "Person"}]}, "value_too_long"),
            ({"entities": ["Maya"]}, "wrong_type"),
            ({"entities": {"name": "Maya", "type": "Person"}}, "wrong_type"),
            ({"entities": [{"name": "Maya", "type": "Person"}] * 51}, "value_out_of_range"),
            ({"source_text": ""}, "value_too_short"),
            ({"source_text": " \n\t "}, "value_too_short"),
            ({"source_text": "s" * 100_001}, "value_too_long"),
            ({"source_text": 5}, "wrong_type"),
            ({"source_text": "nul \x00 inside"}, "invalid_characters"),
            ({"occurred_at": "2024-05-08T14:00+02:00"}, "invalid_format"),
            ({"occurred_at": "20240508T140000+0200"}, "invalid_format"),
            ({"occurred_at": "2024-05-08T14:00:00"}, "invalid_format"),
            ({"space": "urn:uuid:0b0c6c39-5d5c-4a57-8d0a-6e1f1bde0c51"}, "invalid_format"),
            ({"session_id": "0b0c6c395d5c4a578d0a6e1f1bde0c51"}, "invalid_format"),
        ],
    )
    def test_it_refuses_a_bad_value_with_its_stable_code_and_stores_nothing(self, alice, fields, code):
        response = pat_client(alice).post(URL, {"content": "Maya likes tea.", **fields}, format="json")
        assert response.status_code == 400, response.json()
        assert error_of(response)["code"] == code
        assert _nothing_stored()

    def test_a_read_only_token_cannot_save_with_these_fields(self, alice):
        response = pat_client(alice, (READ,)).post(
            URL,
            {"content": "Maya likes tea.", "category": "preference", "source_text": "chat"},
            format="json",
        )
        assert response.status_code == 403
        assert error_of(response)["code"] == "insufficient_scope"
        assert _nothing_stored()


class TestTenancy:
    def test_charlies_stated_entities_are_his_own_and_alices_memory_stays_hidden(self, alice, charlie):
        stated = [{"name": "Maya", "type": "Person"}]
        alices = _save(pat_client(alice), content="Maya is my running partner.", entities=stated)
        charlie_client = pat_client(charlie)
        charlies = _save(charlie_client, content="Maya sold me her old bike.", entities=stated)

        alice_maya = Entity.objects.get(owner=alice, normalized_name="maya", type="Person")
        charlie_maya = Entity.objects.get(owner=charlie, normalized_name="maya", type="Person")
        assert alice_maya.id != charlie_maya.id and alice_maya.space_id != charlie_maya.space_id
        assert set(alice_maya.memories.values_list("owner_id", flat=True)) == {alice.id}
        (his,) = charlies["memories"]
        assert [e["id"] for e in his["entities"] if e["name"] == "Maya"] == [str(charlie_maya.id)]

        (hers,) = alices["memories"]
        response = charlie_client.get(f"{URL}/{hers['id']}")
        assert response.status_code == 404 and error_of(response)["code"] == "memory_not_found"
        assert charlie_client.delete(f"{URL}/{hers['id']}").status_code == 404
        assert Source.objects.filter(owner=alice).count() == 1
