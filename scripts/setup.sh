#!/usr/bin/env bash
# Installs the system libraries the package links against (Debian/Ubuntu), if missing,
# and PostgreSQL's server, which the tests start a throwaway instance of.
set -euo pipefail

packages=(pkg-config libsqlite3-dev libpq-dev postgresql)
missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing: ${missing[*]}"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
