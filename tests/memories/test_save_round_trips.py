"""A save's round trips to PostgreSQL: the token, the space, and one message with the source and its
job (memories.services.rows.rows_insert), all or nothing, outside any transaction block."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError, DataError, connection
from django.db.models.functions import Now
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.caller import Caller
from memories.models import Entity, Job, Source
from memories.services.jobs import job_queue
from memories.services.rows import row_update, rows_insert
from memories.services.sources import source_new
from memories.services.spaces import space_for_caller
from tests.helpers import pat_client

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_save_is_the_token_the_space_and_one_message(alice, no_worker_broker, tmp_path):
    client = pat_client(alice)
    first = client.post("/api/v1/memories", {"content": "I keep bees."}, format="json")
    assert first.status_code == 202, first.json()  # the token's first use writes its last_used_at
    with CaptureQueriesContext(connection) as captured:
        saved = client.post("/api/v1/memories", {"content": "I grow tomatoes."}, format="json")
    assert saved.status_code == 202, saved.json()
    statements = [query["sql"] for query in captured.captured_queries]
    assert len(statements) == 3, "\n".join(s[:150] for s in statements)
    message = statements[2]
    assert message.index('INSERT INTO "memories_source"') < message.index('INSERT INTO "memories_job"')
    # Published with no write after the commit: the row said so from the start, and the message
    # reached the broker folder.
    job = Job.objects.select_related("source").get(id=saved.json()["job"]["id"])
    assert job.published_at is not None and job.source.content == "I grow tomatoes."
    sent = [path.read_text() for path in (tmp_path / "broker" / "queue").glob("*.msg")]
    assert sum(str(job.id) in text for text in sent) == 1


def test_the_source_and_its_job_are_stored_together_or_not_at_all(alice):
    caller = Caller(user=alice, scopes=frozenset(), via="session")
    space = space_for_caller(caller=caller)
    source = source_new(caller=caller, space=space, origin=Source.Origin.REMEMBER, content="I like figs.")
    # Too long for the column: PostgreSQL refuses the second INSERT of the message, after the first.
    job = Job(owner=alice, space=space, source=source, kind="k" * 21, options={})
    with pytest.raises(DataError):
        rows_insert(source, job)
    assert not Source.objects.filter(owner=alice).exists()
    assert not Job.objects.filter(owner=alice).exists()

    # The same rows, well formed, are stored as Model.save() would store them.
    source = source_new(caller=caller, space=space, origin=Source.Origin.REMEMBER, content="I like figs.")
    job = job_queue(
        caller=caller, space=space, source=source, kind=Job.Kind.REMEMBER, options={"tags": ["x"]}
    )
    stored = Job.objects.select_related("source").get(id=job.id)
    assert (stored.status, stored.options, stored.source.content, stored.source.claimant) == (
        "queued",
        {"tags": ["x"]},
        "I like figs.",
        "user",
    )
    assert stored.source.content_hash == source.content_hash and stored.source.size_bytes == len(
        b"I like figs."
    )
    assert stored.created_at == job.created_at and stored.source.recorded_at == source.recorded_at


def test_an_update_of_some_fields_stores_what_save_would(alice):
    # memories.services.rows.row_update: a JSON column, an array column, a choice and a time.
    space = space_for_caller(caller=Caller(user=alice, scopes=frozenset(), via="session"))
    saved, updated = (
        Entity.objects.create(
            owner=alice, space=space, name=name, normalized_name=name.lower(), type="Concept"
        )
        for name in ("Acme", "Bolt")
    )
    when = timezone.now() - timedelta(days=3)
    fields = ("type", "attributes", "aliases", "updated_at")
    for entity in (saved, updated):
        entity.type = "Organization"
        entity.attributes = {"type_votes": {"Organization": 2, "Concept": 1}, "note": 'it\'s "quoted"'}
        entity.aliases = ["Acme Corp", "ACME, Inc.", "l'Acme"]
        entity.updated_at = when
    saved.save(update_fields=list(fields))
    with CaptureQueriesContext(connection) as captured:
        row_update(updated, fields)
    assert len(captured.captured_queries) == 1
    columns = ["type", "attributes", "aliases", "updated_at", "name"]
    first, second = (Entity.objects.values_list(*columns).get(id=e.id) for e in (saved, updated))
    assert first[:4] == second[:4] and (first[4], second[4]) == ("Acme", "Bolt")
    assert second[3] == when


def test_an_update_of_a_row_that_is_gone_fails_as_save_does(alice):
    space = space_for_caller(caller=Caller(user=alice, scopes=frozenset(), via="session"))
    entity = Entity.objects.create(
        owner=alice, space=space, name="Gone", normalized_name="gone", type="Concept"
    )
    Entity.objects.filter(id=entity.id).delete()
    entity.type = "Person"
    with pytest.raises(DatabaseError, match="did not affect any rows"):
        row_update(entity, ("type",))
    with pytest.raises(DatabaseError, match="did not affect any rows"):
        entity.save(update_fields=["type"])


def _plain(values: list[object]) -> list[object]:
    # A JSON value is handed to the driver wrapped (psycopg's Jsonb), which compares by identity.
    return [getattr(value, "obj", value) for value in values]


def test_an_insert_compiled_once_is_what_the_compiler_makes_for_every_row(alice):
    """rows_insert compiles a model's INSERT once and makes each row's values as the compiler does:
    for rows of other values (nulls, JSON, arrays, vectors, a numbered link), the statement and the
    values are the compiler's own, and a row holding an expression is compiled whole."""
    from memories import embeddings
    from memories.models import Evidence, Memory, MemoryEntity
    from memories.services.rows import _insert_compiled, _insert_fields, _insert_of

    caller = Caller(user=alice, scopes=frozenset(), via="session")
    space = space_for_caller(caller=caller)
    source = source_new(caller=caller, space=space, origin=Source.Origin.REMEMBER, content="I keep bees.")
    vector = embeddings.embed(["I keep bees."])[0]
    memories = [
        Memory(owner=alice, space=space, source=source, content="I keep bees.", kind="fact"),
        Memory(
            owner=alice,
            space=space,
            source=source,
            content="Ich habe Bienen.",
            kind="preference",
            tags=["garden", "bees"],
            embedding=vector,
            valid_from=timezone.now() - timedelta(days=3),
            confidence=0.25,
        ),
    ]
    entity = Entity.objects.create(owner=alice, space=space, name="Bees", normalized_name="bees")
    rows = [
        source,
        *memories,
        Evidence(owner=alice, memory=memories[0], source=source),
        MemoryEntity(owner=alice, memory=memories[0], entity=entity),
        MemoryEntity(owner=alice, memory=memories[1], entity=entity),
    ]
    for obj in rows:
        numbered = obj.pk is None
        sql, values = _insert_of(obj)
        want_sql, want_values = _insert_compiled(obj, _insert_fields(type(obj), numbered))
        assert sql == want_sql and _plain(values) == _plain(want_values), type(obj).__name__
    # An expression as a value: compiled whole, so its SQL says so.
    timed = Memory(owner=alice, space=space, source=source, content="x", kind="fact")
    timed.recorded_at = Now()
    sql, _ = _insert_of(timed)
    assert "STATEMENT_TIMESTAMP()" in sql or "NOW()" in sql.upper()
    # And the rows go in.
    rows_insert(*rows)
    assert Memory.objects.filter(owner=alice).count() == 2
