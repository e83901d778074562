import Foundation
import Testing

@testable import Persistence

/// Recognising a Core Data store's version from its tables when Core Data's hashes do not
/// tell, and its tables fit several versions or none. SQLite only: Apple's stores, whose
/// hashes are not ours, are SQLite files; a store the framework writes on PostgreSQL carries
/// its own hashes.
@Suite struct StoreRecognitionTests {
    /// Version 1 of the example with a version hash modifier on `postID`: other hashes, ours
    /// and Core Data's, the same tables.
    private func version1(modifiedBy modifier: String, named name: String) throws -> ManagedObjectModel {
        let file = ModelFixtures.colourPosts.appendingPathComponent("CoreDataMigration_Example.xcdatamodel/contents")
        let xml = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            .replacingOccurrences(
                of: #"<attribute name="postID" optional="YES""#,
                with: #"<attribute name="postID" versionHashModifier="\#(modifier)" optional="YES""#
            )
        return try ManagedObjectModel(xml: Data(xml.utf8), name: name, file: file.path)
    }

    /// The example's models with a second version 1 beside the first: the store's Core Data
    /// hashes are the first's.
    private func modelsWithTwinOfVersion1() throws -> (VersionedModel, twin: ManagedObjectModel) {
        let models = try CoreDataFixtures.models()
        let twin = try version1(modifiedBy: "twin", named: "CoreDataMigration_Example 1b")
        #expect(twin.entityVersionHashes != models.versions[0].entityVersionHashes)
        #expect(twin.coreDataEntityVersionHashes != models.versions[0].coreDataEntityVersionHashes)
        let versions = [models.versions[0], twin] + models.versions.dropFirst()
        return (try VersionedModel(name: models.name, versions: versions, currentVersionName: models.current.name), twin)
    }

    /// The same models, but version 1 edited after it wrote the store (a modifier added): the
    /// store's hashes are no version's, and its tables fit version 1 and the twin.
    private func modelsWithEditedVersion1AndTwin() throws -> (VersionedModel, twin: ManagedObjectModel) {
        let (models, twin) = try modelsWithTwinOfVersion1()
        let edited = try version1(modifiedBy: "edited", named: "CoreDataMigration_Example")
        let versions = [edited] + models.versions.dropFirst()
        return (try VersionedModel(name: models.name, versions: versions, currentVersionName: models.current.name), twin)
    }

    /// Core Data's hashes tell twins apart where the tables cannot: the store is the version
    /// that wrote it, and naming the other is refused.
    @Test func coreDataHashesTellVersionsWithTheSameTablesApart() async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[0]) { url in
            let (models, twin) = try modelsWithTwinOfVersion1()
            let recognised = try await models.recogniseVersion(ofStoreAt: url)
            #expect(recognised.model.name == "CoreDataMigration_Example")
            #expect(recognised.method == .coreDataVersionHashes)
            let error = await #expect(throws: StoreError.self) { try await models.recogniseVersion(ofStoreAt: url, named: twin.name) }
            #expect(
                error?.message.contains(
                    "the store's entity version hashes are those Core Data computes for 'CoreDataMigration_Example', not for 'CoreDataMigration_Example 1b'"
                ) == true,
                "\(String(describing: error))"
            )
        }
    }

    @Test func tablesFittingSeveralVersionsAreRefusedUntilOneIsNamed() async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[0]) { url in
            let (models, twin) = try modelsWithEditedVersion1AndTwin()
            let error = await #expect(throws: StoreError.self) { try await models.recogniseVersion(ofStoreAt: url) }
            #expect(error?.code == .ambiguousModelVersion)
            #expect(error?.message.contains("'CoreDataMigration_Example', 'CoreDataMigration_Example 1b'") == true)
            #expect(error?.hint?.contains("--store-version") == true)

            let migrator = ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger)
            let planError = await #expect(throws: MigrationError.self) { try await migrator.plan(forStoreAt: url) }
            #expect(planError?.code == .ambiguousStoreVersion)

            let named = try await models.recogniseVersion(ofStoreAt: url, named: twin.name)
            #expect(named.model.name == twin.name)
            #expect(named.method == .named)
            let plan = try await migrator.plan(forStoreAt: url, to: twin.name, storeVersion: "CoreDataMigration_Example")
            #expect(plan.storeVersion.name == "CoreDataMigration_Example")
            #expect(plan.steps.map(\.destination.name) == [twin.name])

            // A name whose tables do not fit is refused with the differences.
            let wrong = await #expect(throws: StoreError.self) {
                try await models.recogniseVersion(ofStoreAt: url, named: "CoreDataMigration_Example 2")
            }
            #expect(wrong?.code == .unknownModelVersion)
            #expect(wrong?.message.contains("ZPOST lacks the column ZHEXCOLOR (text)") == true)
        }
    }

    @Test func tablesFittingNoVersionNameTheClosestAndItsDifferences() async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[0]) { url in
            let all = try CoreDataFixtures.models()
            let later = try VersionedModel(name: all.name, versions: Array(all.versions.dropFirst()), currentVersionName: all.current.name)
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: later), logger: testLogger)
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: url) }
            #expect(error?.code == .unknownStoreVersion)
            #expect(
                error?.message.contains(
                    "the closest, 'CoreDataMigration_Example 2', differs: ZPOST has a column ZCOLOR (text) the model does not have; ZPOST lacks the column ZHEXCOLOR (text)"
                ) == true,
                "\(String(describing: error))"
            )
        }
    }

    /// Tables Core Data keeps beside the model's (persistent history, CloudKit's) do not
    /// decide the version: the store is recognised, the tables are named in its notes, and
    /// the store is left as it was.
    @Test func tablesOutsideCoreDataNamesAreNotedNotRefused() async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[0]) { url in
            let path = try #require(url.filePath)
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            try connection.execute("CREATE TABLE ATRANSACTION (Z_PK INTEGER PRIMARY KEY, ZTIMESTAMP TIMESTAMP)")
            try connection.execute("CREATE TABLE ANSCKRECORDMETADATA (Z_PK INTEGER PRIMARY KEY, ZCKRECORDID VARCHAR)")
            connection.close()
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let recognised = try await CoreDataFixtures.models().recogniseVersion(ofStoreAt: url)
            #expect(recognised.model.name == CoreDataFixtures.stores[0].versionName)
            #expect(
                recognised.notes == [
                    "the store has a table ANSCKRECORDMETADATA beside Core Data's model tables (Core Data's CloudKit mirroring); it is kept as it is",
                    "the store has a table ATRANSACTION beside Core Data's model tables (Core Data's persistent history); it is kept as it is",
                ]
            )
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }

    @Test func structureIgnoresColumnOrderAndTypeSpellingButNotTypeClass() throws {
        let models = try CoreDataFixtures.models()
        let expected = models.versions[0].storeStructure
        var store = expected
        // Apple's declared types: VARCHAR for strings, TIMESTAMP for dates, in its own order.
        store.entityTables["ZPOST"] = [
            "Z_PK": .integer, "ZPOSTID": .init(declaredType: "VARCHAR(255)"), "Z_ENT": .integer,
            "ZDATE": .init(declaredType: "TIMESTAMP"), "Z_OPT": .integer, "ZCOLOR": .init(declaredType: "VARCHAR"),
        ]
        store.indexedColumns.insert("ZPOST.ZDATE")
        #expect(store.differences(from: expected).isEmpty)
        #expect(
            StoreStructure.TypeClass(declaredType: "DECIMAL") == StoreStructure.TypeClass(declaredType: SQLiteDialect().columnType(for: .decimal))
        )
        store.entityTables["ZPOST"]?["ZDATE"] = .real
        #expect(store.differences(from: expected) == ["ZPOST.ZDATE holds real in the store, timestamp in the model"])
    }
}

/// A migration keeps the tables Core Data keeps beside the model's, or does not start: steps
/// in place leave them; a step that rebuilds the store would not carry them, and is refused
/// before anything changes. SQLite only: a PostgreSQL schema holding tables other than the
/// store's is refused for such steps as a shared schema (`PostgresSchemaSharingTests`).
@Suite struct TablesBesideTheModelTests {
    private func addHistory(to url: StoreURL) throws {
        let connection = try SQLiteConnection(path: try #require(url.filePath), mode: .readWrite)
        try connection.execute("CREATE TABLE ATRANSACTION (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTIMESTAMP FLOAT)")
        try connection.execute("INSERT INTO ATRANSACTION VALUES (1, 16001, 1, 786000000.25)")
        connection.close()
    }

    @Test func aStepInPlaceKeepsThem() async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[2]) { url in
            try addHistory(to: url)
            let migrator = ProgressiveMigrator(chain: try CoreDataFixtures.chain(), logger: testLogger)
            let plan = try await migrator.plan(forStoreAt: url)
            #expect(plan.steps.map(\.strategy) == [.inPlace])
            _ = try await migrator.migrateStore(at: url)
            #expect(try await storeRows(url, "SELECT Z_PK, ZTIMESTAMP FROM ATRANSACTION") == [[.integer(1), .double(786000000.25)]])
        }
    }

    @Test func aStepThatRebuildsIsRefusedBeforeItStarts() async throws {
        try await CoreDataFixtures.withCopy(of: CoreDataFixtures.stores[0]) { url in
            try addHistory(to: url)
            let path = try #require(url.filePath)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let migrator = ProgressiveMigrator(chain: try CoreDataFixtures.chain(), logger: testLogger)
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: url, to: "CoreDataMigration_Example 2") }
            #expect(error?.code == .wouldDropTables)
            #expect(
                error?.message.contains("step CoreDataMigration_Example → CoreDataMigration_Example 2 rebuilds the store (set-based)") == true,
                "\(String(describing: error))"
            )
            #expect(error?.message.contains("ATRANSACTION (Core Data's persistent history)") == true)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }
}
