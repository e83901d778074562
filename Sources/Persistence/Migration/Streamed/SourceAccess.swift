import Foundation

/// How the destination store's writer connection reads the source store's tables, when it
/// can: then entity mappings that need no Swift per instance run as `INSERT … SELECT`.
///
/// The destination's engine says how (``StoreEngine/sourceAccess(reading:)``): a SQLite file
/// attached to the writer, a schema of the same PostgreSQL database. Otherwise (different
/// engines, servers or databases) there is none, and every entity mapping streams.
struct SourceAccess: Sendable {
    /// The schema name that qualifies source tables on the destination's writer (quoted).
    let schema: String
    /// The statement that makes the source reachable on the destination's writer, and the
    /// one that undoes it; `nil` when its tables are reachable already.
    let attach: SQL?
    let detach: SQL?

    /// How `destination`'s writer reads `source`, as the destination's engine says.
    init?(source: StoreURL, destination: StoreURL) {
        guard let access = destination.engine.sourceAccess(reading: source) else { return nil }
        self = access
    }

    init(schema: String, attach: SQL? = nil, detach: SQL? = nil) {
        self.schema = schema
        self.attach = attach
        self.detach = detach
    }

    /// A source table as the destination's writer names it.
    func table(_ name: String) -> String { "\(schema).\(name)" }

    /// Makes the source reachable on `database`'s writer.
    func open(on database: any Database) async throws {
        guard let attach else { return }
        _ = try await database.writeWithoutTransaction { try $0.run(attach) }
    }

    /// Undoes ``open(on:)``.
    func close(on database: any Database) async throws {
        guard let detach else { return }
        try await database.writeWithoutTransaction { try $0.execute(detach) }
    }
}
