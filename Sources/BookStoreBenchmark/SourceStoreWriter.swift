import BookStore
import Logging
import Persistence

/// Writes the benchmark's `BookStore 2` store: `books` books and two pages per book, the
/// seeder's generated books (``GeneratedBooks``: prices with cents, non-ASCII names, some
/// books without an author), made by SQL on the server (generated rows, no Swift per row).
struct SourceStoreWriter {
    let model: ManagedObjectModel
    let books: Int
    let logger: Logger

    func write(to url: StoreURL) async throws {
        // The framework creates the tables and metadata of an empty store of the version.
        let store = try await PersistentStore.open(url, model: model, options: .createIfMissing, logger: logger)
        let statements = GeneratedBooks.insertStatements(count: books, schema: store.schema)
        try await store.database.write { connection in
            for statement in statements { try connection.execute(rawSQL: statement) }
        }
        if store.schema.dialect is PostgresDialect {
            // Fresh statistics, as a store in use would have.
            try await store.database.writeWithoutTransaction { try $0.execute("ANALYZE") }
        } else if let database = store.engineDatabase as? SQLiteDatabase {
            try await database.checkpoint()
        }
        await store.close()
    }
}
