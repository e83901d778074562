import Foundation

/// All versions of a model, loaded from an Xcode `.xcdatamodeld` folder, and which one is current.
///
/// ```swift
/// let versions = try VersionedModel(contentsOf: URL(fileURLWithPath: "Migrations/BookStore.xcdatamodeld"))
/// versions.current.name // "BookStore 5"
/// ```
public struct VersionedModel: Sendable, Hashable {
    /// The model's name, e.g. `BookStore` (the `.xcdatamodeld` folder name without extension).
    public let name: String
    /// Every version, in the order of their names (`BookStore`, `BookStore 2`, …).
    public let versions: [ManagedObjectModel]
    /// The version `.xccurrentversion` names.
    public let current: ManagedObjectModel
    /// The version lock beside the `.xcdatamodeld` folder (``ModelVersionLock``), if any.
    public let lock: ModelVersionLock?
    /// What changed in each locked version since it was locked (``ModelVersionLock/changes(among:)``);
    /// empty without a lock. A store is not migrated through versions with changes.
    public let lockChanges: [LockedVersionChange]

    /// The versions of a model, built in code rather than loaded, with their version lock
    /// if there is one.
    /// - Throws: ``ModelError`` with code `unknownVersion` when no version is named `currentVersionName`.
    public init(name: String, versions: [ManagedObjectModel], currentVersionName: String, lock: ModelVersionLock? = nil) throws(ModelError) {
        guard let current = versions.first(where: { $0.name == currentVersionName }) else {
            throw ModelError(.unknownVersion, "the current version \(quoted: currentVersionName) is not among the model's versions")
        }
        self.name = name
        self.versions = versions
        self.current = current
        self.lock = lock
        self.lockChanges = lock?.changes(among: versions) ?? []
    }

    /// Loads every `.xcdatamodel` in the folder, reads `.xccurrentversion` and the version
    /// lock beside the folder (``ModelVersionLock/fileURL(forModelAt:)``) when there is one.
    ///
    /// A locked version that changed does not fail loading: ``lockChanges`` says what
    /// changed, `persistence validate` refuses it, and a migration refuses it when it
    /// recognises a store's version, where it can say which version wrote the store.
    ///
    /// Versions are sorted by their names in natural order, so `BookStore 10` comes after
    /// `BookStore 9`, and the unnumbered first version comes first. A folder of one version
    /// needs no `.xccurrentversion` (Xcode writes none until a second version is added, and
    /// Core Data needs none): that version is current.
    ///
    /// - Throws: ``ModelError``: `missingFile` if the folder or its versions are missing, or
    ///   `.xccurrentversion` where there are several versions; `malformedXML` or `missingAttribute` if
    ///   `.xccurrentversion` cannot be read; `unknownVersion` if it names a version that is
    ///   not there; `malformedLock` if the version lock cannot be read; and any error of
    ///   loading a version.
    public init(contentsOf url: URL) throws(ModelError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ModelError(.missingFile, "there is no .xcdatamodeld folder at this path", file: url.path)
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw ModelError(.missingFile, "cannot list the model folder (\(error.localizedDescription))", file: url.path)
        }
        // Compare names without the extension: "BookStore" must precede "BookStore 2".
        let folders = names.filter { $0.hasSuffix(".xcdatamodel") }
            .sorted { Self.naturallyPrecedes(String($0.dropLast(12)), String($1.dropLast(12))) }
        guard !folders.isEmpty else {
            throw ModelError(
                .missingFile,
                "the folder holds no .xcdatamodel version; add one with Xcode's Editor ▸ Add Model Version",
                file: url.path
            )
        }
        var versions: [ManagedObjectModel] = []
        for folder in folders {
            versions.append(try ManagedObjectModel(contentsOf: url.appendingPathComponent(folder)))
        }
        let currentName = try Self.currentVersionName(in: url, versions: versions.map(\.name))
        guard versions.contains(where: { $0.name == currentName }) else {
            let known = versions.map { "\(quoted: $0.name)" }.joined(separator: ", ")
            throw ModelError(
                .unknownVersion,
                "the current version \(quoted: currentName) is not among the model's versions (\(known)); fix _XCCurrentVersionName",
                file: url.appendingPathComponent(Self.currentVersionFile).path
            )
        }
        let lockURL = ModelVersionLock.fileURL(forModelAt: url)
        var lock: ModelVersionLock?
        if FileManager.default.fileExists(atPath: lockURL.path) { lock = try ModelVersionLock(contentsOf: lockURL) }
        try self.init(name: url.deletingPathExtension().lastPathComponent, versions: versions, currentVersionName: currentName, lock: lock)
    }

    /// Every version's ``ManagedObjectModel/warnings``, version by version.
    public var warnings: [ModelWarning] { versions.flatMap(\.warnings) }

    /// The version with this name (`BookStore 3`).
    public func version(named name: String) -> ManagedObjectModel? {
        versions.first { $0.name == name }
    }

    /// The version named `text` (`BookStore 3`) or numbered by it (`3`): the version of that
    /// name, else the one whose version identifier is the number, else the one named
    /// `<name> <number>`; `1` also finds the unnumbered first version, named `<name>`.
    ///
    /// ```swift
    /// versions.version(namedOrNumbered: "3")?.name         // "BookStore 3"
    /// versions.version(namedOrNumbered: "BookStore 3")?.name // "BookStore 3"
    /// ```
    public func version(namedOrNumbered text: String) -> ManagedObjectModel? {
        if let named = version(named: text) { return named }
        guard let number = Int(text), number > 0 else { return nil }
        return versions.first { $0.versionIdentifier == text }
            ?? version(named: "\(name) \(number)")
            ?? (number == 1 ? version(named: name) : nil)
    }

    /// The version whose entity hashes match the store's metadata, if any.
    public func version(matching metadata: StoreMetadata) -> ManagedObjectModel? {
        versions.first { $0.isCompatible(with: metadata) }
    }
}
