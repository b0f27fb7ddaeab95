"""The memory tables as they stand after 0001-0008, squashed into one migration.

A database that applied 0001_pgvector_extension ... 0008_memory_suppressed_reason_choices treats
this one as applied (`replaces`); a new database runs only this. pgvector comes first: the
tables have vector columns.
"""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.contrib.postgres.search
import django.db.models.deletion
import django.utils.timezone
import pgvector.django.indexes
import pgvector.django.vector
from memories.db_extensions import CreateVectorExtension
import uuid
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ("memories", "0001_pgvector_extension"),
        ("memories", "0002_memory_tables"),
        ("memories", "0003_job_options_and_memory_slots"),
        ("memories", "0004_audit_revocation_actions"),
        ("memories", "0005_graph_evidence_layer"),
        ("memories", "0006_relation_embedding"),
        ("memories", "0007_audit_account_and_token_actions"),
        ("memories", "0008_memory_suppressed_reason_choices"),
    ]

    dependencies = [
        ('accounts', '0001_squashed_0002_personal_access_tokens'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        migrations.swappable_dependency(settings.OAUTH2_PROVIDER_APPLICATION_MODEL),
    ]

    operations = [
        CreateVectorExtension(),
        migrations.CreateModel(
            name='Entity',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('name', models.CharField(max_length=200)),
                ('normalized_name', models.CharField(max_length=200)),
                ('type', models.CharField(choices=[('Person', 'Person'), ('Organization', 'Organization'), ('Product', 'Product'), ('Amount', 'Amount'), ('Date', 'Date'), ('Location', 'Location'), ('Concept', 'Concept'), ('Decision', 'Decision'), ('Action', 'Action')], max_length=20)),
                ('aliases', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=200), blank=True, default=list, size=None)),
                ('attributes', models.JSONField(blank=True, default=dict)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('updated_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name_plural': 'entities',
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='Source',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('origin', models.CharField(choices=[('remember', 'remember'), ('document', 'document upload'), ('rest', 'REST save'), ('import', 'import'), ('relate', 'graph relate')], max_length=20)),
                ('content', models.TextField()),
                ('content_hash', models.CharField(help_text='sha256 of the saved bytes', max_length=64)),
                ('session_id', models.UUIDField(blank=True, null=True)),
                ('source_kind', models.CharField(blank=True, max_length=50)),
                ('source_ref', models.CharField(blank=True, max_length=500)),
                ('version', models.PositiveIntegerField(default=1)),
                ('versioning_mode', models.CharField(choices=[('snapshot', 'snapshot'), ('living', 'living')], default='snapshot', max_length=10)),
                ('source_modified_at', models.DateTimeField(blank=True, null=True)),
                ('filename', models.CharField(blank=True, max_length=255)),
                ('title', models.CharField(blank=True, max_length=300)),
                ('claimant', models.CharField(blank=True, max_length=600)),
                ('source_text', models.TextField(blank=True)),
                ('media_type', models.CharField(blank=True, max_length=100)),
                ('size_bytes', models.PositiveBigIntegerField(default=0)),
                ('refers_to', models.DateTimeField(blank=True, null=True)),
                ('recorded_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('purged_at', models.DateTimeField(blank=True, null=True)),
                ('agent', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.OAUTH2_PROVIDER_APPLICATION_MODEL)),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-recorded_at'],
            },
        ),
        migrations.CreateModel(
            name='Job',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('kind', models.CharField(choices=[('remember', 'Remember'), ('ingest', 'Ingest'), ('reembed', 'Reembed')], max_length=20)),
                ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed')], default='queued', max_length=20)),
                ('attempts', models.PositiveIntegerField(default=0)),
                ('error_code', models.CharField(blank=True, max_length=64)),
                ('error_message', models.CharField(blank=True, max_length=500)),
                ('options', models.JSONField(blank=True, default=dict)),
                ('claimed_by', models.CharField(blank=True, max_length=200)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('started_at', models.DateTimeField(blank=True, null=True)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('agent', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.OAUTH2_PROVIDER_APPLICATION_MODEL)),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('source', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='jobs', to='memories.source')),
            ],
            options={
                'ordering': ['-created_at'],
            },
        ),
        migrations.CreateModel(
            name='Space',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('name', models.CharField(max_length=100)),
                ('is_default', models.BooleanField(default=False)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='spaces', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-is_default', 'name'],
            },
        ),
        migrations.AddField(
            model_name='source',
            name='space',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sources', to='memories.space'),
        ),
        migrations.CreateModel(
            name='Relation',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('type', models.CharField(choices=[('works_at', 'Works At'), ('wants', 'Wants'), ('has', 'Has'), ('is_a', 'Is A'), ('related_to', 'Related To'), ('caused', 'Caused'), ('approved', 'Approved'), ('declined', 'Declined'), ('lives_in', 'Lives In'), ('resulted_in', 'Resulted In'), ('mentioned_with', 'Mentioned With')], max_length=20)),
                ('embedding', pgvector.django.vector.VectorField(blank=True, dimensions=384, null=True)),
                ('valid_from', models.DateTimeField(blank=True, null=True)),
                ('valid_until', models.DateTimeField(blank=True, null=True)),
                ('recorded_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('superseded_at', models.DateTimeField(blank=True, null=True)),
                ('object', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='incoming', to='memories.entity')),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('subject', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='outgoing', to='memories.entity')),
                ('superseded_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='supersedes', to='memories.relation')),
                ('space', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='relations', to='memories.space')),
            ],
            options={
                'ordering': ['-recorded_at'],
            },
        ),
        migrations.CreateModel(
            name='Memory',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('session_id', models.UUIDField(blank=True, null=True)),
                ('kind', models.CharField(choices=[('fact', 'Fact'), ('episode', 'Episode'), ('foresight', 'Foresight')], max_length=20)),
                ('category', models.CharField(blank=True, choices=[('fact', 'Fact'), ('preference', 'Preference'), ('intent', 'Intent'), ('decision', 'Decision'), ('context', 'Context')], max_length=20)),
                ('content', models.TextField()),
                ('fingerprint', models.CharField(blank=True, max_length=64)),
                ('slot', models.CharField(blank=True, max_length=200)),
                ('slot_value', models.CharField(blank=True, max_length=200)),
                ('tags', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=100), blank=True, default=list, size=None)),
                ('embedding', pgvector.django.vector.VectorField(blank=True, dimensions=384, null=True)),
                ('search_vector', models.GeneratedField(db_persist=True, expression=django.contrib.postgres.search.SearchVector('content', config='english'), output_field=django.contrib.postgres.search.SearchVectorField())),
                ('confidence', models.FloatField(default=0.9)),
                ('pinned', models.BooleanField(default=False)),
                ('status', models.CharField(choices=[('active', 'Active'), ('suppressed', 'Suppressed')], default='active', max_length=20)),
                ('suppressed_at', models.DateTimeField(blank=True, null=True)),
                ('suppressed_reason', models.CharField(blank=True, choices=[('incorrect', 'Incorrect'), ('outdated', 'Outdated'), ('duplicate', 'Duplicate'), ('private', 'Private'), ('other', 'Other'), ('operator', 'Operator')], max_length=50)),
                ('occurred_at', models.DateTimeField(blank=True, null=True)),
                ('valid_from', models.DateTimeField(blank=True, null=True)),
                ('valid_until', models.DateTimeField(blank=True, null=True)),
                ('due_at', models.DateTimeField(blank=True, null=True)),
                ('recorded_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('superseded_at', models.DateTimeField(blank=True, null=True)),
                ('agent', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.OAUTH2_PROVIDER_APPLICATION_MODEL)),
                ('entities', models.ManyToManyField(blank=True, related_name='memories', to='memories.entity')),
                ('job', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='memories', to='memories.job')),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('superseded_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='supersedes', to='memories.memory')),
                ('source', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='memories', to='memories.source')),
                ('space', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memories', to='memories.space')),
            ],
            options={
                'verbose_name_plural': 'memories',
                'ordering': ['-recorded_at'],
            },
        ),
        migrations.AddField(
            model_name='job',
            name='space',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='jobs', to='memories.space'),
        ),
        migrations.CreateModel(
            name='GrantSpace',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('updated_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('application', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.OAUTH2_PROVIDER_APPLICATION_MODEL)),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('personal_token', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='accounts.personalaccesstoken')),
                ('space', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.space')),
            ],
        ),
        migrations.AddField(
            model_name='entity',
            name='space',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='entities', to='memories.space'),
        ),
        migrations.CreateModel(
            name='AuditEvent',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('owner_id_snapshot', models.UUIDField(db_index=True)),
                ('action', models.CharField(choices=[('created', 'Created'), ('updated', 'Updated'), ('pinned', 'Pinned'), ('unpinned', 'Unpinned'), ('suppressed', 'Suppressed'), ('restored', 'Restored'), ('hard_deleted', 'Hard Deleted'), ('exported', 'Exported'), ('space_created', 'Space Created'), ('space_deleted', 'Space Deleted'), ('account_created', 'Account Created'), ('account_deleted', 'Account Deleted'), ('password_changed', 'Password Changed'), ('token_created', 'Token Created'), ('token_revoked', 'Token Revoked'), ('app_revoked', 'App Revoked'), ('relation_created', 'Relation Created'), ('space_switched', 'Space Switched')], max_length=30)),
                ('target_id', models.UUIDField(blank=True, null=True)),
                ('target_type', models.CharField(blank=True, max_length=30)),
                ('detail', models.JSONField(blank=True, default=dict)),
                ('request_id', models.CharField(blank=True, max_length=64)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('actor_agent', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.OAUTH2_PROVIDER_APPLICATION_MODEL)),
                ('actor_user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created_at'],
                'indexes': [models.Index(fields=['owner_id_snapshot', 'created_at'], name='audit_owner_created'), models.Index(fields=['target_id'], name='audit_target')],
            },
        ),
        migrations.CreateModel(
            name='Evidence',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('stance', models.CharField(choices=[('supports', 'Supports'), ('contradicts', 'Contradicts')], default='supports', max_length=20)),
                ('recorded_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('owner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('memory', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='evidence', to='memories.memory')),
                ('relation', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='evidence', to='memories.relation')),
                ('source', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='evidence', to='memories.source')),
            ],
            options={
                'verbose_name_plural': 'evidence',
                'ordering': ['-recorded_at'],
                'constraints': [models.CheckConstraint(condition=models.Q(models.Q(('memory__isnull', False), ('relation__isnull', True)), models.Q(('memory__isnull', True), ('relation__isnull', False)), _connector='OR'), name='evidence_for_memory_xor_relation'), models.UniqueConstraint(condition=models.Q(('memory__isnull', False)), fields=('memory', 'source', 'stance'), name='evidence_unique_memory_source'), models.UniqueConstraint(condition=models.Q(('relation__isnull', False)), fields=('relation', 'source', 'stance'), name='evidence_unique_relation_source')],
            },
        ),
        migrations.AddConstraint(
            model_name='space',
            constraint=models.UniqueConstraint(fields=('owner', 'name'), name='space_unique_name_per_owner'),
        ),
        migrations.AddConstraint(
            model_name='space',
            constraint=models.UniqueConstraint(condition=models.Q(('is_default', True)), fields=('owner',), name='space_one_default_per_owner'),
        ),
        migrations.AddIndex(
            model_name='source',
            index=models.Index(fields=['owner', 'content_hash'], name='source_owner_hash'),
        ),
        migrations.AddIndex(
            model_name='source',
            index=models.Index(fields=['owner', 'source_kind', 'source_ref'], name='source_owner_ref'),
        ),
        migrations.AddIndex(
            model_name='source',
            index=models.Index(fields=['owner', 'recorded_at'], name='source_owner_recorded'),
        ),
        migrations.AddConstraint(
            model_name='source',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('source_kind', ''), ('source_ref', '')), models.Q(models.Q(('source_kind', ''), _negated=True), models.Q(('source_ref', ''), _negated=True)), _connector='OR'), name='source_kind_and_ref_together'),
        ),
        migrations.AddIndex(
            model_name='relation',
            index=models.Index(fields=['owner', 'space', 'type'], name='relation_owner_space_type'),
        ),
        migrations.AddIndex(
            model_name='relation',
            index=models.Index(fields=['subject', 'type'], name='relation_subject_type'),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=pgvector.django.indexes.HnswIndex(ef_construction=64, fields=['embedding'], m=16, name='memory_embedding_hnsw', opclasses=['vector_cosine_ops']),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=django.contrib.postgres.indexes.GinIndex(fields=['search_vector'], name='memory_search_gin'),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=django.contrib.postgres.indexes.GinIndex(fields=['tags'], name='memory_tags_gin'),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=models.Index(fields=['owner', 'space', 'status'], name='memory_owner_space_status'),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=models.Index(fields=['owner', 'status', 'kind'], name='memory_owner_status_kind'),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=models.Index(fields=['owner', 'fingerprint'], name='memory_owner_fingerprint'),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=models.Index(condition=models.Q(('superseded_at__isnull', True), models.Q(('slot', ''), _negated=True)), fields=['owner', 'space', 'slot'], name='memory_current_slot'),
        ),
        migrations.AddIndex(
            model_name='memory',
            index=models.Index(fields=['owner', 'recorded_at'], name='memory_owner_recorded'),
        ),
        migrations.AddConstraint(
            model_name='memory',
            constraint=models.CheckConstraint(condition=models.Q(('confidence__gte', 0), ('confidence__lte', 1)), name='memory_confidence_0_1'),
        ),
        migrations.AddIndex(
            model_name='job',
            index=models.Index(fields=['owner', 'status'], name='job_owner_status'),
        ),
        migrations.AddIndex(
            model_name='job',
            index=models.Index(fields=['status', 'created_at'], name='job_status_created'),
        ),
        migrations.AddConstraint(
            model_name='grantspace',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('application__isnull', False), ('personal_token__isnull', True)), models.Q(('application__isnull', True), ('personal_token__isnull', False)), _connector='OR'), name='grant_space_app_xor_token'),
        ),
        migrations.AddConstraint(
            model_name='grantspace',
            constraint=models.UniqueConstraint(condition=models.Q(('application__isnull', False)), fields=('owner', 'application'), name='grant_space_one_per_app'),
        ),
        migrations.AddConstraint(
            model_name='grantspace',
            constraint=models.UniqueConstraint(condition=models.Q(('personal_token__isnull', False)), fields=('owner', 'personal_token'), name='grant_space_one_per_token'),
        ),
        migrations.AddIndex(
            model_name='entity',
            index=models.Index(fields=['owner', 'normalized_name'], name='entity_owner_name'),
        ),
        migrations.AddConstraint(
            model_name='entity',
            constraint=models.UniqueConstraint(fields=('space', 'normalized_name', 'type'), name='entity_unique_per_space'),
        ),
    ]
