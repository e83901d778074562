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
if ! command -v wrk >/dev/null 2>&1; then
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq wrk
fi
swift build -c release --product bookstore
bookstore="$(swift build -c release --show-bin-path)/bookstore"

work="$(mktemp -d)"
server=""
sampler=""
cleanUp() {
    [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanUp EXIT
store="${BOOKSTORE_STORE:-sqlite://$work/load.sqlite}"
"$bookstore" seed --store "$store" --count "$books" --log-level warning
# At --log-level warning the server does not say where it listens: ss tells.
"$bookstore" serve --store "$store" --port 0 --log-level "$logLevel" >"$work/server.log" 2>&1 &
server=$!
port=""
for _ in $(seq 1 600); do
    port="$( (ss -ltnpH 2>/dev/null || true) | grep "pid=$server," | sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' | head -1 || true)"
    [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    port=""
    kill -0 "$server" 2>/dev/null || { cat "$work/server.log"; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { echo "the server did not answer /health"; cat "$work/server.log"; exit 1; }

memory() { awk -v key="$1:" '$1 == key { printf "%.1f MiB", $2 / 1024 }' "/proc/$server/status"; }
echo "Loading http://127.0.0.1:$port: $connections connections, $duration s, $books publications, wrk $(wrk --version 2>&1 | head -1 | awk '{print $2}')"
echo "Memory before: resident $(memory VmRSS)"
SECONDS=0
( while sleep 30; do echo "  after ${SECONDS} s: resident $(memory VmRSS)"; done ) &
sampler=$!
BOOKS="$books" wrk --threads "$threads" --connections "$connections" --duration "${duration}s" --timeout 10s --latency \
    --script scripts/load-mix.lua "http://127.0.0.1:$port" >"$work/wrk.txt"
kill "$sampler" 2>/dev/null; sampler=""
echo "Memory after: resident $(memory VmRSS), peak $(memory VmHWM)"
summary="$(grep '^LOAD ' "$work/wrk.txt")"
echo "$summary"
errors="$(grep -c -E ' (error|critical) ' "$work/server.log" || true)"
echo "Server error lines: $errors"
status=0
[[ "$summary" == *" socket_errors=0 server_errors=0 "* ]] || status=1
[ "$errors" = "0" ] || { grep -E ' (error|critical) ' "$work/server.log" | head -20; status=1; }
exit "$status"
