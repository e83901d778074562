#!/usr/bin/env bash
# Sets up a fresh machine, creates the embedded SQLite store with the book's catalogue
# when there is none, and shows its status. Pass a store URL in BOOKSTORE_STORE to use another.
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
