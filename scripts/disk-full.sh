#!/usr/bin/env bash
# Runs `bookstore migrate` on a filesystem too small for it — a tmpfs, so it runs as root —
# and checks that a migration that runs out of space fails cleanly and the next one, once
# there is room, completes.
#
#   scripts/disk-full.sh --engine both --books 20000 --step-percent 10
#
# SQLite: for sizes from 110 % of the size of a BookStore 1 store of --books generated books
# upward by --step-percent of it, until the migration first completes, the script mounts a
# tmpfs of that size, copies the store into it and migrates it. A run that fails must exit
# non-zero and say on standard error that the disk is full ("disk is full" or "no space
# left", in any case; the error line is printed), leave the store file byte for byte the
# original and nothing beside it (no work folder, no lock file); the tmpfs is then grown
# (`mount -o remount,size=…`) and the next migration must complete: the store at BookStore 5,
# row for row a clean migration's, nothing beside it.
#
# PostgreSQL: a throwaway server of the script's own, with, for each size (from 105 % of the
# store's database upward), a tablespace on a tmpfs of that size and the store's database
# created in it, so that the server runs out of space during the migration (SQLSTATE 53100).
# A failed run must say so (the words above, or SQLSTATE 53100, disk_full: counted apart as
# `sqlstate_only`), leave the store whole at a version of the chain (row for row that
# version's reference, made by clean migrations on the server's own disk) and no
# `<schema>_migrating_*` or `<schema>_replaced_*` schema; after growing the tmpfs the next
# migration must complete, row for row the reference of BookStore 5.
#
# Prints a line per size (with the error the failed run gave) and a `DISKFULL engine=…`
# summary per engine; exits 1 on any failure. `wording_only` counts the failures where the
# store was whole and nothing was left, but the error did not say that the disk was full. --release builds in release mode (debug by default); --build-path DIR is passed
# to `swift build`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/server.sh
source scripts/lib/postgres.sh
source scripts/lib/dump.sh
source scripts/lib/trials.sh

engine=both books=20000 stepPercent=10 maxPercent=1000
buildArgs=()
while [ $# -gt 0 ]; do
    case "$1" in
        --engine) engine="$2"; shift 2 ;;
        --books) books="$2"; shift 2 ;;
        --step-percent) stepPercent="$2"; shift 2 ;;
        --release) buildArgs+=(-c release); shift ;;
        --build-path) buildArgs+=(--build-path "$2"); shift 2 ;;
        *) echo "unknown option $1 (see the top of $0)" >&2; exit 2 ;;
    esac
done
selectEngines "$engine"
[[ "$books" =~ ^[0-9]+$ && "$stepPercent" =~ ^[1-9][0-9]*$ ]] || { echo "--books and --step-percent take numbers" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "$0 mounts tmpfs filesystems: run it as root" >&2; exit 2; }

buildBookstore ${buildArgs[@]+"${buildArgs[@]}"}

work="$(mktemp -d /tmp/disk-full-XXXXXX)"
chmod 755 "$work"
mounted=() failures=0
cleanUp() {
    stopPostgres
    local point
    for point in ${mounted[@]+"${mounted[@]}"}; do umount "$point" 2>/dev/null || umount -l "$point" 2>/dev/null || true; done
    if [ "$failures" -eq 0 ]; then rm -rf "$work"; else echo "Failing runs kept in $work" >&2; fi
}
trap cleanUp EXIT

# mountTmpfs FOLDER BYTES [OPTIONS]
mountTmpfs() {
    mkdir -p "$1"
    mount -t tmpfs -o "size=$2${3:+,$3}" tmpfs "$1"
    mounted+=("$1")
}
unmountTmpfs() {
    umount "$1"
    local kept=() point
    for point in "${mounted[@]}"; do [ "$point" = "$1" ] || kept+=("$point"); done
    mounted=(${kept[@]+"${kept[@]}"})
}
percentOf() { echo $(($1 * $2 / 100)); }
# The error line of a failed command's output FILE, shortened.
errorLine() { (grep -m1 -i '^error' "$1" || grep -m1 -i -E 'disk is full|no space left' "$1" || tail -1 "$1") | cut -c1-400; }
statusVersion() {
    local name
    name="$(sed -n 's/^Store model version: *//p' "$1" | head -1)"
    case "$name" in
        BookStore) echo 1 ;;
        "BookStore "[0-9]*) echo "${name#BookStore }" ;;
        *) echo "" ;;
    esac
}

# --- SQLite --------------------------------------------------------------------------------

runSQLite() {
    local folder="$work/sqlite" started=$SECONDS
    mkdir -p "$folder/original" "$folder/reference"
    "$bookstore" seed --model-version 1 --count "$books" --store "sqlite://$folder/original/bookstore.sqlite" --log-level warning >/dev/null
    local original="$folder/original/bookstore.sqlite" storeBytes originalHash
    storeBytes="$(stat -c %s "$original")"
    originalHash="$(sha256sum <"$original" | cut -d' ' -f1)"
    cp "$original" "$folder/reference/bookstore.sqlite"
    "$bookstore" migrate --store "sqlite://$folder/reference/bookstore.sqlite" --log-level warning >/dev/null
    dumpSQLiteStore "$folder/reference/bookstore.sqlite" >"$folder/reference-5.txt"
    echo "sqlite: a BookStore 1 store of $books books: $storeBytes bytes"

    local percent=110 sizes=0 failedCleanly=0 wordingOnly=0 grown=0 engineFailures=0 completedAt=""
    local mnt="$folder/mnt" url="sqlite://$folder/mnt/bookstore.sqlite"
    while [ -z "$completedAt" ] && [ "$percent" -le "$maxPercent" ]; do
        local size problems=() line status error=""
        size="$(percentOf "$storeBytes" "$percent")"
        sizes=$((sizes + 1))
        mountTmpfs "$mnt" "$size"
        cp "$original" "$mnt/bookstore.sqlite"
        status=0
        "$bookstore" migrate --store "$url" --log-level warning >"$folder/migrate-$percent.out" 2>"$folder/migrate-$percent.err" || status=$?
        line="$(printf 'sqlite   size=%9d (%3d%%)' "$size" "$percent")"
        if [ "$status" -eq 0 ]; then
            completedAt="$size"
            line+=" migrate=completed"
            checkSQLiteMigrated "$mnt" "$folder/reference-5.txt"
        else
            line+=" migrate=failed($status)"
            error="$(errorLine "$folder/migrate-$percent.err")"
            [ "$(sha256sum <"$mnt/bookstore.sqlite" | cut -d' ' -f1)" = "$originalHash" ] \
                || problems+=("the store file is not the original")
            local left
            left="$(cd "$mnt" && ls -A | grep -v -x 'bookstore.sqlite' | tr '\n' ' ' || true)"
            [ -z "$left" ] || problems+=("left beside the store after the failure: $left")
            if ! grep -q -i -E 'disk is full|no space left' "$folder/migrate-$percent.err"; then
                [ ${#problems[@]} -eq 0 ] && wordingOnly=$((wordingOnly + 1))
                problems+=("the error does not say that the disk is full")
            fi
            if [ ${#problems[@]} -eq 0 ]; then
                failedCleanly=$((failedCleanly + 1))
            else
                mkdir -p "$folder/failed-$percent"
                cp -a "$mnt/." "$folder/failed-$percent/"
            fi
            # Room enough now: the next migration completes.
            mount -o "remount,size=$((storeBytes * 8 + 16 * 1024 * 1024))" "$mnt"
            if "$bookstore" migrate --store "$url" --log-level warning >"$folder/again-$percent.out" 2>"$folder/again-$percent.err"; then
                local before=${#problems[@]}
                checkSQLiteMigrated "$mnt" "$folder/reference-5.txt"
                [ ${#problems[@]} -eq "$before" ] && grown=$((grown + 1)) && line+=" grown: completed"
            else
                problems+=("after growing the filesystem the next migration failed: $(errorLine "$folder/again-$percent.err")")
                mkdir -p "$folder/failed-$percent-again"
                cp -a "$mnt/." "$folder/failed-$percent-again/"
            fi
        fi
        reportProblems "$line" "the folder's files after the failure, if wrong then, are kept in $folder/failed-$percent"
        [ -z "$error" ] || echo "    ${error#error: }"
        unmountTmpfs "$mnt"
        percent=$((percent + stepPercent))
    done
    if [ -z "$completedAt" ]; then
        echo "sqlite: the migration never completed, up to $maxPercent % of the store's size"
        engineFailures=$((engineFailures + 1))
    fi
    failures=$((failures + engineFailures))
    echo "DISKFULL engine=sqlite sizes=$sizes failed_cleanly=$failedCleanly completed_after_growing=$grown failures=$engineFailures wording_only=$wordingOnly books=$books store_bytes=$storeBytes completed_at_bytes=${completedAt:-none}$([ -n "$completedAt" ] && awk -v a="$completedAt" -v b="$storeBytes" 'BEGIN { printf " (%.2fx the store)", a / b }')"
    echo "sqlite: $((SECONDS - started)) s in all"
}

# Appends to `problems` what is wrong with a migrated store in FOLDER.
checkSQLiteMigrated() {
    local mnt="$1" reference="$2" version left
    "$bookstore" status --store "sqlite://$mnt/bookstore.sqlite" --log-level warning >"$work/status.txt" 2>&1 \
        || { problems+=("bookstore status failed: $(tail -1 "$work/status.txt")"); return; }
    version="$(statusVersion "$work/status.txt")"
    [ "$version" = 5 ] || problems+=("the store is at version ${version:-?}, not BookStore 5")
    cmp -s <(dumpSQLiteStore "$mnt/bookstore.sqlite") "$reference" || problems+=("the migrated store differs from a clean migration's")
    left="$(cd "$mnt" && ls -A | grep -v -x 'bookstore.sqlite' | tr '\n' ' ' || true)"
    [ -z "$left" ] || problems+=("left beside the migrated store: $left")
}

# --- PostgreSQL ----------------------------------------------------------------------------

runPostgres() {
    local folder="$work/postgres" started=$SECONDS version
    mkdir -p "$folder"
    startPostgres
    echo "postgres: a throwaway server on 127.0.0.1:$pgPort"
    pgSQL postgres -c "CREATE DATABASE original"
    "$bookstore" seed --model-version 1 --count "$books" --store "$(pgStoreURL original bookstore)" --log-level warning >/dev/null
    dumpPostgresStore original bookstore >"$folder/reference-1.txt"
    for version in 2 3 4 5; do
        pgSQL postgres -c "CREATE DATABASE reference TEMPLATE original"
        "$bookstore" migrate --store "$(pgStoreURL reference bookstore)" --to "$version" --log-level warning >/dev/null
        dumpPostgresStore reference bookstore "$([ "$version" != 5 ] && echo by-entity-name)" >"$folder/reference-$version.txt"
        pgSQL postgres -c "DROP DATABASE reference"
    done
    local databaseBytes
    databaseBytes="$(pgSQL postgres -At -c "SELECT pg_database_size('original')")"
    echo "postgres: a BookStore 1 store of $books books: a database of $databaseBytes bytes"

    local percent=105 sizes=0 failedCleanly=0 wordingOnly=0 sqlstateOnly=0 grown=0 engineFailures=0 completedAt="" round=0
    local url
    url="$(pgStoreURL store bookstore)"
    while [ -z "$completedAt" ] && [ "$percent" -le "$maxPercent" ]; do
        local size problems=() line status mnt error=""
        round=$((round + 1))
        mnt="$folder/mnt-$round"
        size="$(percentOf "$databaseBytes" "$percent")"
        sizes=$((sizes + 1))
        mountTmpfs "$mnt" "$size" "uid=$(id -u postgres),gid=$(id -g postgres),mode=0700"
        asPostgresUser mkdir "$mnt/tablespace"
        pgSQL postgres -c "CREATE TABLESPACE small LOCATION '$mnt/tablespace'"
        # FILE_COPY writes every file of the copy at once: the space is taken from the start.
        pgSQL postgres -c "CREATE DATABASE store TEMPLATE original TABLESPACE small STRATEGY FILE_COPY"
        status=0
        "$bookstore" migrate --store "$url" --log-level warning >"$folder/migrate-$percent.out" 2>"$folder/migrate-$percent.err" || status=$?
        line="$(printf 'postgres size=%9d (%3d%%)' "$size" "$percent")"
        if [ "$status" -eq 0 ]; then
            completedAt="$size"
            line+=" migrate=completed"
            checkPostgresStore 5 "$folder"
        else
            line+=" migrate=failed($status)"
            error="$(errorLine "$folder/migrate-$percent.err")"
            if "$bookstore" status --store "$url" --log-level warning >"$folder/status-$percent.txt" 2>&1; then
                version="$(statusVersion "$folder/status-$percent.txt")"
                line+=" store=v${version:-?}"
                if [ -n "$version" ]; then
                    checkPostgresStore "$version" "$folder"
                else
                    problems+=("bookstore status named no model version")
                fi
            else
                problems+=("bookstore status failed after the failure: $(tail -1 "$folder/status-$percent.txt")")
            fi
            # The server's own words for a full disk vary ("No space left on device", or
            # "wrote only 4096 of 8192 bytes" when a page was half written); its SQLSTATE,
            # 53100 (disk_full), does not.
            if ! grep -q -i -E 'disk is full|no space left' "$folder/migrate-$percent.err"; then
                if grep -q '53100' "$folder/migrate-$percent.err"; then
                    sqlstateOnly=$((sqlstateOnly + 1))
                    line+=" (the error gives SQLSTATE 53100, not the words)"
                else
                    [ ${#problems[@]} -eq 0 ] && wordingOnly=$((wordingOnly + 1))
                    problems+=("the error does not say that the disk is full")
                fi
            fi
            if [ ${#problems[@]} -eq 0 ]; then
                failedCleanly=$((failedCleanly + 1))
            else
                pg_dump -h 127.0.0.1 -p "$pgPort" -U postgres -d store >"$folder/failed-$percent.sql" 2>&1 || true
            fi
            mount -o "remount,size=$((databaseBytes * 8 + 16 * 1024 * 1024))" "$mnt"
            if "$bookstore" migrate --store "$url" --log-level warning >"$folder/again-$percent.out" 2>"$folder/again-$percent.err"; then
                local before=${#problems[@]}
                checkPostgresStore 5 "$folder"
                [ ${#problems[@]} -eq "$before" ] && grown=$((grown + 1)) && line+=" grown: completed"
            else
                problems+=("after growing the filesystem the next migration failed: $(errorLine "$folder/again-$percent.err")")
            fi
        fi
        reportProblems "$line" "the store after the failure, if wrong then, is dumped to $folder/failed-$percent.sql"
        [ -z "$error" ] || echo "    ${error#error: }"
        pgSQL postgres -c "DROP DATABASE store WITH (FORCE)"
        pgSQL postgres -c "DROP TABLESPACE small"
        unmountTmpfs "$mnt"
        percent=$((percent + stepPercent))
    done
    if [ -z "$completedAt" ]; then
        echo "postgres: the migration never completed, up to $maxPercent % of the database's size"
        engineFailures=$((engineFailures + 1))
    fi
    failures=$((failures + engineFailures))
    stopPostgres
    echo "DISKFULL engine=postgres sizes=$sizes failed_cleanly=$failedCleanly completed_after_growing=$grown failures=$engineFailures wording_only=$wordingOnly sqlstate_only=$sqlstateOnly books=$books database_bytes=$databaseBytes completed_at_bytes=${completedAt:-none}$([ -n "$completedAt" ] && awk -v a="$completedAt" -v b="$databaseBytes" 'BEGIN { printf " (%.2fx the database)", a / b }')"
    echo "postgres: $((SECONDS - started)) s in all"
}

# Appends to `problems` what is wrong with the store (database `store`, schema `bookstore`)
# at model version VERSION: rows unlike the reference's, or leftover schemas.
checkPostgresStore() {
    local version="$1" folder="$2" left
    # Between the original and BookStore 5, entities by name (lib/dump.sh says why).
    cmp -s <(dumpPostgresStore store bookstore "$([ "$version" != 1 ] && [ "$version" != 5 ] && echo by-entity-name)") "$folder/reference-$version.txt" \
        || problems+=("the store at version $version differs from the reference of that version")
    left="$(pgSQL store -At -c "SELECT string_agg(nspname, ' ') FROM pg_namespace WHERE nspname LIKE 'bookstore\\_migrating\\_%' OR nspname LIKE 'bookstore\\_replaced\\_%'")"
    [ -z "$left" ] || problems+=("schemas left beside the store: $left")
}

for each in "${engines[@]}"; do
    case "$each" in
        sqlite) runSQLite ;;
        postgres) runPostgres ;;
    esac
done
[ "$failures" -eq 0 ]
