#!/usr/bin/env bash
# A bounded load on `bookstore serve` (release build) with wrk: --connections (64) open
# connections for --duration seconds (180) of mixed reads and writes (scripts/load-mix.lua)
# on a new SQLite store of --books generated publications (1000). Prints requests per
# second, median and 99th-percentile latency, answers by status, socket errors, and the
# server's resident memory before, every 30 s during and after the load, and at its peak.
# Fails when a request got a 5xx or a socket error, or the server logged an error.
#
#   scripts/load.sh --duration 60 --connections 64 --books 1000
#
# BOOKSTORE_STORE names another store (a PostgreSQL URL, say), seeded when empty;
# --log-level sets the server's (warning by default: a line per request measures the log).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/server.sh
duration=180 connections=64 books=1000 threads=2 logLevel=warning
while [ $# -gt 0 ]; do
    case "$1" in
        --duration) duration="$2"; shift 2 ;;
        --connections) connections="$2"; shift 2 ;;
        --books) books="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --log-level) logLevel="$2"; shift 2 ;;
        *) echo "unknown option $1 (see the top of $0)" >&2; exit 2 ;;
    esac
done
scripts/setup.sh
ensurePackages wrk curl iproute2
swift build -c release --product bookstore
bookstore="$(swift build -c release --show-bin-path)/bookstore"

work="$(mktemp -d)"
sampler=""
stopSampler() {
    # The sampler's pending `sleep` too, which would keep this script's output open.
    if [ -n "$sampler" ]; then pkill -P "$sampler" 2>/dev/null || true; kill "$sampler" 2>/dev/null || true; sampler=""; fi
}
trap 'stopSampler; stopServer; rm -rf "$work"' EXIT
store="${BOOKSTORE_STORE:-sqlite://$work/load.sqlite}"
"$bookstore" seed --store "$store" --count "$books" --log-level warning
startServer "$bookstore" "$store" "$work/server.log" --log-level "$logLevel"

memory() { awk -v key="$1:" '$1 == key { printf "%.1f MiB", $2 / 1024 }' "/proc/$server/status"; }
echo "Loading http://127.0.0.1:$port: $connections connections, $duration s, $books publications, $(wrk --version 2>&1 | head -1 | awk '{print $1, $2}')"
echo "Memory before: resident $(memory VmRSS)"
SECONDS=0
( while sleep 30; do echo "  after ${SECONDS} s: resident $(memory VmRSS)"; done ) &
sampler=$!
status=0
BOOKS="$books" WRITE_KEY="$writeKey" wrk --threads "$threads" --connections "$connections" --duration "${duration}s" --timeout 10s --latency \
    --script scripts/load-mix.lua "http://127.0.0.1:$port" >"$work/wrk.txt" 2>&1 || status=1
stopSampler
echo "Memory after: resident $(memory VmRSS), peak $(memory VmHWM)"
summary="$(grep '^LOAD ' "$work/wrk.txt" || true)"
if [ -z "$summary" ]; then
    echo "wrk gave no summary:" >&2
    cat "$work/wrk.txt" >&2
    exit 1
fi
echo "$summary"
stopServer
errors="$(serverErrorLines "$work/server.log")"
echo "Server error lines: $errors"
[[ "$summary" == *" socket_errors=0 server_errors=0 "* ]] || status=1
[ "$errors" = "0" ] || status=1
exit "$status"
