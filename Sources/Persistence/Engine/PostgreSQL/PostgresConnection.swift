import CLibPQ
import Dispatch
import Foundation
import Synchronization

/// A libpq connection. Not thread-safe, and every call blocks until the server answers:
/// ``PostgresDatabase`` gives each connection a serial queue of its own and runs every
/// call there, never on the cooperative thread pool.
///
/// ```swift
/// let connection = try PostgresConnection(configuration: try PostgresConfiguration(url: "postgres://shop@localhost/shop"))
/// try connection.run("INSERT INTO zbook (z_pk, z_ent, z_opt, ztitle) VALUES ($1, 2, 1, $2)", [.integer(1), .text("The first book")])
/// let title = try connection.scalar("SELECT ztitle FROM zbook WHERE z_pk = $1", [.integer(1)])?.text
/// ```
///
/// Statements run through ``run(_:_:)`` and ``query(_:_:_:)`` are prepared once per SQL
/// (and argument types) and reused. Every session works in UTC with ISO dates, and only
/// warnings and errors reach the client.
///
/// Behind a connection pooler that hands each transaction to whichever server session is
/// free (``PostgresConfiguration/PoolMode/transaction``), nothing may outlive a
/// transaction: statements go unnamed (parsed with each run), every transaction sets the
/// store's schema itself (`SET LOCAL`), and a statement outside a transaction runs in one of
/// its own (``keepsSession``).
package final class PostgresConnection: DatabaseConnection, InterruptibleConnection {
    let handle: OpaquePointer
    package let configuration: PostgresConfiguration
    package var dialect: any SQLDialect { PostgresDialect() }
    /// Sessions that refuse writes: the store was opened read-only.
    let readOnly: Bool
    /// Whether commits wait for the server's WAL to reach disk (see ``PostgresDatabase/open(_:readerCount:readOnly:isDurable:)``).
    let isDurable: Bool
    private var statements: [PostgresStatement.Key: PostgresStatement] = [:]
    /// Prepared keys, oldest first, so the cache can drop the oldest when it is full.
    private var statementOrder: [PostgresStatement.Key] = []
    private var statementCounter = 0
    /// Whether every statement of this connection runs in the same server session: a direct
    /// connection, or a pooler in session mode. Otherwise (a pooler in transaction mode) no
    /// statement is prepared by name and no setting is made for the session.
    package private(set) var keepsSession = true
    /// Behind a pooler in transaction mode: the result format each statement takes (binary
    /// where every column's type has a binary reader), learnt from its first run; kept here,
    /// not on a server session.
    private var resultFormats: [PostgresStatement.Key: Int32] = [:]
    /// Whether ``close()`` ran; a closed connection refuses every call.
    private(set) var isClosed = false
    /// What `PQcancel` needs to stop the session's running statement from another thread
    /// (a `PGcancel`), renewed when the session is.
    private let canceller = Mutex<Canceller?>(nil)

    /// libpq's `PGcancel`, usable from any thread and freed with the last reference to it,
    /// so a cancel request still on its way outlives a reset or a close of the session.
    private final class Canceller: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { PQfreeCancel(pointer) }

        /// Sends the request on a connection of its own: on a queue, since connecting may
        /// take as long as the server takes to answer, and a cancelling task must not wait.
        func send() {
            DispatchQueue.global().async {
                var reason = [CChar](repeating: 0, count: 256)
                _ = PQcancel(self.pointer, &reason, Int32(reason.count))
            }
        }
    }
    /// Set by ``interrupt()``: statements started afterwards are refused, since `PQcancel`
    /// stops only the one running at the time.
    private let isInterrupted = Atomic<Bool>(false)

    /// How many prepared statements a connection keeps before deallocating the oldest.
    static let statementCacheCapacity = 512

    /// Connects, waiting at most the configuration's `connect_timeout`.
    ///
    /// - Throws: ``DatabaseError`` naming the server, database and user and libpq's reason
    ///   (refused, timed out, authentication failed, no such database).
    package init(configuration: PostgresConfiguration, readOnly: Bool = false, isDurable: Bool = true) throws(DatabaseError) {
        let parameters = configuration.connectionParameters
        let keywords = parameters.map { strdup($0.0) } + [nil]
        let values = parameters.map { strdup($0.1) } + [nil]
        defer {
            for pointer in keywords + values { free(pointer) }
        }
        let connection = keywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { keywordPointers in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { valuePointers in
                PQconnectdbParams(keywordPointers.baseAddress, valuePointers.baseAddress, 0)
            }
        }
        guard let connection else {
            throw DatabaseError(resultCode: 0, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let reason = Self.tidy(String(cString: PQerrorMessage(connection)))
            PQfinish(connection)
            throw Self.connectionError(configuration, reason: reason)
        }
        self.handle = connection
        self.configuration = configuration
        self.readOnly = readOnly
        self.isDurable = isDurable
        renewCanceller()
        try startSession()
    }

    deinit {
        close()
    }

    /// Ends the session now rather than when the last reference goes.
    func close() {
        guard !isClosed else { return }
        statements.removeAll()
        statementOrder.removeAll()
        canceller.withLock { $0 = nil }
        PQfinish(handle)
        isClosed = true
    }

    private func renewCanceller() {
        let new = PQgetCancel(handle).map(Canceller.init)
        canceller.withLock { $0 = new }
    }

    func interrupt() {
        isInterrupted.store(true, ordering: .releasing)
        // The server stops the statement with `query_canceled` (57014); a request that
        // arrives when nothing runs does nothing.
        canceller.withLock { $0 }?.send()
    }

    func clearInterruption() {
        isInterrupted.store(false, ordering: .releasing)
    }

    /// Ends the open transaction, even after an interruption: what was written is undone.
    /// A cancel request that lands on the `ROLLBACK` itself fails it; it is sent once, so
    /// the second attempt ends the transaction.
    func rollback() {
        for _ in 0..<2 where isInTransaction && PQstatus(handle) == CONNECTION_OK {
            PQclear(PQexec(handle, "ROLLBACK"))
        }
    }

    /// The settings every session starts with, and the store's schema as the search path;
    /// finds out whether a pooler stands between (``keepsSession``).
    ///
    /// PgBouncer gives `TimeZone` and `DateStyle` to whichever server session a transaction
    /// gets, so they are set for the session in every case; the others only where the
    /// session is this connection's own, and otherwise in each transaction.
    private func startSession() throws(DatabaseError) {
        var settings = ["SET TimeZone = 'UTC'", "SET DateStyle = 'ISO'"]
        if let mode = configuration.poolMode {
            keepsSession = mode == .session
        } else {
            // A pooler answers the connection with a process id of its own making.
            let probe = settings.joined(separator: "; ") + "; SELECT pg_backend_pid()"
            let serverProcess = try sessionQuery(probe) { PQntuples($0) == 1 ? Int32(String(cString: PQgetvalue($0, 0, 0))) : nil }
            keepsSession = serverProcess == PQbackendPID(handle)
            settings = []
        }
        if keepsSession {
            settings += ["SET client_min_messages = warning", "SET search_path TO \(configuration.quotedSchema)"]
            if readOnly { settings.append("SET default_transaction_read_only = on") }
            if !isDurable { settings.append("SET synchronous_commit = off") }
        }
        guard !settings.isEmpty else { return }
        // Not through `execute`: an interruption must not leave a session without its
        // settings, where unqualified tables would be another schema's.
        try sessionQuery(settings.joined(separator: "; ")) { _ in }
    }

    /// Runs `sql` as it is with libpq's simple protocol and reads its last result.
    @discardableResult
    private func sessionQuery<T>(_ sql: String, _ read: (OpaquePointer?) -> T) throws(DatabaseError) -> T {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, sql: sql, arguments: [])
        return read(result)
    }

    /// Where the connection does not keep its session: what each transaction sets first,
    /// which the session would otherwise have.
    private var transactionSettings: String {
        var settings = ["SET LOCAL search_path TO \(configuration.quotedSchema)", "SET LOCAL client_min_messages = warning"]
        if readOnly { settings.append("SET TRANSACTION READ ONLY") }
        if !isDurable { settings.append("SET LOCAL synchronous_commit = off") }
        return settings.joined(separator: "; ")
    }

    /// A connection the server dropped (restart, idle time-out) is reset once before use;
    /// its prepared statements are gone with the old session.
    private func checkUsable(_ sql: String?) throws(DatabaseError) {
        if isClosed { throw DatabaseError(resultCode: 0, message: "the connection is closed", sql: sql) }
        if isInterrupted.load(ordering: .acquiring) { throw DatabaseError.interrupted(sql: sql) }
        guard PQstatus(handle) != CONNECTION_OK else { return }
        statements.removeAll()
        statementOrder.removeAll()
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw Self.connectionError(configuration, reason: Self.tidy(String(cString: PQerrorMessage(handle))))
        }
        renewCanceller()
        try startSession()
    }

    // MARK: Statements

    package func execute(rawSQL sql: String) throws(DatabaseError) {
        try checkUsable(sql)
        guard !keepsSession, !isInTransaction, !Self.runsOnlyOutsideTransactions(sql) else { return try executeInSession(sql) }
        // One round trip either way: a `BEGIN` with the transaction's settings, or the
        // statement after them in the implicit transaction of one query string.
        let upper = sql.uppercased()
        let starts = upper.hasPrefix("BEGIN") || upper.hasPrefix("START TRANSACTION")
        try executeInSession(starts ? "\(sql); \(transactionSettings)" : "\(transactionSettings); \(sql)")
    }

    /// Statements PostgreSQL runs only outside a transaction block: they read no table by its
    /// unqualified name, so they need no search path either.
    static func runsOnlyOutsideTransactions(_ sql: String) -> Bool {
        let upper = sql.drop { $0.isWhitespace }.uppercased()
        return [
            "CREATE DATABASE", "DROP DATABASE", "VACUUM", "CREATE INDEX CONCURRENTLY", "DROP INDEX CONCURRENTLY", "REINDEX", "ALTER SYSTEM",
            "CREATE TABLESPACE", "DROP TABLESPACE",
        ].contains(where: upper.hasPrefix)
    }

    /// Runs `sql` as it is, in whatever transaction state the session is in.
    private func executeInSession(_ sql: String) throws(DatabaseError) {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, sql: sql, arguments: [])
        if !statements.isEmpty, Self.mayChangeTables(sql) { try forgetStatements() }
    }

    /// Whether `sql` may change a table a prepared statement reads: a statement prepared
    /// before `ALTER TABLE` or `DROP` fails with "cached plan must not change result type".
    static func mayChangeTables(_ sql: String) -> Bool {
        let upper = sql.uppercased()
        return upper.contains("ALTER ") || upper.contains("DROP ")
    }

    /// Deallocates every prepared statement; each is prepared again on next use.
    private func forgetStatements() throws(DatabaseError) {
        statements.removeAll()
        statementOrder.removeAll()
        let result = PQexec(handle, "DEALLOCATE ALL")
        defer { PQclear(result) }
        try check(result, sql: "DEALLOCATE ALL", arguments: [])
    }

    @discardableResult
    package func run(rawSQL sql: String, _ arguments: [DatabaseValue]) throws(DatabaseError) -> Int {
        if !keepsSession, !isInTransaction {
            do {
                return try transaction { try run(rawSQL: sql, arguments) }
            } catch let error as DatabaseError {
                throw error
            } catch {
                throw DatabaseError(resultCode: 0, message: "\(error)", sql: sql)
            }
        }
        let result = try executePrepared(sql, arguments)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    package func query(rawSQL sql: String, _ arguments: [DatabaseValue], _ body: (Row) throws -> Void) throws {
        if !keepsSession, !isInTransaction { return try transaction { try query(rawSQL: sql, arguments, body) } }
        let result = try executePrepared(sql, arguments)
        defer { PQclear(result) }
        let columns = Int32(PQnfields(result))
        let types = (0..<columns).map { PQftype(result, $0) }
        let binary = (0..<columns).map { PQfformat(result, $0) == 1 }
        for row in 0..<PQntuples(result) {
            var values: [DatabaseValue] = []
            values.reserveCapacity(Int(columns))
            for column in 0..<columns {
                if PQgetisnull(result, row, column) == 1 {
                    values.append(.null)
                    continue
                }
                let length = Int(PQgetlength(result, row, column))
                let bytes = UnsafeRawBufferPointer(start: PQgetvalue(result, row, column), count: length)
                let index = Int(column)
                values.append(
                    binary[index]
                        ? PostgresType.decode(binary: bytes, type: types[index])
                        : PostgresType.decode(text: String(decoding: bytes, as: UTF8.self), type: types[index])
                )
            }
            try body(Row(values))
        }
    }

    /// The fewest rows ``PostgresConfiguration/BulkInsertMethod/automatic`` sends by `COPY`:
    /// a `COPY` takes two round trips where a prepared `INSERT` takes one.
    static let copyThreshold = 16

    package func insertRows(into table: String, columns: [String], rows: [[DatabaseValue]]) throws(DatabaseError) {
        guard !rows.isEmpty else { return }
        var remaining = rows
        let method = configuration.bulkInsert
        if method == .copy || (method == .automatic && rows.count >= Self.copyThreshold) {
            // Rows whose every value reads back exactly from its text, by its column's type,
            // go by COPY; the others (rare: a double between two floats for a `real` column)
            // as bound arguments below.
            let types = try columnTypes(of: table, columns: columns)
            var copied: [[DatabaseValue]] = []
            copied.reserveCapacity(rows.count)
            remaining = []
            for row in rows {
                if PostgresCopyText.canEncode(row: row, columnTypes: types) { copied.append(row) } else { remaining.append(row) }
            }
            if !copied.isEmpty { try copy(copied, into: table, columns: columns) }
        }
        try insertWithArguments(remaining, into: table, columns: columns)
    }

    /// Multi-row `INSERT`s, each within the engine's argument limit (``SQLDialect/parameterLimit``).
    private func insertWithArguments(_ rows: [[DatabaseValue]], into table: String, columns: [String]) throws(DatabaseError) {
        guard !rows.isEmpty else { return }
        // Each column's NULLs take the type of its values, so every chunk declares the same
        // types; a column whose values differ in type goes row by row.
        var columnTypes = Array(repeating: UInt32(0), count: columns.count)
        var uniform = true
        for row in rows {
            for (index, value) in row.enumerated() where !value.isNull {
                let type = PostgresArguments.type(of: value)
                if columnTypes[index] == 0, type != 0 { columnTypes[index] = type }
                if type != columnTypes[index] { uniform = false }
            }
        }
        let placeholders = { (count: Int) in
            (0..<count).map { row in "(" + (1...columns.count).map { "$\(row * columns.count + $0)" }.joined(separator: ", ") + ")" }.joined(
                separator: ", "
            )
        }
        let insert = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
        guard uniform else {
            let sql = insert + placeholders(1)
            for row in rows { try run(rawSQL: sql, row) }
            return
        }
        for chunk in dialect.statementChunks(rows, argumentsPerItem: columns.count) {
            let sql = insert + placeholders(chunk.count)
            let values = Array(chunk.joined())
            let arguments = try PostgresArguments(
                values,
                nullTypes: Array(repeating: columnTypes, count: chunk.count).flatMap { $0 },
                sql: sql,
                argumentName: { "\(table).\(columns[$0 % columns.count])" }
            )
            let result = try executePrepared(sql, arguments, values: values)
            PQclear(result)
        }
    }

    /// The type (OID) of each of `columns` in `table`, as the server has them now; 0 for a
    /// column it does not name. Read for each bulk insert rather than kept: another session
    /// may have changed the table (a migration's swap) since.
    private func columnTypes(of table: String, columns: [String]) throws(DatabaseError) -> [UInt32] {
        var types: [String: UInt32] = [:]
        do {
            try query(
                rawSQL: "SELECT attname::text, atttypid FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped",
                [.text(table)]
            ) { row in
                if let name = row[0].text, let type = row[1].int64 { types[name] = UInt32(truncatingIfNeeded: type) }
            }
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(resultCode: 0, message: "\(error)")
        }
        return columns.map { column in
            let unquoted = column.hasPrefix("\"") ? String(column.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"") : column
            return types[unquoted] ?? 0
        }
    }

    /// `COPY … FROM STDIN` of `rows`, sent in pieces of about 256 KiB.
    private func copy(_ rows: [[DatabaseValue]], into table: String, columns: [String]) throws(DatabaseError) {
        let sql = "COPY \(table) (\(columns.joined(separator: ", "))) FROM STDIN"
        try checkUsable(sql)
        let started = PQexec(handle, sql)
        defer { PQclear(started) }
        guard PQresultStatus(started) == PGRES_COPY_IN else {
            try check(started, sql: sql, arguments: [])
            throw DatabaseError(resultCode: 0, message: "the server did not start the COPY", sql: sql)
        }
        let pieceSize = 1 << 18
        var text = PostgresCopyText(capacity: pieceSize + 4_096)
        var sent = true
        func send() {
            sent =
                text.bytes.withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) == 1 }
                } && sent
            text.removeAll()
        }
        for row in rows {
            text.append(row: row)
            if text.bytes.count >= pieceSize { send() }
        }
        send()
        // Ending with an error message makes the server fail the COPY: nothing is written.
        _ = PQputCopyEnd(handle, sent ? nil : "the rows could not be sent")
        var failure: DatabaseError?
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) != PGRES_COMMAND_OK, failure == nil {
                do throws(DatabaseError) {
                    // A COPY takes no arguments; its values are only redacted.
                    try check(result, sql: sql, arguments: Array(rows.joined()), argumentCount: 0)
                    failure = DatabaseError(resultCode: 0, message: "the COPY did not complete", sql: sql)
                } catch {
                    failure = error
                }
            }
            PQclear(result)
        }
        if let failure { throw failure }
    }

    /// Prepares (or reuses) the statement for `sql` and runs it; the caller clears the result.
    private func executePrepared(_ sql: String, _ values: [DatabaseValue]) throws(DatabaseError) -> OpaquePointer? {
        try executePrepared(sql, try PostgresArguments(values, sql: sql), values: values)
    }

    /// Runs `sql` with arguments laid out already; `values` are what error messages redact.
    private func executePrepared(_ sql: String, _ arguments: PostgresArguments, values: [DatabaseValue]) throws(DatabaseError) -> OpaquePointer? {
        try checkUsable(sql)
        guard keepsSession else { return try executeUnnamed(sql, arguments, values: values) }
        let statement = try prepared(sql, types: arguments.types)
        guard statement.parameterCount == arguments.count else {
            throw DatabaseError(resultCode: 0, message: "statement takes \(statement.parameterCount) arguments, got \(arguments.count)", sql: sql)
        }
        let result = arguments.withValuePointers { pointers in
            arguments.lengths.withUnsafeBufferPointer { lengths in
                arguments.formats.withUnsafeBufferPointer { formats in
                    PQexecPrepared(
                        handle,
                        statement.name,
                        Int32(arguments.count),
                        pointers,
                        lengths.baseAddress,
                        formats.baseAddress,
                        statement.resultFormat
                    )
                }
            }
        }
        do {
            try check(result, sql: sql, arguments: values)
        } catch {
            PQclear(result)
            throw error
        }
        return result
    }

    /// Runs `sql` as the unnamed statement, parsed with this run: nothing stays on the server
    /// session, which the next transaction may not have. One round trip, as a prepared one.
    private func executeUnnamed(_ sql: String, _ arguments: PostgresArguments, values: [DatabaseValue]) throws(DatabaseError) -> OpaquePointer? {
        let key = PostgresStatement.Key(sql: sql, parameterTypes: arguments.types)
        let result = arguments.withValuePointers { pointers in
            arguments.lengths.withUnsafeBufferPointer { lengths in
                arguments.formats.withUnsafeBufferPointer { formats in
                    arguments.types.withUnsafeBufferPointer { types in
                        PQexecParams(
                            handle,
                            sql,
                            Int32(arguments.count),
                            types.baseAddress,
                            pointers,
                            lengths.baseAddress,
                            formats.baseAddress,
                            resultFormats[key] ?? 0
                        )
                    }
                }
            }
        }
        do {
            try check(result, sql: sql, arguments: values)
        } catch {
            PQclear(result)
            throw error
        }
        if resultFormats[key] == nil {
            if resultFormats.count >= Self.statementCacheCapacity { resultFormats.removeAll() }
            let columnTypes = (0..<PQnfields(result)).map { PQftype(result, $0) }
            resultFormats[key] = PostgresStatement(name: "", parameterCount: arguments.count, columnTypes: columnTypes).resultFormat
        }
        return result
    }

    /// The prepared statement for `sql` with these argument types, preparing it on first use.
    private func prepared(_ sql: String, types: [UInt32]) throws(DatabaseError) -> PostgresStatement {
        let key = PostgresStatement.Key(sql: sql, parameterTypes: types)
        if let cached = statements[key] { return cached }
        if statements.count >= Self.statementCacheCapacity { try evictOldestStatement() }
        statementCounter += 1
        let name = "persistence_\(statementCounter)"
        let prepareResult = types.withUnsafeBufferPointer { PQprepare(handle, name, sql, Int32(types.count), $0.baseAddress) }
        defer { PQclear(prepareResult) }
        try check(prepareResult, sql: sql, arguments: [], argumentCount: types.count)
        // The result columns' types decide between binary and text results.
        let description = PQdescribePrepared(handle, name)
        defer { PQclear(description) }
        try check(description, sql: sql, arguments: [], argumentCount: types.count)
        let columnTypes = (0..<PQnfields(description)).map { PQftype(description, $0) }
        let statement = PostgresStatement(name: name, parameterCount: Int(PQnparams(description)), columnTypes: columnTypes)
        statements[key] = statement
        statementOrder.append(key)
        return statement
    }

    private func evictOldestStatement() throws(DatabaseError) {
        let oldest = statementOrder.removeFirst()
        guard let statement = statements.removeValue(forKey: oldest) else { return }
        try execute(rawSQL: "DEALLOCATE \(statement.name)")
    }

    // MARK: Transactions

    /// Whether a transaction is open (or failed and not yet rolled back).
    package var isInTransaction: Bool {
        guard !isClosed else { return false }
        let status = PQtransactionStatus(handle)
        return status != PQTRANS_IDLE && status != PQTRANS_UNKNOWN
    }

    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try transaction("BEGIN", body)
    }

    /// Runs `body` in a transaction started by `begin` (`BEGIN`, or `BEGIN ISOLATION LEVEL
    /// REPEATABLE READ READ ONLY`): committed if it returns, rolled back if it throws.
    func transaction<T>(_ begin: String, _ body: () throws -> T) throws -> T {
        guard !isInTransaction else {
            // PostgreSQL would only warn and let the inner COMMIT end the outer transaction.
            throw DatabaseError(resultCode: 0, message: "cannot start a transaction within a transaction", sql: begin)
        }
        try execute(rawSQL: begin)
        do {
            let result = try body()
            try execute(rawSQL: "COMMIT")
            return result
        } catch {
            if !isClosed { rollback() }
            throw error
        }
    }

    // MARK: Errors

    /// Throws when `result` is not a success. `arguments` are what the message is redacted
    /// of; `argumentCount` is what the error says the statement took (by default, how many
    /// `arguments` there are; none said when 0).
    private func check(_ result: OpaquePointer?, sql: String, arguments: [DatabaseValue], argumentCount: Int? = nil) throws(DatabaseError) {
        let count = argumentCount ?? arguments.count
        let argumentCount = count > 0 ? count : nil
        if let result, [PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY].contains(PQresultStatus(result)) { return }
        // An error the server sent has its SQLSTATE; one libpq raised itself has none.
        if let result, let state = PQresultErrorField(result, clibpq_diag_sqlstate()).map({ String(cString: $0) }) {
            let primary = PQresultErrorField(result, clibpq_diag_message_primary()).map { String(cString: $0) }
            var message = primary ?? Self.tidy(String(cString: PQresultErrorMessage(result)))
            if let pooling = Self.poolingExplanation(sqlState: state, message: message, keepsSession: keepsSession) { message += pooling }
            throw DatabaseError(
                resultCode: 0,
                message: Self.redacting(arguments, from: message),
                sql: sql,
                sqlState: state,
                argumentCount: argumentCount
            )
        }
        let raw = result.map { String(cString: PQresultErrorMessage($0)) } ?? ""
        let session = String(cString: PQerrorMessage(handle))
        // What the server (or a pooler) said before it closed the session, a FATAL line, is
        // in the session's message only.
        var message = Self.tidy(raw.isEmpty || (session.count > raw.count && session.hasSuffix(raw)) ? session : raw)
        if let pooling = Self.poolingExplanation(sqlState: "", message: message, keepsSession: false) { message += pooling }
        throw Self.clientError(message, sessionLost: PQstatus(handle) == CONNECTION_BAD, sql: sql, argumentCount: argumentCount)
    }

    /// What a server's error means when it comes from a pooler the connection did not take
    /// for one: a prepared statement gone or there twice (the session changed under it, a
    /// pooler in transaction mode that passes the server's process id on), or PgBouncer
    /// refusing a transaction in statement mode.
    static func poolingExplanation(sqlState: String, message: String, keepsSession: Bool) -> String? {
        if message.contains("statement pooling mode") {
            let refusal = PostgresConfiguration.statementPoolingRefusal
            return ": \(refusal.reason); \(refusal.hint)"
        }
        guard keepsSession, sqlState == "42P05" || sqlState == "26000", message.contains("prepared statement") else { return nil }
        return ": the connection's server session changed between two statements, as behind a pooler in transaction mode "
            + "(PgBouncer's pool_mode = transaction); add pool_mode=transaction to the store URL"
    }

    /// An error libpq raised itself. A session the server ended (a restart, a shutdown, a
    /// dropped network) has no SQLSTATE of its own and is said as class 08; anything else
    /// (a message libpq refused, a protocol state it lost) is libpq's own failure, named
    /// with its version: the server is fine, and waiting for it would not help.
    static func clientError(_ message: String, sessionLost: Bool, sql: String?, argumentCount: Int? = nil) -> DatabaseError {
        let lostSession = [
            "server closed the connection", "could not receive data from server", "could not send data to server",
            "no connection to the server", "connection to server was lost", "SSL SYSCALL error", "SSL connection has been closed",
            "terminating connection",
        ]
        if sessionLost, lostSession.contains(where: message.contains) {
            return DatabaseError(resultCode: 0, message: message, sql: sql, sqlState: "08006", argumentCount: argumentCount)
        }
        return DatabaseError(resultCode: 0, message: message, sql: sql, argumentCount: argumentCount, clientLibrary: libraryVersion)
    }

    /// The libpq this process runs with, as `libpq 15.18` (`PQlibVersion`).
    package static var libraryVersion: String {
        let version = Int(PQlibVersion())
        // From 10 on, major * 10 000 + minor.
        return version >= 100_000
            ? "libpq \(version / 10_000).\(version % 10_000)" : "libpq \(version / 10_000).\(version / 100 % 100).\(version % 100)"
    }

    /// The server quotes a value it could not read (`invalid input syntax for type uuid:
    /// "…"`); bound values never reach an error message, which may be logged.
    static func redacting(_ arguments: [DatabaseValue], from message: String) -> String {
        var message = message
        for argument in arguments {
            let text: String
            switch argument {
            case .text(let v): text = v
            case .integer(let v): text = String(v)
            case .double(let v): text = String(v)
            case .null, .blob: continue
            }
            message = message.replacingOccurrences(of: "\"\(text)\"", with: "\"…\"")
        }
        return message
    }

    /// libpq's multi-line messages on one line.
    static func tidy(_ message: String) -> String {
        message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
    }

    static func connectionError(_ configuration: PostgresConfiguration, reason: String) -> DatabaseError {
        let user = configuration.user.map { " as user '\($0)'" } ?? ""
        return DatabaseError(
            resultCode: 0,
            message:
                "cannot connect to PostgreSQL at \(configuration.serverDescription), database '\(configuration.databaseDescription)'\(user): \(reason)"
                + (tlsExplanation(reason, configuration: configuration) ?? "")
        )
    }

    /// What a TLS failure means, with the URL parameters that decide it: libpq says "SSL"
    /// and "certificate" in the words of the library underneath.
    static func tlsExplanation(_ reason: String, configuration: PostgresConfiguration) -> String? {
        let mode = configuration.parameters["sslmode"].map { "sslmode=\($0)" } ?? "sslmode"
        if reason.contains("certificate verify failed") || reason.contains("does not match host name") || reason.contains("root certificate file") {
            return
                " (TLS: the server's certificate was not accepted under \(mode); check that sslrootcert names the CA that signed it and that the host is the name it was issued for)"
        }
        if reason.contains("no encryption") || reason.contains("SSL off") {
            return " (TLS: the server accepts only encrypted connections; set sslmode=require, or verify-full with sslrootcert)"
        }
        if reason.contains("SSL") { return " (TLS, under \(mode))" }
        return nil
    }
}
