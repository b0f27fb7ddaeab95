"""The table of Django's database cache, which holds the rate limits every process shares.

`createcachetable` makes the table of each DatabaseCache in CACHES (none when REDIS_URL puts the
cache in Redis) and skips a table that exists; `manage.py up` runs it again after migrating, for
a deployment that later moves from Redis to the database.
"""

from django.conf import settings
from django.core.management import call_command
from django.db import migrations

DATABASE_CACHE = "django.core.cache.backends.db.DatabaseCache"


def create_cache_tables(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


def drop_cache_tables(apps, schema_editor):
    for cache in settings.CACHES.values():
        if cache["BACKEND"] == DATABASE_CACHE:
            schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(cache['LOCATION'])}")


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_squashed_0002_personal_access_tokens")]

    operations = [migrations.RunPython(create_cache_tables, drop_cache_tables)]
