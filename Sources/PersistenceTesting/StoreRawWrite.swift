import Persistence

/// Runs `sql` (SQLite's spelling, `?` placeholders) on the store at `url` as another
/// program would, writing, past the framework: for tests that damage or change a store
/// from outside and look at what the framework then does.
///
/// ```swift
/// try await writeRawSQL(url, "ALTER TABLE ZPUBLICATION ADD COLUMN ZSTRAY TEXT")
/// ```
public func writeRawSQL(_ url: StoreURL, _ sql: String, _ arguments: [DatabaseValue] = []) async throws {
    switch url.kind {
    case .sqlite(let path):
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        _ = try connection.run(rawSQL: sql, arguments)
    case .postgres(let configuration):
        let database = try await PostgresDatabase.open(configuration, readerCount: 0)
        let spelt = PostgresDialect().numberingPlaceholders(sql)
        do {
            _ = try await database.write { try $0.run(rawSQL: spelt, arguments) }
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    case .memory:
        preconditionFailure("an in-memory store is not changed from outside")
    }
}

extension SQLDialect {
    /// `sql` with its `?` placeholders as this engine writes them (outside quotes): a test's
    /// SQL in SQLite's spelling, run on either engine.
    ///
    /// ```swift
    /// PostgresDialect().numberingPlaceholders("SELECT ? + ?") // "SELECT $1 + $2"
    /// ```
    public func numberingPlaceholders(_ sql: String) -> String {
        guard self is PostgresDialect else { return sql }
        var result = ""
        var count = 0
        var quote: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "?" {
                count += 1
                result += placeholder(count)
                continue
            }
            result.append(character)
        }
        return result
    }
}
