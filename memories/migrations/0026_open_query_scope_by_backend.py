"""The open query's views read their scope by the connection's backend, not by its transaction.

Before, the service wrote the scope row in the query's own transaction and then `SET LOCAL ROLE`d to
the query role; a statement that ran `RESET ROLE` (or `set_config('role', ...)`) through a function
the guard missed was back to the service's own user and read everything. Now the query runs on a
connection of its own that logs in as the query role (memories.selectors.open_query), so there is
no other role to go back to; the service writes the scope row from its own connection, keyed by
the query connection's backend process id, before the query starts, and deletes it after.
`pg_backend_pid()` is the one thing a session cannot change about itself, and the query role may
neither read nor write the table.

The views are 0013's, with only the scope changed. The role may now log in; creating it needs a
superuser or CREATEROLE (docs/deploy.md shows the administrator's SQL, which also takes from PUBLIC
the functions memories.open_query.roles lists); when it exists, this migration only grants it SELECT
on the views.
"""

from importlib import import_module

from django.conf import settings
from django.db import migrations

_0013 = import_module("memories.migrations.0013_open_query_views_and_role")

_OLD_SCOPE = "(SELECT {column} FROM public.open_query_scope WHERE txid = pg_current_xact_id_if_assigned())"
_NEW_SCOPE = "(SELECT {column} FROM public.open_query_scope WHERE pid = pg_backend_pid())"
_VIEWS_0013 = _0013.VIEWS[_0013.VIEWS.index("CREATE VIEW") :]


def _views(old: str, new: str) -> str:
    text = _VIEWS_0013
    for column in ("owner_id", "space_id"):
        text = text.replace(old.format(column=column), new.format(column=column))
    return text


FORWARD = f"""
DROP SCHEMA open_query CASCADE;
DROP TABLE public.open_query_scope;
CREATE TABLE public.open_query_scope (
    pid integer PRIMARY KEY,
    owner_id uuid NOT NULL,
    space_id uuid NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX open_query_scope_owner ON public.open_query_scope (owner_id);
REVOKE ALL ON public.open_query_scope FROM PUBLIC;
CREATE SCHEMA open_query;
{_views(_OLD_SCOPE, _NEW_SCOPE)}
"""

BACKWARD = f"""
DROP SCHEMA open_query CASCADE;
DROP TABLE public.open_query_scope;
CREATE TABLE public.open_query_scope (
    txid xid8 PRIMARY KEY,
    owner_id uuid NOT NULL,
    space_id uuid NOT NULL
);
REVOKE ALL ON public.open_query_scope FROM PUBLIC;
CREATE SCHEMA open_query;
{_VIEWS_0013}
"""

ROLE = """
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN
        CREATE ROLE {role} LOGIN NOINHERIT NOCREATEDB NOCREATEROLE NOREPLICATION;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE EXCEPTION 'the open query''s database role {role} does not exist and this user may not create it'
        USING HINT = 'run the administrator''s SQL of docs/deploy.md as a PostgreSQL superuser, then migrate again';
END
$$;
GRANT USAGE ON SCHEMA open_query TO {role};
GRANT SELECT ON ALL TABLES IN SCHEMA open_query TO {role};
-- What the database's owner may take from PUBLIC itself (a database's privileges are not copied
-- from its template, so a new database needs this even where the administrator's SQL ran).
DO $$
BEGIN
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
    REVOKE ALL ON SCHEMA public FROM PUBLIC;
EXCEPTION WHEN insufficient_privilege THEN
    NULL;  -- migrating as a user that does not own them: the administrator's SQL does it
END
$$;
"""


def _role_sql(template: str) -> str:
    # The name is checked to be a plain identifier by settings (OPEN_QUERY_ROLE).
    return template.format(role=settings.OPEN_QUERY_ROLE)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0025_memory_entities_entity_memory"),
    ]

    operations = [
        migrations.RunSQL(FORWARD + _role_sql(ROLE), reverse_sql=BACKWARD + _role_sql(ROLE)),
    ]
