from importlib import import_module

from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the start-up check that every REST endpoint declares its scopes.
        from memories import checks  # noqa: F401

        # Each profile's operations register themselves on import, here and only here, so the
        # registry imports none of them; this order is tools/list order (reads first).
        for profile in ("core", "graph", "evidence", "ingest", "open_query"):
            import_module(f"memories.operations.{profile}")
        # accounts issues tokens for each profile's URL; the profiles live here, above it.
        from accounts.oauth import served_paths_set
        from memories.operations.registry import PROFILES

        served_paths_set([profile.path for profile in PROFILES.values()])
