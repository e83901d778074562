#!/usr/bin/env bash
# Kills a real `bookstore migrate` with SIGKILL at random moments and checks every time that
# nothing was lost, on SQLite and on PostgreSQL (a throwaway server of the script's own).
#
#   scripts/kill-trials.sh --engine both --trials 100 --books 20000 --seed-version 1
#
# Once per engine it seeds a store at --seed-version (1: every kind of step is crossed) with
# --books generated books, migrates copies of it cleanly to each later version as references
# (their contents dumped as text: every table's columns and rows, sorted, and the indexes;
# Z_METADATA, which carries the store's UUID, left out), and times three clean migrations
# to BookStore 5: their median is the window T. Each trial then copies the original into
# place, starts `bookstore migrate --log-level info`, kills it with SIGKILL after a random
# delay, uniform in [0, 1.1 T], and records where the kill landed (the last `migration
# stage` line of its log). Meanwhile a concurrent writer (`sqlite3` or `psql`, a process per
# statement) sets the price of one book over and over, noting each price it was told was
# written. It checks that
#   - the book's price is the last one the writer was told was written (no acknowledged
#     write lost), after which the price is set back to the original's;
#   - `bookstore status` works and names the store's model version;
#   - SQLite: the store is row for row the original, or at BookStore 5 and row for row the
#     reference; PostgreSQL: the store is row for row the reference of the version it
#     stands at (each step commits on its own; between the original and BookStore 5, its
#     entities by name, as lib/dump.sh says why);
#   - the next `bookstore migrate` exits 0, leaves the store row for row the reference of
#     BookStore 5, and nothing beside it (SQLite: no work folder, lock file, -wal or
#     -journal; PostgreSQL: no `<schema>_migrating_*` or `<schema>_replaced_*` schema).
# A failing trial's folder (the store, or a pg_dump of it, and the logs) is kept and named.
# Prints a line per trial and a `KILL engine=…` summary per engine; exits 1 on any failure.
#
# --resumption measures how much of a killed step the next run does again: no writer (a
# write since the kill makes the next run start the step again, as it must), and each trial
# also times the next migration. A kill at x = delay / T (x < 1) should leave a next run of
# at most (1 − x) T + 10 % of T; each trial prints its excess, the next run's time over T
# minus (1 − x), and a `RESUME engine=…` line gives the median and the largest excess.
# With --seed-version 4 the migration is BookStore 4 → 5 alone, one streamed step.
#
# --online (PostgreSQL only) runs `bookstore migrate --online` in every migration (the
# timing runs, each trial, the next run): the store after a kill must be row for row the
# original (with the writer's writes) or the reference of BookStore 5, never in between,
# and nothing may be left beside it after the next run (no shadow, replaced or capturing
# schema, no trigger). A kill lands in an online phase (`online/copy`, …) or in a stage of
# the bulk run's steps.
#
# --window-factor F kills after 0 to F T (1.1 by default): a larger one reaches the last
# phases of a migration that the concurrent writer slows beyond the writer-free window.
#
# --release builds in release mode (debug by default); --build-path DIR is passed to
# `swift build`. On PostgreSQL the script waits, after each kill, until the killed client's
# server process has ended (a statement it was running finishes or rolls back first).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/server.sh
source scripts/lib/postgres.sh
source scripts/lib/dump.sh
source scripts/lib/trials.sh

engine=both trials=100 books=20000 seedVersion=1 resumption=false online=false windowFactor=1.1
buildArgs=() migrateArgs=()
while [ $# -gt 0 ]; do
    case "$1" in
        --engine) engine="$2"; shift 2 ;;
        --trials) trials="$2"; shift 2 ;;
        --books) books="$2"; shift 2 ;;
        --seed-version) seedVersion="$2"; shift 2 ;;
        --resumption) resumption=true; shift ;;
        --online) online=true; migrateArgs+=(--online); shift ;;
        --window-factor) windowFactor="$2"; shift 2 ;;
        --release) buildArgs+=(-c release); shift ;;
        --build-path) buildArgs+=(--build-path "$2"); shift 2 ;;
        *) echo "unknown option $1 (see the top of $0)" >&2; exit 2 ;;
    esac
done
selectEngines "$engine"
if [ "$online" = true ] && [ "$engine" != postgres ]; then
    echo "--online runs on PostgreSQL only (a SQLite store is migrated offline): pass --engine postgres" >&2; exit 2
fi
[[ "$seedVersion" =~ ^[1-4]$ ]] || { echo "--seed-version is 1 to 4 (5 is the current version: nothing to migrate)" >&2; exit 2; }
[[ "$trials" =~ ^[0-9]+$ && "$books" =~ ^[0-9]+$ ]] || { echo "--trials and --books take numbers" >&2; exit 2; }

buildBookstore ${buildArgs[@]+"${buildArgs[@]}"}

work="$(mktemp -d /tmp/kill-trials-XXXXXX)"
chmod 755 "$work"
migrator="" writer="" failures=0
cleanUp() {
    if [ -n "$migrator" ]; then kill -KILL "$migrator" 2>/dev/null || true; wait "$migrator" 2>/dev/null || true; fi
    if [ -n "$writer" ]; then kill "$writer" 2>/dev/null || true; wait "$writer" 2>/dev/null || true; fi
    stopPostgres
    if [ "$failures" -eq 0 ]; then rm -rf "$work"; else echo "Failing trials kept in $work" >&2; fi
}
trap cleanUp EXIT

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# A delay uniform in [0, MAX] seconds, to the millisecond.
randomDelay() { awk -v r="$(od -An -N4 -tu4 /dev/urandom)" -v max="$1" 'BEGIN { printf "%.3f", r / 4294967296 * max }'; }
# The model version `bookstore status` printed in FILE, as a number ("BookStore" is 1).
statusVersion() {
    local name
    name="$(sed -n 's/^Store model version: *//p' "$1" | head -1)"
    case "$name" in
        BookStore) echo 1 ;;
        "BookStore "[0-9]*) echo "${name#BookStore }" ;;
        *) echo "" ;;
    esac
}
# Where the kill landed, from the migration's LOG and exit status.
landing() {
    local log="$1" status="$2" line
    if [ "$status" -eq 0 ]; then echo "finished"; return; fi
    line="$(grep -e 'migration stage' -e 'online migration phase' "$log" | tail -1 || true)"
    [ -z "$line" ] && { echo "before-first-stage"; return; }
    stageKey "$line"
}
# "step3/create instances" for a `migration stage` log line, "online/copy" for an online
# migration's phase line.
stageKey() {
    local step stage
    if [[ "$1" == *"online migration phase"* ]]; then
        echo "online/$(sed -n 's/.*persistence\.migration\.online_phase=\([a-z-]*\).*/\1/p' <<<"$1")"
        return
    fi
    step="$(sed -n 's/.*persistence\.migration\.step=\([0-9]*\)\/.*/\1/p' <<<"$1")"
    stage="$(sed -n 's/.*persistence\.migration\.stage=\(.*\) persistence\.migration\.step=.*/\1/p' <<<"$1")"
    echo "step$step/$stage"
}

# The book the concurrent writer updates, and its price in the original store.
writerKey=3 originalPrice=""

# concurrentWriter ENGINE FOLDER: sets the price of book $writerKey to 1, 2, 3, … (in ZBOOK
# before BookStore 3, ZPUBLICATION from it) until FOLDER/stop-writing appears, noting in
# FOLDER/acknowledged each price a client was told was written.
concurrentWriter() {
    local engine="$1" folder="$2" price=0 table
    : >"$folder/acknowledged"
    while [ ! -e "$folder/stop-writing" ] && [ "$price" -lt 999 ]; do
        price=$((price + 1))
        for table in zpublication zbook; do
            if "write_$engine" "$folder" "UPDATE $table SET zprice = $price WHERE z_pk = $writerKey"; then
                echo "$price" >>"$folder/acknowledged"
                break
            fi
        done
        sleep 0.02
    done
}
# writtenPrice ENGINE FOLDER: the price of book $writerKey, whatever the version.
writtenPrice() {
    "read_$1" "$2" "SELECT zprice FROM zpublication WHERE z_pk = $writerKey" 2>/dev/null \
        || "read_$1" "$2" "SELECT zprice FROM zbook WHERE z_pk = $writerKey" 2>/dev/null
}
# restorePrice ENGINE FOLDER: the book's price as in the original, so the store compares with the references.
restorePrice() {
    "write_$1" "$2" "UPDATE zpublication SET zprice = $originalPrice WHERE z_pk = $writerKey" \
        || "write_$1" "$2" "UPDATE zbook SET zprice = $originalPrice WHERE z_pk = $writerKey"
}

# Per engine, set by its setUp: how to make, dump, check and drop a trial's store.
declare -A landed
order=()
# With --resumption: each trial's excess (the next run over the window, minus 1 − x).
excesses=()

runEngine() {
    local engine="$1" folder="$work/$1" started window line key
    mkdir -p "$folder"
    started="$(now)"
    landed=()
    order=(before-first-stage)
    "setUp_$engine" "$folder"

    # The window: the median of three clean migrations of the original (a machine busy
    # with something else for one of them does not stretch it), each checked against the
    # reference.
    local t0 t1 run timings=()
    for run in 1 2 3; do
        "place_$engine" "$folder/timing"
        t0="$(now)"
        "$bookstore" migrate ${migrateArgs[@]+"${migrateArgs[@]}"} --store "$(storeURL_$engine "$folder/timing")" --log-level info >"$folder/timing.log" 2>&1
        t1="$(now)"
        timings+=("$(seconds "$t0" "$t1")")
        "dump_$engine" "$folder/timing" >"$folder/timing.txt"
        if ! cmp -s "$folder/timing.txt" "$folder/reference-5.txt"; then
            echo "A clean migration's store differs from the reference of BookStore 5: the dumps are not reproducible" >&2
            diff "$folder/reference-5.txt" "$folder/timing.txt" | head -20 >&2
            failures=$((failures + 1))
            return 1
        fi
        "drop_$engine" "$folder/timing"
    done
    window="$(printf '%s\n' "${timings[@]}" | sort -g | sed -n 2p)"
    while IFS= read -r line; do
        key="$(stageKey "$line")"
        [[ " ${order[*]} " == *" $key "* ]] || order+=("$key")
    done < <(grep -e 'migration stage' -e 'online migration phase' "$folder/timing.log")
    order+=(finished)
    local maximum
    maximum="$(awk -v w="$window" -v f="$windowFactor" 'BEGIN { printf "%.3f", w * f }')"
    echo "$engine: $books books from BookStore $seedVersion, clean migrations to BookStore 5 took ${timings[*]} s (median ${window} s); killing after 0 to ${maximum} s"

    local engineFailures=0 trial
    excesses=()
    for trial in $(seq 1 "$trials"); do
        runTrial "$engine" "$folder/trial-$trial" "$trial" "$maximum" "$window" || engineFailures=$((engineFailures + 1))
    done
    if [ "$resumption" = true ] && [ ${#excesses[@]} -gt 0 ]; then
        local sorted median
        sorted="$(printf '%s\n' "${excesses[@]}" | sort -g)"
        median="$(awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }' <<<"$sorted")"
        echo "RESUME engine=$engine kills_within_the_step=${#excesses[@]} median_excess=$median largest_excess=$(tail -1 <<<"$sorted") target_excess=0.10"
    fi
    failures=$((failures + engineFailures))
    "tearDown_$engine"

    local summary="KILL engine=$engine trials=$trials failures=$engineFailures books=$books window_s=$window landed:"
    for key in "${order[@]}"; do summary+=" $key=${landed[$key]:-0}"; done
    for key in "${!landed[@]}"; do [[ " ${order[*]} " == *" $key "* ]] || summary+=" $key=${landed[$key]}"; done
    echo "$summary"
    echo "$engine: $(seconds "$started" "$(now)") s in all"
}

# runTrial ENGINE FOLDER NUMBER MAXIMUM WINDOW: one kill and its checks; fails when a check does.
runTrial() {
    local engine="$1" folder="$2" trial="$3" maximum="$4" window="$5"
    local url delay status where problems=() version state="" resumed=""
    mkdir -p "$folder"
    "place_$engine" "$folder"
    url="$(storeURL_$engine "$folder")"
    delay="$(randomDelay "$maximum")"
    rm -f "$folder/stop-writing"
    if [ "$resumption" = true ]; then
        : >"$folder/acknowledged"
        sleep 1000 &
    else
        concurrentWriter "$engine" "$folder" &
    fi
    writer=$!
    "$bookstore" migrate ${migrateArgs[@]+"${migrateArgs[@]}"} --store "$url" --log-level info >"$folder/migrate.log" 2>&1 &
    migrator=$!
    sleep "$delay"
    kill -KILL "$migrator" 2>/dev/null || true
    status=0
    # Braces, so that the shell's "Killed" notice goes with wait's standard error.
    { wait "$migrator"; } 2>/dev/null || status=$?
    migrator=""
    # The writer ends with the statement it is running: whether that one was written is known.
    touch "$folder/stop-writing"
    [ "$resumption" = true ] && kill "$writer" 2>/dev/null
    wait "$writer" 2>/dev/null || true
    writer=""
    where="$(landing "$folder/migrate.log" "$status")"
    landed[$where]=$((${landed[$where]:-0} + 1))
    case "$status" in
        0 | 137) ;;
        *) problems+=("the migration exited with $status before it was killed: $(grep -m1 '^error' "$folder/migrate.log" || tail -1 "$folder/migrate.log")") ;;
    esac
    "settle_$engine" "$folder"

    # No write the writer was told succeeded is lost: the price is the last one acknowledged.
    local written expected acknowledged
    acknowledged="$(wc -l <"$folder/acknowledged")"
    expected="$(tail -1 "$folder/acknowledged")"
    [ -n "$expected" ] || expected="$originalPrice"
    written="$(writtenPrice "$engine" "$folder" || true)"
    if ! awk -v a="$written" -v b="$expected" 'BEGIN { exit !(a != "" && a + 0 == b + 0) }'; then
        problems+=("the writer was told price $expected was written last ($acknowledged writes acknowledged), but the book's price is '${written}'")
    fi
    # Without writes nothing is set back: that would be a write since the kill.
    if [ "$acknowledged" -gt 0 ]; then
        restorePrice "$engine" "$folder" || problems+=("the book's price could not be set back to the original's")
    fi

    # (a) and (b): where the store stands after the kill, and that it is whole there.
    if ! "$bookstore" status --store "$url" --log-level warning >"$folder/status.txt" 2>&1; then
        problems+=("bookstore status failed after the kill: $(tail -1 "$folder/status.txt")")
    else
        version="$(statusVersion "$folder/status.txt")"
        if [ -z "$version" ]; then
            problems+=("bookstore status named no model version: $(head -3 "$folder/status.txt" | tr '\n' ' ')")
        elif { [ "$engine" = sqlite ] || [ "$online" = true ]; } && [ "$version" != 5 ] && [ "$version" != "$seedVersion" ]; then
            problems+=("status says version $version (neither the original's nor BookStore 5)")
        elif [ "$version" -lt "$seedVersion" ]; then
            problems+=("status says version $version, older than the original's $seedVersion")
        else
            state="v$version"
            [ "$version" = "$seedVersion" ] && state="original"
            # Between the steps, PostgreSQL's store keeps its entity numbers (lib/dump.sh).
            "dump_$engine" "$folder" "$([ "$engine" = postgres ] && [ "$version" != 5 ] && [ "$version" != "$seedVersion" ] && echo by-entity-name)" \
                >"$folder/after-kill.txt"
            if ! cmp -s "$folder/after-kill.txt" "$work/$engine/reference-$version.txt"; then
                problems+=("after the kill the store at version $version differs from the reference: $(diff "$work/$engine/reference-$version.txt" "$folder/after-kill.txt" | grep -m1 '^[<>]' | cut -c1-160)")
            fi
        fi
    fi

    # (c): the next migration completes and leaves nothing behind.
    local t0 t1
    t0="$(now)"
    if ! "$bookstore" migrate ${migrateArgs[@]+"${migrateArgs[@]}"} --store "$url" --log-level notice >"$folder/again.log" 2>&1; then
        problems+=("the next migration failed: $(grep -m1 '^error' "$folder/again.log" || tail -1 "$folder/again.log")")
    else
        t1="$(now)"
        if [ "$resumption" = true ] && [ "$status" -ne 0 ]; then
            # x, the next run's share of the window, and its excess over 1 − x.
            resumed="$(awk -v d="$delay" -v w="$window" -v a="$t0" -v b="$t1" 'BEGIN { x = d / w; r = (b - a) / w; if (x < 1) printf "x=%.2f next=%.2f excess=%+.3f", x, r, r - (1 - x) }')"
            [ -n "$resumed" ] && excesses+=("${resumed##*excess=}")
            if [ "$state" = v5 ]; then resumed+=" nothing-left"
            elif grep -q 'resuming step' "$folder/again.log"; then resumed+=" resumed"
            else resumed+=" from-the-start"; fi
        fi
        "dump_$engine" "$folder" >"$folder/after-again.txt"
        if ! cmp -s "$folder/after-again.txt" "$work/$engine/reference-5.txt"; then
            problems+=("after the next migration the store differs from the reference of BookStore 5: $(diff "$work/$engine/reference-5.txt" "$folder/after-again.txt" | grep -m1 '^[<>]' | cut -c1-160)")
        fi
        local left
        left="$("leftovers_$engine" "$folder")"
        [ -z "$left" ] || problems+=("left beside the store after the next migration: $left")
    fi

    local line
    line="$(printf '%-8s %4s/%s delay=%6.3fs landed=%-28s writes=%-4s' "$engine" "$trial" "$trials" "$delay" "$where" "$acknowledged")"
    [ -n "$resumed" ] && line+=" $resumed"
    if [ ${#problems[@]} -eq 0 ]; then
        echo "$line after-kill=$state ok"
        "drop_$engine" "$folder"
        rm -rf "$folder"
        return 0
    fi
    "keep_$engine" "$folder"
    echo "$line after-kill=${state:-?} FAILED (kept in $folder):"
    local problem
    for problem in "${problems[@]}"; do echo "    - $problem"; done
    return 1
}

# SQLite: a trial's store is FOLDER/store/bookstore.sqlite, a copy of the original file.
setUp_sqlite() {
    local folder="$1" version
    mkdir -p "$folder/original"
    "$bookstore" seed --model-version "$seedVersion" --count "$books" --store "sqlite://$folder/original/bookstore.sqlite" --log-level warning >/dev/null
    originalPrice="$(writtenPrice sqlite "$folder/original")"
    dumpSQLiteStore "$folder/original/bookstore.sqlite" >"$folder/reference-$seedVersion.txt"
    for version in $(seq $((seedVersion + 1)) 5); do
        place_sqlite "$folder/reference"
        "$bookstore" migrate --store "$(storeURL_sqlite "$folder/reference")" --to "$version" --log-level warning >/dev/null
        dump_sqlite "$folder/reference" >"$folder/reference-$version.txt"
        rm -rf "$folder/reference"
    done
}
place_sqlite() { mkdir -p "$1/store"; cp "$work/sqlite/original/bookstore.sqlite" "$1/store/bookstore.sqlite"; }
storeURL_sqlite() { echo "sqlite://$1/store/bookstore.sqlite"; }
# write_sqlite FOLDER SQL: one statement by a process of its own, waiting up to 30 s for a lock.
write_sqlite() { sqlite3 -bail -cmd ".timeout 30000" "$1/store/bookstore.sqlite" "$2" >/dev/null 2>&1; }
read_sqlite() {
    local file="$1/store/bookstore.sqlite"
    [ -e "$file" ] || file="$1/bookstore.sqlite"
    sqlite3 -bail "$file" "$2"
}
dump_sqlite() { dumpSQLiteStore "$1/store/bookstore.sqlite"; }
settle_sqlite() { :; }
leftovers_sqlite() { (cd "$1/store" && ls -A | grep -v -x 'bookstore.sqlite' | tr '\n' ' ' || true); }
drop_sqlite() { rm -rf "$1/store"; }
keep_sqlite() { :; }
tearDown_sqlite() { :; }

# PostgreSQL: a trial's store is schema `bookstore` of a database of its own, created from
# the original's database as a template (a copy of its files).
setUp_postgres() {
    local folder="$1" version
    startPostgres
    echo "postgres: a throwaway server on 127.0.0.1:$pgPort"
    pgSQL postgres -c "CREATE DATABASE original"
    "$bookstore" seed --model-version "$seedVersion" --count "$books" --store "$(pgStoreURL original bookstore)" --log-level warning >/dev/null
    originalPrice="$(writtenPrice postgres original)"
    dumpPostgresStore original bookstore >"$folder/reference-$seedVersion.txt"
    for version in $(seq $((seedVersion + 1)) 5); do
        place_postgres "$folder/reference"
        "$bookstore" migrate --store "$(storeURL_postgres "$folder/reference")" --to "$version" --log-level warning >/dev/null
        dump_postgres "$folder/reference" "$([ "$version" != 5 ] && echo by-entity-name)" >"$folder/reference-$version.txt"
        drop_postgres "$folder/reference"
    done
}
databaseOf() { basename "$1" | tr -c 'a-z0-9\n' '_'; }
place_postgres() { mkdir -p "$1"; pgSQL postgres -c "CREATE DATABASE $(databaseOf "$1") TEMPLATE original"; }
storeURL_postgres() { pgStoreURL "$(databaseOf "$1")" bookstore; }
write_postgres() { pgSQL "$(databaseOf "$1")" -c "SET search_path TO bookstore; $2" >/dev/null 2>&1; }
read_postgres() { pgSQL "$(databaseOf "$1")" -At -c "SET search_path TO bookstore; $2" | tail -1; }
dump_postgres() { dumpPostgresStore "$(databaseOf "$1")" bookstore "${2:-}"; }
# Waits until the killed client's server process has ended (60 s at most).
settle_postgres() {
    local database _
    database="$(databaseOf "$1")"
    for _ in $(seq 1 600); do
        [ "$(pgSQL postgres -At -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$database'")" = 0 ] && return 0
        sleep 0.1
    done
    echo "the killed migration's server process on $database did not end within 60 s" >&2
}
leftovers_postgres() {
    pgSQL "$(databaseOf "$1")" -At -c "SELECT concat_ws(' ', (SELECT string_agg(nspname, ' ') FROM pg_namespace WHERE nspname LIKE 'bookstore\\_migrating\\_%'
        OR nspname LIKE 'bookstore\\_replaced\\_%' OR nspname LIKE 'bookstore\\_capturing\\_%'),
        (SELECT 'triggers: ' || string_agg(tgname, ' ') FROM pg_trigger WHERE NOT tgisinternal))"
}
drop_postgres() { pgSQL postgres -c "DROP DATABASE IF EXISTS $(databaseOf "$1") WITH (FORCE)"; }
keep_postgres() {
    pg_dump -h 127.0.0.1 -p "$pgPort" -U postgres -d "$(databaseOf "$1")" >"$1/store.sql" 2>&1 || true
    drop_postgres "$1"
}
tearDown_postgres() { pgSQL postgres -c "DROP DATABASE original"; stopPostgres; }

for each in "${engines[@]}"; do
    runEngine "$each"
done
[ "$failures" -eq 0 ]
