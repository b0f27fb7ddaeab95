"""The squashed migrations: a new database runs them, and one that applied the migrations they
replace is up to date without running anything again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from tests.conftest import run_manage
from tests.helpers import superuser_params

OLD = {
    "accounts": ["0001_initial", "0002_personal_access_tokens"],
    "memories": [
        "0001_pgvector_extension",
        "0002_memory_tables",
        "0003_job_options_and_memory_slots",
        "0004_audit_revocation_actions",
        "0005_graph_evidence_layer",
        "0006_relation_embedding",
        "0007_audit_account_and_token_actions",
        "0008_memory_suppressed_reason_choices",
    ],
}


@pytest.mark.django_db
def test_a_database_that_applied_the_replaced_migrations_has_nothing_to_run():
    recorded = MigrationRecorder.Migration.objects
    squashed = list(recorded.filter(app__in=OLD, name__contains="_squashed_").values_list("app", "name"))
    assert {app for app, _ in squashed} == set(OLD)
    # Make the record what a database migrated before the squash holds.
    recorded.filter(app__in=OLD).delete()
    for app, names in OLD.items():
        for name in names:
            recorded.create(app=app, name=name)
    executor = MigrationExecutor(connection)
    # Only migrations written after the squash are left to run, never a squashed one or an original.
    planned = [(m.app_label, m.name) for m, _ in executor.migration_plan(executor.loader.graph.leaf_nodes())]
    assert all("_squashed_" not in name and name not in OLD.get(app, []) for app, name in planned), planned
    assert all(name > max(OLD.get(app, [""])) for app, name in planned), planned
    for key in squashed:
        assert key in executor.loader.applied_migrations


BEFORE_ONE_ENTITY_PER_NAME = [("memories", "0010_memory_source_span")]


def _as_left_by(target: list[tuple[str, str]]) -> Iterator[Any]:
    """The database as `target` left it (historical apps to build rows with); migrated forward after."""
    executor = MigrationExecutor(connection)
    executor.migrate(target)
    try:
        yield executor.loader.project_state(target).apps
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.fixture
def before_one_entity_per_name(transactional_db):
    yield from _as_left_by(BEFORE_ONE_ENTITY_PER_NAME)


def test_0011_merges_the_entities_one_name_now_stands_for(before_one_entity_per_name, alice, charlie):
    from datetime import timedelta

    from django.utils import timezone

    from memories.models import Entity, Memory, Relation, Space
    from tests.memories.test_api_read import default_space

    old = before_one_entity_per_name
    OldEntity = old.get_model("memories", "Entity")
    OldRelation = old.get_model("memories", "Relation")
    links = old.get_model("memories", "Memory").entities.through.objects
    personal, theirs = default_space(alice), default_space(charlie)
    work = Space.objects.create(owner=alice, name="Work")
    start = timezone.now() - timedelta(days=30)

    def entity(name, type_, *, space=personal, days=0, **fields):
        return OldEntity.objects.create(
            owner_id=space.owner_id,
            space_id=space.id,
            name=name,
            normalized_name=" ".join(name.casefold().split()),
            type=type_,
            created_at=start + timedelta(days=days),
            **fields,
        )

    def link(row, *memories):
        for memory in memories:
            links.create(memory_id=memory.id, entity_id=row.id)

    # Sources and memories as 0010 knew them (later migrations add columns the current models have).
    OldSource = old.get_model("memories", "Source")
    OldMemory = old.get_model("memories", "Memory")
    OldEvidence = old.get_model("memories", "Evidence")

    def make_memory(content):
        source = OldSource.objects.create(
            owner_id=alice.id, space_id=personal.id, origin="remember", content=f"source of {content}"
        )
        memory = OldMemory.objects.create(
            owner_id=alice.id, space_id=personal.id, source_id=source.id, content=content, kind="fact"
        )
        OldEvidence.objects.create(owner_id=alice.id, source_id=source.id, memory_id=memory.id)
        return memory

    m1, m2, m3, m4 = (make_memory(f"memory {i}") for i in range(4))
    # The oldest of the Acmes is a Concept: a specific type wins over age.
    concept = entity("Acme", "Concept", days=0)
    organization = entity("Acme", "Organization", days=1, aliases=["ACME"], attributes={"hq": "Lyon"})
    corp = entity("Acme Corp", "Organization", days=2, attributes={"hq": "Paris", "founded": "1990"})
    link(organization, m1, m2)
    link(concept, m2, m3)
    link(corp, m3, m4)  # m3 is linked to two of the rows that merge
    bob = entity("Bob", "Person", days=3)
    lyon = entity("Lyon", "Location", days=3)
    works_at = OldRelation.objects.create(
        owner_id=alice.id, space_id=personal.id, subject_id=bob.id, object_id=corp.id, type="works_at"
    )
    near = OldRelation.objects.create(
        owner_id=alice.id, space_id=personal.id, subject_id=concept.id, object_id=lyon.id, type="related_to"
    )
    # Equal types' votes, equal links: the older row is kept.
    place, person = entity("Jordan", "Location", days=4), entity("Jordan", "Person", days=5)
    link(place, m1)
    link(person, m2)
    guardian, the_guardian = (
        entity("Guardian", "Concept", days=6),
        entity("The Guardian", "Organization", days=7),
    )
    in_work = entity("Acme", "Concept", space=work)
    charlies = entity("Acme Inc.", "Organization", space=theirs)

    # Through 0011 and on to the latest: the result is read with the current models, whose columns
    # later migrations add (none of them touches entities).
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    acme = Entity.objects.get(space=personal, normalized_name="acme")
    assert acme.id == organization.id and acme.type == "Organization" and acme.name == "Acme"
    assert acme.aliases == ["ACME", "Acme Corp"]
    assert acme.attributes == {
        "hq": "Lyon",
        "founded": "1990",
        "type_votes": {"Concept": 2, "Organization": 4},
    }
    assert not Entity.objects.filter(id__in=[concept.id, corp.id]).exists()
    for memory in (m1, m2, m3, m4):
        assert list(Memory.objects.get(id=memory.id).entities.filter(normalized_name="acme")) == [acme]
    assert Relation.objects.get(id=works_at.id).object_id == acme.id
    assert Relation.objects.get(id=near.id).subject_id == acme.id

    jordan = Entity.objects.get(space=personal, normalized_name="jordan")
    assert jordan.id == place.id and jordan.type == "Location"
    assert jordan.attributes["type_votes"] == {"Location": 1, "Person": 1}
    assert set(Memory.objects.filter(entities=jordan).values_list("id", flat=True)) == {m1.id, m2.id}

    kept = Entity.objects.get(space=personal, normalized_name="guardian")
    assert kept.id == the_guardian.id and kept.type == "Organization" and kept.aliases == ["Guardian"]
    assert not Entity.objects.filter(id=guardian.id).exists()

    # Other spaces and other owners are other things; an unmerged row is re-keyed only.
    assert Entity.objects.get(id=in_work.id).type == "Concept"
    assert Entity.objects.get(id=charlies.id).normalized_name == "acme"
    assert Entity.objects.get(id=bob.id).attributes == {"type_votes": {"Person": 1}}
    constraints = connection.introspection.get_constraints(connection.cursor(), Entity._meta.db_table)
    assert "entity_unique_name_per_space" in constraints and "entity_unique_per_space" not in constraints


@pytest.fixture
def plain_role_database(django_db_setup, django_db_blocker) -> Iterator[str]:
    """A database owned by a role that is no superuser, without pgvector: a DATABASE_URL for it."""
    import psycopg

    with django_db_blocker.unblock():
        params = superuser_params()
    admin = psycopg.connect(**params, autocommit=True)
    admin.execute("CREATE ROLE dr_plain LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
    admin.execute("CREATE DATABASE dr_plain_db OWNER dr_plain")
    host, port = params.get("host") or "localhost", params.get("port") or 5432
    try:
        yield f"postgresql://dr_plain@/dr_plain_db?host={host}&port={port}"
    finally:
        admin.execute("DROP DATABASE dr_plain_db WITH (FORCE)")
        admin.execute("DROP ROLE dr_plain")
        admin.close()


def test_it_says_in_one_line_who_must_create_the_vector_extension(plain_role_database, tmp_path):
    result = run_manage(
        "migrate", env={"DATABASE_URL": plain_role_database, "DEEPRECALL_VAR_DIR": str(tmp_path)}
    )
    assert result.returncode == 2, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [
        "deeprecall: error: the database user dr_plain may not create the vector extension; as a "
        "PostgreSQL superuser run CREATE EXTENSION vector; in database dr_plain_db (docs/deploy.md), "
        "then migrate again"
    ], result.stderr[-3000:]


BEFORE_NAMES_TIME = [("memories", "0018_space_name_unique_ignoring_case")]


@pytest.fixture
def before_names_time(transactional_db):
    yield from _as_left_by(BEFORE_NAMES_TIME)


def test_0019_flags_the_memories_saved_before_it_that_name_a_time(before_names_time, alice):
    from memories.models import Memory
    from tests.memories.test_api_read import default_space

    OldMemory = before_names_time.get_model("memories", "Memory")
    space = default_space(alice)
    texts = {
        "Caroline: I went to a support group yesterday.": True,
        "Jon: I've been dancing for 10 years.": True,
        "Gina: My store sells hoodies.": False,
    }
    ids = {
        OldMemory.objects.create(owner_id=alice.id, space_id=space.id, content=text, kind="fact").id: flag
        for text, flag in texts.items()
    }
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert dict(Memory.objects.filter(id__in=ids).values_list("id", "names_time")) == ids


@pytest.fixture
def before_hnsw_128(transactional_db):
    yield from _as_left_by([("memories", "0023_memory_world_start")])


def _index_definition(name: str) -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [name])
        row = cursor.fetchone()
    return row[0] if row else None


def test_0024_swaps_in_the_ef_construction_128_index_and_keeps_the_session_setting(before_hnsw_128, alice):
    from memories import embeddings
    from memories.models import Memory
    from tests.memories.test_api_read import default_space

    assert "ef_construction='64'" in (_index_definition("memory_embedding_hnsw") or "")
    OldMemory = before_hnsw_128.get_model("memories", "Memory")
    space = default_space(alice)
    texts = ["Maya moved to Lisbon last spring.", "I prefer window seats on long flights."]
    ids = [
        OldMemory.objects.create(
            owner_id=alice.id, space_id=space.id, content=text, kind="fact", embedding=vector
        ).id
        for text, vector in zip(texts, embeddings.embed(texts), strict=True)
    ]
    with connection.cursor() as cursor:
        # Below what the migration asks for, so it raises it (and must put it back after).
        cursor.execute("SET maintenance_work_mem = '64MB'")
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    definition = _index_definition("memory_embedding_hnsw") or ""
    assert "USING hnsw" in definition and "m='16'" in definition and "ef_construction='128'" in definition
    assert _index_definition("memory_embedding_hnsw_128") is None
    with connection.cursor() as cursor:
        # The migration's larger build memory ended with it.
        cursor.execute("SHOW maintenance_work_mem")
        cursor.execute(
            "SELECT pg_size_bytes(current_setting('maintenance_work_mem')),"
            " (SELECT reset_val::bigint * 1024 FROM pg_settings WHERE name = 'maintenance_work_mem')"
        )
        now, default = cursor.fetchone()
        assert now == default < 512 * 1024 * 1024
        # The new index holds the rows written before it: a walk of it finds them.
        cursor.execute("SET enable_seqscan = off")
        cursor.execute(
            "SELECT id FROM memories_memory ORDER BY embedding <=> %s::vector LIMIT 1",
            [str(embeddings.embed([texts[1]])[0])],
        )
        assert cursor.fetchone()[0] == ids[1]
        cursor.execute("RESET enable_seqscan")
    assert Memory.objects.filter(id__in=ids).count() == 2
