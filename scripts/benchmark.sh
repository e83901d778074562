#!/usr/bin/env bash
# Sets up a fresh machine, builds the benchmark in release mode and runs it. Arguments go to
# `bookstore-benchmark` (see docs/PERFORMANCE.md), e.g.:
#   scripts/benchmark.sh migrate --books 1000000 --backend sqlite postgres
#   scripts/benchmark.sh http --books 100000 --rounds 3 --duration 5
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The HTTP benchmark loads the servers with wrk.
if ! command -v wrk >/dev/null 2>&1; then
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq wrk
fi
swift build -c release --product bookstore-benchmark
exec "$(swift build -c release --show-bin-path)/bookstore-benchmark" "$@"
