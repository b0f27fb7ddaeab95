from django.db import migrations, models


class Migration(migrations.Migration):
    """The evidence contract's `source_version_ref`: a document version's own name at its source."""

    dependencies = [
        ("memories", "0026_open_query_scope_by_backend"),
    ]

    operations = [
        migrations.AddField(
            model_name="source",
            name="source_version_ref",
            field=models.CharField(blank=True, max_length=500),
        ),
    ]
