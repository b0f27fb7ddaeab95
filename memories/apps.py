from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the start-up check that every REST endpoint declares its scopes.
        from memories import checks  # noqa: F401
