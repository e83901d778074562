import BookStoreTesting
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import BookStore
@_spi(Testing) @testable import Persistence

/// `migrateStoreOnline` while a process of the previous release writes the store through
/// the framework at its version, in every phase: before the copy, between the copy and the
/// bulk migration, during the catch-up, just before the cut-over. The migrated store holds,
/// row for row, what the design makes of the store's last state before the cut-over
/// (``ExpectedBookStore``, read while the writers are held off), nothing is left beside
/// it, and the writer's next statement is told the store was migrated.
///
/// PostgreSQL only: a SQLite store is migrated by the one process that serves it, and an
/// online migration of one is refused (tested below).
@Suite(.serialized) struct OnlineMigrationTests {
    static let books = 300
    /// The phases' matrix runs on stores of several batches (1 000 rows at the default
    /// batch size) of publications and more of pages, so the copy, the bulk migration and
    /// the rounds each run whole batches and a partial one, as a real store's do.
    static let batchSizedBooks = 2_500

    @Test(arguments: [2, 4])
    func writesMadeInEveryPhaseAreInTheMigratedStore(from version: Int) async throws {
        try await TestEngine.postgres.withSeededStore(books: Self.batchSizedBooks, version: version) { url in
            let writer = try await PreviousRelease(url, version: version)
            let expected = Mutex<ExpectedBookStore?>(nil)
            let phases = Mutex<[OnlineMigrationPhase]>([])
            var options = OnlineMigrationOptions()
            options.changesLeftForCutOver = 0
            options.phaseObserver = { phase in
                phases.withLock { $0.append(phase) }
                switch phase {
                case .captureInstalled:
                    try await writer.insertPublication(title: "Ünïcode before the copy", price: 12.34, pages: 3)
                    try await writer.update(nth: 1, title: "Retitled before the copy", price: 0.99)
                case .copied:
                    try await writer.deletePublication(nth: 2)
                    try await writer.movePage(of: 3, to: 4)
                    try await writer.update(nth: 5, title: "Ça coûte 19,99 €", price: 19.99, clearingLastName: true)
                case .bulkMigrated:
                    try await writer.insertPublication(title: "After the bulk — 新しい本", price: 7.5, pages: 2)
                    try await writer.retextPages(of: 6, text: nil)
                case .caughtUp(round: 1, _):
                    try await writer.update(nth: 7, title: "During the catch-up", price: 1_000)
                    try await writer.deletePage(of: 8)
                case .cutOverLocking(attempt: 1):
                    try await writer.insertPublication(title: "Just before the cut-over", price: 0.01, pages: 1)
                    try await writer.update(nth: 9, title: "Last word", price: 3.33)
                case .cutOverLocked:
                    // The writers are held off: this is the store's last state at its version.
                    let state = try await ExpectedBookStore.migrating(url, from: version, to: 5)
                    expected.withLock { $0 = state }
                default:
                    break
                }
            }
            let migrator = try BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger)
            let plan = try await migrator.migrateStoreOnline(at: url, options: options)
            #expect(plan.targetVersion.name == "BookStore 5")

            // Every phase the test writes in was seen, in this order (a round's phases may come again).
            let seen = phases.withLock { $0 }.map(Self.phaseName)
            let everyPhase = [
                "capture installed", "store copied", "copy migrated", "round 1 migrated", "round 1 caught up", "cut-over attempt 1",
                "cut-over locked",
            ]
            #expect(Self.inOrder(everyPhase, in: seen), "\(seen)")
            let state = try #require(expected.withLock { $0 }, "the cut-over never held the writers off: \(seen)")
            try await expectStore(url, atVersion: 5, holds: state)
            try await expectNoLeftovers(url)
            // Each phase's writes, by what the test wrote (not only through the expected store).
            let migratedTitles = Set(
                try await PersistentStore.inspect(url) { try $0.rows("SELECT ZTITLE FROM ZPUBLICATION").compactMap { $0[0].text } }
            )
            for title in [
                "Ünïcode before the copy", "Retitled before the copy", "Ça coûte 19,99 €", "After the bulk — 新しい本", "During the catch-up",
                "Just before the cut-over", "Last word",
            ] {
                #expect(migratedTitles.contains(title), "the write of '\(title)' is not in the migrated store")
            }

            // The previous release's next save says what happened, even one that would fit
            // the new tables (BookStore 4's new publication and pages are BookStore 5's
            // without a synopsis), and writes nothing.
            let error = await #expect(throws: StoreError.self) {
                try await writer.insertPublication(title: "Written after the cut-over", price: 2.5, pages: 1)
            }
            #expect(error?.code == .migratedSinceOpened, "\(String(describing: error))")
            let titles = try await PersistentStore.inspect(url) {
                try $0.rows("SELECT ZTITLE FROM ZPUBLICATION WHERE ZTITLE = 'Written after the cut-over'").count
            }
            #expect(titles == 0)
            await writer.close()
        }
    }

    /// A real second process of the previous release (`bookstore-benchmark write`: the
    /// framework at BookStore 2 or 4) inserts, updates and deletes publications and pages
    /// and moves pages between publications at 150 writes a second through the capture, the
    /// copy, the bulk migration and the catch-up (each phase waits for ten more of its
    /// writes), and stops before the cut-over. The migrated store equals what the design
    /// makes of its last state, read while the cut-over holds writers off. The writer also
    /// writes through PgBouncer in transaction mode, as replicas behind a pooler do, while
    /// the migration runs over the server itself.
    @Test(arguments: [(4, false), (2, false), (4, true)])
    func aWriterProcessOfThePreviousReleaseWritesThroughEveryPhase(from version: Int, throughPooler: Bool) async throws {
        try await TestEngine.postgres.withSeededStore(books: Self.batchSizedBooks, version: version) { url in
            let writerURL = throughPooler ? try await TestPgBouncer.url(for: url, mode: .transaction) : url
            let writer = try WatchedProcess(
                try BuiltCommand("bookstore-benchmark").executable(),
                [
                    "write", "--store", writerURL.description, "--model-version", "\(version)", "--rate", "150", "--seed", "\(version * 11)",
                ]
            )
            defer { writer.signal(SIGKILL) }
            @Sendable func acknowledged() -> Int { writer.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count }
            @Sendable func writes(_ more: Int) async throws {
                let target = acknowledged() + more
                let reached = await writer.waitFor { _ in acknowledged() >= target }
                try #require(reached, "the writer stopped writing: \(writer.output.suffix(2_000))")
            }
            try await writes(10)
            let expected = Mutex<ExpectedBookStore?>(nil)
            var options = OnlineMigrationOptions()
            options.phaseObserver = { phase in
                switch phase {
                case .copied, .bulkMigrated, .caughtUp(round: 1, _): try await writes(10)
                case .cutOverLocking(attempt: 1):
                    writer.signal(SIGTERM)
                    let status = await writer.waitUntilExit(timeout: .seconds(60))
                    #expect(status == 0, "\(writer.output.suffix(2_000))")
                case .cutOverLocked:
                    let state = try await ExpectedBookStore.migrating(url, from: version, to: 5)
                    expected.withLock { $0 = state }
                default: break
                }
            }
            try await BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger).migrateStoreOnline(at: url, options: options)

            let lines = writer.output.split(separator: "\n")
            let errors = lines.filter { $0.hasPrefix("error") }
            #expect(errors.isEmpty, "the writer's errors: \(errors.prefix(3).joined(separator: " | "))")
            #expect(acknowledged() >= 40, "\(lines.suffix(3))")
            let kinds = Set(lines.filter { $0.hasPrefix("ok ") }.compactMap { $0.split(separator: " ").dropFirst(2).first.map(String.init) })
            #expect(
                kinds.isSuperset(of: ["insert-publication", "update-publication", "delete-publication", "move-page", "retext-page", "delete-page"]),
                "\(kinds)"
            )
            let state = try #require(expected.withLock { $0 })
            try await expectStore(url, atVersion: 5, holds: state)
            try await expectNoLeftovers(url)
        }
    }

    /// Killed in each phase (as a killed process stops: nothing cleaned up, the sessions
    /// gone): the store is whole at its version with every write in, the previous release
    /// writes on (into the killed run's capture, which records on), and the next run
    /// removes what the killed one left and migrates every write.
    @Test(arguments: [
        "capture installed", "store copied", "copy migrated", "catch-up round 1: migrated, not merged", "catch-up round 1",
        "cut-over: writers held off", "swapping",
    ])
    func aRunKilledInAnyPhaseLeavesTheStoreWholeAndTheNextCompletes(phase: String) async throws {
        try await TestEngine.postgres.withSeededStore(books: Self.batchSizedBooks, version: 4) { url in
            let writer = try await PreviousRelease(url, version: 4)
            var options = OnlineMigrationOptions()
            options.changesLeftForCutOver = 0
            options.phaseObserver = { seen in
                if case .caughtUp = seen, phase == "catch-up round 1" { throw MigrationAbort() }
                if seen.description == phase { throw MigrationAbort() }
                if seen == .captureInstalled { try await writer.update(nth: 3, title: "Written while migrating", price: 4.56) }
            }
            let killedAtSwap = phase == "swapping"
            let migrator = ProgressiveMigrator(chain: try BookStoreMigration.chain(models: try loadModels()), logger: quietLogger) { checkpoint in
                if killedAtSwap, checkpoint == .cutOverSwapping { throw MigrationAbort() }
            }
            await #expect(throws: MigrationAbort.self) { try await migrator.migrateStoreOnline(at: url, options: options) }
            let left = try await StoreSnapshot(url).leftovers
            #expect(left.contains { $0.contains("_capturing_") }, "a killed run leaves its capture recording: \(left)")

            // Whole at version 4, and still writable by the previous release.
            try await writer.insertPublication(title: "Written after the kill", price: 8.88, pages: 2)
            try await writer.deletePage(of: 4)
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
            #expect(try await ExpectedBookStore.read(url, version: 4).publications.contains { $0.title == "Written after the kill" })

            var next = OnlineMigrationOptions()
            next.changesLeftForCutOver = 0
            try await BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger).migrateStoreOnline(at: url, options: next)
            try await expectStore(url, atVersion: 5, holds: expected)
            try await expectNoLeftovers(url)
            let triggers = try await PersistentStore.inspect(url) { try $0.scalar("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal")?.int64 }
            #expect(triggers == 0)
            await writer.close()
        }
    }

    /// A transaction of the previous release that holds a table past the cut-over's lock
    /// timeout: the cut-over lets go (readers never queue behind it longer), catches up and
    /// tries again; its write, committed meanwhile, is in the migrated store.
    @Test func theCutOverTriesAgainWhileAWriteHoldsATable() async throws {
        try await TestEngine.postgres.withSeededStore(books: Self.books, version: 4) { url in
            let holder = Mutex<HeldTransaction?>(nil)
            let expected = Mutex<ExpectedBookStore?>(nil)
            var options = OnlineMigrationOptions()
            options.cutOverLockTimeout = .milliseconds(200)
            options.phaseObserver = { phase in
                // Once the capture is in: a write in flight holds its install off, as it should.
                if phase == .bulkMigrated {
                    let held = try await HeldTransaction(url, "UPDATE zpage SET ztext = 'held across a cut-over attempt' WHERE z_pk = 1")
                    holder.withLock { $0 = held }
                }
                if phase == .cutOverLocking(attempt: 3) { try await holder.withLock { $0 }?.commit() }
                if phase == .cutOverLocked {
                    let state = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
                    expected.withLock { $0 = state }
                }
            }
            let log = LogRecorder()
            try await BookStoreMigration.migrator(models: try loadModels(), logger: log.logger).migrateStoreOnline(at: url, options: options)
            let retries = log.all.filter { $0.contains("kept the store's tables longer than the cut-over waits") }
            #expect(retries.count == 2, "\(log.all)")
            let state = try #require(expected.withLock { $0 })
            #expect(state.tables["ZPAGE"]?.contains { $0.contains("held across a cut-over attempt") } == true)
            try await expectStore(url, atVersion: 5, holds: state)
            try await expectNoLeftovers(url)
        }
    }

    /// Held for every attempt: the migration gives up with storeBusy, the store as it was,
    /// and what it made removed once the transaction ends.
    @Test func aCutOverThatNeverHasTheLockGivesUpAndLeavesTheStore() async throws {
        try await TestEngine.postgres.withSeededStore(books: Self.books, version: 4) { url in
            let expected = try await ExpectedBookStore.actual(url, version: 4)
            let holder = try await HeldTransaction(url, "SELECT z_pk FROM zpublication WHERE z_pk = 1 FOR SHARE")
            var options = OnlineMigrationOptions()
            options.cutOverLockTimeout = .milliseconds(100)
            options.cutOverAttempts = 2
            let log = LogRecorder()
            let migrator = try BookStoreMigration.migrator(models: try loadModels(), logger: log.logger)
            let attempts = options
            let outcome = await withTaskGroup(of: (any Error)?.self) { group in
                group.addTask {
                    do { try await migrator.migrateStoreOnline(at: url, options: attempts) } catch { return error }
                    return nil
                }
                // The capture's triggers go with the run; dropping them waits for the
                // transaction, which ends once the last attempt has said it gave way.
                group.addTask {
                    do {
                        try await log.waitFor("the second attempt given way") {
                            $0.contains("kept the store's tables longer than the cut-over waits")
                                && $0.contains("persistence.migration.attempt=2 of 2")
                        }
                    } catch {
                        try? await holder.commit()
                        return error
                    }
                    do { try await holder.commit() } catch { return error }
                    return nil
                }
                var failure: (any Error)?
                for await result in group where result != nil { failure = result }
                return failure
            }
            let error = outcome as? MigrationError
            #expect(error?.code == .storeBusy, "\(String(describing: outcome))")
            #expect(error?.message.contains("2 attempts waited 0.1 seconds each") == true, "\(String(describing: error))")
            #expect(error?.hint?.contains("the store is as it was, at model version 'BookStore 4'") == true)
            try await expectStore(url, atVersion: 4, holds: expected)
            try await expectNoLeftovers(url)
        }
    }

    /// `maximumRowsPerSecond` paces the copy, the bulk and the rounds: 304 publications and
    /// 612 pages copied at 1 000 rows a second take 0.9 s at least (an unpaced run of this
    /// store takes half that), and the result is what it would be unpaced.
    @Test func aPacedMigrationTakesItsTimeAndMigratesAlike() async throws {
        try await TestEngine.postgres.withSeededStore(books: Self.books, version: 4) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
            let copied = try await PersistentStore.inspect(url) { connection in
                (try connection.scalar("SELECT count(*) FROM ZPUBLICATION")?.int64 ?? 0)
                    + (try connection.scalar("SELECT count(*) FROM ZPAGE")?.int64 ?? 0)
            }
            var options = OnlineMigrationOptions()
            options.maximumRowsPerSecond = 1_000
            let started = ContinuousClock.now
            try await BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger).migrateStoreOnline(at: url, options: options)
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(copied * 1_000 / 1_000 - 50), "\(copied) rows copied at 1 000 a second in \(elapsed)")
            try await expectStore(url, atVersion: 5, holds: expected)
            try await expectNoLeftovers(url)
        }
    }

    /// A policy that may read the stores (it does not say otherwise) migrates an object
    /// from more than the object: a round could not migrate it again on its own. Refused
    /// before the store is locked, naming the policy and the step, the store as it was.
    @Test func aPlanWhosePolicyReadsTheStoresIsRefused() async throws {
        final class ReadingPolicy: EntityMigrationPolicy, @unchecked Sendable {}
        var policies = MigrationPolicies()
        policies.register(ReadingPolicy.self, as: "PublicationToPublicationMigrationPolicy")
        let models = try loadModels()
        let chain = try MigrationChain(BookStoreVersion.self, models: models.versions, mappingModels: models.mappingModels, policies: policies)
        try await TestEngine.postgres.withSeededStore(books: 20, version: 3) { url in
            let before = try await StoreSnapshot(url)
            let error = await #expect(throws: MigrationError.self) {
                try await ProgressiveMigrator(chain: chain, logger: quietLogger).migrateStoreOnline(at: url)
            }
            #expect(error?.code == .cannotMigrateOnline)
            #expect(
                error?.message.contains(
                    "the policy PublicationToPublicationMigrationPolicy of PublicationToPublication in BookStore 3 → BookStore 4 may fetch from the stores"
                ) == true,
                "\(String(describing: error))"
            )
            #expect(error?.hint?.contains("migrate offline") == true)
            try await expectUnchanged(url, since: before)
        }
    }

    /// A store in a schema whose name is long: the shadows of the migration run on the
    /// copy are named from the copy's name, cut and digested. Killed in the bulk run (inside
    /// the copy's own streamed step), the next run finds and removes all of them.
    @Test func aKilledRunBesideALongSchemaNameLeavesNothingAfterTheNext() async throws {
        try await TestPostgres.withDatabase { base in
            var configuration = try #require((base.engine as? PostgresEngine)?.configuration)
            configuration.schema = "bücherei_" + String(repeating: "x", count: 30)
            let url = StoreURL.postgres(configuration)
            _ = try await StoreAdministration(models: try loadModels(), logger: quietLogger).seed(
                url,
                version: 4,
                count: 3_000,
                catalogue: try loadCatalogue()
            )
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
            // In batches of 20 the publications come in chunks of 200: the tenth one ends at 2 000.
            let chain = try BookStoreMigration.chain(models: try loadModels())
            let migrator = ProgressiveMigrator(chain: chain, batchSize: 20, logger: quietLogger) { checkpoint in
                if case .rowsCreated(_, "PublicationToPublication", 2_000) = checkpoint { throw MigrationAbort() }
            }
            await #expect(throws: MigrationAbort.self) { try await migrator.migrateStoreOnline(at: url) }
            let left = try await Self.otherSchemas(than: configuration.schema, at: url)
            #expect(left.count >= 3, "a capture, the copy and the copy's step output: \(left)")
            try await BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger).migrateStoreOnline(at: url)
            try await expectStore(url, atVersion: 5, holds: expected)
            #expect(try await Self.otherSchemas(than: configuration.schema, at: url).isEmpty)
        }
    }

    /// Writers that keep pace with the rounds: as many changes wait after each round as it
    /// took, round after round, or unevenly (one change in a round, two in the next, so
    /// that more may wait than the last round took, yet no more than twice the most a
    /// recent round took). The cut-over begins with about a round's worth left, rather than
    /// give up as if they outpaced the rounds (as both earlier rules did: the first under
    /// the load of a full test run with a writer process at 150 writes a second, the second
    /// in a fresh-clone test run's writer-process test).
    @Test(arguments: [false, true])
    func writersKeepingPaceWithTheRoundsGetTheCutOver(unevenly: Bool) async throws {
        try await TestEngine.postgres.withSeededStore(books: Self.books, version: 4) { url in
            let writer = try await PreviousRelease(url, version: 4)
            let expected = Mutex<ExpectedBookStore?>(nil)
            let cuttingOver = Mutex(false)
            let roundsWrittenIn = Mutex<[Int]>([])
            var options = OnlineMigrationOptions()
            options.changesLeftForCutOver = 0
            options.maximumRoundsWithoutProgress = 3
            options.phaseObserver = { phase in
                switch phase {
                case .bulkMigrated:
                    try await writer.update(nth: 1, title: "Erste Runde", price: 1.01)
                case .roundMigrated(let round) where !cuttingOver.withLock({ $0 }):
                    // Written while the round runs: it waits when the round has committed.
                    // (Not in the cut-over's last rounds, which hold writers off.)
                    for write in 0..<(unevenly && round % 2 == 0 ? 2 : 1) {
                        try await writer.update(nth: (round + write) % 10 + 2, title: "Runde \(round).\(write)", price: Double(round) + 0.5)
                    }
                    roundsWrittenIn.withLock { $0.append(round) }
                case .cutOverLocking:
                    cuttingOver.withLock { $0 = true }
                case .cutOverLocked:
                    let state = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
                    expected.withLock { $0 = state }
                default: break
                }
            }
            try await BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger).migrateStoreOnline(at: url, options: options)
            // Rounds ran with the writer keeping pace, round after round (unevenly: the second
            // round's two changes after the first's one).
            let rounds = roundsWrittenIn.withLock { $0 }
            #expect(rounds.count >= 2, "the writer kept pace with \(rounds.count) rounds: \(rounds)")
            try await expectStore(url, atVersion: 5, holds: try #require(expected.withLock { $0 }))
            // The last round's writes, by the titles the test gave them.
            let last = try #require(rounds.last)
            let titles = Set(
                try await PersistentStore.inspect(url) {
                    try $0.rows("SELECT ZTITLE FROM ZPUBLICATION WHERE ZTITLE LIKE 'Runde %'").compactMap { $0[0].text }
                }
            )
            for write in 0..<(unevenly && last % 2 == 0 ? 2 : 1) {
                #expect(titles.contains("Runde \(last).\(write)"), "\(titles.sorted())")
            }
            try await expectNoLeftovers(url)
            await writer.close()
        }
    }

    /// Writers that outpace full rounds (four changes arrive while a round takes two): the
    /// backlog grows past what a round takes, and the migration gives up, the store as it
    /// was with every write, rather than hold the writers off for the whole backlog.
    @Test func writersOutpacingFullRoundsGetStoreBusy() async throws {
        try await TestEngine.postgres.withSeededStore(books: Self.books, version: 4) { url in
            let writer = try await PreviousRelease(url, version: 4)
            var options = OnlineMigrationOptions()
            options.changesPerRound = 2
            options.changesLeftForCutOver = 0
            options.maximumRoundsWithoutProgress = 3
            options.phaseObserver = { phase in
                if phase == .bulkMigrated { try await writer.update(nth: 1, title: "Erste Runde", price: 1.01) }
                guard case .roundMigrated(let round) = phase else { return }
                for write in 0..<4 {
                    try await writer.update(nth: write + 2, title: "Runde \(round).\(write)", price: Double(round) + 0.75)
                }
            }
            let error = await #expect(throws: MigrationError.self) {
                try await BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger).migrateStoreOnline(at: url, options: options)
            }
            #expect(error?.code == .storeBusy, "\(String(describing: error))")
            #expect(error?.message.contains("faster than the online migration catches up") == true, "\(String(describing: error))")
            #expect(try await PersistentStore.metadata(at: url).modelVersionName == "BookStore 4")
            // The last round's four writes at least (earlier ones may be written over).
            let written = try await PersistentStore.inspect(url) {
                try $0.scalar("SELECT count(*) FROM zpublication WHERE ztitle LIKE 'Runde %'")?.int64
            }
            #expect((written ?? 0) >= 4, "the writes made while the rounds ran are not in the store")
            try await expectNoLeftovers(url)
            await writer.close()
        }
    }

    /// Killed once the cut-over committed, before the old tables and the capture were
    /// dropped: the store is migrated, and the next migration of the current store (online
    /// or not) removes what the killed run left.
    @Test(arguments: [true, false])
    func aRunKilledAfterItsCutOverLeavesItsLeftoversToTheNext(online: Bool) async throws {
        try await TestEngine.postgres.withSeededStore(books: Self.books, version: 4) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
            let migrator = ProgressiveMigrator(chain: try BookStoreMigration.chain(models: try loadModels()), logger: quietLogger) { checkpoint in
                if checkpoint == .cutOverCommitted { throw MigrationAbort() }
            }
            await #expect(throws: MigrationAbort.self) { try await migrator.migrateStoreOnline(at: url) }
            try await expectStore(url, atVersion: 5, holds: expected)
            let left = try await StoreSnapshot(url).leftovers
            #expect(left.contains { $0.contains("_capturing_") } && left.contains { $0.contains("_replaced_") }, "\(left)")

            let next = try BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger)
            let plan = online ? try await next.migrateStoreOnline(at: url) : try await next.migrateStore(at: url)
            #expect(plan.isEmpty)
            try await expectStore(url, atVersion: 5, holds: expected)
            #expect(try await Self.otherSchemas(than: "public", at: url).isEmpty)
        }
    }

    /// The next release's replicas wait while one of them migrates: they go on the moment
    /// its cut-over (online) or last swap (offline) commits, not when it lets go of the
    /// migration lock after dropping the old tables and the change capture (at a million
    /// books, seconds). Here a second run begins waiting for the lock while the first
    /// migrates, and the first is then held after its commit until the second has
    /// returned; a third, starting then, does not wait either (what is beside the store is
    /// a live run's, not a killed one's). Before, both waited for the lock, and ended with
    /// storeBusy.
    ///
    /// PostgreSQL only: a run waiting for a SQLite store's lock does not read the file,
    /// which the migration may hold to itself (one process serves a SQLite store).
    @Test(arguments: [true, false])
    func aRunThatWaitedGoesOnOnceTheStoreIsMigrated(online: Bool) async throws {
        try await TestEngine.postgres.withSeededStore(books: Self.books, version: 4) { url in
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
            let (secondWaits, released) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let (events, reached) = AsyncStream.makeStream(of: String.self)
            let first = Mutex(true)
            let migrator = ProgressiveMigrator(chain: try BookStoreMigration.chain(models: try loadModels()), logger: quietLogger) { checkpoint in
                // Each blocks one thread of the pool, for as long as the test takes to go on.
                if case .rowsCreated = checkpoint,
                    first.withLock({
                        let was = $0
                        $0 = false
                        return was
                    })
                {
                    reached.yield("migrating")
                    _ = secondWaits.wait(timeout: .now() + 60)
                }
                if checkpoint == (online ? .cutOverCommitted : .migrated) {
                    reached.yield("committed")
                    _ = released.wait(timeout: .now() + 60)
                }
            }
            async let migrated = online ? migrator.migrateStoreOnline(at: url) : migrator.migrateStore(at: url)
            var stages = events.makeAsyncIterator()
            #expect(await stages.next() == "migrating")

            // Errors kept until the first run is let go: thrown now, they would leave it held.
            func attempt(_ body: () async throws -> MigrationPlan) async -> Result<MigrationPlan, any Error> {
                do { return .success(try await body()) } catch { return .failure(error) }
            }
            let log = LogRecorder()
            let waiting = ProgressiveMigrator(
                chain: try BookStoreMigration.chain(models: try loadModels()),
                lockTimeout: .seconds(10),
                logger: log.logger
            )
            async let second = attempt { online ? try await waiting.migrateStoreOnline(at: url) : try await waiting.migrateStore(at: url) }
            var began: (any Error)?
            do {
                try await log.waitFor("the second run waiting for the lock", timeout: .seconds(60)) { $0.contains("waiting for another migration") }
            } catch { began = error }
            secondWaits.signal()
            #expect(await stages.next() == "committed")
            let third = ProgressiveMigrator(
                chain: try BookStoreMigration.chain(models: try loadModels()),
                lockTimeout: .seconds(10),
                logger: quietLogger
            )
            let starting = await attempt { try await third.migrateStore(at: url) }
            let waited = await second
            released.signal()
            _ = try await migrated
            if let began { throw began }
            #expect(try waited.get().isEmpty, "the run that waited found the store migrated")
            #expect(try starting.get().isEmpty, "a run starting after the commit")
            try await expectStore(url, atVersion: 5, holds: expected)
            #expect(try await Self.otherSchemas(than: "public", at: url).isEmpty)
        }
    }

    /// Killed in the bulk run, after a write the copy does not hold: an offline migration
    /// next does not continue the killed run's step output (made from the copy, it lacks the
    /// write), removes it and the capture, and migrates the store with the write.
    @Test func anOfflineMigrationAfterAKilledOnlineRunStartsFromTheStore() async throws {
        try await TestEngine.postgres.withSeededStore(books: 3_000, version: 4) { url in
            let writer = try await PreviousRelease(url, version: 4)
            var options = OnlineMigrationOptions()
            options.phaseObserver = { phase in
                if phase == .copied { try await writer.update(nth: 2, title: "Nach der Kopie geschrieben", price: 5.55) }
            }
            // In batches of 20 the publications come in chunks of 200: the tenth one ends at 2 000.
            let chain = try BookStoreMigration.chain(models: try loadModels())
            let migrator = ProgressiveMigrator(chain: chain, batchSize: 20, logger: quietLogger) { checkpoint in
                if case .rowsCreated(_, "PublicationToPublication", 2_000) = checkpoint { throw MigrationAbort() }
            }
            await #expect(throws: MigrationAbort.self) { try await migrator.migrateStoreOnline(at: url, options: options) }
            await writer.close()
            let expected = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
            #expect(expected.tables["ZPUBLICATION"]?.contains { $0.contains("Nach der Kopie geschrieben") } == true)
            try await BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger).migrateStore(at: url)
            try await expectStore(url, atVersion: 5, holds: expected)
            #expect(try await Self.otherSchemas(than: "public", at: url).isEmpty)
            let triggers = try await PersistentStore.inspect(url) { try $0.scalar("SELECT count(*) FROM pg_trigger WHERE NOT tgisinternal")?.int64 }
            #expect(triggers == 0)
        }
    }

    /// PostgreSQL's autovacuum on a store table (its `SHARE UPDATE EXCLUSIVE` lock, held for
    /// as long as the vacuum takes: seconds to minutes on a large table) gives way to the
    /// capture's install and to the cut-over in one attempt. The server cancels an
    /// autovacuum only for a lock request that waited `deadlock_timeout`, longer than the
    /// cut-over may keep writers waiting: the migration took its locks in turn until the
    /// vacuum ended (seven and eight attempts, 9 s, in the benchmark at 1 M books).
    /// PostgreSQL only: autovacuum is its own.
    @Test func anAutovacuumOfAStoreTableGivesWayToTheCutOver() async throws {
        try await TestEngine.postgres.withSeededStore(books: 2_000, version: 4) { url in
            // A vacuum of the pages' table that runs at once and lasts (a pause after each page).
            try await Self.execute(
                [
                    """
                    ALTER TABLE zpage SET (autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0, \
                    autovacuum_vacuum_cost_delay = 100, autovacuum_vacuum_cost_limit = 1)
                    """,
                    "UPDATE zpage SET ztext = ztext WHERE z_pk % 2 = 0",
                    "ALTER SYSTEM SET autovacuum_naptime = '1s'",
                    "SELECT pg_reload_conf()",
                ],
                at: url
            )
            do {
                try await Self.migrateOnlineDuringAnAutovacuum(url)
            } catch {
                try? await Self.resetAutovacuumNaptime(url)
                throw error
            }
            try await Self.resetAutovacuumNaptime(url)
        }
    }

    static func resetAutovacuumNaptime(_ url: StoreURL) async throws {
        try await execute(["ALTER SYSTEM RESET autovacuum_naptime", "SELECT pg_reload_conf()"], at: url)
    }

    /// Runs `statements` one by one in a session of its own, outside a transaction.
    static func execute(_ statements: [String], at url: StoreURL) async throws {
        let configuration = try #require((url.engine as? PostgresEngine)?.configuration)
        let database = try await PostgresDatabase.open(configuration, readerCount: 0)
        do {
            try await database.writeWithoutTransaction { connection in
                for statement in statements { try connection.execute(rawSQL: statement) }
            }
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }

    static func migrateOnlineDuringAnAutovacuum(_ url: StoreURL) async throws {
        try await Self.waitForAutovacuum(of: "zpage", at: url)

        let writer = try await PreviousRelease(url, version: 4)
        let attempts = Mutex(0)
        let expected = Mutex<ExpectedBookStore?>(nil)
        var options = OnlineMigrationOptions()
        options.changesLeftForCutOver = 0
        options.cutOverAttempts = 3
        options.phaseObserver = { phase in
            switch phase {
            case .captureInstalled:
                // Cancelled, not waited for until it ended.
                let vacuumed = try await PersistentStore.inspect(url) {
                    try $0.scalar(
                        "SELECT (last_autovacuum IS NOT NULL)::int FROM pg_stat_user_tables WHERE schemaname = 'public' AND relname = 'zpage'"
                    )?.int64
                }
                #expect(vacuumed == 0, "the capture's install waited for the vacuum to end")
            case .bulkMigrated:
                // Every page written: the next vacuum, started at once, reads them all, slowly.
                try await Self.execute(["UPDATE zpage SET ztext = ztext"], at: url)
                try await Self.waitForAutovacuum(of: "zpage", at: url)
                try await writer.update(nth: 3, title: "Während des Vacuums", price: 4.44)
            case .cutOverLocking(let attempt): attempts.withLock { $0 = attempt }
            case .cutOverLocked:
                let state = try await ExpectedBookStore.migrating(url, from: 4, to: 5)
                expected.withLock { $0 = state }
            default: break
            }
        }
        try await BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger).migrateStoreOnline(at: url, options: options)
        #expect(attempts.withLock { $0 } == 1, "the cut-over waited for the vacuum")
        try await expectStore(url, atVersion: 5, holds: try #require(expected.withLock { $0 }))
        try await expectNoLeftovers(url)
        await writer.close()
    }

    /// A phase's name without its change count (which depends on the writes' timing).
    static func phaseName(_ phase: OnlineMigrationPhase) -> String {
        switch phase {
        case .captureInstalled: "capture installed"
        case .copied: "store copied"
        case .bulkMigrated: "copy migrated"
        case .roundMigrated(let round): "round \(round) migrated"
        case .caughtUp(let round, _): "round \(round) caught up"
        case .cutOverLocking(let attempt): "cut-over attempt \(attempt)"
        case .cutOverLocked: "cut-over locked"
        }
    }

    /// Whether `wanted` appears in `seen` in its order (other names between them).
    static func inOrder(_ wanted: [String], in seen: [String]) -> Bool {
        var rest = wanted[...]
        for name in seen where name == rest.first { rest = rest.dropFirst() }
        return rest.isEmpty
    }

    /// Whether an autovacuum of `table` runs in the store's database now.
    static func autovacuumRuns(on table: String, at url: StoreURL) async throws -> Bool {
        try await PersistentStore.inspect(url) { connection in
            try connection.scalar(
                rawSQL: """
                    SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'autovacuum worker' AND query LIKE $1
                    """,
                [.text("%.\(table)%")]
            )?.int64 ?? 0
        } > 0
    }

    static func waitForAutovacuum(of table: String, at url: StoreURL) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if try await autovacuumRuns(on: table, at: url) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("no autovacuum of \(table) began within a minute")
    }

    /// The schemas of the database other than PostgreSQL's own, `public` and `schema`.
    static func otherSchemas(than schema: String, at url: StoreURL) async throws -> [String] {
        try await PersistentStore.inspect(url) { connection in
            try connection.rows(
                rawSQL: """
                    SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname NOT IN ('public', 'information_schema', $1) ORDER BY nspname
                    """,
                [.text(schema)]
            ).compactMap { $0[0].text }
        }
    }

    @Test func aSQLiteStoreIsRefusedAndLeftAsItWas() async throws {
        try await TestEngine.sqlite.withSeededStore(books: 20, version: 4) { url in
            let before = try await ExpectedBookStore.actual(url, version: 4)
            let migrator = try BookStoreMigration.migrator(models: try loadModels(), logger: quietLogger)
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStoreOnline(at: url) }
            #expect(error?.code == .cannotMigrateOnline)
            #expect(error?.message.contains("a SQLite store cannot be migrated online") == true, "\(String(describing: error))")
            #expect(error?.hint?.contains("without --online") == true)
            try await expectStore(url, atVersion: 4, holds: before)
            try await expectNoLeftovers(url)
        }
    }
}

/// A transaction of another session, open until ``commit()``.
final class HeldTransaction: Sendable {
    let database: PostgresDatabase

    init(_ url: StoreURL, _ sql: String) async throws {
        let configuration = try #require((url.engine as? PostgresEngine)?.configuration)
        database = try await PostgresDatabase.open(configuration, readerCount: 0)
        try await database.writeWithoutTransaction { try $0.execute(rawSQL: "BEGIN; \(sql)") }
    }

    func commit() async throws {
        try await database.writeWithoutTransaction { try $0.execute("COMMIT") }
        await database.close()
    }
}

/// A process of the release before: the framework at the store's version, writing through
/// a context as the service does.
final class PreviousRelease: Sendable {
    let store: PersistentStore
    let context: ManagedObjectContext
    let version: Int
    var publication: String { version >= 3 ? "Publication" : "Book" }
    var owner: String { version >= 3 ? "publication" : "book" }

    init(_ url: StoreURL, version: Int) async throws {
        self.version = version
        store = try await PersistentStore.open(url, model: try loadModels().model(version: version), logger: quietLogger)
        context = ManagedObjectContext(store: store, logger: quietLogger)
    }

    func close() async {
        await store.close()
    }

    /// The `n`th publication by title (1-based), as the store holds it now.
    private func publication(nth n: Int) async throws -> ManagedObject {
        var request = FetchRequest(entityName: publication)
        request.sortDescriptors = [FetchRequest.SortDescriptor(key: "title")]
        request.fetchOffset = n - 1
        request.fetchLimit = 1
        return try #require(try await context.fetch(request).first)
    }

    private func pages(of object: ManagedObject) async throws -> [ManagedObject] {
        try await object.destinations(forKey: "pages").sorted { $0.objectID.primaryKey ?? 0 < $1.objectID.primaryKey ?? 0 }
    }

    func insertPublication(title: String, price: Double, pages: Int) async throws {
        let object = try context.insertObject(entityName: publication)
        object.setValue(.string(title), forKey: "title")
        object.setValue(.double(price), forKey: "price")
        if version >= 4 {
            object.setValue(.string("Zoë"), forKey: "firstName")
            object.setValue(.string("Brontë-Łukasiewicz"), forKey: "lastName")
        } else if version >= 2 {
            object.setValue(.string("Zoë Brontë-Łukasiewicz"), forKey: "author")
        }
        for number in 1...max(pages, 1) {
            let page = try context.insertObject(entityName: "Page")
            page.setValue(.integer(Int64(number)), forKey: "number")
            page.setValue(.string("Seite \(number) — “quoted”"), forKey: "text")
            page.setDestination(object, forKey: owner)
        }
        try await context.save()
    }

    func update(nth n: Int, title: String, price: Double, clearingLastName: Bool = false) async throws {
        let object = try await publication(nth: n)
        object.setValue(.string(title), forKey: "title")
        object.setValue(.double(price), forKey: "price")
        if clearingLastName {
            if version >= 4 { object.setValue(.null, forKey: "lastName") } else if version >= 2 { object.setValue(.null, forKey: "author") }
        }
        try await context.save()
    }

    func deletePublication(nth n: Int) async throws {
        context.delete(try await publication(nth: n))
        try await context.save()
    }

    func movePage(of from: Int, to: Int) async throws {
        let target = try await publication(nth: to)
        let page = try #require(try await pages(of: try await publication(nth: from)).first)
        page.setDestination(target, forKey: owner)
        try await context.save()
    }

    func retextPages(of n: Int, text: String?) async throws {
        for page in try await pages(of: try await publication(nth: n)) {
            page.setValue(text.map(AttributeValue.string) ?? .null, forKey: "text")
        }
        try await context.save()
    }

    func deletePage(of n: Int) async throws {
        let page = try #require(try await pages(of: try await publication(nth: n)).last)
        context.delete(page)
        try await context.save()
    }
}
