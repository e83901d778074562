import Foundation
import Synchronization

/// Refuses a write of a process whose model version the store no longer has: the first
/// statements of each of its write transactions.
///
/// Another process may migrate the store while this one has it open (the next release,
/// while this one still serves). A statement that no longer fits the new tables fails, and
/// is explained (``MigratedStoreExplanation``); one that still fits (BookStore 4's new
/// publication is a BookStore 5 publication without a synopsis) would land in them, written
/// by a process that knows nothing of the new version's rules. So each write transaction
/// first takes the lock its writes would take on `Z_PRIMARYKEY` (on PostgreSQL; SQLite's
/// write transaction holds the whole file already), then reads `Z_METADATA`:
///
/// - a migration's swap (offline) or cut-over (online) locks `Z_PRIMARYKEY` first and
///   holds it until it commits, so a transaction that has the lock reads the metadata its writes will meet;
/// - one that waited for the lock while a migration committed takes it on the new table
///   (PostgreSQL looks the name up again after the wait), and reads the new metadata.
///
/// The lock and the read are two statements: the read's snapshot must be taken once the
/// lock is had (a lock taken by the read itself, as `FOR UPDATE` of a cached plan, may
/// wait with a snapshot from before the migration's commit). Folding both into one simple
/// query was measured slower than a lock and a prepared read (the read planned each time).
///
/// The metadata's bytes are compared with the last ones accepted; only new bytes are
/// decoded, and accepted when their version hashes are the model's (Core Data's rule) or
/// those the store had when it was opened (a store Core Data wrote, whose hashes are not
/// ours to compute, was opened by its tables): metadata rewritten for the same version
/// is accepted.
///
/// ```swift
/// try await context.save()
/// // StoreError.migratedSinceOpened: the store was migrated to model version 'BookStore 5'
/// // since this process opened it; this process runs 'BookStore 4'. …
/// ```
final class ModelVersionCheck: Sendable {
    let model: ManagedObjectModel
    /// The entity version hashes of the store when it was opened.
    let openedHashes: [String: Data]
    let store: StoreURL
    /// The statements each save runs.
    private let lockStatement: SQL?
    private let metadataQuery = StoreMetadata.metadataQuery
    /// The last `Z_PLIST` accepted.
    private let accepted = Mutex<Data?>(nil)

    init(model: ManagedObjectModel, opened: StoreMetadata, store: StoreURL, dialect d: any SQLDialect) {
        self.model = model
        self.openedHashes = opened.versionHashes
        self.store = store
        lockStatement = d.writeLockStatement(table: d.name("Z_PRIMARYKEY"))
    }

    /// Throws ``StoreError/Code/migratedSinceOpened`` when the store's metadata no longer
    /// fits ``model``; the caller's transaction then ends without writing. A store without
    /// metadata is let through: its statements report it.
    func verify(on connection: any DatabaseConnection) throws {
        if let lockStatement { try connection.execute(lockStatement) }
        guard let row = try connection.rows(metadataQuery).first, let plist = row[1].blob else { return }
        if accepted.withLock({ $0 == plist }) { return }
        let metadata = try StoreMetadata(propertyListData: plist, uuid: row[0].text)
        guard model.isCompatible(with: metadata) || metadata.versionHashes == openedHashes else {
            throw StoreError.migratedSinceOpened(to: metadata, from: model, store: store)
        }
        accepted.withLock { $0 = plist }
    }
}
