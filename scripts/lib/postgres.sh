# Shared by scripts/kill-trials.sh, scripts/disk-full.sh and scripts/postgres.sh (sourced,
# not run): a throwaway
# PostgreSQL server, as the tests start one — `initdb` and `pg_ctl` from
# /usr/lib/postgresql/*/bin (else the PATH), as the `postgres` user when run as root, on
# 127.0.0.1 at a free port, in a folder of its own, trusting every local connection — and
# psql against it. Needs iproute2 (ss) and the postgresql package.
#
# The server runs without fsync: what these scripts kill or starve is the client, never
# the server.

pgBin="" pgFolder="" pgPort=""

# Runs a command as the server's user: `postgres` when this script runs as root.
asPostgresUser() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# findPostgresBin: sets pgBin to the folder of the newest installed `initdb` and `pg_ctl`.
findPostgresBin() {
    pgBin=""
    local candidate
    for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) $(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)"); do
        if [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ]; then pgBin="$candidate"; return 0; fi
    done
    echo "initdb and pg_ctl are not installed (looked in /usr/lib/postgresql/*/bin and the PATH); scripts/setup.sh installs them" >&2
    return 1
}

# A port in the dynamic range that nothing listens on now.
freePort() {
    local port
    while true; do
        port="$(shuf -i 49152-65535 -n 1)"
        ss -ltnH "sport = :$port" 2>/dev/null | grep -q . || { echo "$port"; return 0; }
    done
}

# startPostgres: sets pgBin, pgFolder (data, log and socket) and pgPort.
startPostgres() {
    findPostgresBin || return 1
    pgFolder="$(mktemp -d /tmp/bookstore-postgres-XXXXXX)"
    chmod 755 "$pgFolder"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$pgFolder"
    if ! asPostgresUser "$pgBin/initdb" -D "$pgFolder/data" -U postgres -A trust -E UTF8 --no-sync --locale=C.UTF-8 >"$pgFolder/initdb.log" 2>&1; then
        asPostgresUser rm -rf "$pgFolder/data"
        asPostgresUser "$pgBin/initdb" -D "$pgFolder/data" -U postgres -A trust -E UTF8 --no-sync --no-locale >"$pgFolder/initdb.log" 2>&1 \
            || { cat "$pgFolder/initdb.log" >&2; return 1; }
    fi
    local attempt
    for attempt in 1 2 3 4 5; do
        pgPort="$(freePort)"
        if asPostgresUser "$pgBin/pg_ctl" -D "$pgFolder/data" -l "$pgFolder/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $pgPort -k $pgFolder -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100" \
            start >/dev/null 2>&1; then
            return 0
        fi
    done
    echo "pg_ctl could not start the server:" >&2
    tail -20 "$pgFolder/server.log" >&2 || true
    return 1
}

# Stops the server (at once: nothing in it is kept) and removes its folder.
stopPostgres() {
    if [ -n "$pgFolder" ]; then
        asPostgresUser "$pgBin/pg_ctl" -D "$pgFolder/data" -m immediate stop >/dev/null 2>&1 || true
        rm -rf "$pgFolder"
        pgFolder=""
    fi
}

# psql on DATABASE as the superuser, stopping at the first error; further arguments follow.
pgSQL() {
    local database="$1"
    shift
    psql -X -q -h 127.0.0.1 -p "$pgPort" -U postgres -d "$database" -v ON_ERROR_STOP=1 "$@"
}

# The URL of SCHEMA in DATABASE for `bookstore --store`.
pgStoreURL() {
    echo "postgres://postgres@127.0.0.1:$pgPort/$1?schema=$2"
}
