#!/usr/bin/env bash
# Sets up a fresh machine, creates the embedded SQLite store with the book's catalogue
# when there is none, and starts the service on it (http://127.0.0.1:8080; Ctrl-C stops
# it). Pass a store URL in BOOKSTORE_STORE to use another; other arguments go to
# `bookstore serve` (e.g. --port 9000, --unix-socket PATH, --log-level debug).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build --product bookstore
store="${BOOKSTORE_STORE:-sqlite://./bookstore.sqlite}"
path="${store#sqlite://}"
if [[ "$store" == sqlite://* && ! -e "$path" ]]; then
    swift run --skip-build bookstore seed --store "$store"
fi
swift run --skip-build bookstore status --store "$store"
exec "$(swift build --show-bin-path)/bookstore" serve --store "$store" "$@"
