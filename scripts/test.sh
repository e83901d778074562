#!/usr/bin/env bash
# Sets up a fresh machine and runs every test (debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build --build-tests
swift test --skip-build "$@"
