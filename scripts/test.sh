#!/usr/bin/env bash
# Sets up a fresh machine and runs every test (debug build).
# Tests run in parallel, so a failure's lines are far from the summary: they are
# printed again after it, so that the end of the output says what failed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The code as .swift-format lays it out (`swift format -i -r Sources Tests Package.swift`
# formats it): a slip fails here, before the build.
swift format lint --strict --recursive --parallel Sources Tests Package.swift
# The DocC catalogs (Sources/*/*.docc) and the doc comments of the public symbols: a warning
# (a link to a symbol that is not public, or misspelt, or to an article that is not there)
# fails here. The plugin is a dependency of the package; docc comes with the toolchain.
swift package --disable-sandbox generate-documentation --target Persistence --target BookStoreService --warnings-as-errors
swift build --build-tests
log=$(mktemp -t bookstore-tests.XXXXXX)
trap 'rm -f "$log"' EXIT
status=0
swift test --skip-build "$@" 2>&1 | tee "$log" || status=$?
if [ "$status" -ne 0 ]; then
    echo
    echo "What failed (repeated from above):"
    grep -E -A3 '✘|Fatal error' "$log" | grep -v '^✘ Test run with' || true
    grep -E '^✘ Test run with' "$log" || true
fi
exit "$status"
