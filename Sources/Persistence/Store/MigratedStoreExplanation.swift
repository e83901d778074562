import Foundation

/// A store's database that explains a statement failing on a table or column the store
/// does not have: when the store's metadata no longer names this process's model version,
/// the store was migrated since the process opened it (by the next release, while this one
/// still serves), and the error says so instead of "column does not exist". A write that
/// would fit the new tables is refused before it is made (``ModelVersionCheck``).
///
/// ```swift
/// try await context.fetch(FetchRequest(entityName: "Book"))
/// // StoreError.migratedSinceOpened: the store was migrated to model version 'BookStore 3'
/// // since this process opened it; this process runs 'BookStore 2'. …
/// ```
struct MigratedStoreExplanation: Database {
    /// The database itself.
    let base: any Database
    let store: StoreURL
    let model: ManagedObjectModel
    /// Run first in each write transaction; `nil` for a store nothing else migrates.
    let writeCheck: ModelVersionCheck?

    var dialect: any SQLDialect { base.dialect }
    var connectionUsage: ConnectionUsage { base.connectionUsage }

    func read<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        try await explaining { try await base.read(body) }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        guard let writeCheck else { return try await explaining { try await base.write(body) } }
        return try await explaining {
            try await base.write { connection in
                try writeCheck.verify(on: connection)
                return try body(connection)
            }
        }
    }

    func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) throws -> T) async throws -> T {
        try await explaining { try await base.writeWithoutTransaction(body) }
    }

    /// Runs `work`, explaining its failure on a table or column the store lacks.
    private func explaining<T>(_ work: () async throws -> T) async throws -> T {
        do {
            return try await work()
        } catch let error as DatabaseError where error.namesWhatTheStoreLacks {
            throw await explained(error)
        }
    }

    func close() async {
        await base.close()
    }

    /// The error, or what it means when the store's metadata names another model version
    /// (read again through a connection of its own: the failed one may be in a failed
    /// transaction). Anything else, the metadata unreadable included, leaves the error as it is.
    private func explained(_ error: DatabaseError) async -> any Error {
        guard let metadata = try? await PersistentStore.metadata(at: store), !model.isCompatible(with: metadata) else { return error }
        return StoreError.migratedSinceOpened(to: metadata, from: model, store: store, underlying: error)
    }
}

extension StoreError {
    /// The store at `store` was migrated to what `metadata` says since a process running
    /// `model` opened it.
    static func migratedSinceOpened(
        to metadata: StoreMetadata,
        from model: ManagedObjectModel,
        store: StoreURL,
        underlying: DatabaseError? = nil
    ) -> StoreError {
        let now = metadata.modelVersionName.map { "model version '\($0)'" } ?? "another model version"
        return StoreError(
            .migratedSinceOpened,
            "the store was migrated to \(now) since this process opened it; this process runs '\(model.name)'",
            hint: "deploy the release that runs \(now): this process cannot use the store any more",
            store: store.description,
            underlying: underlying
        )
    }
}

extension PersistentStore {
    /// Whether another process migrated the store to another model version since this one
    /// opened it: the error that says so, or `nil` while the store's metadata still fits the
    /// model (or cannot be read, which the next statement will report). Reads the metadata
    /// through the store's own connections; for a service's readiness check.
    ///
    /// ```swift
    /// if let migrated = await store.migratedSinceOpened() { … }  // not ready: deploy the release that runs the store's version
    /// ```
    public func migratedSinceOpened() async -> StoreError? {
        guard let metadata = try? await engineDatabase.read({ try StoreMetadata.read(from: $0) }), !model.isCompatible(with: metadata) else {
            return nil
        }
        return StoreError.migratedSinceOpened(to: metadata, from: model, store: url)
    }
}

extension DatabaseError {
    /// Whether the statement failed on a table or column the database does not have.
    var namesWhatTheStoreLacks: Bool {
        if let sqlState { return sqlState == "42P01" || sqlState == "42703" }  // undefined_table, undefined_column
        return message.hasPrefix("no such table") || message.hasPrefix("no such column")
    }
}
