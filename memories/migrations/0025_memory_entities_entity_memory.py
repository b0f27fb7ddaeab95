# An index on the memory-entity links by entity, covering the memory: recall's entity expansion
# (`expand_entities`) reads every link of a few entities, and with only the single-column entity_id
# index the planner read the whole link table (every owner's links) and hashed it. With this one it
# reads each entity's links off the index alone. Among 100,000 memories, an `expand_entities`
# recall's statement (in process, 60 questions) p50 / p95 24.0 / 34.1 ms -> 14.7-17.6 / 23.7-27.9
# ms, and through HTTP 40.2 / 49.6 -> 35.1 / 46.2 ms (docs/retrieval.md). Saves did not slow.
#
# The through table of Memory.entities is made by Django, with no model of its own in the migration
# state, so the index is SQL. Concurrently: a plain CREATE INDEX would hold off every save's links
# while it builds.

from django.db import migrations

CREATE = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS memory_entities_entity_memory"
    " ON memories_memory_entities (entity_id, memory_id)"
)
DROP = "DROP INDEX CONCURRENTLY IF EXISTS memory_entities_entity_memory"


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memories", "0024_hnsw_ef_construction_128"),
    ]

    operations = [migrations.RunSQL(CREATE, reverse_sql=DROP)]
