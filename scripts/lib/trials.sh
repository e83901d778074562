# Shared by scripts/kill-trials.sh and scripts/disk-full.sh (sourced, not run): which engines
# to try, building `bookstore`, and reporting a run's problems.

# selectEngines NAME: sets `engines` from --engine (sqlite, postgres or both).
selectEngines() {
    case "$1" in
        sqlite) engines=(sqlite) ;;
        postgres) engines=(postgres) ;;
        both) engines=(sqlite postgres) ;;
        *) echo "--engine is sqlite, postgres or both" >&2; exit 2 ;;
    esac
}

# buildBookstore [swift build options…]: sets up the machine, builds `bookstore` and sets
# `bookstore` to the executable.
buildBookstore() {
    scripts/setup.sh
    ensurePackages sqlite3 iproute2
    swift build "$@" --product bookstore
    bookstore="$(swift build "$@" --show-bin-path)/bookstore"
}

# reportProblems LINE WHERE: prints LINE with "ok" when the caller's `problems` array is
# empty, or "FAILED", what WHERE keeps, and each problem; counts the failure in the caller's
# `engineFailures`.
reportProblems() {
    if [ ${#problems[@]} -eq 0 ]; then
        echo "$1 ok"
        return
    fi
    engineFailures=$((engineFailures + 1))
    echo "$1 FAILED ($2):"
    local problem
    for problem in "${problems[@]}"; do echo "    - $problem"; done
}
