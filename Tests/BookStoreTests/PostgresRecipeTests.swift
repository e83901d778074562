import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

/// The README's "PostgreSQL without Docker", run by bash as written: `scripts/postgres.sh`
/// starts a server of the reader's own, the commands seed, migrate and serve a store in it
/// (the service answering `/health` before it is stopped with SIGTERM), and the server stops.
@Suite("README PostgreSQL recipe")
struct PostgresRecipeTests {
    @Test func thePostgresRecipeRunsAsWritten() async throws {
        let block = try Self.block(containing: "scripts/postgres.sh start")
        let folder = "/tmp/bookstore-recipe-\(UUID().uuidString.prefix(8))"
        var bash = BuiltCommand(systemTool: "bash")
        bash.environment = ["BOOKSTORE": try BookStoreProcess.executable.path, "BOOKSTORE_POSTGRES_DIR": folder, "BOOKSTORE_STORE": ""]
        defer {
            var remove = BuiltCommand(systemTool: "bash")
            remove.environment = ["BOOKSTORE_POSTGRES_DIR": folder]
            _ = try? remove.runBlocking(["scripts/postgres.sh", "remove"])
        }
        let run = try await bash.run(["-c", Self.prelude + block])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("Seeded postgres://postgres@127.0.0.1:"), "\(run.stdout)")
        #expect(run.stdout.contains("from BookStore 3 to BookStore 5 in 2 steps"), "\(run.stdout)")
        #expect(run.stdout.contains("health: HTTP/1.1 200 OK"), "\(run.stdout)")
        #expect(run.stdout.contains("served and stopped: 0"), "\(run.stdout)")
    }

    /// `swift run bookstore …` as the built executable; `serve` in the background until it
    /// answers `/health`, then stopped with SIGTERM, on a port of the system's choosing
    /// rather than the README's (which another process may hold).
    static let prelude = #"""
        set -euo pipefail
        swift() {
            [ "$1 $2" = "run bookstore" ] || { echo "the recipe runs only swift run bookstore, not: swift $*" >&2; return 1; }
            shift 2
            if [ "$1" != serve ]; then "$BOOKSTORE" "$@"; return; fi
            local log port pid arguments=()
            while [ $# -gt 0 ]; do
                if [ "$1" = --port ]; then arguments+=(--port 0); shift 2; else arguments+=("$1"); shift; fi
            done
            log="$(mktemp)"
            "$BOOKSTORE" "${arguments[@]}" >"$log" 2>&1 &
            pid=$!
            for _ in $(seq 1 600); do grep -q "listening on" "$log" && break; sleep 0.1; done
            port="$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -1)"
            [ -n "$port" ] || { cat "$log" >&2; kill "$pid"; return 1; }
            for _ in $(seq 1 600); do
                exec 3<>"/dev/tcp/127.0.0.1/$port"
                printf 'GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' >&3
                status="$(head -1 <&3 | tr -d '\r')"
                exec 3<&-
                [ "$status" = "HTTP/1.1 200 OK" ] && break
                sleep 0.1
            done
            echo "health: $status"
            kill -TERM "$pid"
            local code=0
            wait "$pid" || code=$?
            echo "served and stopped: $code"
            rm -f "$log"
        }

        """#

    /// The README's `sh` block that holds `line`, as written.
    static func block(containing line: String) throws -> String {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        return try #require(blocks.first { $0.contains(line) }, "the README has no sh block with \(line)")
    }
}
