import Foundation
import Testing
@testable import Persistence

/// Reading a store's metadata, model compatibility, and refusing stores that cannot be
/// opened, without touching them.
@Suite("Store metadata and opening")
struct MetadataTests {
    /// LibraryModel with `Book.price` a Double instead of a Float.
    static func changedTypeModel() throws -> ManagedObjectModel {
        let model = try LibraryModel.make()
        var entities = model.entities
        let index = try #require(entities.firstIndex { $0.name == "Book" })
        let price = try #require(entities[index].attributes.firstIndex { $0.name == "price" })
        entities[index].attributes[price].type = .double
        return try ManagedObjectModel(name: "Library changed", versionIdentifier: "2", entities: entities)
    }

    /// LibraryModel with one more entity.
    static func addedEntityModel() throws -> ManagedObjectModel {
        let model = try LibraryModel.make()
        return try ManagedObjectModel(name: "Library plus", versionIdentifier: "2",
                                      entities: model.entities + [EntityDescription(name: "Review", attributes: [AttributeDescription(name: "text", type: .string)])])
    }

    @Test func metadataReadsWithoutWriting() async throws {
        let (path, cleanUp) = makeStoreFolder()
        defer { cleanUp() }
        let model = try LibraryModel.make()
        try await makeClosedStore(at: path, model: model) { container in
            let context = container.newContext()
            try context.insertObject(entityName: "Book").setValue("Stored", forKey: "title")
            try await context.save()
        }
        let before = try FileSnapshot(path: path)
        #expect(before.folder == ["store.sqlite"], "the closed store is one file")
        let metadata = try await PersistentStore.metadata(at: .sqlite(path))
        try expectUnchanged(path, since: before)

        #expect(metadata.storeType == "SQLite")
        #expect(UUID(uuidString: metadata.storeUUID) != nil)
        #expect(metadata.versionHashes == model.entityVersionHashes)
        #expect(metadata.modelVersionName == "Library")
        #expect(metadata.versionIdentifiers == ["1"])
        #expect(model.isCompatible(with: metadata))

        // Reading twice gives the same; the UUID is the one Z_METADATA.Z_UUID holds.
        #expect(try await PersistentStore.metadata(at: .sqlite(path)) == metadata)
        let connection = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try connection.scalar("SELECT Z_UUID FROM Z_METADATA")?.text == metadata.storeUUID)
    }

    @Test func compatibility() async throws {
        let model = try LibraryModel.make()
        let metadata = StoreMetadata(model: model, storeType: "SQLite")
        #expect(model.isCompatible(with: metadata))
        #expect(try LibraryModel.make().isCompatible(with: metadata), "a model built again is the same model")
        #expect(!(try Self.addedEntityModel().isCompatible(with: metadata)))
        let changed = try Self.changedTypeModel()
        #expect(!changed.isCompatible(with: metadata), "a property type change makes the model incompatible")
        // Metadata survives its property-list form.
        let data = try metadata.propertyListData()
        #expect(try StoreMetadata(propertyListData: data, uuid: nil) == metadata)
    }

    @Test(arguments: [false, true])
    func incompatibleModelIsRefusedAndStoreUntouched(typeChange: Bool) async throws {
        let (path, cleanUp) = makeStoreFolder()
        defer { cleanUp() }
        try await makeClosedStore(at: path, model: try LibraryModel.make())
        let before = try FileSnapshot(path: path)
        let other = typeChange ? try Self.changedTypeModel() : try Self.addedEntityModel()
        let open = {
            _ = try await PersistentContainer.open(model: other, store: .sqlite(path), options: .createIfMissing, logger: testLogger)
        }
        let error = await #expect(throws: StoreError.self) { try await open() }
        #expect(error?.code == .incompatibleModel)
        #expect(error?.description.contains("Library") == true, "the error names the model")
        try expectUnchanged(path, since: before)
    }

    @Test func inMemoryStoreRemembersItsModel() async throws {
        let url = StoreURL(kind: .memory(name: "metadata-\(UUID().uuidString)"))
        let first = try await PersistentContainer.open(model: try LibraryModel.make(), store: url, options: .createIfMissing, logger: testLogger)
        let context = first.newContext()
        try context.insertObject(entityName: "Book").setValue("Kept", forKey: "title")
        try await context.save()
        // While the first is open, the named in-memory database is shared.
        let error = await #expect(throws: StoreError.self) {
            _ = try await PersistentContainer.open(model: try Self.addedEntityModel(), store: url, logger: testLogger)
        }
        #expect(error?.code == .incompatibleModel)
        let again = try await PersistentContainer.open(model: try LibraryModel.make(), store: url, logger: testLogger)
        #expect(try await again.count("ZBOOK") == 1)
        #expect(again.store.metadata.storeUUID == first.store.metadata.storeUUID)
        #expect(again.store.metadata.storeType == "InMemory")
    }

    @Test func notAStoreIsRefusedAndUntouched() async throws {
        let (path, cleanUp) = makeStoreFolder()
        defer { cleanUp() }
        var generator = SystemRandomNumberGenerator()
        let noise = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try noise.write(to: URL(fileURLWithPath: path))
        let before = try FileSnapshot(path: path)

        let error = await #expect(throws: StoreError.self) {
            _ = try await PersistentContainer.open(model: try LibraryModel.make(), store: .sqlite(path), options: .createIfMissing, logger: testLogger)
        }
        #expect(error?.code == .notAStore)
        let metadataError = await #expect(throws: StoreError.self) { try await PersistentStore.metadata(at: .sqlite(path)) }
        #expect(metadataError?.code == .notAStore)
        try expectUnchanged(path, since: before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == noise)
    }

    @Test func sqliteDatabaseWithoutMetadataIsNotAStore() async throws {
        let (path, cleanUp) = makeStoreFolder()
        defer { cleanUp() }
        do {
            let connection = try SQLiteConnection(path: path, mode: .readWriteCreate)
            try connection.execute("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')")
        }
        let before = try FileSnapshot(path: path)
        let error = await #expect(throws: StoreError.self) {
            _ = try await PersistentContainer.open(model: try LibraryModel.make(), store: .sqlite(path), options: .createIfMissing, logger: testLogger)
        }
        #expect(error?.code == .notAStore)
        try expectUnchanged(path, since: before)
    }

    @Test func missingStoreIsNotCreated() async throws {
        let (path, cleanUp) = makeStoreFolder()
        defer { cleanUp() }
        let folder = (path as NSString).deletingLastPathComponent
        let error = await #expect(throws: StoreError.self) {
            _ = try await PersistentContainer.open(model: try LibraryModel.make(), store: .sqlite(path), options: .existingOnly, logger: testLogger)
        }
        #expect(error?.code == .storeNotFound)
        let metadataError = await #expect(throws: StoreError.self) { try await PersistentStore.metadata(at: .sqlite(path)) }
        #expect(metadataError?.code == .storeNotFound)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, "nothing was created")

        // With createIfMissing it is created, and then opens without it.
        try await makeClosedStore(at: path, model: try LibraryModel.make())
        #expect(FileManager.default.fileExists(atPath: path))
        let reopened = try await PersistentContainer.open(model: try LibraryModel.make(), store: .sqlite(path), options: .existingOnly, logger: testLogger)
        #expect(try await reopened.count("ZBOOK") == 0)
    }
}
