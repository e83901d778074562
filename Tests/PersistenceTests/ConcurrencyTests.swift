import Dispatch
import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import Persistence

/// Readers beside a writer, and many contexts saving at once.
@Suite("Concurrency")
struct ConcurrencyTests {
    /// Eight contexts, each changing its own book again and again at the same time: no
    /// save is refused as a conflict, since no two change the same row. A round counts only
    /// when two read-change-save cycles were under way at once; otherwise it runs again.
    @Test(arguments: TestBackend.allCases)
    func savesOfDifferentRowsAtOnceNeverConflict(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { (container: PersistentContainer) async throws in
            let setup = container.newContext()
            let books = try (0..<8).map { index in
                let book = try setup.insertObject(entityName: "Book")
                book.setValue(.string("Book \(index)"), forKey: "title")
                return book
            }
            try await setup.save()
            let ids = books.map(\.objectID)
            try await raceUntilOverlapping("saves of different rows") { _, overlap in
                let conflicts = try await withThrowingTaskGroup(of: Int.self) { group in
                    for id in ids {
                        group.addTask { try await Self.changePrice(of: id, times: 40, in: container, overlap: overlap) }
                    }
                    return try await group.reduce(0, +)
                }
                #expect(conflicts == 0, "\(conflicts) of 320 saves of rows no one else changed were refused as conflicts")
                let prices = try await container.newContext().fetch(FetchRequest(entityName: "Book")).compactMap {
                    $0.value(forKey: "price").doubleValue
                }
                #expect(prices.count == 8 && prices.allSatisfy { $0 == 39 })
            }
        }
    }

    /// Sets the book's price to 0, 1, … in a new context each time, each cycle inside
    /// `overlap`; returns how many saves were refused as conflicts.
    private static func changePrice(of id: ObjectID, times: Int, in container: PersistentContainer, overlap: RaceOverlap) async throws -> Int {
        var conflicts = 0
        for price in 0..<times {
            try await overlap.inside {
                let context = container.newContext()
                let book = try await context.existingObject(with: id)
                book.setValue(.double(Double(price)), forKey: "price")
                do {
                    try await context.save()
                } catch let error as StoreError where error.code == .conflict {
                    conflicts += 1
                }
            }
        }
        return conflicts
    }

    /// Not in memory: the in-memory store has one connection for everything, so a reader
    /// there waits for the writer by design.
    @Test(arguments: [TestBackend.sqlite, .postgres])
    func readersAreNotBlockedByAWriter(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let setup = container.newContext()
            for i in 1...5 {
                try setup.insertObject(entityName: "Book").setValue(.string("Committed \(i)"), forKey: "title")
            }
            try await setup.save()

            let (started, startedContinuation) = AsyncStream<Void>.makeStream()
            let readerDone = DispatchSemaphore(value: 0)
            let writerSawReader = Mutex(false)
            // A long write transaction: rows inserted, then held open until the reader is done.
            let writer = Task {
                try await container.store.database.write { connection in
                    for i in 0..<50 {
                        try connection.run(
                            rawSQL: connection.dialect.numberingPlaceholders(
                                "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZPRICE) VALUES (?, 2, 1, ?, 0)"
                            ),
                            [.integer(Int64(1000 + i)), .text("Uncommitted \(i)")]
                        )
                    }
                    startedContinuation.yield()
                    // Never forever: if the reader were blocked on us, give up and let the test fail.
                    let released = readerDone.wait(timeout: .now() + 60) == .success
                    writerSawReader.withLock { $0 = released }
                    try connection.run(rawSQL: "UPDATE Z_PRIMARYKEY SET Z_MAX = 1049 WHERE Z_NAME = 'Book'", [])
                }
            }
            for await _ in started { break }

            let reader = container.newContext()
            let books = try await reader.fetch(FetchRequest(entityName: "Book"))
            let count = try await reader.count(for: FetchRequest(entityName: "Book"))
            readerDone.signal()
            #expect(titles(books) == (1...5).map { "Committed \($0)" }, "the reader sees the last committed state")
            #expect(count == 5)

            try await writer.value
            #expect(writerSawReader.withLock { $0 }, "the reader finished while the write transaction was still open")
            #expect(try await container.newContext().count(for: FetchRequest(entityName: "Book")) == 55, "then the write committed")
        }
    }

    /// Twenty contexts save five books and pages each at once: every key is used once. A
    /// round counts only when two saves were under way at once; otherwise it runs again,
    /// with the keys after the last round's.
    @Test(arguments: TestBackend.allCases)
    func manyContextsSaveAtOnce(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let contexts = 20
            let booksEach = 5
            let perRound = Int64(contexts * booksEach)
            let rounds = try await raceUntilOverlapping("twenty saves") { round, overlap in
                try await withThrowingTaskGroup(of: [Int64].self) { group in
                    for c in 0..<contexts {
                        group.addTask {
                            let context = container.newContext()
                            var books: [ManagedObject] = []
                            for b in 0..<booksEach {
                                let book = try context.insertObject(entityName: "Book")
                                book.setValue(.string("r\(round)-c\(c)-b\(b)"), forKey: "title")
                                let page = try context.insertObject(entityName: "Page")
                                page.setValue(1, forKey: "number")
                                page.setDestination(book, forKey: "book")
                                books.append(book)
                            }
                            try await overlap.inside { try await context.save() }
                            return books.compactMap(\.objectID.primaryKey)
                        }
                    }
                    var keys: [Int64] = []
                    for try await batch in group {
                        #expect(batch.count == booksEach)
                        keys += batch
                    }
                    let before = Int64(round - 1) * perRound
                    #expect(keys.sorted() == Array(before + 1...before + perRound), "every key used once")
                }
            }
            let total = Int64(rounds) * perRound
            #expect(try await container.count("ZBOOK") == total)
            #expect(try await container.count("ZPAGE") == total)
            #expect(try await container.zMax("Book") == total)
            #expect(try await container.zMax("Page") == total)
            #expect(try await container.int("SELECT count(*) FROM ZPAGE p JOIN ZBOOK b ON b.Z_PK = p.ZBOOK WHERE b.ZTITLE IS NOT NULL") == total)
            let titles = try await container.sql("SELECT ZTITLE FROM ZBOOK").compactMap { $0[0].text }
            #expect(Set(titles).count == Int(total))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func concurrentUpdatesOfOneRowConflict(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let setup = container.newContext()
            let book = try setup.insertObject(entityName: "Book")
            book.setValue("Contended", forKey: "title")
            try await setup.save()
            let id = book.objectID
            // Every context reads version 1, then all try to write: exactly one wins.
            let contexts = (0..<10).map { _ in container.newContext() }
            var objects: [ManagedObject] = []
            for context in contexts { objects.append(try await context.existingObject(with: id)) }
            for (i, object) in objects.enumerated() { object.setValue(.string("writer \(i)"), forKey: "title") }
            let outcomes = await withTaskGroup(of: String?.self) { group in
                for (i, context) in contexts.enumerated() {
                    group.addTask {
                        do {
                            try await context.save()
                            return "writer \(i)"
                        } catch let error as StoreError where error.code == .conflict {
                            return nil
                        } catch {
                            return "unexpected \(error)"
                        }
                    }
                }
                var results: [String?] = []
                for await outcome in group { results.append(outcome) }
                return results
            }
            let winners = outcomes.compactMap { $0 }
            #expect(winners.count == 1, "\(winners)")
            #expect(try await container.sql("SELECT ZTITLE, Z_OPT FROM ZBOOK").map(\.values) == [[.text(winners.first ?? ""), .integer(2)]])
        }
    }
}
