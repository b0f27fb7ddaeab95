"""Imports (issue 44): one row per import of a history. A tenant table like the others (migration
0029): its primary key is (owner_id, id) and its references to the space and the job join on the
owner, so the database refuses an import pointing at another owner's space or job."""

import django.db.models.deletion
import django.utils.timezone
import uuid
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0029_tenant_keys_with_owner'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='auditevent',
            name='action',
            field=models.CharField(choices=[('created', 'Created'), ('updated', 'Updated'), ('pinned', 'Pinned'), ('unpinned', 'Unpinned'), ('suppressed', 'Suppressed'), ('restored', 'Restored'), ('hard_deleted', 'Hard Deleted'), ('exported', 'Exported'), ('space_created', 'Space Created'), ('space_deleted', 'Space Deleted'), ('account_created', 'Account Created'), ('account_deleted', 'Account Deleted'), ('password_changed', 'Password Changed'), ('token_created', 'Token Created'), ('token_revoked', 'Token Revoked'), ('app_revoked', 'App Revoked'), ('relation_created', 'Relation Created'), ('space_switched', 'Space Switched'), ('imported', 'Imported'), ('import_undone', 'Import Undone')], max_length=30),
        ),
        migrations.AlterField(
            model_name='job',
            name='kind',
            field=models.CharField(choices=[('remember', 'Remember'), ('ingest', 'Ingest'), ('reembed', 'Reembed'), ('import', 'Import')], max_length=20),
        ),
        migrations.CreateModel(
            name='Import',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('format', models.CharField(choices=[('chatgpt', 'Chatgpt'), ('claude', 'Claude'), ('mem0', 'Mem0'), ('markdown', 'Markdown'), ('deeprecall', 'Deeprecall')], max_length=20)),
                ('filename', models.CharField(blank=True, max_length=255)),
                ('size_bytes', models.PositiveBigIntegerField(default=0)),
                ('data', models.BinaryField(null=True)),
                ('items_total', models.PositiveIntegerField(default=0)),
                ('items_read', models.PositiveIntegerField(default=0)),
                ('items_stored', models.PositiveIntegerField(default=0)),
                ('items_skipped', models.PositiveIntegerField(default=0)),
                ('items_failed', models.PositiveIntegerField(default=0)),
                ('skipped_reasons', models.JSONField(blank=True, default=dict)),
                ('failures', models.JSONField(blank=True, default=list)),
                ('cancel_requested_at', models.DateTimeField(blank=True, null=True)),
                ('undone_at', models.DateTimeField(blank=True, null=True)),
                ('undo_receipt', models.JSONField(blank=True, null=True)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('job', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.job')),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('space', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='imports', to='memories.space')),
            ],
            options={
                'ordering': ['-created_at'],
                'indexes': [models.Index(fields=['owner', 'created_at'], name='import_owner_created')],
                'constraints': [models.UniqueConstraint(fields=('owner', 'job'), name='import_one_per_job')],
            },
        ),
        migrations.RunSQL(
            sql="""
CREATE UNIQUE INDEX memories_import_owner_pkey ON memories_import (owner_id, id);
ALTER TABLE memories_import DROP CONSTRAINT memories_import_pkey,
    ADD CONSTRAINT memories_import_pkey PRIMARY KEY USING INDEX memories_import_owner_pkey;
ALTER TABLE memories_import ADD CONSTRAINT import_space_id_owner_fk FOREIGN KEY (owner_id, space_id)
    REFERENCES memories_space (owner_id, id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE memories_import ADD CONSTRAINT import_job_id_owner_fk FOREIGN KEY (owner_id, job_id)
    REFERENCES memories_job (owner_id, id) DEFERRABLE INITIALLY DEFERRED;
""",
            reverse_sql="""
ALTER TABLE memories_import DROP CONSTRAINT import_job_id_owner_fk;
ALTER TABLE memories_import DROP CONSTRAINT import_space_id_owner_fk;
ALTER TABLE memories_import DROP CONSTRAINT memories_import_pkey, ADD CONSTRAINT memories_import_pkey PRIMARY KEY (id);
""",
        ),
    ]
