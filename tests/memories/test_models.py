"""The schema the later issues rely on: extension, columns, indexes, constraints."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from accounts.caller import Actor
from memories.models import Evidence, Memory, Source, Space
from memories.selectors.memories import memory_list
from memories.selectors.spaces import space_list
from memories.services.spaces import space_create, space_create_default

pytestmark = pytest.mark.django_db


def _source(owner, space, content="I live in Paris") -> Source:
    return Source.objects.create(
        owner=owner, space=space, origin=Source.Origin.REMEMBER, content=content, content_hash="0" * 64
    )


def _memory(owner, space, content="The user lives in Paris", **extra) -> Memory:
    source = _source(owner, space, content)
    return Memory.objects.create(
        owner=owner, space=space, source=source, kind="fact", content=content, **extra
    )


def _indexdefs(table: str) -> dict[str, str]:
    with connection.cursor() as cur:
        cur.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [table])
        return dict(cur.fetchall())


class TestSchema:
    def test_it_has_the_vector_extension(self):
        with connection.cursor() as cur:
            cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            (version,) = cur.fetchone()
        assert tuple(int(p) for p in version.split(".")[:2]) >= (0, 7)

    def test_it_indexes_memories_for_hybrid_search(self):
        defs = _indexdefs("memories_memory")
        assert "USING hnsw (embedding vector_cosine_ops)" in defs["memory_embedding_hnsw"]
        assert "USING gin (search_vector)" in defs["memory_search_gin"]
        assert "USING gin (tags)" in defs["memory_tags_gin"]
        assert "btree (owner_id, space_id, status, id)" in defs["memory_owner_space_status_id"]

    def test_it_has_uuid_primary_keys_and_a_384_dimension_embedding(self):
        with connection.cursor() as cur:
            cur.execute(
                "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = 'memories_memory'::regclass AND attname = 'embedding'"
            )
            assert cur.fetchone()[0] == "vector(384)"
            cur.execute(
                "SELECT data_type FROM information_schema.columns "
                "WHERE table_name = 'memories_memory' AND column_name = 'id'"
            )
            assert cur.fetchone()[0] == "uuid"

    def test_it_maintains_the_full_text_column_in_the_database(self, alice):
        memory = _memory(alice, space_create_default(owner=alice), "Alice adopted two cats in Lisbon")
        hits = Memory.objects.filter(search_vector="cats").values_list("id", flat=True)
        assert list(hits) == [memory.id]
        Memory.objects.filter(id=memory.id).update(content="")
        assert not Memory.objects.filter(search_vector="cats").exists()

    def test_it_stores_a_vector_and_finds_the_nearest(self, alice):
        from pgvector.django import CosineDistance

        space = space_create_default(owner=alice)
        near = _memory(alice, space, "near", embedding=[1.0] + [0.0] * 383)
        _memory(alice, space, "far", embedding=[0.0] * 383 + [1.0])
        nearest = Memory.objects.order_by(CosineDistance("embedding", [0.9, 0.1] + [0.0] * 382)).first()
        assert nearest is not None and nearest.id == near.id


class TestConstraints:
    def test_it_gives_each_user_exactly_one_default_space(self, alice):
        assert space_create_default(owner=alice) == space_create_default(owner=alice)
        with pytest.raises(IntegrityError), transaction.atomic():
            Space.objects.create(owner=alice, name="Second default", is_default=True)

    def test_it_requires_source_kind_and_ref_together(self, alice):
        space = space_create_default(owner=alice)
        with pytest.raises(IntegrityError), transaction.atomic():
            Source.objects.create(
                owner=alice,
                space=space,
                origin="document",
                content="x",
                content_hash="1" * 64,
                source_kind="drive",
            )

    def test_it_counts_a_source_once_per_memory(self, alice):
        space = space_create_default(owner=alice)
        memory = _memory(alice, space)
        Evidence.objects.create(owner=alice, source=memory.source, memory=memory)
        with pytest.raises(IntegrityError), transaction.atomic():
            Evidence.objects.create(owner=alice, source=memory.source, memory=memory)

    def test_it_keeps_confidence_between_zero_and_one(self, alice):
        with pytest.raises(IntegrityError), transaction.atomic():
            _memory(alice, space_create_default(owner=alice), confidence=1.5)


class TestSpaces:
    def test_it_refuses_a_duplicate_space_name_for_the_same_owner_only(self, alice, bob):
        from memories.errors import AppError

        space_create(actor=Actor.owner_acting(alice), name="Work")
        with pytest.raises(AppError) as exc:
            space_create(actor=Actor.owner_acting(alice), name="Work")
        assert exc.value.code == "space_name_taken"
        assert space_create(actor=Actor.owner_acting(bob), name="Work").owner == bob


class TestSelectorsTenancy:
    def test_it_never_lists_another_owners_memories(self, alice, charlie):
        mine = _memory(alice, space_create_default(owner=alice))
        assert list(memory_list(owner=alice)) == [mine]
        assert list(memory_list(owner=charlie)) == []
        assert list(space_list(owner=charlie).values_list("owner", flat=True)) == [charlie.id]
