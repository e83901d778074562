# Shared by scripts/kill-trials.sh and scripts/disk-full.sh (sourced, not run): a store's
# contents as text, to compare two stores row for row. Every table but Z_METADATA (which
# carries the store's UUID): its columns, then its rows sorted by every column; then the
# indexes. Needs the sqlite3 CLI and psql; dumpPostgresStore also scripts/lib/postgres.sh.

# dumpSQLiteStore PATH: read from a copy of the file (and its -wal, if any) in a folder
# of its own, so that nothing is ever written beside the store.
dumpSQLiteStore() {
    local store="$1" copy
    copy="$(mktemp -d)"
    cp "$store" "$copy/store.sqlite"
    [ -e "$store-wal" ] && cp "$store-wal" "$copy/store.sqlite-wal"
    local tables table columns order
    tables="$(sqlite3 "$copy/store.sqlite" "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name <> 'Z_METADATA' ORDER BY name")"
    for table in $tables; do
        echo "== table $table"
        sqlite3 -separator ' ' "$copy/store.sqlite" "SELECT cid, name, type, \"notnull\", quote(dflt_value), pk FROM pragma_table_info('$table') ORDER BY cid"
        columns="$(sqlite3 "$copy/store.sqlite" "SELECT count(*) FROM pragma_table_info('$table')")"
        order="$(seq -s, 1 "$columns")"
        sqlite3 -cmd '.mode quote' "$copy/store.sqlite" "SELECT * FROM \"$table\" ORDER BY $order"
    done
    echo "== indexes"
    sqlite3 -separator ' ' "$copy/store.sqlite" "SELECT name, tbl_name, quote(sql) FROM sqlite_schema WHERE type = 'index' AND tbl_name <> 'Z_METADATA' ORDER BY name"
    rm -rf "$copy"
}

# dumpPostgresStore DATABASE SCHEMA [by-entity-name]: the schema's name left out of index
# definitions. Sorts stay in memory or spill to the server's default tablespace, never to
# the database's own, which may be a full disk.
#
# by-entity-name: each row's entity (`Z_ENT`, and `Z_SUPER` in Z_PRIMARYKEY) as the name
# Z_PRIMARYKEY gives its number, columns in name order, and the indexes without their
# names: two stores holding the same objects then compare equal however they number their
# entities and order their columns. A chain's in-place step before a streamed one keeps the
# store's numbers and its tables as ALTER TABLE left them (the streamed step writes every
# row anew), so a store stopped between the two is numbered as it was, where a clean run to
# that version (on PostgreSQL a rebuild) numbers it and orders its columns as a new store.
dumpPostgresStore() {
    local database="$1" schema="$2" byName="${3:+true}" script
    local PGOPTIONS="-c work_mem=256MB -c temp_tablespaces=pg_default"
    export PGOPTIONS
    script="$(pgSQL "$database" -At -v schema="$schema" -v byName="${byName:-false}" <<'SQL'
SELECT format('\echo == table %s', table_name) || chr(10)
    || CASE WHEN :'byName'
            THEN format('SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = %L AND table_name = %L ORDER BY column_name;', table_schema, table_name)
            ELSE format('SELECT ordinal_position, column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = %L AND table_name = %L ORDER BY ordinal_position;', table_schema, table_name)
       END || chr(10)
    || format('COPY (SELECT %s FROM %I.%I t ORDER BY %s) TO STDOUT;',
              (SELECT string_agg(CASE WHEN :'byName' AND c.column_name IN ('z_ent', 'z_super')
                                      THEN format('(SELECT p.z_name FROM %I.z_primarykey p WHERE p.z_ent = t.%I)', c.table_schema, c.column_name)
                                      ELSE format('t.%I', c.column_name) END, ', '
                                 ORDER BY CASE WHEN :'byName' THEN c.column_name::text ELSE lpad(c.ordinal_position::text, 6, '0') END)
               FROM information_schema.columns c WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name),
              table_schema, table_name,
              (SELECT string_agg(ordinal_position::text, ',' ORDER BY ordinal_position) FROM information_schema.columns c
               WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name))
FROM information_schema.tables t
WHERE table_schema = :'schema' AND table_type = 'BASE TABLE' AND table_name <> 'z_metadata'
ORDER BY table_name;
SELECT '\echo == indexes';
SELECT CASE WHEN :'byName'
    THEN format('SELECT tablename, regexp_replace(replace(indexdef, %L, %L), %L, %L) AS definition FROM pg_indexes WHERE schemaname = %L AND tablename <> %L ORDER BY 1, 2;',
                quote_ident(:'schema') || '.', '', '^(CREATE (UNIQUE )?INDEX) \S+ ON', '\1 ON', :'schema', 'z_metadata')
    ELSE format('SELECT indexname, tablename, replace(indexdef, %L, %L) FROM pg_indexes WHERE schemaname = %L AND tablename <> %L ORDER BY indexname;',
                quote_ident(:'schema') || '.', '', :'schema', 'z_metadata')
    END;
SQL
)"
    pgSQL "$database" -At <<<"$script"
}
