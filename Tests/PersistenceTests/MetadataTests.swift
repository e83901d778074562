import Foundation
import PersistenceTesting
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
        return try ManagedObjectModel(
            name: "Library plus",
            versionIdentifier: "2",
            entities: model.entities + [EntityDescription(name: "Review", attributes: [AttributeDescription(name: "text", type: .string)])]
        )
    }

    @Test(arguments: TestEngine.allCases)
    func metadataReadsWithoutWriting(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let model = try LibraryModel.make()
            try await makeClosedStore(at: url, model: model) { container in
                let context = container.newContext()
                try context.insertObject(entityName: "Book").setValue("Stored", forKey: "title")
                try await context.save()
            }
            let before = try await StoreSnapshot(url)
            #expect(before.leftovers.isEmpty, "the closed store is alone: \(before.leftovers)")
            let metadata = try await PersistentStore.metadata(at: url)
            try await expectUnchanged(url, since: before)

            #expect(metadata.storeType == (engine == .sqlite ? "SQLite" : "PostgreSQL"))
            #expect(UUID(uuidString: metadata.storeUUID) != nil)
            #expect(metadata.versionHashes == model.entityVersionHashes)
            #expect(metadata.modelVersionName == "Library")
            #expect(metadata.versionIdentifiers == ["1"])
            #expect(model.isCompatible(with: metadata))

            // Reading twice gives the same; the UUID is the one Z_METADATA.Z_UUID holds.
            #expect(try await PersistentStore.metadata(at: url) == metadata)
            #expect(try await storeRows(url, "SELECT Z_UUID FROM Z_METADATA").first?.first?.text == metadata.storeUUID)
        }
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

    @Test(arguments: TestEngine.allCases, [false, true])
    func incompatibleModelIsRefusedAndStoreUntouched(engine: TestEngine, typeChange: Bool) async throws {
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: try LibraryModel.make())
            let before = try await StoreSnapshot(url)
            let other = typeChange ? try Self.changedTypeModel() : try Self.addedEntityModel()
            let open = {
                _ = try await PersistentContainer.open(model: other, store: url, options: .createIfMissing, logger: testLogger)
            }
            let error = await #expect(throws: StoreError.self) { try await open() }
            #expect(error?.code == .incompatibleModel)
            #expect(error?.description.contains("Library") == true, "the error names the model")
            try await expectUnchanged(url, since: before)
        }
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

    /// SQLite: a file of noise where the store should be; PostgreSQL has no such file.
    @Test func notAStoreIsRefusedAndUntouched() async throws {
        let (path, cleanUp) = makeStoreFolder()
        defer { cleanUp() }
        var generator = SystemRandomNumberGenerator()
        let noise = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try noise.write(to: URL(fileURLWithPath: path))
        let before = try FileSnapshot(path: path)

        let error = await #expect(throws: StoreError.self) {
            _ = try await PersistentContainer.open(
                model: try LibraryModel.make(),
                store: .sqlite(path),
                options: .createIfMissing,
                logger: testLogger
            )
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
            _ = try await PersistentContainer.open(
                model: try LibraryModel.make(),
                store: .sqlite(path),
                options: .createIfMissing,
                logger: testLogger
            )
        }
        #expect(error?.code == .notAStore)
        try expectUnchanged(path, since: before)
    }

    @Test(arguments: TestEngine.allCases)
    func missingStoreIsNotCreated(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let error = await #expect(throws: StoreError.self) {
                _ = try await PersistentContainer.open(model: try LibraryModel.make(), store: url, options: .existingOnly, logger: testLogger)
            }
            #expect(error?.code == .storeNotFound)
            if engine == .postgres { #expect(error.map { "\($0)".contains("schema 'public'") } == true, "the schema is named") }
            let metadataError = await #expect(throws: StoreError.self) { try await PersistentStore.metadata(at: url) }
            #expect(metadataError?.code == .storeNotFound)
            switch url.kind {
            case .sqlite(let path):
                let folder = (path as NSString).deletingLastPathComponent
                #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, "nothing was created")
            default:
                #expect(
                    try await storeRows(url, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'").first?.first?.int64 == 0,
                    "nothing was created"
                )
            }

            // With createIfMissing it is created, and then opens without it.
            try await makeClosedStore(at: url, model: try LibraryModel.make())
            let reopened = try await PersistentContainer.open(model: try LibraryModel.make(), store: url, options: .existingOnly, logger: testLogger)
            #expect(try await reopened.count("ZBOOK") == 0)
            await reopened.store.close()
        }
    }

    @Test(arguments: TestEngine.allCases)
    func readOnlyStoresRefuseWrites(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let model = try LibraryModel.make()
            try await makeClosedStore(at: url, model: model)
            let before = try await StoreSnapshot(url)
            let store = try await PersistentStore.open(url, model: model, options: .readOnly, logger: testLogger)
            let context = ManagedObjectContext(store: store, logger: testLogger)
            try context.insertObject(entityName: "Book").setValue("Refused", forKey: "title")
            let error = await #expect(throws: (any Error).self) { try await context.save() }
            #expect(
                "\(String(describing: error))".contains("read-only") || "\(String(describing: error))".contains("readonly"),
                "\(String(describing: error))"
            )
            #expect(try await ManagedObjectContext(store: store, logger: testLogger).count(for: FetchRequest(entityName: "Book")) == 0)
            await store.close()
            try await expectUnchanged(url, since: before)
        }
    }
}
