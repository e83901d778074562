import Dispatch
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@_spi(Testing) @testable import Persistence

/// A PostgreSQL store reached through PgBouncer (Debian's package, ``TestPgBouncer``), as
/// deployments of several replicas reach it: in transaction mode each transaction runs on
/// whichever of a few server sessions is free; in session mode a client keeps one; in
/// statement mode there are no transactions. The stores live in a schema of their own, so
/// that a statement that lost the store's search path would find no table.
@Suite("PostgreSQL behind a connection pooler")
struct PostgresPoolerTests {
    static let notes = """
        <entity name="Note" representedClassName="Note">
            <attribute name="cents" optional="YES" attributeType="Integer 64"/>
            <attribute name="title" optional="YES" attributeType="String"/>
        </entity>
        """

    static func versions() throws -> VersionedModel {
        let v1 = try ManagedObjectModel(xml: ModelFixtures.xml(notes), name: "Notes", file: ModelFixtures.file)
        let v2 = try ManagedObjectModel(
            xml: ModelFixtures.xml(
                notes.replacingOccurrences(
                    of: #"<attribute name="title""#,
                    with: #"<attribute name="tag" optional="YES" attributeType="String"/><attribute name="title""#
                )
            ),
            name: "Notes 2",
            file: ModelFixtures.file
        )
        return try VersionedModel(name: "Notes", versions: [v1, v2], currentVersionName: "Notes 2")
    }

    /// `url` in the schema `shop`.
    static func shop(_ url: StoreURL) -> StoreURL {
        guard case .postgres(var configuration) = url.kind else { return url }
        configuration.schema = "shop"
        return .postgres(configuration)
    }

    /// The notes a writer saves: cents, titles beyond ASCII, NULLs.
    static func note(writer: Int, index: Int) -> (cents: AttributeValue, title: AttributeValue) {
        let amount = Int64(writer) * 100_000 + Int64(index) * 199
        let cents: AttributeValue = index % 7 == 0 ? .null : .integer(amount)
        let title: AttributeValue = index % 5 == 0 ? .null : .string("Crème brûlée nº \(index) — Ærø \(writer)")
        return (cents, title)
    }

    /// Writers saving at once through a pooler in transaction mode, each in many small
    /// transactions over three server sessions, all in schema `shop`: every save is there
    /// when read over the server itself. Statements run unnamed, and each transaction sets
    /// the schema, which the connection found out without being told.
    @Test func writersThroughATransactionPoolerKeepEverySave() async throws {
        let model = try ModelFixtures.model(Self.notes)
        try await TestPgBouncer.withDatabase(mode: .transaction) { pooledDatabase, directDatabase in
            let (pooled, direct) = (Self.shop(pooledDatabase), Self.shop(directDatabase))
            guard case .postgres(let pooledConfiguration) = pooled.kind, case .postgres(let directConfiguration) = direct.kind else { return }
            let pooledSession = try PostgresConnection(configuration: pooledConfiguration)
            let directSession = try PostgresConnection(configuration: directConfiguration)
            #expect(!pooledSession.keepsSession)
            #expect(directSession.keepsSession)
            try directSession.execute("CREATE SCHEMA shop")
            let container = try await PersistentContainer.open(model: model, store: pooled, options: .createIfMissing, logger: testLogger)
            let (writers, notesEach) = (6, 40)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        let context = container.newContext()
                        for index in 0..<notesEach {
                            let note = try context.insertObject(entityName: "Note")
                            let values = Self.note(writer: writer, index: index)
                            note.setValue(values.cents, forKey: "cents")
                            note.setValue(values.title, forKey: "title")
                            // A few notes per transaction: many transactions, many sessions.
                            if index % 4 == 3 { try await context.save() }
                        }
                        try await context.save()
                    }
                }
                try await group.waitForAll()
            }
            await container.store.close()
            let expected = (0..<writers).flatMap { writer in (0..<notesEach).map { Self.note(writer: writer, index: $0) } }
            try await withOpenStore(direct, model: model) { directContainer in
                let stored = try await directContainer.newContext().fetch(FetchRequest(entityName: "Note"))
                let read = stored.map { "\($0.value(forKey: "cents")) \($0.value(forKey: "title"))" }.sorted()
                #expect(read == expected.map { "\($0.cents) \($0.title)" }.sorted())
            }
            #expect(
                try await storeRows(directDatabase, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == [[.integer(0)]],
                "nothing of the store in another schema"
            )
        }
    }

    /// A migration through a pooler in transaction mode would hold its session lock on a
    /// server session the pooler hands to others: it is refused before it writes, saying
    /// so; over the server itself it runs, and the pooled URL then opens the store.
    @Test func aMigrationThroughATransactionPoolerIsRefusedBeforeItWrites() async throws {
        let versions = try Self.versions()
        try await TestPgBouncer.withDatabase(mode: .transaction) { pooled, direct in
            try await makeClosedStore(at: pooled, model: versions.versions[0]) { container in
                let context = container.newContext()
                for index in 0..<30 {
                    let note = try context.insertObject(entityName: "Note")
                    note.setValue(Self.note(writer: 1, index: index).title, forKey: "title")
                }
                try await context.save()
            }
            let before = try await StoreSnapshot(direct)
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: versions), logger: testLogger)
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: pooled, to: "Notes 2") }
            #expect(error?.code == .needsDirectConnection)
            #expect(error?.message.contains("pooler in transaction mode") == true, "\(String(describing: error))")
            #expect(error?.hint?.contains("directly") == true)
            try await expectUnchanged(direct, since: before)
            let plan = try await migrator.migrateStore(at: direct, to: "Notes 2")
            #expect(plan.steps.count == 1)
            let count = try await withOpenStore(pooled, model: versions.versions[1]) { container in
                try await container.newContext().count(for: FetchRequest(entityName: "Note"))
            }
            #expect(count == 30)
        }
    }

    /// Notes → Notes 2 through a migration manager of the app's: a streamed step, which
    /// writes a new schema and swaps it in at its end, leaving the store as it was meanwhile.
    enum StreamedNotesVersion: String, MigrationVersion, CaseIterable {
        case v1 = "Notes"
        case v2 = "Notes 2"

        var modelName: String { rawValue }
        var migrationManagerType: MigrationManager.Type { SelfContainedStreamingManager.self }
        func nextVersion() -> StreamedNotesVersion? { self == .v1 ? .v2 : nil }
    }

    /// A replica that reaches the store through the pooler only, finding it being migrated
    /// by one over the server itself, waits for that migration and finds the store current.
    @Test func aMigrationThroughThePoolerWaitsForOneOverTheServer() async throws {
        let versions = try Self.versions()
        let streamed = try MigrationChain(StreamedNotesVersion.self, models: versions)
        try await TestPgBouncer.withDatabase(mode: .transaction) { pooled, direct in
            try await makeClosedStore(at: direct, model: versions.versions[0]) { container in
                let context = container.newContext()
                for index in 0..<20 { try context.insertObject(entityName: "Note").setValue(.integer(Int64(index)), forKey: "cents") }
                try await context.save()
            }
            // The migration over the server holds its lock, paused in the middle of its step
            // (the store still at Notes), until the replica is waiting.
            let release = DispatchSemaphore(value: 0)
            let direct = direct
            let holding = LogRecorder()
            let holder = Task {
                try await ProgressiveMigrator(chain: streamed, logger: holding.logger) { checkpoint in
                    guard case .stageFinished(step: 1, stage: .createInstances, _) = checkpoint else { return }
                    _ = release.wait(timeout: .now() + 120)
                }.migrateStore(at: direct, to: "Notes 2")
            }
            // The replica starts once the lock is held: with none held, it would be refused.
            try await holding.waitFor("the holder migrating under its lock") { $0.contains("migrating store") }
            let log = LogRecorder()
            let replica = Task {
                try await ProgressiveMigrator(chain: MigrationChain(models: versions), logger: log.logger).migrateStore(at: pooled, to: "Notes 2")
            }
            try await log.waitFor("the replica waiting") { $0.contains("waiting for another migration of the store to finish") }
            release.signal()
            #expect(try await holder.value.steps.count == 1)
            let waited = try await replica.value
            #expect(waited.isEmpty || waited.steps.count == 1)
            let metadata = try await PersistentStore.metadata(at: pooled)
            #expect(versions.versions[1].isCompatible(with: metadata))
        }
    }

    /// In session mode a client keeps its server session, as over a direct connection: the
    /// URL says so, statements stay prepared, and a migration through it holds its lock.
    @Test func aSessionPoolerWorksAsTheServerItself() async throws {
        let versions = try Self.versions()
        try await TestPgBouncer.withDatabase(mode: .session) { pooledDatabase, _ in
            guard case .postgres(var configuration) = pooledDatabase.kind else { return }
            configuration.poolMode = .session
            let pooled = StoreURL.postgres(configuration)
            let session = try PostgresConnection(configuration: configuration)
            #expect(session.keepsSession)
            try await makeClosedStore(at: pooled, model: versions.versions[0]) { container in
                let context = container.newContext()
                try context.insertObject(entityName: "Note").setValue(.string("Smørrebrød"), forKey: "title")
                try await context.save()
            }
            let plan = try await ProgressiveMigrator(chain: MigrationChain(models: versions), logger: testLogger).migrateStore(
                at: pooled,
                to: "Notes 2"
            )
            #expect(plan.steps.count == 1)
            #expect(try await storeRows(pooled, "SELECT ztitle FROM znote") == [[.text("Smørrebrød")]])
        }
    }

    /// Statement pooling runs no transactions, which a store needs: named in the URL, it is
    /// refused as the URL is read; found out (PgBouncer refuses the first transaction), the
    /// open fails saying what the pooler is and what to point the URL at.
    @Test func aStatementPoolerIsRefusedAtOpen() async throws {
        let error = #expect(throws: StoreError.self) { try StoreURL("postgres://shop@127.0.0.1:6432/shop?pool_mode=statement") }
        #expect(error?.message.contains("runs no transactions") == true, "\(String(describing: error))")
        #expect(error?.hint?.contains("transaction or session mode") == true)
        let model = try ModelFixtures.model(Self.notes)
        try await TestPgBouncer.withDatabase(mode: .statement) { pooled, direct in
            let opening = await #expect(throws: (any Error).self) {
                _ = try await PersistentContainer.open(model: model, store: pooled, options: .createIfMissing, logger: testLogger)
            }
            #expect("\(String(describing: opening))".contains("statement pooling mode"), "\(String(describing: opening))")
            #expect("\(String(describing: opening))".contains("point the store URL at a pooler in transaction or session mode"))
            let tables = try await storeRows(direct, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            #expect(tables == [[.integer(0)]])
        }
    }

    /// A URL that says `pool_mode=session` for a pooler in transaction mode: the second
    /// client meets the first one's prepared statement on the same server session, and the
    /// error says what the pooler does and what to write.
    @Test func aPoolerTakenForASessionOneIsNamedInTheError() async throws {
        try await TestPgBouncer.withDatabase(mode: .transaction) { pooled, _ in
            guard case .postgres(var configuration) = pooled.kind else { return }
            configuration.poolMode = .session
            let first = try PostgresConnection(configuration: configuration)
            _ = try first.scalar(rawSQL: "SELECT $1::int", [.integer(1)])
            let second = try PostgresConnection(configuration: configuration)
            let error = #expect(throws: DatabaseError.self) { _ = try second.scalar(rawSQL: "SELECT $1::int", [.integer(2)]) }
            #expect(error?.message.contains("pool_mode=transaction") == true, "\(String(describing: error))")
        }
    }
}
