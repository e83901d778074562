import Foundation

/// The model versions that shipped, as they shipped: each locked version's entities with
/// their version hashes and every stored property's shape.
///
/// A version that shipped wrote stores; edit its `.xcdatamodel` afterwards (an attribute made
/// optional, a type changed, a constraint added) and those stores match no version the app
/// knows. The lock keeps shipped versions frozen: `persistence lock` writes it beside the
/// `.xcdatamodeld` folder (`BookStore.xcdatamodeld` → `BookStore.versionlock.json`), the
/// project commits it, and ``VersionedModel/init(contentsOf:)`` reads it. `persistence
/// validate`, every migration through those versions (``ProgressiveMigrator``) and
/// BookStore's seeding refuse a locked version that changed, naming what changed. Versions not in the lock may change freely; a version
/// joins the lock only when asked (`persistence lock --version`).
///
/// ```swift
/// let versions = try VersionedModel(contentsOf: modelURL)  // reads the lock beside it
/// for change in versions.lockChanges {
///     print(change)  // 'BookStore 4' changed since it was locked: Publication.price: type Float → Double
/// }
/// var lock = versions.lock ?? ModelVersionLock(model: versions.name)
/// lock.lock(versions.current)  // when the current version ships
/// try lock.write(to: ModelVersionLock.fileURL(forModelAt: modelURL))
/// ```
///
/// The file is JSON with sorted keys, one property per line group, so that a review shows
/// which version changed and how.
public struct ModelVersionLock: Sendable, Hashable, Codable {
    /// The file format; a later format gets a new number.
    public var format: Int
    /// The model's name (the `.xcdatamodeld` folder without its extension).
    public var model: String
    /// The locked versions, by version name.
    public var versions: [String: LockedVersion]

    /// The format this framework writes and reads.
    public static let currentFormat = 1

    /// An empty lock for the model named `model`.
    public init(model: String) {
        self.format = Self.currentFormat
        self.model = model
        self.versions = [:]
    }

    /// Where the lock of the model at `modelURL` lives: beside the `.xcdatamodeld` folder,
    /// named after it (`Migrations/BookStore.xcdatamodeld` → `Migrations/BookStore.versionlock.json`).
    public static func fileURL(forModelAt modelURL: URL) -> URL {
        let folder = modelURL.standardizedFileURL
        return folder.deletingLastPathComponent().appendingPathComponent(
            folder.deletingPathExtension().lastPathComponent + ".versionlock.json"
        )
    }

    /// Records `model` as it is now; a version already locked is replaced.
    public mutating func lock(_ model: ManagedObjectModel) {
        versions[model.name] = LockedVersion(model)
    }

    /// What changed in each locked version among `models` since it was locked, in their
    /// order; a locked version `models` no longer has is a change too.
    public func changes(among models: [ManagedObjectModel]) -> [LockedVersionChange] {
        var changes: [LockedVersionChange] = []
        for model in models {
            guard let locked = self.versions[model.name] else { continue }
            let differences = locked.differences(from: LockedVersion(model))
            if !differences.isEmpty { changes.append(LockedVersionChange(version: model.name, differences: differences)) }
        }
        let present = Set(models.map(\.name))
        for name in self.versions.keys.sorted() where !present.contains(name) {
            changes.append(LockedVersionChange(version: name, differences: ["the version is locked but the model has no such version"]))
        }
        return changes
    }

    /// The locked versions whose entity version hashes are the store's, by name: the
    /// versions that could have written the store, as they shipped (several only where
    /// versions differ in nothing a store holds).
    public func versions(matching metadata: StoreMetadata) -> [String] {
        versions.keys.sorted().filter { versions[$0]!.entityVersionHashes == metadata.versionHashes }
    }
}
