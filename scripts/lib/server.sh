# Shared by scripts/fuzz.sh and scripts/load.sh (sourced, not run): start `bookstore serve`
# on loopback at a port of the system's choosing with a write key, wait until it answers
# /health, stop it, and read its log.

# Installs Debian packages that are missing (as scripts/setup.sh does for the build's).
ensurePackages() {
    local missing=()
    for package in "$@"; do dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package"); done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
}

# startServer BOOKSTORE STORE LOG [serve options…]: sets `server` (its pid), `port` and
# `writeKey`. The service runs as deployed, its writes needing a key: a new one, in a key
# file beside LOG.
startServer() {
    local bookstore="$1" store="$2" log="$3"
    shift 3
    writeKey="$(head -c 32 /dev/urandom | base64)"
    (umask 077; echo "$writeKey" >"$(dirname "$log")/write-keys")
    "$bookstore" serve --store "$store" --host 127.0.0.1 --port 0 --write-key-file "$(dirname "$log")/write-keys" "$@" >"$log" 2>&1 &
    server=$!
    port=""
    for _ in $(seq 1 600); do
        port="$( (ss -ltnpH 2>/dev/null || true) | grep "pid=$server," | sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' | head -1 || true)"
        if [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then return 0; fi
        if ! kill -0 "$server" 2>/dev/null; then
            echo "bookstore serve stopped before it answered /health:" >&2
            cat "$log" >&2
            return 1
        fi
        sleep 0.1
    done
    echo "bookstore serve did not answer /health within 60 s:" >&2
    cat "$log" >&2
    return 1
}

stopServer() {
    if [ -n "${server:-}" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
        server=""
    fi
}

# The lines of LOG at error level or above, the first 20 of them printed; the count echoed.
serverErrorLines() {
    local count
    count="$(grep -c -E ' (error|critical) ' "$1" || true)"
    [ "$count" != "0" ] && grep -E ' (error|critical) ' "$1" | head -20 >&2
    echo "$count"
}
