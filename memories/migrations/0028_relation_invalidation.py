from django.db import migrations, models


class Migration(migrations.Migration):
    """A relation retired by `invalidate`: when, and the reason in words (restorable)."""

    dependencies = [
        ("memories", "0027_source_version_ref"),
    ]

    operations = [
        migrations.AddField(
            model_name="relation",
            name="invalidated_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="relation",
            name="invalidated_note",
            field=models.CharField(blank=True, max_length=500),
        ),
    ]
