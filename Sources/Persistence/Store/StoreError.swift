/// A store that cannot be opened, read or written.
///
/// Each error says what went wrong, where (the store, the SQL) and what to do about it.
/// `description` never contains bound values or passwords.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let base: String
        public var description: String { base }
        public static let invalidURL = Code(base: "invalidURL")
        public static let storeNotFound = Code(base: "storeNotFound")
        public static let notAStore = Code(base: "notAStore")
        public static let missingMetadata = Code(base: "missingMetadata")
        public static let unknownModelVersion = Code(base: "unknownModelVersion")
        /// The store's tables fit several model versions; name the store's version explicitly.
        public static let ambiguousModelVersion = Code(base: "ambiguousModelVersion")
        public static let incompatibleModel = Code(base: "incompatibleModel")
        public static let alreadyExists = Code(base: "alreadyExists")
        public static let unsupported = Code(base: "unsupported")
        public static let database = Code(base: "database")
        /// The database server could not be reached or refused the connection.
        public static let connectionFailed = Code(base: "connectionFailed")
        public static let conflict = Code(base: "conflict")
        public static let invalidFetch = Code(base: "invalidFetch")
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

    public var code: Code
    public var message: String
    /// What the user can do about it.
    public var hint: String?
    /// The store, without credentials.
    public var store: String?
    /// The engine's error, with the SQL that failed.
    public var underlying: DatabaseError?

    public init(_ code: Code, _ message: String, hint: String? = nil, store: String? = nil, underlying: DatabaseError? = nil) {
        self.code = code
        self.message = message
        self.hint = hint
        self.store = store
        self.underlying = underlying
    }

    public var description: String {
        var text = store.map { "\($0): \(message)" } ?? message
        if let underlying { text += " (\(underlying))" }
        if let hint { text += ". " + hint.prefix(1).uppercased() + hint.dropFirst() }
        return text
    }
}
