"""How the tables divide when the database is sharded by owner (Citus; docs/scale.md).

The one home of the division, read by the catalogue test (tests/sharding/test_catalogue.py), the
`citus_plan` command (the operator's SQL) and the opt-in Citus test:

- a *tenant* table holds one owner's rows and is distributed by its owner column, colocated with
  every other tenant table: each table with an `owner_id` column, and those named in
  `OTHER_OWNER_COLUMNS`. Its primary key, unique constraints and foreign keys to other tenant
  tables all contain the owner column (migration 0029);
- a *reference* table is copied whole to every node: the ones a tenant table's foreign key points
  at (Citus allows a distributed table to reference a reference table, not a local one);
- a *local* table stays on the coordinator: service state nobody joins with tenant rows.

A table that is none of these fails the catalogue test, which says which list to put it in.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

SHARD_COLUMN = "owner_id"

# Tenant tables whose owner column has another name.
OTHER_OWNER_COLUMNS: dict[str, str] = {
    # The audit trail keeps the owner as a bare id (the row outlives the account for the purge
    # receipt), so it has no `owner_id` foreign key; it is still one owner's rows.
    "memories_auditevent": "owner_id_snapshot",
}

REFERENCE_TABLES: dict[str, str] = {
    "accounts_user": "every tenant row's owner_id references it; small, read on every request",
    "accounts_personalaccesstoken": "a grant's space (memories_grantspace) references it; found by "
    "its hash before the owner is known",
    "oauth2_provider_application": "the agent of sources, jobs, memories, grants and audit events "
    "references it; shared by every owner",
}

LOCAL_TABLES: dict[str, str] = {
    "open_query_scope": "the open query's concurrency, keyed by the coordinator's backend pid; its "
    "owner_id is a count key, not a row of the owner's",
    "deeprecall_cache": "rate-limit counters, written on every request, joined with nothing",
    "django_session": "sign-in sessions, found by their key before the owner is known",
    "django_migrations": "the schema's history",
    "django_content_type": "Django's catalogue of models",
    "django_admin_log": "operators' actions",
    "auth_permission": "Django's permissions",
    "auth_group": "Django's groups",
    "auth_group_permissions": "Django's groups",
    "accounts_user_groups": "Django's groups",
    "accounts_user_user_permissions": "Django's permissions",
    "accounts_authorizationcodeuse": "found by the code's hash before the owner is known",
    "accounts_apppause": "read with the OAuth token on each request, beside the token tables",
    "oauth2_provider_accesstoken": "found by the token before the owner is known",
    "oauth2_provider_refreshtoken": "found by the token before the owner is known",
    "oauth2_provider_grant": "found by the code before the owner is known",
    "oauth2_provider_idtoken": "found by the token before the owner is known",
    "oauth2_provider_devicegrant": "found by the device code before the owner is known",
}


@dataclass(frozen=True)
class TenantTable:
    name: str
    owner_column: str


def tenant_tables() -> list[TenantTable]:
    """The tenant tables of the connected database, read from its catalogue: every table of the
    public schema with an `owner_id` column (but the local ones) and those of `OTHER_OWNER_COLUMNS`."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid"
            " WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')"
            " AND a.attname = %s AND NOT a.attisdropped ORDER BY c.relname",
            [SHARD_COLUMN],
        )
        found = [TenantTable(name, SHARD_COLUMN) for (name,) in cursor.fetchall() if name not in LOCAL_TABLES]
    found += [TenantTable(name, column) for name, column in OTHER_OWNER_COLUMNS.items()]
    return sorted(found, key=lambda table: table.name)


def _tenant_references() -> set[tuple[str, str]]:
    """(table, referenced table) for each foreign key between two tenant tables, self-references aside."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint"
            " WHERE contype = 'f' AND connamespace = 'public'::regnamespace AND conrelid <> confrelid"
        )
        return set(cursor.fetchall())


def citus_plan(*, colocate_with: str = "memories_space") -> list[str]:
    """The statements that distribute this database with Citus, in order (docs/scale.md): reference
    tables first (tenant tables' foreign keys point at them), then every tenant table by its owner
    column, all in one colocation group so that an owner's rows of every table share a node; a table
    after every tenant table it references (Citus checks a foreign key when it distributes the
    table that holds it)."""
    statements = [f"SELECT create_reference_table('{name}');" for name in sorted(REFERENCE_TABLES)]
    tables = {table.name: table for table in tenant_tables()}
    references = _tenant_references()
    placed: list[str] = []
    while len(placed) < len(tables):
        ready = sorted(
            name
            for name in tables
            if name not in placed
            and all(target in placed for table, target in references if table == name and target in tables)
        )
        if not ready:
            raise RuntimeError(
                f"the tenant tables reference each other in a circle: {sorted(set(tables) - set(placed))}"
            )
        # The colocation group's first table is the one every other joins.
        placed += sorted(ready, key=lambda name: name != colocate_with)
    for name in placed:
        table = tables[name]
        group = "none" if name == placed[0] else placed[0]
        statements.append(
            f"SELECT create_distributed_table('{name}', '{table.owner_column}', colocate_with => '{group}');"
        )
    return statements
