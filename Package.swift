// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "BookStore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Persistence", targets: ["Persistence"]),
        .library(name: "PersistenceTesting", targets: ["PersistenceTesting"]),
        .library(name: "BookStore", targets: ["BookStore"]),
        .library(name: "BookStoreService", targets: ["BookStoreService"]),
        .executable(name: "bookstore", targets: ["BookStoreCLI"]),
        .executable(name: "persistence", targets: ["PersistenceCLI"]),
        .executable(name: "bookstore-benchmark", targets: ["BookStoreBenchmark"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // 1.16.2: StreamLogHandler(label:stream:), for log lines above the progress bar.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        // The service's /metrics: swift-metrics' API, Prometheus' text format.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Tests only: reads docker-compose.yml.
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        // Documentation only: `swift package generate-documentation` builds the DocC catalogs.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // libsqlite3, the reference SQLite client, as shipped by the system.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // libpq, the reference PostgreSQL client, as shipped by the system.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // The framework: models, stores, contexts, expressions. No HTTP in it.
        .target(
            name: "Persistence",
            dependencies: [
                "CSQLite",
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Helpers for tests of stores: a throwaway PostgreSQL server, a database per test.
        .target(
            name: "PersistenceTesting",
            dependencies: ["Persistence", .product(name: "Logging", package: "swift-log")]
        ),
        // The domain: BookStore's model versions, seeding, typed records.
        .target(
            name: "BookStore",
            dependencies: [
                "Persistence",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The HTTP service: routes, middleware, status page, OpenAPI document.
        .target(
            name: "BookStoreService",
            dependencies: [
                "BookStore",
                "Persistence",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // The request clock's handlers, in Hummingbird's HTTP/1.1 pipeline.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // The request metrics' per-thread caches.
                .product(name: "NIOPosix", package: "swift-nio"),
                // The write keys' digests.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        // What the commands share: logging set-up, error reporting, the progress bar, stopping
        // on SIGINT and SIGTERM.
        .target(
            name: "CommandLineSupport",
            dependencies: [
                "Persistence",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The `bookstore` command (its folder is not named `bookstore`: on a case-insensitive
        // file system it would be the same folder as `BookStore`).
        .executableTarget(
            name: "BookStoreCLI",
            dependencies: [
                "BookStore",
                "BookStoreService",
                "CommandLineSupport",
                "Persistence",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // `serve` bootstraps swift-metrics for its /metrics.
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // The framework's own command: inspect, migrate and validate stores, models and
        // mapping files without writing Swift.
        .executableTarget(
            name: "PersistenceCLI",
            dependencies: [
                "CommandLineSupport",
                "Persistence",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The benchmark (`scripts/benchmark.sh`, release mode): migrations against hand-written
        // SQL and the service against a bare handler, in the same run.
        .executableTarget(
            name: "BookStoreBenchmark",
            dependencies: [
                "BookStore",
                "BookStoreService",
                "Persistence",
                "PersistenceTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // What the BookStore test targets share: paths, models, the built executable.
        .target(
            name: "BookStoreTesting",
            dependencies: [
                "BookStore",
                "PersistenceTesting",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "PersistenceTests",
            dependencies: ["Persistence", "PersistenceTesting"]
        ),
        .testTarget(
            name: "BookStoreTests",
            dependencies: [
                "BookStore",
                "CommandLineSupport",
                "Persistence",
                "PersistenceTesting",
                "BookStoreTesting",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // An app's migration tests as a user writes them: the public API of PersistenceTesting only.
        .testTarget(
            name: "UserMigrationTests",
            dependencies: ["BookStore", "Persistence", "PersistenceTesting", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "BookStoreServiceTests",
            dependencies: [
                "BookStoreService",
                "BookStore",
                "Persistence",
                "PersistenceTesting",
                "BookStoreTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
