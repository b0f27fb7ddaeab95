"""Django database backend: PostgreSQL, started on demand from the embedded wheel."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.embedded_pg import EmbeddedPostgresError, ensure_running
from config.postgres import base


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, object]:
        params = super().get_connection_params()
        pgdata = self.settings_dict.get("PGDATA")
        if not pgdata:
            raise ImproperlyConfigured("the embedded database needs DATABASES['default']['PGDATA']")
        try:
            server = ensure_running(Path(pgdata))
        except EmbeddedPostgresError as exc:
            raise ImproperlyConfigured(str(exc)) from exc
        params["host"] = str(server.socket_dir)
        params["port"] = server.port
        return params
