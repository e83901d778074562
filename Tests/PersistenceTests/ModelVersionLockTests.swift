import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

@Suite("Model version lock")
struct ModelVersionLockTests {
    static let shipped = BuiltCommand.packageRoot.appendingPathComponent("Migrations/BookStore.xcdatamodeld")

    @Test func bookStoresShippedVersionsAreAllLockedAndUnchanged() throws {
        let versions = try VersionedModel(contentsOf: Self.shipped)
        let lock = try #require(versions.lock)
        #expect(lock.versions.keys.sorted() == ["BookStore", "BookStore 2", "BookStore 3", "BookStore 4", "BookStore 5"])
        #expect(versions.lockChanges.isEmpty, "\(versions.lockChanges)")
        // Locking again writes the committed file byte for byte: the format is stable.
        var again = ModelVersionLock(model: versions.name)
        for version in versions.versions { again.lock(version) }
        #expect(try again.fileContents() == Data(contentsOf: ModelVersionLock.fileURL(forModelAt: Self.shipped)))
    }

    @Test func aLockRecordsTheHashesAStoreOfTheVersionCarries() throws {
        let versions = try VersionedModel(contentsOf: Self.shipped)
        let lock = try #require(versions.lock)
        for model in versions.versions {
            #expect(lock.versions[model.name]?.entityVersionHashes == model.entityVersionHashes, "\(model.name)")
        }
    }

    @Test func everyKindOfChangeToALockedVersionIsNamed() throws {
        let folder = try ScenarioFolder()
        let models = try Self.copyOfTheShippedModel(in: folder)
        try Self.edit(models, version: "BookStore 4") { text in
            text
                .replacingOccurrences(of: #"name="price" attributeType="Float""#, with: #"name="price" attributeType="Double""#)
                .replacingOccurrences(of: #"name="title" attributeType="String""#, with: #"name="title" optional="YES" attributeType="String""#)
                .replacingOccurrences(
                    of: #"name="pages" optional="YES" toMany="YES""#,
                    with: #"name="pages" optional="YES" toMany="YES" ordered="YES""#
                )
                .replacingOccurrences(
                    of: #"name="text" optional="YES" attributeType="String""#,
                    with: #"name="text" optional="YES" attributeType="String" elementID="body""#
                )
                .replacingOccurrences(
                    of: #"<attribute name="number""#,
                    with: #"<attribute name="isbn" optional="YES" attributeType="String"/><attribute name="number""#
                )
                .replacingOccurrences(of: #"<attribute name="lastName" optional="YES" attributeType="String" syncable="YES"/>"#, with: "")
                .replacingOccurrences(
                    of: #"<attribute name="firstName""#,
                    with:
                        #"<uniquenessConstraints><uniquenessConstraint><constraint value="title"/></uniquenessConstraint></uniquenessConstraints><attribute name="firstName""#
                )
        }
        let versions = try VersionedModel(contentsOf: models)
        #expect(versions.lockChanges.map(\.version) == ["BookStore 4"])
        #expect(
            versions.lockChanges.first?.differences == [
                "Page.isbn: attribute added",
                "Page.text: renaming identifier none → body",
                "Publication: uniqueness constraints none → (title)",
                "Publication.lastName: attribute removed",
                "Publication.pages: unordered → ordered",
                "Publication.price: type Float → Double",
                "Publication.title: required → optional",
            ]
        )
        #expect(
            versions.lockChanges.first?.description.hasPrefix(
                "'BookStore 4' changed since it was locked: Page.isbn: attribute added; Page.text: renaming identifier none → body;"
            ) == true
        )
    }

    @Test func versionsNotInTheLockMayChangeFreely() throws {
        let folder = try ScenarioFolder()
        let models = try Self.copyOfTheShippedModel(in: folder)
        var lock = try ModelVersionLock(contentsOf: ModelVersionLock.fileURL(forModelAt: models))
        lock.versions["BookStore 5"] = nil
        try lock.write(to: ModelVersionLock.fileURL(forModelAt: models))
        try Self.edit(models, version: "BookStore 5") {
            $0.replacingOccurrences(of: #"name="price" attributeType="Float""#, with: #"name="price" attributeType="Double""#)
        }
        #expect(try VersionedModel(contentsOf: models).lockChanges.isEmpty)

        try Self.edit(models, version: "BookStore 2") {
            $0.replacingOccurrences(of: #"name="price" attributeType="Float""#, with: #"name="price" attributeType="Double""#)
        }
        #expect(
            try VersionedModel(contentsOf: models).lockChanges.map(\.description) == [
                "'BookStore 2' changed since it was locked: Book.price: type Float → Double"
            ]
        )
    }

    @Test func constraintsInAnotherOrderAreNoChangeButAnEntitysRenamingIdentifierAndExternalStorageAre() throws {
        let folder = try ScenarioFolder()
        let models = try Self.copyOfTheShippedModel(in: folder)
        let constraints = { (first: String, second: String) in
            "<uniquenessConstraints><uniquenessConstraint>\(first)</uniquenessConstraint><uniquenessConstraint>\(second)</uniquenessConstraint></uniquenessConstraints>"
        }
        let title = #"<constraint value="title"/>"#
        let names = #"<constraint value="firstName"/><constraint value="lastName"/>"#
        try Self.edit(models, version: "BookStore 5") {
            $0.replacingOccurrences(of: #"<attribute name="firstName""#, with: constraints(title, names) + #"<attribute name="firstName""#)
        }
        var lock = try ModelVersionLock(contentsOf: ModelVersionLock.fileURL(forModelAt: models))
        lock.lock(try #require(try VersionedModel(contentsOf: models).version(named: "BookStore 5")))
        try lock.write(to: ModelVersionLock.fileURL(forModelAt: models))
        #expect(try VersionedModel(contentsOf: models).lockChanges.isEmpty)

        try Self.edit(models, version: "BookStore 5") { $0.replacingOccurrences(of: constraints(title, names), with: constraints(names, title)) }
        #expect(try VersionedModel(contentsOf: models).lockChanges.isEmpty, "the order of constraints is not a change")

        try Self.edit(models, version: "BookStore 5") {
            $0.replacingOccurrences(of: #"elementID="Book""#, with: #"elementID="Volume""#)
                .replacingOccurrences(
                    of: #"<attribute name="text" optional="YES" attributeType="String""#,
                    with: #"<attribute name="text" optional="YES" attributeType="String" allowsExternalBinaryDataStorage="YES""#
                )
        }
        #expect(
            try VersionedModel(contentsOf: models).lockChanges.first?.differences == [
                "Page.text: no external storage → external storage",
                "Publication: renaming identifier Book → Volume",
            ]
        )
    }

    @Test func aLockedVersionTheModelNoLongerHasIsAChange() throws {
        let folder = try ScenarioFolder()
        let models = try Self.copyOfTheShippedModel(in: folder)
        var lock = try ModelVersionLock(contentsOf: ModelVersionLock.fileURL(forModelAt: models))
        lock.versions["BookStore 6"] = lock.versions["BookStore 5"]
        try lock.write(to: ModelVersionLock.fileURL(forModelAt: models))
        #expect(
            try VersionedModel(contentsOf: models).lockChanges.map(\.description) == [
                "'BookStore 6' changed since it was locked: the version is locked but the model has no such version"
            ]
        )
    }

    @Test(arguments: [
        ("{", "the file is not a version lock: not JSON"),
        (#"{"format": 1, "model": "BookStore"}"#, "the file is not a version lock: 'versions' is missing"),
        (#"{"format": 2, "model": "BookStore", "versions": {}}"#, "the version lock is of format 2; this framework reads format 1"),
        (#"{"format": 2, "locked": [1, 2]}"#, "the version lock is of format 2; this framework reads format 1"),
    ])
    func aLockThatCannotBeReadSaysWhichFileAndWhatToDo(contents: String, message: String) throws {
        let folder = try ScenarioFolder()
        let models = try Self.copyOfTheShippedModel(in: folder)
        let lockFile = ModelVersionLock.fileURL(forModelAt: models)
        try Data(contents.utf8).write(to: lockFile)
        let error = #expect(throws: ModelError.self) { try VersionedModel(contentsOf: models) }
        #expect(error?.code == .malformedLock)
        #expect(error?.file == lockFile.path)
        #expect(error?.message.hasPrefix(message) == true, "\(String(describing: error))")
        #expect(try String(contentsOf: lockFile, encoding: .utf8) == contents, "reading a lock never writes it")
    }

    /// A copy of BookStore's `.xcdatamodeld` folder and its lock, in `folder`.
    static func copyOfTheShippedModel(in folder: ScenarioFolder) throws -> URL {
        let models = folder.url.appendingPathComponent("BookStore.xcdatamodeld")
        try FileManager.default.copyItem(at: shipped, to: models)
        try FileManager.default.copyItem(at: ModelVersionLock.fileURL(forModelAt: shipped), to: ModelVersionLock.fileURL(forModelAt: models))
        return models
    }

    /// Rewrites one version's model file; the edit must change it.
    static func edit(_ models: URL, version: String, _ change: (String) -> String) throws {
        let file = models.appendingPathComponent("\(version).xcdatamodel/contents")
        let text = try String(contentsOf: file, encoding: .utf8)
        let edited = change(text)
        try #require(edited != text, "the edit must change \(version)")
        try Data(edited.utf8).write(to: file)
    }
}
