"""The open query's views and its read-only role (memories/open_query/catalogue.py documents them).

The views show one space of one owner, named by the one row of `open_query_scope` that the
running transaction wrote (keyed by its transaction id); without it they show nothing. The
service writes that row as its own database user before switching to the query role, and rolls
the transaction back at the end, so the row is never visible to any other transaction. The query
role may not read or write that table, and a setting it could change (`set_config`) decides
nothing: even SQL that got past the guard cannot name another owner or space. They are
security barriers: a function in the caller's WHERE clause never sees a row the filter drops. They
run with their owner's rights (the migrating user), so the query role needs, and gets, nothing but
SELECT on them: it cannot read a table directly, whatever the SQL says.

The role is NOLOGIN; the database user the service connects as becomes a member, so it can
`SET LOCAL ROLE` to it. Creating a role needs CREATEROLE (or a superuser): docs/deploy.md says how
to create it beforehand when the migrating user may not. Roles are cluster-wide, so the reverse
drops the views and this database's grants, and leaves the role to the operator.
"""

from django.conf import settings
from django.db import migrations

_SCOPE = "(SELECT {column} FROM public.open_query_scope WHERE txid = pg_current_xact_id_if_assigned())"
OWNER = _SCOPE.format(column="owner_id")
SPACE = _SCOPE.format(column="space_id")

VIEWS = f"""
CREATE TABLE public.open_query_scope (
    txid xid8 PRIMARY KEY,
    owner_id uuid NOT NULL,
    space_id uuid NOT NULL
);
REVOKE ALL ON public.open_query_scope FROM PUBLIC;

CREATE SCHEMA open_query;

CREATE VIEW open_query.memories WITH (security_barrier) AS
SELECT m.id, m.kind::text AS kind, m.category::text AS category, m.content, m.tags::text[] AS tags,
       m.confidence, m.pinned, m.occurred_at, m.valid_from, m.valid_until, m.due_at, m.stated_at,
       m.recorded_at, m.superseded_at, m.superseded_by_id AS superseded_by, m.source_id, m.job_id,
       m.session_id,
       coalesce(m.valid_from, m.occurred_at, m.stated_at, m.recorded_at) AS world_from,
       coalesce(m.valid_until, m.superseded_at) AS world_until,
       (m.superseded_at IS NULL AND (m.valid_until IS NULL OR m.valid_until > now())) AS holds_now
FROM public.memories_memory m
WHERE m.owner_id = {OWNER} AND m.space_id = {SPACE} AND m.status = 'active';

CREATE VIEW open_query.entities WITH (security_barrier) AS
SELECT e.id, e.name::text AS name, e.type::text AS type, e.aliases::text[] AS aliases, e.created_at,
       e.updated_at
FROM public.memories_entity e
WHERE e.owner_id = {OWNER} AND e.space_id = {SPACE}
  AND (EXISTS (SELECT 1 FROM public.memories_memory_entities me
               JOIN public.memories_memory m ON m.id = me.memory_id
               WHERE me.entity_id = e.id AND m.status = 'active')
       OR EXISTS (SELECT 1 FROM public.memories_relation r
                  WHERE r.subject_id = e.id OR r.object_id = e.id));

CREATE VIEW open_query.memory_entities WITH (security_barrier) AS
SELECT me.memory_id, me.entity_id
FROM public.memories_memory_entities me
JOIN public.memories_memory m ON m.id = me.memory_id
WHERE m.owner_id = {OWNER} AND m.space_id = {SPACE} AND m.status = 'active';

CREATE VIEW open_query.relations WITH (security_barrier) AS
SELECT r.id, r.type::text AS type, r.subject_id, s.name::text AS subject_name, r.object_id,
       o.name::text AS object_name, r.valid_from, r.valid_until, r.recorded_at, r.superseded_at,
       r.superseded_by_id AS superseded_by,
       coalesce(r.valid_from, r.recorded_at) AS world_from,
       coalesce(r.valid_until, r.superseded_at) AS world_until,
       (r.superseded_at IS NULL AND (r.valid_until IS NULL OR r.valid_until > now())) AS holds_now
FROM public.memories_relation r
JOIN public.memories_entity s ON s.id = r.subject_id
JOIN public.memories_entity o ON o.id = r.object_id
WHERE r.owner_id = {OWNER} AND r.space_id = {SPACE};

CREATE VIEW open_query.sources WITH (security_barrier) AS
SELECT src.id, src.origin::text AS origin, src.claimant::text AS claimant, src.session_id,
       src.source_kind::text AS source_kind, src.source_ref::text AS source_ref, src.version::int4 AS version,
       src.versioning_mode::text AS versioning_mode, src.title::text AS title,
       src.media_type::text AS media_type, src.size_bytes::int8 AS size_bytes, src.source_modified_at,
       src.refers_to, src.recorded_at, (src.purged_at IS NOT NULL) AS purged
FROM public.memories_source src
WHERE src.owner_id = {OWNER} AND src.space_id = {SPACE};

CREATE VIEW open_query.evidence WITH (security_barrier) AS
SELECT ev.id, ev.source_id, ev.memory_id, ev.relation_id, ev.stance::text AS stance, ev.recorded_at
FROM public.memories_evidence ev
JOIN public.memories_source src ON src.id = ev.source_id
LEFT JOIN public.memories_memory m ON m.id = ev.memory_id
WHERE ev.owner_id = {OWNER} AND src.space_id = {SPACE}
  AND (ev.memory_id IS NULL OR m.status = 'active');
"""

ROLE = """
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN
        CREATE ROLE {role} NOLOGIN NOINHERIT NOCREATEDB NOCREATEROLE NOREPLICATION;
    END IF;
EXCEPTION WHEN duplicate_object THEN
    NULL;  -- another database of this cluster created it at the same moment
END
$$;
DO $$
BEGIN
    IF NOT pg_has_role(current_user, '{role}', 'MEMBER') THEN
        EXECUTE format('GRANT {role} TO %I', current_user);
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    -- Since 0026 the open query logs in as the role itself: no membership is needed, and a
    -- migrating user that may not grant it (no superuser) goes on without.
    NULL;
END
$$;
GRANT USAGE ON SCHEMA open_query TO {role};
GRANT SELECT ON ALL TABLES IN SCHEMA open_query TO {role};
"""

DROP = """
REVOKE ALL ON ALL TABLES IN SCHEMA open_query FROM {role};
REVOKE ALL ON SCHEMA open_query FROM {role};
DROP SCHEMA open_query CASCADE;
DROP TABLE public.open_query_scope;
"""


def _role_sql(template: str) -> str:
    # The name is checked to be a plain identifier by settings (OPEN_QUERY_ROLE).
    return template.format(role=settings.OPEN_QUERY_ROLE)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0012_source_raw"),
    ]

    operations = [
        migrations.RunSQL(VIEWS + _role_sql(ROLE), reverse_sql=_role_sql(DROP)),
    ]
