# The HNSW index rebuilt with ef_construction 128 (was 64): see memories.models.Memory.Meta.
#
# Concurrently, under a new name, then swapped in: a plain DROP INDEX + CREATE INDEX in one
# transaction would hold the table's exclusive lock through the whole build (about 40 s per 100,000
# memories here), and recalls as well as saves would wait on it. The old index serves recalls until
# the new one is ready.

import pgvector.django.indexes
from django.conf import settings
from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations

# pgvector builds the graph in memory up to maintenance_work_mem (64 MB by default, about 40,000
# memories) and goes on far more slowly on disk past it. 512 MB holds the graph of about 300,000;
# a higher value the operator gave the role is kept.
MORE_MEMORY = """
SELECT set_config('maintenance_work_mem', '512MB', false)
WHERE pg_size_bytes(current_setting('maintenance_work_mem')) < pg_size_bytes('512MB')
"""


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memories", "0023_memory_world_start"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        migrations.swappable_dependency(settings.OAUTH2_PROVIDER_APPLICATION_MODEL),
    ]

    operations = [
        migrations.RunSQL(MORE_MEMORY, reverse_sql=migrations.RunSQL.noop),
        AddIndexConcurrently(
            model_name="memory",
            index=pgvector.django.indexes.HnswIndex(
                ef_construction=128,
                fields=["embedding"],
                m=16,
                name="memory_embedding_hnsw_128",
                opclasses=["vector_cosine_ops"],
            ),
        ),
        RemoveIndexConcurrently(model_name="memory", name="memory_embedding_hnsw"),
        migrations.RenameIndex(
            model_name="memory", new_name="memory_embedding_hnsw", old_name="memory_embedding_hnsw_128"
        ),
        migrations.RunSQL("RESET maintenance_work_mem", reverse_sql=migrations.RunSQL.noop),
    ]
