from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0001_squashed_0008_memory_suppressed_reason_choices"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="starts_by",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="memory",
            name="stated_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        # Rows saved before this field were said when their source refers to, else when recorded.
        migrations.RunSQL(
            """
            UPDATE memories_memory AS m
               SET stated_at = coalesce(s.refers_to, m.recorded_at)
              FROM memories_source AS s
             WHERE s.id = m.source_id AND m.stated_at IS NULL;
            UPDATE memories_memory SET stated_at = recorded_at WHERE stated_at IS NULL;
            """,
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
