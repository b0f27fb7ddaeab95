"""Every tenant table carries its owner in its primary key, unique constraints and foreign keys.

Citus (distributed PostgreSQL, docs/scale.md "Sharding by owner (Citus)") places each row on the
shard of its distribution column, `owner_id`, and can enforce a key only where all of the key's rows
meet on one shard: a primary key or unique constraint must contain the distribution column, and a
foreign key between two distributed tables must join them on it. So:

- every tenant table's primary key becomes (owner_id, id) (the audit trail's (owner_id_snapshot, id));
  Django keeps `id` as its primary key field (the ORM, the admin and ForeignKey need one column), and
  ids stay random UUIDs, so `id` alone stays unique in practice (docs/decisions.md);
- every foreign key from one tenant table to another becomes (owner_id, x_id) -> (owner_id, id): the
  database now also refuses a row that points at another owner's row, which nothing refused before.
  Django's single-column constraints go (`db_constraint=False` on the fields); the new ones are
  created NOT VALID and then validated, so existing rows are checked without blocking writes for the
  check, and a row that pointed across owners stops the migration and names the constraint;
- the unique constraints that lacked the owner (an entity's name in a space, one evidence row per
  claim and source) gain it: a weaker key, which existing rows satisfy;
- the memory-entity link table gets an `owner_id` column (filled from its memory) and a model of its
  own (`MemoryEntity`), since the auto-made table of a ManyToManyField cannot carry a column more.

One transaction: a failure leaves the schema as it was. The new primary keys are built under the
table's lock; on a table too big for that pause, build `CREATE UNIQUE INDEX CONCURRENTLY
<table>_owner_pkey ON <table> (owner_id, id)` first and this migration uses it (docs/scale.md).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# (table, the owner column): the tenant tables of memories.sharding, frozen here.
TENANT_TABLES = [
    ("memories_space", "owner_id"),
    ("memories_source", "owner_id"),
    ("memories_entity", "owner_id"),
    ("memories_job", "owner_id"),
    ("memories_memory", "owner_id"),
    ("memories_memory_entities", "owner_id"),
    ("memories_relation", "owner_id"),
    ("memories_evidence", "owner_id"),
    ("memories_grantspace", "owner_id"),
    ("memories_auditevent", "owner_id_snapshot"),
]

# (table, column, referenced table): every reference from one tenant table to another.
TENANT_REFERENCES = [
    ("memories_source", "space_id", "memories_space"),
    ("memories_entity", "space_id", "memories_space"),
    ("memories_job", "space_id", "memories_space"),
    ("memories_job", "source_id", "memories_source"),
    ("memories_memory", "space_id", "memories_space"),
    ("memories_memory", "source_id", "memories_source"),
    ("memories_memory", "job_id", "memories_job"),
    ("memories_memory", "superseded_by_id", "memories_memory"),
    ("memories_memory_entities", "memory_id", "memories_memory"),
    ("memories_memory_entities", "entity_id", "memories_entity"),
    ("memories_relation", "space_id", "memories_space"),
    ("memories_relation", "subject_id", "memories_entity"),
    ("memories_relation", "object_id", "memories_entity"),
    ("memories_relation", "superseded_by_id", "memories_relation"),
    ("memories_evidence", "source_id", "memories_source"),
    ("memories_evidence", "memory_id", "memories_memory"),
    ("memories_evidence", "relation_id", "memories_relation"),
    ("memories_grantspace", "space_id", "memories_space"),
]


def _fk_name(table: str, column: str) -> str:
    return f"{table.removeprefix('memories_')}_{column}_owner_fk"


# The link table: its owner from its memory; its key and its (memory, entity) uniqueness with it.
LINKS_FORWARD = """
ALTER TABLE memories_memory_entities ADD COLUMN owner_id uuid;
UPDATE memories_memory_entities me SET owner_id = m.owner_id FROM memories_memory m WHERE m.id = me.memory_id;
ALTER TABLE memories_memory_entities ALTER COLUMN owner_id SET NOT NULL;
ALTER TABLE memories_memory_entities ADD CONSTRAINT memories_memory_entities_owner_id_fk_accounts_user_id
    FOREIGN KEY (owner_id) REFERENCES accounts_user (id) DEFERRABLE INITIALLY DEFERRED;
DO $$
DECLARE name text;
BEGIN
    -- The auto-made table's constraints: their names carry a hash, so they are found, not spelled.
    FOR name IN SELECT conname FROM pg_constraint
                WHERE conrelid = 'memories_memory_entities'::regclass AND contype IN ('f', 'u')
                  AND conname <> 'memories_memory_entities_owner_id_fk_accounts_user_id'
    LOOP
        EXECUTE format('ALTER TABLE memories_memory_entities DROP CONSTRAINT %I', name);
    END LOOP;
END
$$;
ALTER TABLE memories_memory_entities
    ADD CONSTRAINT memory_entity_unique UNIQUE (owner_id, memory_id, entity_id);
"""

LINKS_BACKWARD = """
ALTER TABLE memories_memory_entities DROP CONSTRAINT memory_entity_unique;
ALTER TABLE memories_memory_entities ADD CONSTRAINT memories_memory_entities_memory_id_entity_id_f1ce51f5_uniq
    UNIQUE (memory_id, entity_id);
ALTER TABLE memories_memory_entities DROP COLUMN owner_id;
ALTER TABLE memories_memory_entities ADD CONSTRAINT memories_memory_enti_memory_id_986eae64_fk_memories_
    FOREIGN KEY (memory_id) REFERENCES memories_memory (id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE memories_memory_entities ADD CONSTRAINT memories_memory_enti_entity_id_20587e50_fk_memories_
    FOREIGN KEY (entity_id) REFERENCES memories_entity (id) DEFERRABLE INITIALLY DEFERRED;
"""


def _primary_keys_forward() -> str:
    statements = []
    for table, owner in TENANT_TABLES:
        statements.append(f"""
DO $$
BEGIN
    IF to_regclass('{table}_owner_pkey') IS NULL THEN
        CREATE UNIQUE INDEX {table}_owner_pkey ON {table} ({owner}, id);
    END IF;
END
$$;
ALTER TABLE {table} DROP CONSTRAINT {table}_pkey,
    ADD CONSTRAINT {table}_pkey PRIMARY KEY USING INDEX {table}_owner_pkey;""")
    return "\n".join(statements)


def _primary_keys_backward() -> str:
    return "\n".join(
        f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey, ADD CONSTRAINT {table}_pkey PRIMARY KEY (id);"
        for table, _owner in TENANT_TABLES
    )


def _references_forward() -> str:
    # NOT VALID, then VALIDATE: the check of existing rows takes a lock that lets writes go on.
    # Deferred like Django's own, so the order of a transaction's writes stays free.
    added = [
        f"ALTER TABLE {table} ADD CONSTRAINT {_fk_name(table, column)} FOREIGN KEY (owner_id, {column})"
        f" REFERENCES {target} (owner_id, id) DEFERRABLE INITIALLY DEFERRED NOT VALID;"
        for table, column, target in TENANT_REFERENCES
    ]
    validated = [
        f"ALTER TABLE {table} VALIDATE CONSTRAINT {_fk_name(table, column)};"
        for table, column, _target in TENANT_REFERENCES
    ]
    return "\n".join(added + validated)


def _references_backward() -> str:
    return "\n".join(
        f"ALTER TABLE {table} DROP CONSTRAINT {_fk_name(table, column)};"
        for table, column, _target in TENANT_REFERENCES
    )


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0028_relation_invalidation"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="entity",
            name="entity_unique_name_per_space",
        ),
        migrations.RemoveConstraint(
            model_name="evidence",
            name="evidence_unique_memory_source",
        ),
        migrations.RemoveConstraint(
            model_name="evidence",
            name="evidence_unique_relation_source",
        ),
        migrations.AlterField(
            model_name="entity",
            name="space",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="entities",
                to="memories.space",
            ),
        ),
        migrations.AlterField(
            model_name="evidence",
            name="memory",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="evidence",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="evidence",
            name="relation",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="evidence",
                to="memories.relation",
            ),
        ),
        migrations.AlterField(
            model_name="evidence",
            name="source",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="evidence",
                to="memories.source",
            ),
        ),
        migrations.AlterField(
            model_name="grantspace",
            name="space",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="memories.space",
            ),
        ),
        migrations.AlterField(
            model_name="job",
            name="source",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="jobs",
                to="memories.source",
            ),
        ),
        migrations.AlterField(
            model_name="job",
            name="space",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="jobs",
                to="memories.space",
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="job",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="memories",
                to="memories.job",
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="source",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="memories",
                to="memories.source",
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="space",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="memories",
                to="memories.space",
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="superseded_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="supersedes",
                to="memories.memory",
            ),
        ),
        migrations.AlterField(
            model_name="relation",
            name="object",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="incoming",
                to="memories.entity",
            ),
        ),
        migrations.AlterField(
            model_name="relation",
            name="space",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="relations",
                to="memories.space",
            ),
        ),
        migrations.AlterField(
            model_name="relation",
            name="subject",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="outgoing",
                to="memories.entity",
            ),
        ),
        migrations.AlterField(
            model_name="relation",
            name="superseded_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="supersedes",
                to="memories.relation",
            ),
        ),
        migrations.AlterField(
            model_name="source",
            name="space",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="sources",
                to="memories.space",
            ),
        ),
        migrations.AddConstraint(
            model_name="entity",
            constraint=models.UniqueConstraint(
                fields=("owner", "space", "normalized_name"), name="entity_unique_name_per_space"
            ),
        ),
        migrations.AddConstraint(
            model_name="evidence",
            constraint=models.UniqueConstraint(
                condition=models.Q(("memory__isnull", False)),
                fields=("owner", "memory", "source", "stance"),
                name="evidence_unique_memory_source",
            ),
        ),
        migrations.AddConstraint(
            model_name="evidence",
            constraint=models.UniqueConstraint(
                condition=models.Q(("relation__isnull", False)),
                fields=("owner", "relation", "source", "stance"),
                name="evidence_unique_relation_source",
            ),
        ),
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(LINKS_FORWARD, reverse_sql=LINKS_BACKWARD)],
            state_operations=[
                migrations.CreateModel(
                    name="MemoryEntity",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                    ],
                    options={
                        "db_table": "memories_memory_entities",
                    },
                ),
                migrations.AddField(
                    model_name="memoryentity",
                    name="entity",
                    field=models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="memories.entity",
                    ),
                ),
                migrations.AddField(
                    model_name="memoryentity",
                    name="memory",
                    field=models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="memories.memory",
                    ),
                ),
                migrations.AddField(
                    model_name="memoryentity",
                    name="owner",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="memory",
                    name="entities",
                    field=models.ManyToManyField(
                        blank=True,
                        related_name="memories",
                        through="memories.MemoryEntity",
                        to="memories.entity",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="memoryentity",
                    constraint=models.UniqueConstraint(
                        fields=("owner", "memory", "entity"), name="memory_entity_unique"
                    ),
                ),
            ],
        ),
        migrations.RunSQL(_primary_keys_forward(), reverse_sql=_primary_keys_backward()),
        migrations.RunSQL(_references_forward(), reverse_sql=_references_backward()),
    ]
