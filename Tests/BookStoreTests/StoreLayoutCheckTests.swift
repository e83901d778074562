import BookStoreTesting
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStore
@_spi(Testing) @testable import Persistence

/// Every migrated store is compared with what its model version creates before it replaces
/// the store (``StoreLayoutCheck``): tables, columns, types, indexes, entity numbers. A
/// store laid out otherwise fails the step, says what differs, and changes nothing.
@Suite(.serialized) struct StoreLayoutCheckTests {
    static let books = 1_200

    /// Stores the framework made or migrated have nothing to report, at every version of the chain.
    @Test(arguments: TestEngine.allCases)
    func aSeededOrMigratedStoreIsLaidOutAsItsModelCreatesIt(engine: TestEngine) async throws {
        let models = try loadModels()
        try await engine.withSeededStore(books: Self.books, version: 1) { url in
            #expect(try await Self.differences(url, version: 1) == [])
            try await ProgressiveMigrator(chain: try BookStoreMigration.chain(models: models), logger: quietLogger).migrateStore(at: url)
            #expect(try await Self.differences(url, version: 5) == [])
            // A store of another version is not version 5's.
            #expect(try await Self.differences(url, version: 4) != [])
        }
    }

    /// A stray column, a type changed, a look-up index gone: each is named.
    @Test(arguments: TestEngine.allCases)
    func theCheckNamesWhatDiffers(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: 10, version: 5) { url in
            let name: @Sendable (String) -> String = { engine == .sqlite ? $0 : $0.lowercased() }
            let pages = name("ZPAGE") + "."
            let indexed = try #require(
                try await PersistentStore.inspect(url) { connection in
                    try connection.dialect.storeStructure(on: connection).indexedColumns.sorted().first { $0.hasPrefix(pages) }
                }
            )
            let indexName = try #require(
                try await PersistentStore.inspect(url) { connection in
                    try Self.indexNames(leadingWith: indexed, on: connection).first
                }
            )
            try await writeRawSQL(url, "ALTER TABLE \(name("ZPUBLICATION")) ADD COLUMN \(name("ZSTRAY")) TEXT")
            try await writeRawSQL(url, "DROP INDEX \(indexName.quotedIdentifier)")

            let found = try await Self.differences(url, version: 5)
            #expect(found.contains { $0.contains(name("ZPUBLICATION")) && $0.contains(name("ZSTRAY")) }, "\(found)")
            #expect(found.contains { $0.contains(indexed) && $0.contains("no index") }, "\(found)")
            #expect(found.count == 2, "\(found)")
        }
    }

    /// A step whose output another hand changed before it was handed over (a column added to
    /// the step's new store) fails: the store stays as it was, nothing is left beside it.
    @Test(arguments: TestEngine.allCases)
    func aStepWhoseOutputDiffersFailsAndChangesNothing(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: Self.books, version: 4) { url in
            let before = try await StoreSnapshot(url)
            let changed = Mutex(false)
            let stray = engine == .sqlite ? "ZSTRAY" : "zstray"
            let migrator = ProgressiveMigrator(
                chain: try BookStoreMigration.chain(models: try loadModels()),
                logger: quietLogger
            ) { checkpoint in
                // Once the publications are in, before the output is handed over.
                guard case .stageFinished(1, _, "PublicationToPublication") = checkpoint, !changed.withLock({ $0 }) else { return }
                try Self.addColumn(stray, toOutputOf: url)
                changed.withLock { $0 = true }
            }
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: url) }
            #expect(changed.withLock { $0 })
            #expect(error?.code == .layoutDiffers, "\(String(describing: error))")
            #expect(error?.message.contains(stray) == true, "\(String(describing: error))")
            #expect(error?.message.contains("'BookStore 5'") == true, "\(String(describing: error))")
            let after = try await StoreSnapshot(url)
            #expect(before.differences(from: after) == [], "the store must be as it was")
            try await expectNoLeftovers(url)
        }
    }

    /// A store with a column of its own keeps it through steps run in place, which are not
    /// to blame for it: the migration goes through, saying the layout after was not checked.
    @Test(arguments: TestEngine.allCases)
    func aStoreThatAlreadyDiffersIsMigratedInPlaceWithItsOwnColumn(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: 10, version: 1) { url in
            let (books, stray) = engine == .sqlite ? ("ZBOOK", "ZSTRAY") : ("zbook", "zstray")
            try await writeRawSQL(url, "ALTER TABLE \(books) ADD COLUMN \(stray) TEXT")
            let recorder = LogRecorder()
            let migrator = ProgressiveMigrator(chain: try BookStoreMigration.chain(models: try loadModels()), logger: recorder.logger)
            try await migrator.migrateStore(at: url, to: "BookStore 2")
            let first = try loadModels().model(version: 1).name
            #expect(
                recorder.all.contains { $0.contains("differed from what '\(first)' creates") && $0.contains(stray) },
                "\(recorder.all.filter { $0.hasPrefix("notice") })"
            )
            #expect(try await PersistentStore.metadata(at: url).modelVersionName == "BookStore 2")
            #expect(try await Self.differences(url, version: 2).contains { $0.contains(stray) })
        }
    }

    /// `persistence check` says a store is laid out as its version creates it, or names what
    /// differs and exits non-zero; it writes nothing.
    @Test(arguments: TestEngine.allCases)
    func persistenceCheckNamesWhatDiffersAndWritesNothing(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: 10, version: 3) { url in
            let models = BuiltCommand.packageRoot.appendingPathComponent("Migrations/BookStore.xcdatamodeld").path
            let command = BuiltCommand("persistence")
            let clean = try await command.run(["check", "--store", url.description, "--models", models])
            #expect(clean.status == 0, "\(clean.stdout)\(clean.stderr)")
            #expect(clean.stdout.contains("Model version:  BookStore 3\n"), "\(clean.stdout)")
            #expect(clean.stdout.contains("Layout:         as 'BookStore 3' creates it\n"), "\(clean.stdout)")

            let (publications, stray) = engine == .sqlite ? ("ZPUBLICATION", "ZSTRAY") : ("zpublication", "zstray")
            try await writeRawSQL(url, "ALTER TABLE \(publications) ADD COLUMN \(stray) TEXT")
            let before = try await StoreSnapshot(url)
            let differs = try await command.run(["check", "--store", url.description, "--models", models])
            #expect(differs.status != 0, "\(differs.stdout)\(differs.stderr)")
            #expect(differs.stdout.contains("Layout:         differs from what 'BookStore 3' creates:\n"), "\(differs.stdout)")
            #expect(differs.stdout.contains("\(publications) has a column \(stray) (text) the model does not have"), "\(differs.stdout)")
            #expect(before.differences(from: try await StoreSnapshot(url)) == [], "the check must write nothing")
        }
    }

    /// A price column retyped from outside (Float's `real` to `double precision`): PostgreSQL
    /// keeps a column's type strictly, and the check names it; SQLite's columns take any
    /// value, and Core Data spells their types its own way, so only classes count there.
    @Test(arguments: TestEngine.allCases)
    func aTypeSpeltOtherwiseCountsOnPostgreSQLOnly(engine: TestEngine) async throws {
        try await engine.withSeededStore(books: 10, version: 5) { url in
            switch engine {
            case .sqlite:
                // SQLite cannot retype a column: a column of another spelling, same class, added.
                try await writeRawSQL(url, "ALTER TABLE ZPUBLICATION ADD COLUMN ZSTRAY DOUBLE")
                let found = try await Self.differences(url, version: 5)
                #expect(found == ["ZPUBLICATION has a column ZSTRAY (real) the model does not have"], "\(found)")
            case .postgres:
                try await writeRawSQL(url, "ALTER TABLE zpublication ALTER COLUMN zprice TYPE double precision")
                let found = try await Self.differences(url, version: 5)
                #expect(found == ["zpublication.zprice is double precision in the store, real in the model"], "\(found)")
            }
        }
    }

    // MARK: Helpers

    static func differences(_ url: StoreURL, version: Int) async throws -> [String] {
        let model = try loadModels().model(version: version)
        return try await PersistentStore.inspect(url) { connection in
            try StoreLayoutCheck(schema: StoreSchema(model: model, dialect: connection.dialect)).differences(on: connection)
        }
    }

    /// The names of the indexes whose first column is `column` (`TABLE.COLUMN`).
    static func indexNames(leadingWith column: String, on connection: any DatabaseConnection) throws -> [String] {
        let parts = column.split(separator: ".").map(String.init)
        if connection.dialect.isSame(as: PostgresDialect()) {
            return try connection.rows(
                rawSQL: """
                    SELECT i.relname::text FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
                    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
                    WHERE t.relname = $1 AND a.attname = $2 AND t.relnamespace = current_schema()::regnamespace AND NOT x.indisprimary
                    ORDER BY 1
                    """,
                [.text(parts[0]), .text(parts[1])]
            ).compactMap { $0[0].text }
        }
        return try connection.rows(rawSQL: "PRAGMA index_list(\(parts[0].quotedIdentifier))").compactMap { index -> String? in
            guard let name = index[1].text, index[3].text == "c",
                try connection.rows(rawSQL: "PRAGMA index_info(\(name.quotedIdentifier))").first?[2].text == parts[1]
            else { return nil }
            return name
        }
    }

    /// Adds a text column to the publications of the output the running step writes: on
    /// SQLite its file in the work folder beside the store, on PostgreSQL its shadow schema.
    static func addColumn(_ column: String, toOutputOf url: StoreURL) throws {
        switch url.kind {
        case .sqlite(let path):
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
            let output = try #require(files.first { $0.lastPathComponent == "step1.sqlite" }, "no step output in \(folder.path)")
            let connection = try SQLiteConnection(path: output.path, mode: .readWrite)
            try connection.execute(rawSQL: "ALTER TABLE ZPUBLICATION ADD COLUMN \(column) TEXT")
        case .postgres(let configuration):
            let connection = try PostgresConnection(configuration: configuration)
            let shadow = try #require(
                try connection.rows(
                    rawSQL: "SELECT nspname::text FROM pg_namespace WHERE starts_with(nspname, $1) ORDER BY 1",
                    [.text(configuration.schema + "_migrating_")]
                ).compactMap { $0[0].text }.first
            )
            try connection.execute(rawSQL: "ALTER TABLE \(shadow.quotedIdentifier).zpublication ADD COLUMN \(column) text")
        case .memory:
            preconditionFailure("an in-memory store is not migrated through a workspace")
        }
    }
}
