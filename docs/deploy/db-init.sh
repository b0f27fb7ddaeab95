#!/bin/sh
# The admin step of docs/deploy.md for the compose route, run once by the postgres image on an
# empty data folder: the service's role (no superuser), the open query's login role, the database,
# pgvector, and the open query's privileges (open-query-roles.sql, what
# `deeprecall manage open_query_roles --sql` prints for the default role names).
set -eu
psql -v ON_ERROR_STOP=1 --username postgres --dbname postgres <<SQL
CREATE ROLE deeprecall LOGIN PASSWORD '${DB_PASSWORD}';
CREATE ROLE deeprecall_query LOGIN NOINHERIT PASSWORD '${QUERY_PASSWORD}';
CREATE DATABASE deeprecall OWNER deeprecall;
\c deeprecall
CREATE EXTENSION vector;
SQL
psql -v ON_ERROR_STOP=1 --username postgres --dbname deeprecall -f /deeprecall/open-query-roles.sql
