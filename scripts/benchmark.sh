#!/usr/bin/env bash
# Sets up a fresh machine, builds the benchmark in release mode and runs it. Arguments go to
# `bookstore-benchmark` (see docs/PERFORMANCE.md), e.g.:
#   scripts/benchmark.sh migrate --books 1000000 --backend sqlite
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build -c release --product bookstore-benchmark
exec "$(swift build -c release --show-bin-path)/bookstore-benchmark" "$@"
