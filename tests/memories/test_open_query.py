"""The open query's safety, enforced by the real PostgreSQL: the guard, the role, the views, the caps.

Alice owns things (two spaces), Bob has his own, Charlie is the outsider. Everything runs through
`query_run` as the service runs it (transactional: it opens its own READ ONLY transaction).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from accounts.models import User
from memories.as_of import current_q
from memories.errors import AppError
from memories.models import Entity, Evidence, Memory, Relation, Source, Space
from memories.open_query.catalogue import SCHEMA, VIEWS
from memories.open_query.guard import query_check
from memories.open_query.saved import SAVED
from memories.selectors.open_query import query_run
from memories.services.spaces import space_create_default

pytestmark = pytest.mark.django_db(transaction=True)


def _source(owner: User, space: Space, content: str, claimant: str = "user") -> Source:
    return Source.objects.create(
        owner=owner,
        space=space,
        origin=Source.Origin.REMEMBER,
        content=content,
        content_hash=uuid.uuid4().hex,
        claimant=claimant,
    )


def _memory(owner: User, space: Space, content: str, **fields: Any) -> Memory:
    source = _source(owner, space, content)
    memory = Memory.objects.create(
        owner=owner, space=space, source=source, kind="fact", content=content, **fields
    )
    Evidence.objects.create(owner=owner, source=source, memory=memory)
    return memory


def run(user: User, sql: str, params: list[Any] | None = None, space: Space | None = None, **kw: Any):
    return query_run(
        owner=user,
        space=space or space_create_default(owner=user),
        query=query_check(sql),
        params=params or [],
        **kw,
    )


def rejected(user: User, sql: str) -> AppError:
    with pytest.raises(AppError) as caught:
        run(user, sql)
    return caught.value


def values(result: Any, column: int = 0) -> list[Any]:
    return [row[column] for row in result.rows]


@pytest.fixture
def cast(alice, bob, charlie) -> dict[str, Any]:
    alices = space_create_default(owner=alice)
    work = Space.objects.create(owner=alice, name="Work")
    bobs = space_create_default(owner=bob)
    tea = _memory(alice, alices, "I love green tea.")
    _memory(alice, alices, "I forgot this.", status=Memory.Status.SUPPRESSED)
    _memory(alice, work, "The quarterly review is on Friday.")
    _memory(bob, bobs, "Bob's secret plan.")
    return {"alice_space": alices, "work": work, "bob_space": bobs, "tea": tea}


# === what is accepted =====================================================================


def test_it_reads_only_the_callers_current_space(cast, alice, bob, charlie):
    everything = "SELECT content FROM memories ORDER BY content"
    assert values(run(alice, everything, space=cast["alice_space"])) == ["I love green tea."]
    assert values(run(alice, everything, space=cast["work"])) == ["The quarterly review is on Friday."]
    assert values(run(bob, everything)) == ["Bob's secret plan."]
    assert run(charlie, everything).rows == []
    # Another owner's space id with your own owner: still nothing (both settings must match).
    assert run(charlie, everything, space=cast["alice_space"]).rows == []


def test_every_view_is_scoped_and_forgotten_memories_are_absent(cast, alice, charlie):
    for view in VIEWS:
        for_charlie = run(charlie, f"SELECT count(*) FROM {view}")  # noqa: S608 - our own names
        assert for_charlie.rows == [[0]], view
    assert run(alice, "SELECT count(*) FROM evidence").rows == [[1]]
    assert run(alice, "SELECT count(*) FROM sources").rows == [
        [2]
    ]  # the forgotten one's source stays a claim
    assert "I forgot this." not in str(run(alice, "SELECT * FROM memories").rows)


def test_a_crafted_query_cannot_reach_other_rows(cast, alice):
    attempts = [
        "SELECT content FROM memories WHERE true OR 1=1",
        f"SELECT content FROM memories WHERE id <> '{uuid.uuid4()}' UNION ALL SELECT content FROM memories",  # noqa: S608
        "WITH all_rows AS (SELECT * FROM memories) SELECT content FROM all_rows",
        "SELECT (SELECT string_agg(content, ',') FROM memories) AS everything",
    ]
    for sql in attempts:
        seen = str(run(alice, sql, space=cast["alice_space"]).rows)
        assert "Bob" not in seen and "quarterly" not in seen and "forgot" not in seen, sql


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("INSERT INTO memories (content) VALUES ('x')", "not_select"),
        ("UPDATE memories SET content = 'x'", "not_select"),
        ("DELETE FROM memories", "not_select"),
        ("DROP VIEW memories", "not_select"),
        ("CREATE TABLE t (a int)", "not_select"),
        ("TRUNCATE memories", "not_select"),
        ("SET ROLE postgres", "not_select"),
        ("RESET ROLE", "not_select"),
        ("COPY (SELECT 1) TO STDOUT", "not_select"),
        ("EXPLAIN ANALYZE SELECT 1", "not_select"),
        ("DO $$ BEGIN PERFORM 1; END $$", "not_select"),
        ("WITH gone AS (DELETE FROM memories RETURNING *) SELECT * FROM gone", "writable_cte"),
        ("WITH x AS (UPDATE memories SET pinned = true RETURNING id) SELECT 1", "writable_cte"),
        ("SELECT 1; DELETE FROM memories", "multiple_statements"),
        ("SELECT 1; SELECT 2", "multiple_statements"),
        ("SELECT * FROM memories FOR UPDATE", "locking_clause"),
        ("SELECT * FROM memories FOR SHARE SKIP LOCKED", "locking_clause"),
        ("SELECT * INTO stolen FROM memories", "select_into"),
        ("SELECT pg_sleep(10)", "forbidden_function"),
        ("SELECT pg_catalog.pg_sleep(10)", "forbidden_function"),
        ("SELECT set_config('deeprecall.query_owner', 'x', true)", "forbidden_function"),
        ("SELECT current_setting('deeprecall.query_owner')", "forbidden_function"),
        ("SELECT dblink('host=evil', 'SELECT 1')", "forbidden_function"),
        ("SELECT pg_read_file('/etc/passwd')", "forbidden_function"),
        ("SELECT * FROM pg_ls_dir('.')", "forbidden_function"),
        ("SELECT query_to_xml('SELECT * FROM public.memories_memory', true, true, '')", "forbidden_function"),
        ("SELECT lo_import('/etc/passwd')", "forbidden_function"),
        ("SELECT nextval('x')", "forbidden_function"),
        ("SELECT current_user", "forbidden_function"),
        ("SELECT * FROM pg_class", "forbidden_relation"),
        ("SELECT * FROM pg_catalog.pg_authid", "forbidden_relation"),
        ("SELECT * FROM pg_roles", "forbidden_relation"),
        ("SELECT * FROM information_schema.tables", "forbidden_relation"),
        ("SELECT * FROM public.memories_memory", "forbidden_relation"),
        ("SELECT * FROM memories_memory", "forbidden_relation"),
        ("SELECT * FROM accounts_user", "forbidden_relation"),
        ("WITH x AS (SELECT 1) SELECT * FROM pg_class", "forbidden_relation"),
        ("WITH pg_class AS (SELECT 1) SELECT * FROM pg_class", "forbidden_relation"),
        ("SELECT public.memories_memory.content FROM memories", "forbidden_relation"),
        ("SELECT 'pg_authid'::regclass", "forbidden_type"),
        ("SELECT 'pg_sleep'::regproc", "forbidden_type"),
        ("SELECT xmlelement(name a)", "forbidden_construct"),
        ("SELECT 1 FROM memories WHERE id = $2", "parameters"),
        ("SELECT nope FROM memories", "unknown_column"),
        # Attribute notation on a function alias is a call: name(alias), whatever name is.
        ("SELECT g.pg_sleep FROM unnest(ARRAY[1]) AS g", "unknown_column"),
        ("SELECT (g).pg_sleep FROM unnest(ARRAY[1]) AS g", "field_selection"),
        # Names PostgreSQL resolves past what a naive scope would see: a join's alias hides the
        # tables inside it, a plain subquery in FROM and a JOIN's ON clause do not see the FROM
        # items beside them, so the name reaches the function alias of the enclosing level.
        (
            "SELECT x.ts_stat FROM unnest(ARRAY['a']) AS x,"
            " ((SELECT 'a' AS ts_stat) AS x CROSS JOIN memories AS m) AS j",
            "unknown_column",
        ),
        (
            "SELECT (SELECT s.q FROM (SELECT 'a' AS ts_stat) AS x, (SELECT x.ts_stat AS q) AS s)"
            " FROM unnest(ARRAY['a']) AS x",
            "unknown_column",
        ),
        (
            "SELECT (SELECT 1 FROM (SELECT 'a' AS ts_stat) AS x, memories AS m JOIN memories AS n"
            " ON x.ts_stat IS NOT NULL) FROM unnest(ARRAY['a']) AS x",
            "unknown_column",
        ),
        ('SELECT "LOWER"(content) FROM memories', "forbidden_function"),
        ("SELECT 1 OPERATOR(public.+) 1", "forbidden_function"),
        ("SELEC 1", "syntax_error"),
        ("SELECT 'unterminated", "syntax_error"),
    ],
)
def test_escape_attempts_are_refused_with_a_reason(cast, alice, sql, reason):
    before = (Memory.objects.count(), Source.objects.count())
    error = rejected(alice, sql)
    assert error.code == "query_rejected" and error.http_status == 400
    assert error.details["reason"] == reason, (sql, error.details)
    assert (Memory.objects.count(), Source.objects.count()) == before


def test_the_role_itself_cannot_read_tables_or_write_even_past_the_guard(cast, alice):
    """The guard is not the only wall: a statement it would refuse, run as the query role in the
    transaction `query_run` opens, is refused by PostgreSQL itself."""
    from memories.open_query.guard import CheckedQuery

    space = cast["alice_space"]
    for sql, code in (
        ("SELECT content FROM public.memories_memory", "query_rejected"),  # permission denied
        ("SELECT * FROM public.accounts_user", "query_rejected"),
        ("SELECT * FROM public.open_query_scope", "query_rejected"),
        ("SELECT count(*) FROM pg_catalog.pg_authid", "query_rejected"),
    ):
        unchecked = CheckedQuery(sql=sql, parameter_count=0, views=())
        with pytest.raises(AppError) as caught:
            query_run(owner=alice, space=space, query=unchecked, params=[])
        assert caught.value.code == code, sql
    # A setting the role can change decides nothing: with Bob's ids in the settings an earlier design
    # keyed the views on, and even a try at switching role, the views still show only Alice's rows.
    bob = cast["bob_space"]
    everything = "(SELECT string_agg(content, ',') FROM memories)"
    for sql in (
        f"SELECT set_config('deeprecall.query_owner', '{bob.owner_id}', true),"
        f" set_config('deeprecall.query_space', '{bob.id}', true), {everything}",
        f"SELECT set_config('role', 'postgres', true), {everything}",
    ):
        try:
            result = query_run(owner=alice, space=space, query=CheckedQuery(sql, 0, ()), params=[])
        except AppError as exc:
            assert exc.code in ("query_failed", "query_rejected"), sql
            continue
        assert "Bob" not in str(result.rows) and "quarterly" not in str(result.rows), sql
    # A write, past the guard: the transaction is READ ONLY, and the role may not write anyway.
    write = CheckedQuery(
        sql="WITH x AS (DELETE FROM memories RETURNING 1) SELECT count(*) FROM x", parameter_count=0, views=()
    )
    with pytest.raises(AppError) as caught:
        query_run(owner=alice, space=space, query=write, params=[])
    assert caught.value.code in ("query_failed", "query_rejected")
    assert Memory.objects.filter(owner=alice).count() == 3
    # And the connection is the service's own again afterwards.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_user <> %s, current_setting('transaction_read_only')", [settings.OPEN_QUERY_ROLE]
        )
        assert cursor.fetchone() == (True, "off")


def test_a_long_query_is_stopped_by_the_statement_timeout(cast, alice, settings):
    settings.OPEN_QUERY_TIMEOUT_MS = 300
    started = timezone.now()
    error = rejected(alice, "SELECT count(*) FROM generate_series(1, 1000000000) AS a")
    assert error.code == "query_timeout" and error.details["statement_timeout_ms"] == 300
    assert timezone.now() - started < timedelta(seconds=10)


def test_huge_results_are_capped_and_the_drop_reported(cast, alice, settings):
    settings.OPEN_QUERY_MAX_ROWS = 50
    many = run(alice, "SELECT n FROM generate_series(1, 100000) AS n")
    assert values(many) == list(range(1, 51))
    assert [(d["reason"], d["cap"]) for d in many.drops] == [("row_cap", 50)]
    asked = run(alice, "SELECT n FROM generate_series(1, 100) AS n", limit=7)
    assert len(asked.rows) == 7 and asked.drops[0]["cap"] == 7
    exact = run(alice, "SELECT n FROM generate_series(1, 50) AS n")
    assert len(exact.rows) == 50 and exact.drops == []
    settings.OPEN_QUERY_MAX_BYTES = 2000
    wide = run(alice, "SELECT repeat('x', 300) FROM generate_series(1, 40)")
    assert 0 < len(wide.rows) < 7
    assert [d["reason"] for d in wide.drops] == ["byte_cap"]


def test_runtime_errors_of_the_callers_sql_are_query_failed(cast, alice):
    for sql in ("SELECT 1 / 0", "SELECT 'x'::uuid", "SELECT content::int4 FROM (SELECT 'x' AS content) AS t"):
        error = rejected(alice, sql)
        assert error.code == "query_failed" and error.http_status == 422, sql
        assert error.details["sqlstate"]
        assert "public." not in error.message and "memories_memory" not in error.message


def test_parameters_are_bound_never_spliced(cast, alice):
    tea = cast["tea"]
    sql = "SELECT content, '$1 and 100%' AS literal FROM memories WHERE id = $1::uuid AND content LIKE $2"
    result = run(alice, sql, [str(tea.id), "%tea%"], space=cast["alice_space"])
    assert result.rows == [["I love green tea.", "$1 and 100%"]]
    injected = run(alice, "SELECT $1::text", ["x'; DELETE FROM memories; --"])
    assert injected.rows == [["x'; DELETE FROM memories; --"]]
    with pytest.raises(AppError) as caught:
        run(alice, "SELECT $1::text", [])
    assert caught.value.code == "invalid_arguments"


def test_the_snapshot_time_is_the_transactions(cast, alice):
    before = timezone.now()
    result = run(alice, "SELECT now()")
    assert before <= result.snapshot_at <= timezone.now()
    # now() is the transaction's start: the snapshot is taken by its first statement, just after.
    transaction_start = datetime.fromisoformat(result.rows[0][0])
    assert transaction_start <= result.snapshot_at < transaction_start + timedelta(seconds=1)


# === the views are what the catalogue documents ============================================


def test_the_deployed_views_have_exactly_the_documented_columns(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name, udt_name FROM information_schema.columns "
            "WHERE table_schema = %s ORDER BY table_name, ordinal_position",
            [SCHEMA],
        )
        deployed: dict[str, list[tuple[str, str]]] = {}
        for table, column, udt in cursor.fetchall():
            deployed.setdefault(table, []).append(
                (column, udt.lstrip("_") + ("[]" if udt.startswith("_") else ""))
            )
    documented = {
        name: [(c.name, c.type.replace("boolean", "bool")) for c in view.columns]
        for name, view in VIEWS.items()
    }
    assert deployed == documented


def test_holds_now_agrees_with_the_one_current_rule(alice):
    space = space_create_default(owner=alice)
    now = timezone.now()
    cases = [
        {},
        {"valid_until": now - timedelta(days=1)},
        {"valid_until": now + timedelta(days=1)},
        {"superseded_at": now - timedelta(hours=1)},
        {"valid_from": now + timedelta(days=3)},
        # Replaced by a change that starts later: it holds until then (memories.as_of).
        {"superseded_at": now - timedelta(hours=1), "valid_until": now + timedelta(days=30)},
    ]
    for index, fields in enumerate(cases):
        _memory(alice, space, f"case {index}", **fields)
    expected = set(
        Memory.objects.filter(current_q(now=timezone.now()), owner=alice).values_list("content", flat=True)
    )
    held = run(alice, "SELECT content FROM memories WHERE holds_now", space=space)
    assert set(values(held)) == expected and len(expected) == 4


# === saved queries ========================================================================


def test_there_are_the_contracts_eighteen_saved_queries_and_the_guard_accepts_each(db):
    # contracts/evidence-mcp.txt: "The eighteen demoted patterns are discoverable examples.* saved
    # queries, not tools."
    assert len(SAVED) == 18
    assert all(name.startswith("examples.") for name in SAVED)
    for saved in SAVED.values():
        checked = query_check(saved.sql)
        assert checked.parameter_count == len(saved.params), saved.name


def test_every_saved_query_runs_on_real_rows(cast, alice):
    space = cast["alice_space"]
    paris, berlin = (
        Entity.objects.create(owner=alice, space=space, name=n, normalized_name=n.lower(), type="Location")
        for n in ("Paris", "Berlin")
    )
    person = Entity.objects.create(
        owner=alice, space=space, name="Mara", normalized_name="mara", type="Person"
    )
    old = Relation.objects.create(owner=alice, space=space, subject=person, object=paris, type="lives_in")
    new = Relation.objects.create(owner=alice, space=space, subject=person, object=berlin, type="lives_in")
    Relation.objects.filter(id=old.id).update(superseded_at=timezone.now(), superseded_by=new)
    said = _source(alice, space, "Mara lives in Berlin", claimant="agent:1")
    Evidence.objects.create(owner=alice, source=said, relation=new)
    Evidence.objects.create(owner=alice, source=said, relation=old, stance=Evidence.Stance.CONTRADICTS)
    arguments = {
        "entity_id": str(person.id),
        "fact_id": str(old.id),
        "since": (timezone.now() - timedelta(days=1)).isoformat(),
        "at": timezone.now().isoformat(),
        "start": (timezone.now() - timedelta(days=30)).isoformat(),
        "end": timezone.now().isoformat(),
        "source_kind": "gdrive",
        "source_ref": "doc-1",
        "subject_entity_id": str(person.id),
        "known_at": timezone.now().isoformat(),
    }
    from memories.operations.validation import validate_arguments

    results = {}
    for saved in SAVED.values():
        validated = validate_arguments(
            saved.input_schema, {name: arguments[name] for name, _ in saved.params if name in arguments}
        )
        results[saved.name] = run(alice, saved.sql, saved.positional(validated), space=space)
    current = results["examples.current_relations_of_entity"]
    assert [(row[1], row[3]) for row in current.rows] == [("lives_in", "Berlin")]
    contradicted = results["examples.facts_with_contradictions"]
    assert [(row[0], row[4], row[5]) for row in contradicted.rows] == [(str(old.id), 0, 1)]
    sources = results["examples.sources_of_fact"]
    assert [(row[0], row[1]) for row in sources.rows] == [(str(said.id), "contradicts")]
    history = results["examples.relation_history_of_entity"]
    assert {row[3] for row in history.rows} == {"Paris", "Berlin"}
    assert len(results["examples.changed_since"].rows) >= 3
    assert results["examples.memories_by_month"].rows[0][2] == 1
    # relation_current with its optional predicate left out: every current relation of the subject.
    assert [(row[1], row[5]) for row in results["examples.relation_current"].rows] == [("lives_in", "Berlin")]
    predicate = run(alice, SAVED["examples.relation_current"].sql, [str(person.id), "works_at"], space=space)
    assert predicate.rows == []
    known = results["examples.facts_known_at"]
    assert {row[2] for row in known.rows} >= {"I love green tea.", "Mara lives_in Berlin"}
    assert "Mara lives_in Paris" not in {row[2] for row in known.rows}
