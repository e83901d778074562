#!/usr/bin/env bash
# Runs the whole test suite the README's way (scripts/test.sh) while another process keeps
# every core busy, --runs times in a row (1 by default), stopping at the first failure. A
# test that passes only on an idle machine (a sleep standing in for an event, a time limit
# a slow build misses) fails here. Prints each run's summary line at the end.
#
#   scripts/test-under-load.sh --runs 3
#   scripts/test-under-load.sh --runs 1 --filter OnlineMigrationTests   # options after --runs go to swift test
#
# The load is `stress-ng --cpu N` (Debian's stress-ng, installed when missing), or, with
# --busy-loop or where it cannot be installed, N shell loops of its own; N is the number
# of cores (nproc). Not part of CI, whose machine is loaded by its own PostgreSQL server.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/server.sh
runs=1 busyLoop=false
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --busy-loop) busyLoop=true; shift ;;
        *) break ;;
    esac
done
cores=$(nproc)
if [ "$busyLoop" = false ] && ! command -v stress-ng >/dev/null; then
    ensurePackages stress-ng || echo "stress-ng cannot be installed: loading the cores with shell loops" >&2
fi

loaders=()
stopLoad() {
    for pid in "${loaders[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${loaders[@]}"; do wait "$pid" 2>/dev/null || true; done
    loaders=()
}
trap stopLoad EXIT
if [ "$busyLoop" = false ] && command -v stress-ng >/dev/null; then
    stress-ng --cpu "$cores" --timeout 0 --quiet &
    loaders+=($!)
else
    for _ in $(seq "$cores"); do
        ( while :; do :; done ) &
        loaders+=($!)
    done
fi
echo "loading $cores cores (pids ${loaders[*]})"

summaries=()
status=0
for run in $(seq "$runs"); do
    log=$(mktemp -t bookstore-loaded-tests.XXXXXX)
    echo "=== loaded run $run of $runs"
    scripts/test.sh "$@" 2>&1 | tee "$log" || status=$?
    # A run with known issues sums up with ━ rather than ✔.
    summaries+=("run $run: $(grep -E '^(✔|✘|━) Test run with' "$log" | tail -1 || true)")
    rm -f "$log"
    [ "$status" -eq 0 ] || break
done
stopLoad
echo
printf '%s\n' "${summaries[@]}"
exit "$status"
