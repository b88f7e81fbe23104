#!/bin/sh
# One-shot: create (or upgrade) the Temporal and visibility schemas in PostgreSQL.
# Safe to run again: existing databases stay, schemas are only moved forward.
set -eu
: "${POSTGRES_SEEDS:?}" "${POSTGRES_USER:?}" "${POSTGRES_PWD:?}"
SCHEMA_DIR=/etc/temporal/schema/postgresql/v12

sql_tool() {
  db="$1"
  shift
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "${DB_PORT:-5432}" \
    -u "$POSTGRES_USER" --pw "$POSTGRES_PWD" --db "$db" "$@"
}

sql_tool temporal create || true
sql_tool temporal setup-schema -v 0.0
sql_tool temporal update-schema -d "$SCHEMA_DIR/temporal/versioned"

sql_tool temporal_visibility create || true
sql_tool temporal_visibility setup-schema -v 0.0
sql_tool temporal_visibility update-schema -d "$SCHEMA_DIR/visibility/versioned"
