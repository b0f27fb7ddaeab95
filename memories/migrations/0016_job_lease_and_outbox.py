from django.db import migrations, models


class Migration(migrations.Migration):
    """Job claims become leases in the database (an expiry the worker's heartbeat extends), and a
    job records when its message reached the broker, so the sweep can send those whose publish
    failed (an outbox). Existing rows need no data: a running job without a lease is expired, and a
    job without published_at is sent again by the sweep, which a claim makes harmless."""

    dependencies = [
        ("memories", "0015_memory_invalidation_note"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="lease_expires_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="job",
            name="published_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
