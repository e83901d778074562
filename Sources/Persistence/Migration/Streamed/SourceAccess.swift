import Foundation

/// How the destination store's writer connection reads the source store's tables, when it
/// can: then entity mappings that need no Swift per instance run as `INSERT … SELECT`.
///
/// - SQLite: the source file, attached read-only to the destination's writer as `src`.
/// - PostgreSQL: the source schema, when both stores are schemas of one database.
/// - Otherwise (different engines, servers or databases) there is none, and every entity
///   mapping streams.
struct SourceAccess: Sendable {
    /// The schema name that qualifies source tables on the destination's writer (quoted).
    let schema: String
    private let attachedPath: String?

    init?(source: StoreURL, destination: StoreURL) {
        switch (source.kind, destination.kind) {
        case (.sqlite(let path), .sqlite):
            schema = "src"
            // Immutable (no locks, no files) when every committed page is in the file; with a
            // log, read-only in place, so that the rows still only in the log are read too
            // and the writer's transactions never ask for the store's write lock, which the
            // migration holds on a connection of its own.
            attachedPath = FileManager.default.fileExists(atPath: path + "-wal")
                ? SQLiteReadOnlyView.readOnlyURI(for: path) : SQLiteReadOnlyView.immutableURI(for: path)
        case (.postgres(let from), .postgres(let to)):
            var same = from
            same.schema = to.schema
            guard same == to else { return nil }
            schema = from.quotedSchema
            attachedPath = nil
        default:
            return nil
        }
    }

    /// A source table as the destination's writer names it.
    func table(_ name: String) -> String { "\(schema).\(name)" }

    /// Makes the source reachable on `database`'s writer (attaches it on SQLite).
    func open(on database: any Database) async throws {
        guard let path = attachedPath else { return }
        _ = try await database.writeWithoutTransaction { try $0.run("ATTACH DATABASE ? AS src", [.text(path)]) }
    }

    /// Undoes ``open(on:)``.
    func close(on database: any Database) async throws {
        guard attachedPath != nil else { return }
        try await database.writeWithoutTransaction { try $0.execute("DETACH DATABASE src") }
    }
}
