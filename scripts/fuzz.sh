#!/usr/bin/env bash
# Fuzzes the service from its own OpenAPI document: schemathesis (from PyPI, in a virtual
# environment under .build-fuzz/) generates requests for every operation, valid and not, and
# runs every check it has (`--checks all`: no 5xx, status codes, content types, headers and
# bodies as the document says, invalid data refused, valid data accepted, …) against
# `bookstore serve` on a new SQLite store of the catalogue and 50 generated books.
#
# It fails when schemathesis reports a failure or the server logged an error. Arguments go
# to `schemathesis run`, e.g. `scripts/fuzz.sh --max-examples 200` (default 100 per
# operation) or `--phases fuzzing`. BOOKSTORE_STORE names another store to serve (a
# PostgreSQL URL, say); it is seeded when empty.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/server.sh
scripts/setup.sh
schemathesis_version=4.32.5
venv=.build-fuzz/venv
# CPython 3.12 or later: on 3.11, schemathesis' coverage phase can fail inside `ast.parse`
# ("AST constructor recursion depth mismatch"). PYTHON names one; else the first found.
python="${PYTHON:-}"
if [ -z "$python" ]; then
    pyenvVersions="$(pyenv root 2>/dev/null || true)/versions"
    for candidate in python3.13 python3.12 "$pyenvVersions"/3.13*/bin/python3 "$pyenvVersions"/3.12*/bin/python3 python3; do
        if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then python="$candidate"; break; fi
    done
fi
if [ -z "$python" ]; then
    echo "schemathesis needs CPython 3.12 or later here; name one with PYTHON=/path/to/python3" >&2
    exit 1
fi
if [ "$("$venv/bin/schemathesis" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1)" != "$schemathesis_version" ] \
    || ! "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet "schemathesis==$schemathesis_version"
fi
ensurePackages curl iproute2
swift build --product bookstore
bookstore="$(swift build --show-bin-path)/bookstore"

work="$(mktemp -d)"
trap 'stopServer; rm -rf "$work"' EXIT
store="${BOOKSTORE_STORE:-sqlite://$work/fuzz.sqlite}"
"$bookstore" seed --store "$store" --count 50 --log-level warning
startServer "$bookstore" "$store" "$work/server.log"
echo "Fuzzing http://127.0.0.1:$port (schemathesis $schemathesis_version, every check)"

status=0
# With the write key, which the document declares on the writes: schemathesis' checks also
# send them without it (`ignored_auth`), which must be refused. The key is this run's own,
# made for a server on loopback that ends with the script, so it may show in `ps`.
"$venv/bin/schemathesis" --no-color run "http://127.0.0.1:$port/openapi.json" --checks all --max-examples 100 \
    --header "Authorization: Bearer $writeKey" \
    --workers 2 --suppress-health-check too_slow "$@" || status=$?
stopServer

requests="$(grep -c 'http.status=' "$work/server.log" || true)"
server5xx="$(grep -c -E 'http.status=5[0-9][0-9]' "$work/server.log" || true)"
errors="$(serverErrorLines "$work/server.log")"
echo "Server: $requests requests logged, $server5xx answered 5xx, $errors error lines"
[ "$server5xx" = "0" ] && [ "$errors" = "0" ] || status=1
exit "$status"
