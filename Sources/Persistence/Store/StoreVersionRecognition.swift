import Foundation

/// The model version a store holds, and how that was decided.
///
/// ```swift
/// let recognised = try await versions.recogniseVersion(ofStoreAt: .sqlite("Example_1.sqlite"))
/// print(recognised) // "CoreDataMigration_Example (recognised by Core Data's version hashes)"
/// ```
public struct RecognisedStoreVersion: Sendable, CustomStringConvertible {
    /// How the version was decided.
    public enum Method: String, Sendable, Hashable {
        /// The store's entity version hashes are the version's (every store this framework writes).
        case versionHashes = "version hashes"
        /// The store's entity version hashes are the ones Apple's Core Data computes for the
        /// version (``ManagedObjectModel/coreDataEntityVersionHashes``), and its tables are the
        /// version's: a store of Apple's, known exactly.
        case coreDataVersionHashes = "Core Data's version hashes"
        /// The store's tables are the ones the version's schema makes (stores written by
        /// Apple's Core Data, whose hashes are not ours).
        case structure
        /// The caller named the version, and the store's tables fit it.
        case named = "named explicitly"
    }

    /// The model version the store holds.
    public let model: ManagedObjectModel
    /// How that version was decided.
    public let method: Method
    /// What the store has or lacks beside the version's tables that did not decide it
    /// (``StoreStructure/notes(comparedWith:)``): index differences, tables of persistent
    /// history or CloudKit. Empty for a store recognised by its hashes.
    public var notes: [String] = []

    /// The version's name and how it was recognised, as `inspect` prints it.
    public var description: String {
        switch method {
        case .versionHashes: "\(model.name) (recognised by version hashes)"
        case .coreDataVersionHashes: "\(model.name) (recognised by Core Data's version hashes)"
        case .structure: "\(model.name) (recognised by structure)"
        case .named: "\(model.name) (named explicitly; the store's structure fits it)"
        }
    }
}

extension VersionedModel {
    /// The version that wrote the store at `url`: the one whose entity version hashes the
    /// store carries; for a store written by Apple's Core Data (SQLite, no version name of
    /// ours), the one whose hashes as Core Data computes them
    /// (``ManagedObjectModel/coreDataEntityVersionHashes``) the store carries and whose
    /// tables it has; failing that, the one whose schema has the store's tables. The store
    /// is only read.
    ///
    /// Two versions that differ only in what the tables do not show (optionality, delete
    /// rules, defaults, validation) have the same tables; when the hashes do not tell them
    /// apart, name the store's version with `named`, which must fit the store's tables too.
    ///
    /// ```swift
    /// let recognised = try await versions.recogniseVersion(ofStoreAt: url)
    /// recognised.model.name // "CoreDataMigration_Example 3"
    /// recognised.method     // .coreDataVersionHashes
    /// recognised.notes      // index differences, tables beside the model's
    /// ```
    ///
    /// - Throws: ``StoreError``: ``StoreError/Code/unknownModelVersion`` naming the closest
    ///   version's differences when none fits, ``StoreError/Code/ambiguousModelVersion``
    ///   listing the versions when several fit and none is named,
    ///   ``StoreError/Code/inconsistentStore`` when Core Data's hashes name one version and
    ///   the tables are not that version's; the errors of reading the store.
    public func recogniseVersion(ofStoreAt url: StoreURL, named name: String? = nil) async throws -> RecognisedStoreVersion {
        let metadata = try await PersistentStore.metadata(at: url)
        return try recogniseVersion(ofStoreAt: url, metadata: metadata, named: name)
    }

    /// ``recogniseVersion(ofStoreAt:named:)`` with the store's metadata already read.
    public func recogniseVersion(ofStoreAt url: StoreURL, metadata: StoreMetadata, named name: String? = nil) throws -> RecognisedStoreVersion {
        if let model = version(matching: metadata) {
            if let name, name != model.name {
                throw StoreError(
                    .unknownModelVersion,
                    "the store's version hashes are those of '\(model.name)', not of '\(name)'",
                    hint: "leave the store's version out, or name '\(model.name)'",
                    store: url.description
                )
            }
            return RecognisedStoreVersion(model: model, method: .versionHashes)
        }
        let written = metadata.modelVersionName.map { "model version '\($0)'" } ?? "a model version"
        guard metadata.isForeign, let store = try url.engine.appleStoreStructure() else {
            throw StoreError(
                .unknownModelVersion,
                "the store was written by \(written) \(self.name) does not have: its entity version hashes match none of \(versionList)",
                hint: "open it with the app that wrote it, or add that model version",
                store: url.description
            )
        }
        // Versions that differ only in what Core Data's hashes leave out (defaults, delete
        // rules) share them: the named one of those, else the only one.
        let byHashes = versions.filter { $0.coreDataEntityVersionHashes == metadata.versionHashes }
        if let model = byHashes.first(where: { $0.name == name }) ?? (byHashes.count == 1 ? byHashes.first : nil) {
            return try recognise(model, byCoreDataHashesOf: url, store: store, named: name)
        }
        if byHashes.count > 1, name == nil {
            let names = byHashes.map { "'\($0.name)'" }.joined(separator: ", ")
            throw StoreError(
                .ambiguousModelVersion,
                "the store's entity version hashes are the ones Core Data computes for several model versions: \(names); they differ only in what the hashes leave out",
                hint:
                    "name the store's version explicitly: `storeVersion:` in Swift, or `persistence migrate --store-version \"\(byHashes[0].name)\"`",
                store: url.description
            )
        }
        if let name {
            guard let model = version(named: name) else {
                throw StoreError(
                    .unknownModelVersion,
                    "there is no model version named '\(name)'",
                    hint: "name one of \(versionList)",
                    store: url.description
                )
            }
            let expected = model.storeStructure(laidOutAs: store)
            let differences = store.differences(from: expected)
            guard differences.isEmpty else {
                throw StoreError(
                    .unknownModelVersion,
                    "the store's tables do not fit '\(name)': \(differences.joined(separator: "; "))",
                    hint: "name the version that wrote the store, or leave it out to have it recognised",
                    store: url.description
                )
            }
            return RecognisedStoreVersion(model: model, method: .named, notes: store.notes(comparedWith: expected))
        }
        let compared = versions.map { version in
            let expected = version.storeStructure(laidOutAs: store)
            return (model: version, differences: store.differences(from: expected), notes: store.notes(comparedWith: expected))
        }
        var fitting = compared.filter(\.differences.isEmpty)
        // Versions whose tables are alike may still differ in their indexes: the one whose
        // indexes the store has is the likelier, when there is one.
        if fitting.count > 1, let fewest = fitting.map(\.notes.count).min(), fitting.filter({ $0.notes.count == fewest }).count == 1 {
            fitting = fitting.filter { $0.notes.count == fewest }
        }
        if fitting.count == 1 {
            return RecognisedStoreVersion(model: fitting[0].model, method: .structure, notes: fitting[0].notes)
        }
        if fitting.count > 1 {
            let names = fitting.map { "'\($0.model.name)'" }.joined(separator: ", ")
            throw StoreError(
                .ambiguousModelVersion,
                "the store was written by Apple's Core Data (its version hashes are not ours) and its tables fit several model versions: \(names); they differ only in what tables do not show",
                hint:
                    "name the store's version explicitly: `storeVersion:` in Swift, or `persistence migrate --store-version \"\(fitting[0].model.name)\"`",
                store: url.description
            )
        }
        // The version with the fewest differences is most likely the one meant.
        let closest = compared.min { $0.differences.count < $1.differences.count }!
        throw StoreError(
            .unknownModelVersion,
            "the store's version hashes match none of \(versionList), and its tables fit none of them; the closest, '\(closest.model.name)', differs: \(closest.differences.joined(separator: "; "))",
            hint: "add the model version that wrote the store; the store was not changed",
            store: url.description
        )
    }

    private var versionList: String { versions.map { "'\($0.name)'" }.joined(separator: ", ") }

    /// A store of Apple's whose entity version hashes are the ones Core Data computes for
    /// `model`: its tables must be that version's too, or the store contradicts itself.
    private func recognise(
        _ model: ManagedObjectModel,
        byCoreDataHashesOf url: StoreURL,
        store: StoreStructure,
        named name: String?
    ) throws -> RecognisedStoreVersion {
        if let name, name != model.name {
            throw StoreError(
                .unknownModelVersion,
                "the store's entity version hashes are those Core Data computes for '\(model.name)', not for '\(name)'",
                hint: "leave the store's version out, or name '\(model.name)'",
                store: url.description
            )
        }
        let expected = model.storeStructure(laidOutAs: store)
        let differences = store.differences(from: expected)
        guard differences.isEmpty else {
            let fitting = versions.filter { store.differences(from: $0.storeStructure(laidOutAs: store)).isEmpty }.map { "'\($0.name)'" }
            let tables = fitting.isEmpty ? "fit no version" : "are those of \(fitting.joined(separator: ", "))"
            throw StoreError(
                .inconsistentStore,
                "the store's entity version hashes say '\(model.name)' wrote it, but its tables \(tables); against '\(model.name)' they differ: \(differences.joined(separator: "; "))",
                hint:
                    "the store is damaged, or was written by a version of the model edited after it shipped; restore it from a backup or open it with the app that wrote it. It was not changed",
                store: url.description
            )
        }
        return RecognisedStoreVersion(model: model, method: .coreDataVersionHashes, notes: store.notes(comparedWith: expected))
    }
}

extension ManagedObjectModel {
    /// The tables Apple's Core Data makes for this version on SQLite, its entities numbered
    /// as Core Data numbers them: what a store of Apple's is recognised by.
    var storeStructure: StoreStructure { StoreStructure(schema: StoreSchema(model: self, dialect: .sqlite, numbering: .coreData(self))) }

    /// ``storeStructure`` with the names `store` gives what Core Data may name more than one
    /// way (``StoreLayoutRules``): the tables this version would have in that store.
    func storeStructure(laidOutAs store: StoreStructure) -> StoreStructure {
        StoreStructure(schema: StoreSchema(model: self, dialect: .sqlite, numbering: .coreData(self), existing: store.existingTables))
    }
}
