#!/bin/sh
# The admin step of docs/deploy.md for the compose route, run once by the postgres image on an
# empty data folder: the service's role (no superuser), its database, pgvector, the open-query role.
set -eu
psql -v ON_ERROR_STOP=1 --username postgres --dbname postgres <<SQL
CREATE ROLE deeprecall LOGIN PASSWORD '${DB_PASSWORD}';
CREATE DATABASE deeprecall OWNER deeprecall;
CREATE ROLE deeprecall_query NOLOGIN NOINHERIT;
GRANT deeprecall_query TO deeprecall;
\c deeprecall
CREATE EXTENSION vector;
SQL
