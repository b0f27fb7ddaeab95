"""The pgvector extension, created by the first migration with an error an operator can act on.

pgvector is not a trusted extension: only a superuser (or the database's owner on a server where
it was made trusted) may create it. A deployment usually migrates as a plain role, so the operator
creates the extension once as an admin step (docs/deploy.md). When that step was skipped, the
migration says so in one line (config.cli's boundary prints it) instead of a traceback through
Django's migration executor.
"""

from __future__ import annotations

from typing import Any

from django.db import ProgrammingError, transaction
from pgvector.django import VectorExtension

from config.boundary import ServiceConfigError


class CreateVectorExtension(VectorExtension):
    """`CREATE EXTENSION vector`, or a one-line ServiceConfigError saying who must run it."""

    def database_forwards(self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any) -> None:
        conn = schema_editor.connection
        if conn.vendor != "postgresql" or self.extension_exists(schema_editor, self.name):
            super().database_forwards(app_label, schema_editor, from_state, to_state)
            return
        with conn.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = %s", [self.name])
            available = cursor.fetchone() is not None
        database = conn.settings_dict["NAME"]
        if not available:
            # The package is named after the server's major version (server_version 150018: 15).
            major = conn.pg_version // 10000
            raise ServiceConfigError(
                f"pgvector is not installed on the PostgreSQL {major} server; install "
                f"postgresql-{major}-pgvector (from apt.postgresql.org on Debian and Ubuntu, "
                f"docs/deploy.md), run CREATE EXTENSION vector; as a superuser in database "
                f"{database}, then migrate again"
            )
        try:
            # A savepoint, so the refusal leaves the migration's transaction usable for the rollback.
            with transaction.atomic(using=conn.alias):
                super().database_forwards(app_label, schema_editor, from_state, to_state)
        except ProgrammingError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != "42501":  # insufficient_privilege
                raise
            raise ServiceConfigError(
                f"the database user {conn.settings_dict['USER'] or '(default)'} may not create the "
                f"vector extension; as a PostgreSQL superuser run CREATE EXTENSION vector; in database "
                f"{database} (docs/deploy.md), then migrate again"
            ) from None
