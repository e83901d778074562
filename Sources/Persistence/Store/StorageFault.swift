import Foundation

/// What went wrong around a store rather than in its data or in this code: the disk, the
/// file's permissions, the file itself, the database server. Read from the engine's codes
/// (SQLite's result codes, PostgreSQL's SQLSTATE classes 53, 57 and 58, `errno`), anywhere
/// in an error's chain of underlying errors.
///
/// Such an error is the user's to fix, and its message says how; "report this" is kept for
/// errors that are the framework's own.
///
/// ```swift
/// catch {
///     if StorageFault(error) == .diskFull { return .insufficientStorage }
/// }
/// ```
public enum StorageFault: Sendable, Hashable, CustomStringConvertible {
    /// No space left: SQLite's `SQLITE_FULL`, `ENOSPC` or `EDQUOT`, PostgreSQL's `disk_full` (53100).
    case diskFull
    /// The store, its folder or its file system cannot be written, or this user may not use
    /// them: `SQLITE_READONLY`, `EROFS`, `EACCES`, `EPERM`, a PostgreSQL standby (25006).
    case notWritable
    /// The file is damaged or not a database: `SQLITE_CORRUPT`, `SQLITE_NOTADB`,
    /// PostgreSQL's `data_corrupted` and `index_corrupted` (XX001, XX002).
    case damaged
    /// Reading or writing failed below the database: `SQLITE_IOERR`, `EIO`, PostgreSQL's
    /// `io_error` (58030) and the other system errors of class 58.
    case inputOutput
    /// The file cannot be opened: `SQLITE_CANTOPEN`.
    case cannotOpen
    /// The database server lacks memory or connections (class 53 but disk full).
    case serverResources
    /// The database server is shutting down, restarting or refusing connections for now
    /// (class 57 but a cancellation, class 08: the session was lost).
    case serverUnavailable
    /// The database's client library failed on its own, the server being fine: libpq
    /// refused a message or lost its place in the protocol. Carries the library and its
    /// version (`libpq 15.18`). Waiting does not help; a retry fails the same way.
    case clientLibrary(String)

    /// Finds the fault in `error` or the errors underneath it; `nil` when there is none.
    public init?(_ error: any Error) {
        guard let fault = Self.chain(of: error).lazy.compactMap(Self.fault(of:)).first else { return nil }
        self = fault
    }

    /// `error` and the errors underneath it, outermost first.
    static func chain(of error: any Error) -> [any Error] {
        var chain: [any Error] = [error]
        while chain.count < 8, let next = underlying(of: chain[chain.count - 1]) { chain.append(next) }
        return chain
    }

    private static func underlying(of error: any Error) -> (any Error)? {
        switch error {
        case let error as StoreError: error.underlying
        case let error as MigrationError: error.underlying
        default: (error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error
        }
    }

    private static func fault(of error: any Error) -> StorageFault? {
        switch error {
        case let error as DatabaseError:
            if let library = error.clientLibrary { return .clientLibrary(library) }
            if let state = error.sqlState { return fault(sqlState: state) }
            // An I/O error is what its errno says it is first: a full disk, most often.
            if let code = error.systemErrorCode, error.resultCode & 0xff == 10, let fault = fault(errno: code) { return fault }
            return fault(sqliteCode: error.resultCode)
        case let error as SystemCallError:
            return fault(errno: error.code)
        case let error as POSIXError:
            return fault(errno: error.code.rawValue)
        case let error as StoreError:
            return error.code == .notWritable ? .notWritable : nil
        case is MigrationError:
            return nil
        default:
            let error = error as NSError
            if error.domain == NSPOSIXErrorDomain { return fault(errno: Int32(error.code)) }
            guard error.domain == NSCocoaErrorDomain else { return nil }
            switch error.code {
            case NSFileWriteOutOfSpaceError: return .diskFull
            case NSFileWriteVolumeReadOnlyError, NSFileWriteNoPermissionError, NSFileReadNoPermissionError: return .notWritable
            case NSFileReadCorruptFileError: return .damaged
            default: return nil
            }
        }
    }

    static func fault(sqliteCode code: Int32) -> StorageFault? {
        // SQLITE_IOERR_SHMSIZE: the shared-memory file beside a WAL could not grow.
        if code == 4874 { return .diskFull }
        return switch code & 0xff {
        case 13: .diskFull  // SQLITE_FULL
        case 8: .notWritable  // SQLITE_READONLY
        case 11, 26: .damaged  // SQLITE_CORRUPT, SQLITE_NOTADB
        case 10: .inputOutput  // SQLITE_IOERR
        case 14: .cannotOpen  // SQLITE_CANTOPEN
        default: nil
        }
    }

    static func fault(sqlState state: String) -> StorageFault? {
        switch state {
        case "53100": return .diskFull
        case "XX001", "XX002": return .damaged
        case "57014": return nil  // query_canceled: a cancellation, said as such
        default: break
        }
        switch state.prefix(2) {
        case "53": return .serverResources
        case "57", "08": return .serverUnavailable
        case "25" where state == "25006": return .notWritable  // read_only_sql_transaction: a standby
        case "58": return .inputOutput
        default: return nil
        }
    }

    static func fault(errno code: Int32) -> StorageFault? {
        switch code {
        case ENOSPC, EDQUOT: .diskFull
        case EROFS, EACCES, EPERM: .notWritable
        case EIO: .inputOutput
        default: nil
        }
    }

    /// What happened, in a few words.
    public var description: String {
        switch self {
        case .diskFull: "the disk is full"
        case .notWritable: "the store or its folder cannot be written (read-only, or no permission for this user)"
        case .damaged: "the store is damaged or not a database"
        case .inputOutput: "reading or writing the disk failed"
        case .cannotOpen: "the store's file cannot be opened"
        case .serverResources: "the database server is out of resources"
        case .serverUnavailable: "the database server is shutting down or not accepting work"
        case .clientLibrary(let library): "the database client library (\(library)) failed on its own; the server is not at fault"
        }
    }

    /// What to do about it.
    public var advice: String {
        switch self {
        case .diskFull: "free space on the disk that holds the store (a migration writes the new store beside the old one) and try again"
        case .notWritable: "make the store and its folder readable and writable for this user, or use a writable copy of the store"
        case .damaged: "restore the store from a backup (`sqlite3 STORE .recover` may save the rows of a damaged SQLite file)"
        case .inputOutput: "check the disk and the system log, then try again"
        case .cannotOpen: "check that the path names a store file and that its folder can be read and written"
        case .serverResources: "check the server's memory and connection limits, then try again"
        case .serverUnavailable: "wait until the server is up again and try again"
        case .clientLibrary:
            "a retry fails the same way: install your system's newest libpq (Debian: apt-get install libpq5), and report this with the message above"
        }
    }
}
