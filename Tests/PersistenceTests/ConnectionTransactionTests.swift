import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A connection's own transactions, on both engines: one commits, one that throws rolls
/// back, and a transaction inside another is refused.
@Suite struct ConnectionTransactionTests {
    @Test(arguments: TestEngine.allCases)
    func transactionsCommitRollBackAndDoNotNest(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let database: any Database =
                switch url.kind {
                case .postgres(let configuration): try await PostgresDatabase.open(configuration, readerCount: 0)
                case .sqlite(let path): try await SQLiteDatabase.open(path: path, mode: .readWriteCreate, readerCount: 0)
                case .memory: preconditionFailure("no in-memory engine here")
                }
            do {
                try await database.writeWithoutTransaction { connection in
                    try connection.execute("CREATE TABLE t (i integer)")
                    _ = try connection.transaction { try connection.run(rawSQL: "INSERT INTO t VALUES (1)", []) }
                    struct Failure: Error {}
                    #expect(throws: Failure.self) {
                        try connection.transaction {
                            try connection.run(rawSQL: "INSERT INTO t VALUES (2)", [])
                            throw Failure()
                        }
                    }
                    #expect(throws: DatabaseError.self) {
                        try connection.transaction { try connection.transaction { () } }
                    }
                    #expect(try connection.rows("SELECT i FROM t").map(\.values) == [[.integer(1)]])
                }
            } catch {
                await database.close()
                throw error
            }
            await database.close()
        }
    }
}
