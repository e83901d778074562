#!/usr/bin/env bash
# A PostgreSQL server of your own, for trying the service and the commands on PostgreSQL
# without Docker: Debian's PostgreSQL server (`initdb` and `pg_ctl`, which Debian keeps in
# /usr/lib/postgresql/*/bin, outside the PATH), run as you (as `postgres` when run as
# root), listening on 127.0.0.1 only at a free port, trusting connections from this
# machine, its data kept between starts in .postgres/ in the project folder
# (/var/lib/bookstore-postgres as root; BOOKSTORE_POSTGRES_DIR names another folder).
#
#   scripts/postgres.sh start     # starts it (creating it and its database `bookstore` the first time); prints the store URL
#   scripts/postgres.sh url       # the store URL: postgres://postgres@127.0.0.1:PORT/bookstore
#   scripts/postgres.sh stop      # stops it; the data stays for the next start
#   scripts/postgres.sh remove    # stops it and deletes its folder
#
# The README's "PostgreSQL without Docker" uses it; PostgresRecipeTests follows that recipe.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/postgres.sh

if [ "$(id -u)" -eq 0 ]; then folder="${BOOKSTORE_POSTGRES_DIR:-/var/lib/bookstore-postgres}"; else folder="${BOOKSTORE_POSTGRES_DIR:-$PWD/.postgres}"; fi
data="$folder/data"

port() { cat "$folder/port" 2>/dev/null || true; }
# Records a new free port for the server (written as the server's user, who owns the folder).
newPort() { freePort | asPostgresUser tee "$folder/port" >/dev/null; }
url() { echo "postgres://postgres@127.0.0.1:$(port)/bookstore"; }
isRunning() { [ -d "$data" ] && asPostgresUser "$pgBin/pg_ctl" -D "$data" status >/dev/null 2>&1; }

findPostgresBin
case "${1:-}" in
    start)
        if [ ! -d "$data" ]; then
            mkdir -p "$folder"
            chmod 755 "$folder"
            [ "$(id -u)" -eq 0 ] && chown postgres: "$folder"
            asPostgresUser "$pgBin/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$folder/initdb.log" 2>&1 \
                || asPostgresUser "$pgBin/initdb" -D "$data" -U postgres -A trust -E UTF8 --no-locale >"$folder/initdb.log" 2>&1 \
                || { cat "$folder/initdb.log" >&2; exit 1; }
            newPort
        fi
        if ! isRunning; then
            # The port it had, unless another process took it meanwhile.
            if [ -z "$(port)" ] || ss -ltnH "sport = :$(port)" 2>/dev/null | grep -q .; then newPort; fi
            # TCP only: no socket file, whose path (deep in a checkout) could be too long or hold spaces.
            asPostgresUser "$pgBin/pg_ctl" -D "$data" -l "$folder/server.log" -w -t 60 \
                -o "-c listen_addresses=127.0.0.1 -p $(port) -c unix_socket_directories=''" start >/dev/null \
                || { tail -20 "$folder/server.log" >&2; exit 1; }
        fi
        # Made the first time; again if an earlier start stopped before it.
        if [ -z "$(asPostgresUser "$pgBin/psql" -X -h 127.0.0.1 -p "$(port)" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'bookstore'")" ]; then
            asPostgresUser "$pgBin/createdb" -h 127.0.0.1 -p "$(port)" -U postgres bookstore
        fi
        echo "PostgreSQL $("$pgBin/postgres" --version | awk '{print $3}') runs in $folder on 127.0.0.1:$(port). Its store URL:"
        url
        ;;
    url)
        [ -n "$(port)" ] || { echo "no server in $folder yet: scripts/postgres.sh start makes one" >&2; exit 1; }
        url
        ;;
    stop)
        if isRunning; then asPostgresUser "$pgBin/pg_ctl" -D "$data" -w stop >/dev/null; fi
        ;;
    remove)
        if isRunning; then asPostgresUser "$pgBin/pg_ctl" -D "$data" -m fast -w stop >/dev/null; fi
        rm -rf "$folder"
        ;;
    *)
        echo "usage: scripts/postgres.sh start | url | stop | remove (see the top of $0)" >&2
        exit 64
        ;;
esac
