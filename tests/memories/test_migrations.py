"""The squashed migrations: a new database runs them, and one that applied the migrations they
replace is up to date without running anything again."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

OLD = {
    "accounts": ["0001_initial", "0002_personal_access_tokens"],
    "memories": [
        "0001_pgvector_extension",
        "0002_memory_tables",
        "0003_job_options_and_memory_slots",
        "0004_audit_revocation_actions",
        "0005_graph_evidence_layer",
        "0006_relation_embedding",
        "0007_audit_account_and_token_actions",
        "0008_memory_suppressed_reason_choices",
    ],
}


@pytest.mark.django_db
def test_a_database_that_applied_the_replaced_migrations_has_nothing_to_run():
    recorded = MigrationRecorder.Migration.objects
    squashed = list(recorded.filter(app__in=OLD, name__contains="_squashed_").values_list("app", "name"))
    assert {app for app, _ in squashed} == set(OLD)
    # Make the record what a database migrated before the squash holds.
    recorded.filter(app__in=OLD).delete()
    for app, names in OLD.items():
        for name in names:
            recorded.create(app=app, name=name)
    executor = MigrationExecutor(connection)
    # Only migrations written after the squash are left to run, never a squashed one or an original.
    planned = [(m.app_label, m.name) for m, _ in executor.migration_plan(executor.loader.graph.leaf_nodes())]
    assert all("_squashed_" not in name and name not in OLD.get(app, []) for app, name in planned), planned
    assert all(name > max(OLD.get(app, [""])) for app, name in planned), planned
    for key in squashed:
        assert key in executor.loader.applied_migrations
