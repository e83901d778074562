/// A store that cannot be opened, read or written.
///
/// Each error says what went wrong, where (the store, the SQL) and what to do about it.
/// `description` never contains bound values or passwords.
///
/// ```swift
/// do { let store = try await PersistentStore.open(url, model: model, logger: logger) }
/// catch let error as StoreError where error.code == .incompatibleModel { /* migrate first */ }
/// ```
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of error it is: what to match on, as in `error.code == .storeNotFound`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let base: String
        /// The code's name, as in `storeNotFound`.
        public var description: String { base }
        /// The store URL cannot be read; write `sqlite:///path.sqlite`, `postgres://user@host/db` or `memory:`.
        public static let invalidURL = Code(base: "invalidURL")
        /// There is no store at the URL, and the options do not create one; check the path or database.
        public static let storeNotFound = Code(base: "storeNotFound")
        /// The file or database at the URL is not a store (not SQLite, or no `Z_METADATA`); nothing was opened or changed.
        public static let notAStore = Code(base: "notAStore")
        /// The store's metadata is missing or not a property list: the store is damaged; restore it from a backup.
        public static let missingMetadata = Code(base: "missingMetadata")
        /// The store's version hashes match none of the model versions, or a named version does not exist.
        public static let unknownModelVersion = Code(base: "unknownModelVersion")
        /// The store's tables fit several model versions; name the store's version explicitly.
        public static let ambiguousModelVersion = Code(base: "ambiguousModelVersion")
        /// The store was written by another model version than the one it is opened with: migrate it first.
        public static let incompatibleModel = Code(base: "incompatibleModel")
        /// A store is already where one is being created, copied or moved; replace it or pick another place.
        public static let alreadyExists = Code(base: "alreadyExists")
        /// The store kind cannot do what was asked (an in-memory store cannot be inspected or copied from outside).
        public static let unsupported = Code(base: "unsupported")
        /// A statement failed in the database; ``StoreError/underlying`` has the engine's error and the SQL.
        public static let database = Code(base: "database")
        /// The database server could not be reached or refused the connection.
        public static let connectionFailed = Code(base: "connectionFailed")
        /// An object was changed or deleted by someone else since it was read: fetch it again and reapply the change.
        public static let conflict = Code(base: "conflict")
        /// A fetch request the store cannot run as asked; fix the request.
        public static let invalidFetch = Code(base: "invalidFetch")
        /// The object ID names an object that is neither in the store nor in the context.
        public static let objectNotFound = Code(base: "objectNotFound")
        /// The store or its folder cannot be written: read-only, or no permission.
        public static let notWritable = Code(base: "notWritable")
        /// Another connection or process has the store open, and what was asked needs it alone.
        public static let storeInUse = Code(base: "storeInUse")
        /// A PostgreSQL schema holds objects that are not the store's, which creating,
        /// replacing, removing or migrating the store there would drop or mix with it.
        public static let sharedSchema = Code(base: "sharedSchema")
        /// The store was migrated to another model version since this process opened it:
        /// a statement of this process's version met a table or column the store no longer has.
        public static let migratedSinceOpened = Code(base: "migratedSinceOpened")
        /// The store contradicts itself: its metadata names one model version, its tables are
        /// another's (damaged, or written by a version edited after it shipped).
        public static let inconsistentStore = Code(base: "inconsistentStore")
    }

    /// What kind of error it is.
    public var code: Code
    /// What went wrong, in one sentence without bound values.
    public var message: String
    /// What the user can do about it.
    public var hint: String?
    /// The store, without credentials.
    public var store: String?
    /// The engine's error, with the SQL that failed.
    public var underlying: DatabaseError?

    /// An error of kind `code` saying `message`, with what to do and the store when known.
    public init(_ code: Code, _ message: String, hint: String? = nil, store: String? = nil, underlying: DatabaseError? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
        self.store = store
        self.underlying = underlying
    }

    /// `store: message (engine error). Hint`, each part when there is one.
    public var description: String {
        var text = store.map { "\($0): \(message)" } ?? message
        if let underlying { text += " (\(underlying))" }
        if let hint { text += ". " + hint.prefix(1).uppercased() + hint.dropFirst() }
        return text
    }
}
