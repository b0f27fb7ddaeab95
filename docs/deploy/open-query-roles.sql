-- Deep Recall: the open query's roles, run once as a PostgreSQL superuser in the service's
-- database (docs/deploy.md). Printed by `deeprecall manage open_query_roles --sql` from
-- memories/open_query/roles.py; idempotent.

DO $$
DECLARE membership record;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'deeprecall_query') THEN
        CREATE ROLE deeprecall_query LOGIN;
    END IF;
    ALTER ROLE deeprecall_query LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS;
    FOR membership IN
        SELECT g.rolname AS granted, m.rolname AS member
        FROM pg_auth_members a
        JOIN pg_roles g ON g.oid = a.roleid
        JOIN pg_roles m ON m.oid = a.member
        WHERE m.rolname = 'deeprecall_query' OR g.rolname = 'deeprecall_query'
    LOOP
        EXECUTE format('REVOKE %I FROM %I CASCADE', membership.granted, membership.member);
    END LOOP;
END
$$;
-- A backstop if the guard and the views are both wrong: what one query may take from the server.
ALTER ROLE deeprecall_query RESET ALL;
ALTER ROLE deeprecall_query SET statement_timeout = '60s';
ALTER ROLE deeprecall_query SET idle_in_transaction_session_timeout = '60s';
ALTER ROLE deeprecall_query SET temp_file_limit = '256MB';
ALTER ROLE deeprecall_query SET search_path = 'open_query';

DO $$
DECLARE f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace AND (p.proname = ANY(ARRAY['ts_stat', 'ts_rewrite', 'query_to_xml', 'query_to_xmlschema', 'query_to_xml_and_xmlschema', 'cursor_to_xml', 'cursor_to_xmlschema', 'table_to_xml', 'table_to_xmlschema', 'table_to_xml_and_xmlschema', 'schema_to_xml', 'schema_to_xmlschema', 'schema_to_xml_and_xmlschema', 'database_to_xml', 'database_to_xmlschema', 'database_to_xml_and_xmlschema', 'pg_input_is_valid', 'pg_input_error_info', 'set_config', 'current_setting', 'pg_sleep', 'pg_sleep_for', 'pg_sleep_until', 'pg_advisory_lock', 'pg_advisory_lock_shared', 'pg_advisory_unlock', 'pg_advisory_unlock_shared', 'pg_advisory_unlock_all', 'pg_advisory_xact_lock', 'pg_advisory_xact_lock_shared', 'pg_try_advisory_lock', 'pg_try_advisory_lock_shared', 'pg_try_advisory_xact_lock', 'pg_try_advisory_xact_lock_shared', 'pg_cancel_backend', 'pg_terminate_backend', 'pg_blocking_pids', 'pg_safe_snapshot_blocking_pids', 'pg_isolation_test_session_is_blocked', 'pg_notify', 'pg_lock_status', 'pg_xact_status', 'txid_status', 'pg_relation_size', 'pg_total_relation_size', 'pg_table_size', 'pg_indexes_size', 'pg_database_size', 'pg_tablespace_size', 'pg_relation_filenode', 'pg_relation_filepath', 'lo_open', 'lo_close', 'loread', 'lowrite', 'lo_lseek', 'lo_lseek64', 'lo_tell', 'lo_tell64', 'lo_truncate', 'lo_truncate64', 'lo_creat', 'lo_create', 'lo_unlink', 'lo_import', 'lo_export', 'lo_get', 'lo_put', 'lo_from_bytea']::text[]) OR starts_with(p.proname, 'pg_stat_get_')) LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
    END LOOP;
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_proc p
        WHERE p.pronamespace = 'pg_catalog'::regnamespace
          AND (p.proname = ANY(ARRAY['set_config', 'current_setting', 'pg_advisory_xact_lock', 'pg_lock_status', 'pg_relation_size', 'pg_total_relation_size', 'pg_table_size', 'pg_indexes_size', 'pg_database_size', 'pg_tablespace_size', 'pg_relation_filenode', 'pg_relation_filepath']::text[]) OR starts_with(p.proname, 'pg_stat_get_'))
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO deeprecall', f);
    END LOOP;
    -- Temporary tables and the public schema are the service's (the database's owner keeps both).
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
    REVOKE ALL ON SCHEMA public FROM PUBLIC;
    GRANT USAGE ON SCHEMA public TO deeprecall;
END
$$;
