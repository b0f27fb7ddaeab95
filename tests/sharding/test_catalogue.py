"""Every tenant key carries the owner: read from PostgreSQL's catalogue (pg_constraint, pg_index).

Citus can enforce a primary key, a unique constraint or a foreign key of a table distributed by
owner only when it contains the owner column (docs/scale.md, "Sharding by owner (Citus)"). This
reads the migrated test database, so a new table or key (a migration of any branch) is checked as
it is, and each failure says what to change.
"""

from __future__ import annotations

import pytest
from django.db import connection

from memories import sharding

pytestmark = pytest.mark.django_db

HOW_TO = (
    "\n\nHow to fix: a tenant table's primary key is (owner_id, id) (Django keeps `id` as its primary "
    "key field), its unique constraints list owner first (UniqueConstraint(fields=['owner', ...])), and "
    "a reference to another tenant table is a ForeignKey(..., db_constraint=False) plus the composite "
    "FOREIGN KEY (owner_id, x_id) REFERENCES <table> (owner_id, id) in the migration: "
    "memories/migrations/0029_tenant_keys_with_owner.py shows all three. A table without an owner "
    "is listed in memories/sharding.py REFERENCE_TABLES or LOCAL_TABLES, with why."
)


def _public_tables() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname FROM pg_class"
            " WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p')"
        )
        return {name for (name,) in cursor.fetchall()}


def _columns(table: str, attnums: list[int]) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attnum, attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum = ANY(%s)",
            [table, attnums],
        )
        names = dict(cursor.fetchall())
    # 0 is an expression's place in an index (lower(name)).
    return [names.get(n, "(expression)") for n in attnums]


def _unique_keys(table: str) -> list[tuple[str, list[str]]]:
    """Every unique index of `table` (primary key and unique constraints are unique indexes too)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indexrelid::regclass::text, i.indkey::int2[] FROM pg_index i"
            " WHERE i.indrelid = %s::regclass AND i.indisunique",
            [table],
        )
        rows = cursor.fetchall()
    return [(name, _columns(table, list(keys))) for name, keys in rows]


def _foreign_keys() -> list[tuple[str, str, str, list[str], list[str]]]:
    """(constraint, table, referenced table, its columns, the referenced columns) for every foreign key."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname, conrelid::regclass::text, confrelid::regclass::text,"
            " conkey::int2[], confkey::int2[]"
            " FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace"
        )
        rows = cursor.fetchall()
    return [
        (name, table, target, _columns(table, list(keys)), _columns(target, list(target_keys)))
        for name, table, target, keys, target_keys in rows
    ]


def test_it_classifies_every_table():
    tenants = {t.name for t in sharding.tenant_tables()}
    listed = set(sharding.REFERENCE_TABLES) | set(sharding.LOCAL_TABLES)
    tables = _public_tables()
    unclassified = sorted(tables - tenants - listed)
    assert not unclassified, (
        f"tables neither tenant nor listed: {unclassified}. Give each an owner_id column (one owner's "
        "rows: a tenant table) or list it in memories/sharding.py REFERENCE_TABLES (a tenant table's "
        "foreign key points at it) or LOCAL_TABLES (service state), with why." + HOW_TO
    )
    stale = sorted(listed - tables)
    assert not stale, f"memories/sharding.py lists tables that no longer exist: {stale}"
    both = sorted(tenants & set(sharding.REFERENCE_TABLES))
    assert not both, f"tables with an owner column listed as reference tables: {both}"


def test_it_finds_the_tenant_tables_of_the_data():
    # The discovery is by column: the tables of every owner's rows must be among what it found.
    names = {t.name for t in sharding.tenant_tables()}
    for table in ("memories_memory", "memories_memory_entities", "memories_evidence", "memories_auditevent"):
        assert table in names


def test_it_keeps_the_owner_in_every_primary_key_and_unique_key_of_a_tenant_table():
    problems = []
    for table in sharding.tenant_tables():
        keys = _unique_keys(table.name)
        if not any(name == f"{table.name}_pkey" for name, _ in keys):
            problems.append(f"{table.name}: no primary key named {table.name}_pkey")
        for name, columns in keys:
            if table.owner_column not in columns:
                problems.append(
                    f"{table.name}: unique key {name} ({', '.join(columns)}) lacks {table.owner_column}"
                )
    assert not problems, "\n".join(problems) + HOW_TO


def test_it_joins_every_tenant_foreign_key_on_the_owner():
    tenants = {t.name: t.owner_column for t in sharding.tenant_tables()}
    problems = []
    for name, table, target, columns, target_columns in _foreign_keys():
        if table in tenants and target in tenants:
            pairs = list(zip(columns, target_columns, strict=True))
            if (tenants[table], tenants[target]) not in pairs:
                problems.append(
                    f"{table}: foreign key {name} ({', '.join(columns)})"
                    f" -> {target} ({', '.join(target_columns)})"
                    f" does not join on {tenants[table]} = {target}.{tenants[target]}"
                )
        elif table in tenants and target not in sharding.REFERENCE_TABLES:
            problems.append(
                f"{table}: foreign key {name} points at {target}, which is not a reference table"
                " (Citus refuses a distributed table's reference to a local one)"
            )
        elif table not in tenants and target in tenants:
            problems.append(
                f"{table}: foreign key {name} points at the tenant table {target} from a table without"
                " an owner (Citus refuses it): give the table an owner_id"
            )
    assert not problems, "\n".join(problems) + HOW_TO


def test_it_refuses_a_row_that_points_at_another_owners_row(alice, bob):
    # The composite keys are not only shapes: the database now refuses what no code may write.
    from django.db import IntegrityError, transaction

    from memories.models import Memory
    from memories.selectors.spaces import space_default

    with pytest.raises(IntegrityError), transaction.atomic():
        Memory.objects.create(owner=alice, space=space_default(owner=bob), kind="fact", content="crossed")
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def test_it_plans_every_tenant_table_after_the_tables_it_references():
    plan = sharding.citus_plan()
    order = [line.split("'")[1] for line in plan if "create_distributed_table" in line]
    assert sorted(order) == sorted(t.name for t in sharding.tenant_tables())
    for _name, table, target, _columns, _target_columns in _foreign_keys():
        if table in order and target in order and table != target:
            assert order.index(target) < order.index(table), f"{table} is distributed before {target}"
