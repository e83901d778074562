import BookStore
import Foundation
import Logging
import Persistence

/// One object saved at a time, as a service's write requests save: a publication's price
/// updated, a publication inserted, each through ``ManagedObjectContext/save()`` and in a
/// transaction of hand-written SQL on the same store's database, in alternating blocks so
/// that both meet the same server and disk.
struct SavesBenchmark {
    let backend: any BenchmarkBackend
    let models: BookStoreModels
    let books: Int
    let saves: Int
    let logger: Logger
    /// Blocks of each kind: framework and hand-written saves take turns this many times.
    static let blocks = 10

    /// Medians of one save, in microseconds.
    struct Result: Encodable {
        struct Kind: Encodable {
            var kind: String
            var frameworkMicroseconds: Double
            var handWrittenMicroseconds: Double
            /// The framework's time over the hand-written one's: 1 is no overhead.
            var ratio: Double

            init(kind: String, framework: [Double], handWritten: [Double]) {
                self.kind = kind
                frameworkMicroseconds = median(framework).rounded(places: 1)
                handWrittenMicroseconds = median(handWritten).rounded(places: 1)
                ratio = (median(framework) / max(median(handWritten), 1e-9)).rounded(places: 2)
            }
        }

        var benchmark = "saves"
        var backend: String
        var books: Int
        var saves: Int
        var kinds: [Kind]

        func printReport() {
            print("[\(backend)] \(saves) saves of each kind, one object each, in a store of \(books) books (medians)")
            for kind in kinds {
                let line =
                    "  \(kind.kind.padding(toLength: 16, withPad: " ", startingAt: 0))"
                    + " framework \(kind.frameworkMicroseconds) µs  hand-written \(kind.handWrittenMicroseconds) µs  ratio \(kind.ratio)×"
                print(line)
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            if let data = try? encoder.encode(self), let json = String(data: data, encoding: .utf8) { print(json) }
        }
    }

    func run() async throws -> Result {
        let url = try await backend.newStore("saves")
        let administration = StoreAdministration(models: models, logger: logger)
        _ = try await administration.seed(url, version: MigrationBenchmark.lastVersion, count: books, catalogue: try Catalogue.load())
        let container = try await PersistentContainer.open(model: models.current, store: url, logger: logger)
        let context = container.newContext()
        // Each side updates publications of its own: a hand-written update bumps `Z_OPT`,
        // which the context's next save of the same object would take for a conflict.
        let publications = try await context.fetch(FetchRequest(entityName: "Publication"))
        let half = publications.count / 2
        guard half > 0 else { throw HTTPBenchmark.Failure("the store holds too few publications") }
        let database = try await backend.openDatabase(url)
        let hand = try await HandWrittenSaves.prepare(on: database, dialect: backend.dialect)

        var timings = (frameworkUpdates: [Double](), handUpdates: [Double](), frameworkInserts: [Double](), handInserts: [Double]())
        let perBlock = max(saves / Self.blocks, 1)
        var sequence = 0
        for _ in 0..<Self.blocks {
            for _ in 0..<perBlock {
                sequence += 1
                let publication = publications[sequence % half]
                publication.setValue(.double(Self.price(sequence)), forKey: "price")
                timings.frameworkUpdates.append(try await Self.microseconds { try await context.save() })
                let inserted = try context.insertObject(entityName: "Publication")
                inserted.setValue(.string("Saved by the framework \(sequence)"), forKey: "title")
                inserted.setValue(.double(Self.price(sequence)), forKey: "price")
                timings.frameworkInserts.append(try await Self.microseconds { try await context.save() })
            }
            for _ in 0..<perBlock {
                sequence += 1
                let key = publications[half + sequence % (publications.count - half)].objectID.primaryKey ?? 1
                timings.handUpdates.append(try await Self.microseconds { try await hand.updatePrice(of: key, to: Self.price(sequence)) })
                timings.handInserts.append(
                    try await Self.microseconds { try await hand.insert(title: "Saved by hand \(sequence)", price: Self.price(sequence)) }
                )
            }
        }
        await database.close()
        await container.store.close()
        return Result(
            backend: backend.name,
            books: books,
            saves: perBlock * Self.blocks,
            kinds: [
                .init(kind: "update a price", framework: timings.frameworkUpdates, handWritten: timings.handUpdates),
                .init(kind: "insert one", framework: timings.frameworkInserts, handWritten: timings.handInserts),
            ]
        )
    }

    /// A price with cents.
    static func price(_ sequence: Int) -> Double { Double(sequence % 900) + 0.99 }

    static func microseconds(_ work: () async throws -> Void) async throws -> Double {
        let started = ContinuousClock.now
        try await work()
        return (ContinuousClock.now - started).seconds * 1_000_000
    }
}

private func median(_ values: [Double]) -> Double {
    values.isEmpty ? 0 : values.sorted()[values.count / 2]
}

/// The same saves written by hand: the update bumps `Z_OPT` as Core Data does; the insert
/// counts its key in `Z_PRIMARYKEY` in its transaction.
struct HandWrittenSaves: Sendable {
    let database: any Database
    let entity: Int64
    let updateSQL: String
    let counterSQL: String
    let insertSQL: String

    static func prepare(on database: any Database, dialect d: any SQLDialect) async throws -> HandWrittenSaves {
        let entity = try await database.read { connection in
            try connection.scalar(
                rawSQL: "SELECT \(d.name("Z_ENT")) FROM \(d.name("Z_PRIMARYKEY")) WHERE \(d.name("Z_NAME")) = \(d.placeholder(1))",
                [.text("Publication")]
            )?.int64
        }
        guard let entity else { throw HTTPBenchmark.Failure("the store has no Publication entity") }
        return HandWrittenSaves(
            database: database,
            entity: entity,
            updateSQL: "UPDATE \(d.name("ZPUBLICATION")) SET \(d.name("ZPRICE")) = \(d.placeholder(1)), \(d.name("Z_OPT")) = \(d.name("Z_OPT")) + 1 "
                + "WHERE \(d.name("Z_PK")) = \(d.placeholder(2))",
            counterSQL:
                "UPDATE \(d.name("Z_PRIMARYKEY")) SET \(d.name("Z_MAX")) = \(d.name("Z_MAX")) + 1 WHERE \(d.name("Z_ENT")) = \(d.placeholder(1)) "
                + "RETURNING \(d.name("Z_MAX"))",
            insertSQL:
                "INSERT INTO \(d.name("ZPUBLICATION")) (\(d.name("Z_PK")), \(d.name("Z_ENT")), \(d.name("Z_OPT")), \(d.name("ZTITLE")), \(d.name("ZPRICE"))) "
                + "VALUES (\(d.placeholder(1)), \(d.placeholder(2)), 1, \(d.placeholder(3)), \(d.placeholder(4)))"
        )
    }

    func updatePrice(of key: Int64, to price: Double) async throws {
        let sql = updateSQL
        _ = try await database.write { try $0.run(rawSQL: sql, [.double(price), .integer(key)]) }
    }

    func insert(title: String, price: Double) async throws {
        let (counterSQL, insertSQL, entity) = (self.counterSQL, self.insertSQL, self.entity)
        try await database.write { connection in
            guard let key = try connection.scalar(rawSQL: counterSQL, [.integer(entity)])?.int64 else {
                throw HTTPBenchmark.Failure("Z_PRIMARYKEY has no Publication row")
            }
            try connection.run(rawSQL: insertSQL, [.integer(key), .integer(entity), .text(title), .double(price)])
        }
    }
}
