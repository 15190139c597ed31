#!/bin/sh
# The database roles of fiscaliza (see dockets/migrations/versions/0004_least_privilege.py).
# Run once by the postgres image, as the superuser, when it initialises its data
# (mounted in /docker-entrypoint-initdb.d); the superuser is not used afterwards.
#   fiscaliza_owner   owns the schema: runs the migrations (dockets-migrate), alone may
#                     change tables or triggers
#   fiscaliza_app     the web app and the docket sink: writes the docket tables, only
#                     inserts into the audit log
#   fiscaliza_reader  Grafana: reads the dashboard_* views only
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
    -v db="$POSTGRES_DB" \
    -v owner_password="$FISCALIZA_OWNER_PASSWORD" \
    -v app_password="$FISCALIZA_APP_PASSWORD" \
    -v reader_password="$FISCALIZA_READER_PASSWORD" <<'SQL'
CREATE ROLE fiscaliza_owner LOGIN PASSWORD :'owner_password';
CREATE ROLE fiscaliza_app LOGIN PASSWORD :'app_password';
CREATE ROLE fiscaliza_reader LOGIN PASSWORD :'reader_password';
ALTER DATABASE :"db" OWNER TO fiscaliza_owner;
ALTER SCHEMA public OWNER TO fiscaliza_owner;
-- PostGIS is created by the superuser; the owner's migration finds it there
CREATE EXTENSION IF NOT EXISTS postgis;
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"db" TO fiscaliza_owner, fiscaliza_app, fiscaliza_reader;
SQL
