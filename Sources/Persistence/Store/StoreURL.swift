import Foundation

/// Where a store lives: `sqlite:///path/to/file.sqlite`, `sqlite://./relative.sqlite`,
/// `postgres://user:password@host:5432/db` (see ``PostgresConfiguration`` for the socket
/// form and `?schema=NAME`) or `memory:` (optionally `memory:name`).
///
/// ```swift
/// let url = try StoreURL("sqlite://./bookstore.sqlite")
/// url.kind // .sqlite(path: "./bookstore.sqlite")
/// try StoreURL("postgres://shop:secret@db:5432/shop").description // "postgres://shop@db:5432/shop"
/// ```
public struct StoreURL: Sendable, Hashable, CustomStringConvertible {
    /// Which engine holds the store, and where.
    public enum Kind: Sendable, Hashable {
        /// A SQLite store file at `path`, absolute or relative to the working directory.
        case sqlite(path: String)
        /// A PostgreSQL store: server, database, credentials and schema.
        case postgres(PostgresConfiguration)
        /// An in-memory store; an empty `name` is a fresh one, a named one is shared by the
        /// containers of one process.
        case memory(name: String)
    }

    /// Which engine holds the store, and where: switch on it for what only one engine has.
    public let kind: Kind

    /// A store URL of `kind`, as ``sqlite(_:)``, ``postgres(_:)`` and ``memory`` make them.
    public init(kind: Kind) { self.kind = kind }

    /// Parses a store URL. A bare file path is taken as a SQLite store.
    public init(_ string: String) throws(StoreError) {
        if string.hasPrefix("sqlite://") {
            let rest = String(string.dropFirst("sqlite://".count))
            guard !rest.isEmpty else {
                throw StoreError(
                    .invalidURL,
                    "the store URL '\(string)' names no file",
                    hint: "write sqlite:///absolute/path.sqlite or sqlite://./relative.sqlite"
                )
            }
            // sqlite:///abs → "/abs"; sqlite://./rel → "./rel". sqlite://rel names a host
            // (`rel`) to any URL reader: whoever wrote it meant one of the other two.
            guard rest.hasPrefix("/") || rest.hasPrefix("./") || rest.hasPrefix("../") else {
                throw StoreError(
                    .invalidURL,
                    "the store URL 'sqlite://\(rest)' has two slashes before the file's path, where a URL's host would be",
                    hint: "write sqlite:///\(rest) for /\(rest), or sqlite://./\(rest) for \(rest) under the working directory"
                )
            }
            kind = .sqlite(path: rest.removingPercentEncoding ?? rest)
        } else if string.hasPrefix("sqlite:") {
            kind = .sqlite(path: String(string.dropFirst("sqlite:".count)))
        } else if string.hasPrefix("postgres://") || string.hasPrefix("postgresql://") {
            kind = .postgres(try PostgresConfiguration(url: string))
        } else if string == "memory:" || string.hasPrefix("memory:") {
            kind = .memory(name: String(string.dropFirst("memory:".count)))
        } else if !string.contains("://"), !string.isEmpty {
            kind = .sqlite(path: string)
        } else {
            // Only the scheme is named: the rest may hold a password.
            let what =
                string.range(of: "://").map { "'\(string[..<$0.lowerBound])://…' is not a store URL: its scheme is not sqlite, postgres or memory" }
                ?? "the store URL is empty"
            throw StoreError(.invalidURL, what, hint: "use sqlite:///path.sqlite, postgres://user@host/db or memory:")
        }
    }

    /// A SQLite store at a file path.
    public static func sqlite(_ path: String) -> StoreURL { StoreURL(kind: .sqlite(path: path)) }

    /// A PostgreSQL store.
    public static func postgres(_ configuration: PostgresConfiguration) -> StoreURL { StoreURL(kind: .postgres(configuration)) }

    /// A fresh in-memory store.
    public static var memory: StoreURL { StoreURL(kind: .memory(name: "")) }

    /// The store's type as written in its metadata (`NSStoreType`): `SQLite`, `PostgreSQL`, `InMemory`.
    public var storeType: String { engine.storeType }

    /// The URL's scheme, which names its engine: `sqlite`, `postgres`, `memory`.
    public var scheme: String { engine.scheme }

    /// The file the store is (SQLite), which this process reads and checks itself; `nil`
    /// for a store a server keeps (PostgreSQL) or one in memory.
    ///
    /// ```swift
    /// try StoreURL("sqlite://./bookstore.sqlite").filePath   // "./bookstore.sqlite"
    /// ```
    public var filePath: String? { engine.filePath }

    /// Whether a store here can be migrated online, while other processes read and write it
    /// (``ProgressiveMigrator/migrateStoreOnline(at:to:storeVersion:options:progress:)``):
    /// where several processes share it (PostgreSQL), not where one process serves it.
    ///
    /// ```swift
    /// let online = store.migratesOnline ? OnlineMigrationOptions() : nil
    /// ```
    public var migratesOnline: Bool {
        guard let backend = try? engine.migrationBackend() else { return false }
        return backend.onlineRefusal == nil
    }

    /// The URL without a password.
    public var description: String { engine.displayURL }
}
