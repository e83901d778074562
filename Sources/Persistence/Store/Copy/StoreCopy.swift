import Foundation
import Logging

/// Moves a store between backends — SQLite to PostgreSQL and back — keeping its model
/// version, metadata (store UUID included), every row, relationship and primary key.
///
/// ```swift
/// let summary = try await StoreCopy.copy(from: .sqlite("bookstore.sqlite"),
///                                        to: try StoreURL("postgres://bookstore@db/bookstore"),
///                                        versions: models, logger: logger)
/// ```
///
/// The destination is written in one transaction (on SQLite: into a new file that is then
/// moved into place), so a failure leaves it as it was. An existing destination store is
/// refused unless `replace` is set; then it is replaced whole.
public enum StoreCopy {
    /// What a copy moved.
    public struct Summary: Sendable, Hashable {
        /// The name of the model version of the store, which the copy keeps.
        public var modelVersion: String
        /// Rows per table, entity and join tables alike.
        public var rows: [String: Int]
        /// The rows copied, over every table.
        public var totalRows: Int { rows.values.reduce(0, +) }
    }

    /// Copies the store at `source` into `destination`.
    ///
    /// A store written by Apple's Core Data is recognised by its tables
    /// (``VersionedModel/recogniseVersion(ofStoreAt:metadata:named:)``; `storeVersion` names
    /// its version when they fit several). Its copy is written by us, in our schema for
    /// that version, so it carries our metadata: our version hashes and version name, the
    /// source's store UUID.
    ///
    /// - Throws: ``StoreError``: ``StoreError/Code/unknownModelVersion`` or
    ///   ``StoreError/Code/ambiguousModelVersion`` when the source's version is not known;
    ///   the errors of reading the source and writing the destination.
    public static func copy(
        from source: StoreURL,
        to destination: StoreURL,
        versions: VersionedModel,
        replace: Bool = false,
        batchSize: Int = 1_000,
        storeVersion: String? = nil,
        logger: Logger
    ) async throws -> Summary {
        guard source.description != destination.description else {
            throw StoreError(
                .invalidURL,
                "the source and the destination are the same store",
                hint: "name another destination",
                store: source.description
            )
        }
        let metadata = try await PersistentStore.metadata(at: source)
        let model: ManagedObjectModel
        do {
            model = try versions.recogniseVersion(ofStoreAt: source, metadata: metadata, named: storeVersion).model
        } catch let error as StoreError where error.code == .unknownModelVersion && !metadata.isForeign {
            throw StoreError(
                .unknownModelVersion,
                "the store was written by a model version \(versions.name) does not have",
                hint: "copy it with the app version that wrote it",
                store: source.description
            )
        }
        let store = try await PersistentStore.open(source, model: model, options: .readOnly, logger: logger)
        do {
            var copied = metadata.isForeign ? metadata.migrated(to: model, storeType: destination.storeType) : metadata
            copied.storeType = destination.storeType
            var plan = CopyPlan(model: model, source: store.schema)
            plan.externalBinaryStorage = store.externalBinaryStorage
            plan.sourceURL = source
            let summary = try await destination.engine.copyTarget(replace: replace)
                .fill(model: model, layout: store.schema.layout, metadata: copied) { target in
                    try await plan.copy(from: store.database, to: target, batchSize: batchSize)
                }
            await store.close()
            logger.info(
                "copied store",
                metadata: [
                    LoggingKeys.store: "\(destination)", LoggingKeys.modelVersion: "\(model.name)", LoggingKeys.rows: "\(summary.totalRows)",
                ]
            )
            return summary
        } catch {
            await store.close()
            throw error
        }
    }
}
