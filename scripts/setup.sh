#!/usr/bin/env bash
# Installs the system libraries the package links against (Debian/Ubuntu), if missing,
# PostgreSQL's server, which the tests start a throwaway instance of, and PgBouncer, which
# they start in front of it for the tests of a store behind a connection pooler (and
# openssl, which makes the certificates of their TLS-only server).
#
#   scripts/setup.sh                  install what is missing, keep what is installed
#   scripts/setup.sh --oldest-libpq   also put libpq at the oldest version the project
#                                     supports (Debian 12's main archive), downgrading a
#                                     later one: what CI tests, so that green CI means
#                                     green on a user's Debian 12
set -euo pipefail

# The oldest libpq supported (README, "Supported versions"). PostgreSQL 15's client and
# server packages require a libpq at least as new as themselves, so they are pinned with it.
oldest_libpq="15.18-0+deb12u1"
pinned=(libpq5 libpq-dev postgresql-client-15 postgresql-15)

pin=false
case "${1:-}" in
    --oldest-libpq) pin=true ;;
    "") ;;
    *) echo "usage: scripts/setup.sh [--oldest-libpq]" >&2; exit 64 ;;
esac

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"

packages=(pkg-config libsqlite3-dev libpq-dev postgresql sqlite3 pgbouncer openssl)
install=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || install+=("$package")
done
if $pin; then
    for package in "${pinned[@]}"; do
        installed=$(dpkg-query -W -f='${Version}' "$package" 2>/dev/null || true)
        [ "$installed" = "$oldest_libpq" ] || install+=("$package=$oldest_libpq")
    done
fi
if [ ${#install[@]} -gt 0 ]; then
    echo "Installing: ${install[*]}"
    $sudo_cmd apt-get update -qq
    if $pin && ! apt-cache madison libpq-dev | grep -q " $oldest_libpq "; then
        echo "error: libpq-dev $oldest_libpq is not in this machine's package archives; the oldest supported libpq is Debian 12's (bookworm main)" >&2
        exit 1
    fi
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --allow-downgrades "${install[@]}"
fi
