import BookStoreTesting
import Foundation
import Testing
import Yams

@testable import Persistence

/// docker-compose.yml and the Dockerfile cannot be run here (no Docker engine), so these
/// tests read them and check that the pieces fit: the service reaches PostgreSQL with the
/// credentials PostgreSQL is given, waits for its health check, listens where its port is
/// published, and the image carries the binary, its model files and the libraries it links.
@Suite("Deployment files")
struct DeploymentFilesTests {
    // MARK: docker-compose.yml

    @Test func postgresServiceHasAHealthCheckAndAVolume() throws {
        let compose = try ComposeFile.load()
        let postgres = try compose.service("postgres")
        let image = try #require(postgres["image"] as? String)
        #expect(image.hasPrefix("postgres:"), "the database is the official PostgreSQL image, not \(image)")

        let healthCheck = try #require(postgres["healthcheck"] as? [String: Any], "postgres needs a healthcheck for depends_on to wait on")
        let test = try #require(healthCheck["test"] as? [String]).joined(separator: " ")
        #expect(test.contains("pg_isready"))
        let environment = try compose.environment(of: "postgres")
        #expect(test.contains("-U \(try #require(environment["POSTGRES_USER"]))"))
        #expect(test.contains("-d \(try #require(environment["POSTGRES_DB"]))"))

        // The data directory is a named volume declared at the top level, so it outlives the container.
        let mounts = try #require(postgres["volumes"] as? [String])
        let data = try #require(mounts.first { $0.hasSuffix(":/var/lib/postgresql/data") }, "PostgreSQL's data directory must be on a volume")
        let volumeName = String(data.prefix { $0 != ":" })
        #expect(compose.volumes.keys.contains(volumeName), "volume \(volumeName) is not declared under volumes:")
    }

    @Test func bookstoreServiceWaitsForAHealthyPostgres() throws {
        let compose = try ComposeFile.load()
        let bookstore = try compose.service("bookstore")
        let dependsOn = try #require(bookstore["depends_on"] as? [String: Any], "depends_on must be the long form with a condition")
        let postgres = try #require(dependsOn["postgres"] as? [String: Any])
        #expect(postgres["condition"] as? String == "service_healthy")
    }

    /// Migrations reach the `postgres` service itself with its credentials.
    @Test func bookstoreMigrationURLReachesThePostgresServiceWithItsCredentials() throws {
        let compose = try ComposeFile.load()
        let environment = try compose.environment(of: "bookstore")
        let database = try compose.environment(of: "postgres")
        let url = try StoreURL(try #require(environment["BOOKSTORE_MIGRATION_STORE"], "BOOKSTORE_MIGRATION_STORE must be set"))
        guard case .postgres(let configuration) = url.kind else {
            Issue.record("BOOKSTORE_MIGRATION_STORE must be a PostgreSQL URL, is \(url)")
            return
        }
        #expect(configuration.host == "postgres", "the host is the compose service's name")
        #expect(configuration.port == nil || configuration.port == 5432)
        #expect(configuration.user == database["POSTGRES_USER"])
        #expect(configuration.password == database["POSTGRES_PASSWORD"])
        #expect(configuration.database == database["POSTGRES_DB"])
    }

    /// Reads and saves go through the `pgbouncer` service, whose configuration (built from
    /// deploy/pgbouncer/) listens where the store URL points, sends the store's database to
    /// the `postgres` service, pools transactions and knows the user with the password the
    /// URL and PostgreSQL have.
    @Test func bookstoreStoreURLGoesThroughThePoolerToThePostgresService() throws {
        let compose = try ComposeFile.load()
        let environment = try compose.environment(of: "bookstore")
        let database = try compose.environment(of: "postgres")
        let url = try StoreURL(try #require(environment["BOOKSTORE_STORE"], "BOOKSTORE_STORE must be set"))
        guard case .postgres(let configuration) = url.kind else {
            Issue.record("BOOKSTORE_STORE must be a PostgreSQL URL, is \(url)")
            return
        }
        let pgbouncer = try compose.service("pgbouncer")
        let build = try #require(pgbouncer["build"] as? [String: Any])
        let folder = packageRoot.appendingPathComponent(try #require(build["context"] as? String))
        let ini = try String(contentsOf: folder.appendingPathComponent("pgbouncer.ini"), encoding: .utf8)
        func setting(_ name: String) -> String? {
            ini.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix(name + " ") || $0.hasPrefix(name + "=") }
                .map { $0.split(separator: "=", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
        }
        #expect(configuration.host == "pgbouncer", "the host is the pooler's compose service")
        #expect(configuration.port.map(String.init) == setting("listen_port"))
        #expect(setting("pool_mode") == "transaction")
        #expect(setting(try #require(configuration.database)) == "host=postgres port=5432 dbname=\(try #require(database["POSTGRES_DB"]))")
        #expect(configuration.user == database["POSTGRES_USER"])
        #expect(configuration.password == database["POSTGRES_PASSWORD"])
        let users = try String(contentsOf: folder.appendingPathComponent("userlist.txt"), encoding: .utf8)
        #expect(users.contains("\"\(try #require(configuration.user))\" \"\(try #require(configuration.password))\""))
        let dockerfile = try String(contentsOf: folder.appendingPathComponent("Dockerfile"), encoding: .utf8)
        #expect(dockerfile.contains("FROM debian:bookworm") && dockerfile.contains("apt-get install -y --no-install-recommends pgbouncer"))
        #expect(dockerfile.contains("pgbouncer.ini userlist.txt /etc/pgbouncer/"))
    }

    /// The compose file's replicas migrate an outdated store online, and `serve` reads the
    /// variable that says so (it then refuses `--no-migrate`, which contradicts it).
    @Test func bookstoreMigratesOnlineAndServeReadsTheVariable() async throws {
        let environment = try ComposeFile.load().environment(of: "bookstore")
        #expect(environment["BOOKSTORE_MIGRATE_ONLINE"] == "1")
        var command = BookStoreProcess.command
        command.environment = ["BOOKSTORE_MIGRATE_ONLINE": "1"]
        let refused = try await command.run(["serve", "--no-migrate", "--store", "sqlite:///nonexistent/never.sqlite"])
        #expect(refused.status != 0)
        #expect(
            refused.stderr.contains("--migrate-online (or BOOKSTORE_MIGRATE_ONLINE=1) and --no-migrate contradict each other"),
            "\(refused.stderr)"
        )
    }

    @Test func bookstoreListensOnAllInterfacesAtThePublishedPort() throws {
        let compose = try ComposeFile.load()
        let bookstore = try compose.service("bookstore")
        let environment = try compose.environment(of: "bookstore")
        #expect(environment["BOOKSTORE_HOST"] == "0.0.0.0", "inside a container the service must not listen on loopback only")
        let port = try #require(environment["BOOKSTORE_PORT"])
        let published = try #require(bookstore["ports"] as? [String]).map { String($0.split(separator: ":").last ?? "") }
        #expect(published.contains(port), "container port \(port) is not published (ports: \(published))")

        let build = try #require(bookstore["build"] as? [String: Any])
        let context = packageRoot.appendingPathComponent(try #require(build["context"] as? String))
        let dockerfile = context.appendingPathComponent(build["dockerfile"] as? String ?? "Dockerfile")
        #expect(FileManager.default.fileExists(atPath: dockerfile.path), "\(dockerfile.lastPathComponent) is missing")
    }

    /// The `monitoring` profile's Prometheus scrapes the service where it listens, at the
    /// path the service serves its metrics, with the configuration file it is given.
    @Test func prometheusScrapesEveryReplicaWhereTheServiceListens() throws {
        let compose = try ComposeFile.load()
        let prometheus = try compose.service("prometheus")
        #expect((prometheus["image"] as? String)?.hasPrefix("prom/prometheus:") == true)
        #expect(prometheus["profiles"] as? [String] == ["monitoring"], "Prometheus starts only when asked for")
        let mount = try #require((prometheus["volumes"] as? [String])?.first { $0.hasSuffix(":/etc/prometheus/prometheus.yml:ro") })
        let file = packageRoot.appendingPathComponent(String(mount.split(separator: ":")[0]))
        let configuration = try #require(try Yams.load(yaml: String(contentsOf: file, encoding: .utf8)) as? [String: Any])
        let job = try #require((configuration["scrape_configs"] as? [[String: Any]])?.first { $0["job_name"] as? String == "bookstore" })
        #expect(job["metrics_path"] as? String ?? "/metrics" == "/metrics")
        let discovery = try #require((job["dns_sd_configs"] as? [[String: Any]])?.first)
        #expect(discovery["names"] as? [String] == ["bookstore"], "the service's name, which compose's DNS answers with every replica")
        let environment = try compose.environment(of: "bookstore")
        #expect((discovery["port"] as? Int).map(String.init) == environment["BOOKSTORE_PORT"])
        #expect(environment["BOOKSTORE_METRICS"] != "0", "the service serves /metrics")
    }

    /// Listening on 0.0.0.0 the service needs write keys: a compose secret, mounted where
    /// BOOKSTORE_WRITE_KEY_FILE says, whose file git and the image's build context leave out.
    @Test func bookstoreReadsItsWriteKeysFromASecretKeptOutOfGitAndTheImage() throws {
        let compose = try ComposeFile.load()
        let bookstore = try compose.service("bookstore")
        let environment = try compose.environment(of: "bookstore")
        let secrets = try #require(bookstore["secrets"] as? [String], "the bookstore service mounts no secret")
        let keyFile = try #require(environment["BOOKSTORE_WRITE_KEY_FILE"], "BOOKSTORE_WRITE_KEY_FILE must be set")
        let name = String(try #require(keyFile.split(separator: "/").last))
        #expect(keyFile == "/run/secrets/\(name)" && secrets.contains(name), "\(keyFile) is not a secret the service mounts (\(secrets))")
        let declared = try #require((compose.root["secrets"] as? [String: Any])?[name] as? [String: Any], "secret \(name) is not declared")
        let file = try #require(declared["file"] as? String)
        let folder = try #require(file.split(separator: "/").dropLast().last.map(String.init), "the key file is in a folder of its own")
        let ignored = try String(contentsOf: packageRoot.appendingPathComponent(".gitignore"), encoding: .utf8).split(separator: "\n")
        #expect(ignored.contains("/\(folder)/"), ".gitignore does not leave out \(folder)/")
        let notInImage = try String(contentsOf: packageRoot.appendingPathComponent(".dockerignore"), encoding: .utf8).split(separator: "\n")
        #expect(notInImage.contains(Substring(folder)), ".dockerignore does not leave out \(folder)")
    }

    @Test func bookstoreCommandIsOneTheExecutableKnows() async throws {
        let compose = try ComposeFile.load()
        let command = try #require(try compose.service("bookstore")["command"] as? [String])
        let subcommand = try #require(command.first)
        let help = try await BookStoreProcess.running([subcommand, "--help"])
        #expect(help.status == 0, "bookstore \(subcommand): \(help.stderr)")
        for option in command.dropFirst() where option.hasPrefix("--") {
            #expect(help.stdout.contains(option), "bookstore \(subcommand) has no option \(option)")
        }
    }

    // MARK: Dockerfile

    @Test func dockerfileBuildsOnTheSwiftImageAndRunsOnASlimOne() throws {
        let dockerfile = try Dockerfile.load()
        let stages = dockerfile.stages
        #expect(stages.count >= 2, "a multi-stage build: one to compile, one to run")
        let build = try #require(stages.first)
        let runtime = try #require(stages.last)
        #expect(build.image.hasPrefix("swift:"), "the build stage uses the official Swift image, not \(build.image)")
        let swiftVersion = build.image.dropFirst("swift:".count).prefix { $0.isNumber || $0 == "." }
        let toolsVersion = try #require(
            try String(contentsOf: packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
                .firstMatch(of: /swift-tools-version:\s*([0-9.]+)/)?.1
        )
        #expect(
            swiftVersion.compare(toolsVersion, options: .numeric) != .orderedAscending,
            "Swift \(swiftVersion) in the image is older than the package's tools version \(toolsVersion)"
        )
        #expect(runtime.image.hasSuffix("-slim"), "the runtime is a slim image, not \(runtime.image)")
    }

    @Test func buildStageInstallsThePackagesSystemLibrariesAndRuntimeOnlyTheirLibraries() throws {
        let dockerfile = try Dockerfile.load()
        let build = try #require(dockerfile.stages.first)
        let runtime = try #require(dockerfile.stages.last)
        // The apt providers Package.swift names for CSQLite and CLibPQ.
        let manifest = try String(contentsOf: packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let providers = manifest.matches(of: /\.apt\(\[([^\]]*)\]\)/).flatMap { match in
            match.1.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \"")) }
        }
        #expect(Set(providers) == ["libsqlite3-dev", "libpq-dev"])
        for package in providers {
            #expect(build.installedPackages.contains(package), "the build stage does not install \(package)")
        }
        #expect(runtime.installedPackages.isSuperset(of: ["libsqlite3-0", "libpq5"]))
        #expect(runtime.installedPackages.allSatisfy { !$0.hasSuffix("-dev") }, "no headers in the runtime: \(runtime.installedPackages.sorted())")
    }

    @Test func imageCarriesTheBinaryAndTheFoldersItReadsAtRunTime() throws {
        let dockerfile = try Dockerfile.load()
        let build = try #require(dockerfile.stages.first)
        let runtime = try #require(dockerfile.stages.last)
        // Every file the build copies from the context exists in the repository.
        for copy in build.copies where copy.fromStage == nil {
            for source in copy.sources {
                #expect(FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent(source).path), "COPY \(source): no such file")
            }
        }
        // Migrations and Seeds land, through the runtime's COPY --from, in BOOKSTORE_RESOURCES.
        let resources = try #require(runtime.environment["BOOKSTORE_RESOURCES"])
        for folder in ["Migrations", "Seeds"] {
            let copied = try #require(build.copies.first { $0.fromStage == nil && $0.sources == [folder] }, "\(folder) is not copied")
            let shipped = runtime.copies.filter { $0.fromStage == build.name }.compactMap { copy -> String? in
                guard let source = copy.sources.first, copied.destination.hasPrefix(source) else { return nil }
                return copy.destination + copied.destination.dropFirst(source.count)
            }
            #expect(shipped.contains("\(resources)/\(folder)"), "\(folder) is not at \(resources)/\(folder) in the runtime image")
        }
        let entrypoint = try #require(runtime.entrypoint.first)
        #expect(entrypoint.hasSuffix("/bookstore"))
        #expect(
            runtime.copies.contains { $0.fromStage == build.name && entrypoint.hasPrefix($0.destination) },
            "\(entrypoint) is not copied from the build stage"
        )
        #expect(
            try StoreURL(try #require(runtime.environment["BOOKSTORE_STORE"])).storeType == "SQLite",
            "the image alone runs on the embedded default"
        )
    }
}

/// docker-compose.yml, read with Yams.
private struct ComposeFile {
    var root: [String: Any]

    static func load() throws -> ComposeFile {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        return ComposeFile(root: try #require(try Yams.load(yaml: text) as? [String: Any], "docker-compose.yml is not a mapping"))
    }

    var volumes: [String: Any] { root["volumes"] as? [String: Any] ?? [:] }

    func service(_ name: String) throws -> [String: Any] {
        let services = try #require(root["services"] as? [String: Any], "docker-compose.yml has no services")
        return try #require(services[name] as? [String: Any], "docker-compose.yml has no \(name) service")
    }

    /// A service's environment, whether written as a mapping or as `KEY=value` lines.
    func environment(of name: String) throws -> [String: String] {
        switch try service(name)["environment"] {
        case let mapping as [String: Any]:
            return mapping.mapValues { "\($0)" }
        case let list as [String]:
            return Dictionary(
                list.map { line in
                    let parts = line.split(separator: "=", maxSplits: 1)
                    return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
                },
                uniquingKeysWith: { $1 }
            )
        default:
            return [:]
        }
    }
}

/// The Dockerfile's instructions by stage: enough of the format to check what each stage
/// starts from, installs, copies, sets and runs.
private struct Dockerfile {
    struct Copy {
        var fromStage: String?
        var sources: [String]
        var destination: String
    }

    struct Stage {
        var image: String
        var name: String?
        var installedPackages: Set<String> = []
        var copies: [Copy] = []
        var environment: [String: String] = [:]
        var entrypoint: [String] = []
    }

    var stages: [Stage] = []

    static func load() throws -> Dockerfile {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("Dockerfile"), encoding: .utf8)
        var dockerfile = Dockerfile()
        for instruction in instructions(of: text) {
            let words = instruction.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let keyword = words.first?.uppercased() else { continue }
            let arguments = Array(words.dropFirst())
            if keyword == "FROM" {
                let image = arguments.first { !$0.hasPrefix("--") } ?? ""
                let name = arguments.firstIndex { $0.uppercased() == "AS" }.flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
                dockerfile.stages.append(Stage(image: image, name: name))
                continue
            }
            guard !dockerfile.stages.isEmpty else { continue }
            dockerfile.stages[dockerfile.stages.count - 1].apply(keyword, arguments, instruction)
        }
        return dockerfile
    }

    /// Joins continued lines and drops comments.
    private static func instructions(of text: String) -> [String] {
        var result: [String] = []
        var current = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#") { continue }
            if trimmed.hasSuffix("\\") {
                current += trimmed.dropLast() + " "
            } else {
                current += trimmed
                if !current.trimmingCharacters(in: .whitespaces).isEmpty { result.append(current) }
                current = ""
            }
        }
        return result
    }
}

extension Dockerfile.Stage {
    fileprivate mutating func apply(_ keyword: String, _ arguments: [String], _ instruction: String) {
        switch keyword {
        case "RUN":
            // Packages named after `apt-get install`, up to the next `&&`.
            for command in instruction.components(separatedBy: "&&") where command.contains("apt-get install") {
                let afterInstall = command.components(separatedBy: "apt-get install").last ?? ""
                installedPackages.formUnion(afterInstall.split(whereSeparator: \.isWhitespace).map(String.init).filter { !$0.hasPrefix("-") })
            }
        case "COPY":
            let fromStage = arguments.first { $0.hasPrefix("--from=") }.map { String($0.dropFirst("--from=".count)) }
            let paths = arguments.filter { !$0.hasPrefix("--") }
            guard let destination = paths.last else { return }
            copies.append(.init(fromStage: fromStage, sources: Array(paths.dropLast()), destination: destination))
        case "ENV":
            for pair in arguments where pair.contains("=") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                environment[String(parts[0])] = String(parts[1])
            }
        case "ENTRYPOINT":
            let json = instruction.drop { $0 != "[" }
            entrypoint = (try? JSONDecoder().decode([String].self, from: Data(json.utf8))) ?? []
        default:
            break
        }
    }
}
