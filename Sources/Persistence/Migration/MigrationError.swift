/// A migration that cannot be planned, loaded or run.
///
/// Like ``StoreError``, it says what went wrong, where (the mapping file, entity mapping,
/// property, store) and what to do; `description` never contains row values.
///
/// ```swift
/// do { try await migrator.migrateStore(at: url) }
/// catch let error as MigrationError where error.code == .newerStore { … }
/// ```
public struct MigrationError: Error, Sendable, CustomStringConvertible {
    /// What kind of error it is: what to match on, as in `error.code == .newerStore`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let base: String
        /// The code's name, as in `newerStore`.
        public var description: String { base }
        /// A change between two versions that a lightweight migration cannot express.
        public static let cannotInferMapping = Code(base: "cannotInferMapping")
        /// A mapping model file that cannot be read or does not fit its models.
        public static let invalidMappingModel = Code(base: "invalidMappingModel")
        /// A value expression naming a property that does not exist.
        public static let unknownKeyPath = Code(base: "unknownKeyPath")
        /// A value expression whose type does not fit the property it fills.
        public static let typeMismatch = Code(base: "typeMismatch")
        /// An entity mapping names a policy that was never registered.
        public static let unknownPolicy = Code(base: "unknownPolicy")
        /// The store's metadata matches none of the known model versions.
        public static let unknownStoreVersion = Code(base: "unknownStoreVersion")
        /// A model version changed since it was locked (``VersionedModel/lockChanges``): no
        /// store is migrated through the model's versions until the version is restored.
        public static let lockedVersionChanged = Code(base: "lockedVersionChanged")
        /// A store written by Apple's Core Data whose tables fit several model versions.
        public static let ambiguousStoreVersion = Code(base: "ambiguousStoreVersion")
        /// The store was written by a model version newer than the ones this app knows.
        public static let newerStore = Code(base: "newerStore")
        /// The version chain has no way from the store's version to the target.
        public static let noPath = Code(base: "noPath")
        /// A value expression failed while a row was migrated.
        public static let evaluationFailed = Code(base: "evaluationFailed")
        /// The migrated objects do not pass the destination model's validation.
        public static let validationFailed = Code(base: "validationFailed")
        /// The migration was cancelled; the store is as it was.
        public static let cancelled = Code(base: "cancelled")
        /// Another migration of the store held the lock for longer than the wait allowed.
        public static let storeBusy = Code(base: "storeBusy")
        /// The store could not be read, written or replaced.
        public static let store = Code(base: "store")
        /// The store's disk, file or database server failed (full, read-only, damaged,
        /// down) rather than the migration: the user's to fix, as ``StorageFault`` says.
        public static let storage = Code(base: "storage")
        /// A migration asked to run online whose store or plan does not allow it (SQLite, a
        /// step that does not keep objects' keys, a policy that reads the stores).
        public static let cannotMigrateOnline = Code(base: "cannotMigrateOnline")
        /// A step would rebuild the store, and the store has tables beside the model's
        /// (persistent history, CloudKit's, an app's own) that a rebuild would not carry.
        public static let wouldDropTables = Code(base: "wouldDropTables")
        /// The store URL reaches PostgreSQL through a pooler in transaction mode, through
        /// which the session lock that keeps migrations apart cannot hold: a migration
        /// needs a URL that reaches the server directly (or a pooler in session mode).
        public static let needsDirectConnection = Code(base: "needsDirectConnection")
        /// A migrated store's tables, columns, types, indexes or entity numbers are not
        /// what its model version creates (``PersistentStore/layoutDifferences(at:model:)``
        /// says the same of any store): it did not replace the store.
        public static let layoutDiffers = Code(base: "layoutDiffers")
        /// A step back to an older version (``ProgressiveMigrator/migrateStore(at:to:storeVersion:acceptingDataLoss:progress:)``
        /// with an older target) that has no inverse to infer and no mapping model: the step
        /// forward did more than add or rename (a policy split a value, an expression
        /// converted one, an entity was removed).
        public static let irreversibleStep = Code(base: "irreversibleStep")
        /// A step back would drop data (what the newer version added) and the caller did not
        /// accept the loss: nothing was written.
        public static let dataLossNotAccepted = Code(base: "dataLossNotAccepted")
        /// A migration without a target (opening a store, a service's start-up) found a
        /// store taken back on purpose (``StoreMetadata/migratedBackFrom``): it does not undo
        /// the rollback; a migration that names its target does.
        public static let storeRolledBack = Code(base: "storeRolledBack")
    }

    /// What kind of error it is.
    public var code: Code
    /// What went wrong, in one sentence without row values.
    public var message: String
    /// What the user can do about it.
    public var hint: String?
    /// The mapping model file, when the error is in one.
    public var file: String?
    /// The line in `file` the error is about (the entity mapping or property), when known.
    public var line: Int?
    /// The entity mapping (`PublicationToPublication`) or entity the error is about.
    public var entityMapping: String?
    /// The property the error is about.
    public var property: String?
    /// The store, without credentials.
    public var store: String?
    /// The error underneath (a ``StoreError``, ``ValidationError``, ``ExpressionError``…).
    public var underlying: (any Error & Sendable)?

    /// An error of kind `code` saying `message`, with where it happened and what to do when known.
    public init(
        _ code: Code,
        _ message: String,
        hint: String? = nil,
        file: String? = nil,
        entityMapping: String? = nil,
        property: String? = nil,
        store: String? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.hint = hint
        self.file = file
        self.entityMapping = entityMapping
        self.property = property
        self.store = store
        self.underlying = underlying
    }

    /// The error with its store set, when it has none yet.
    func at(_ url: StoreURL) -> MigrationError {
        var error = self
        error.store = error.store ?? url.description
        return error
    }

    /// Where, what and what to do, in one line: `store: file:line: mapping.property: message. Hint`.
    public var description: String {
        var location: [String] = []
        if let store { location.append(store) }
        if let file { location.append(line.map { "\(file):\($0)" } ?? file) }
        if let entityMapping {
            location.append(property.map { "\(entityMapping).\($0)" } ?? entityMapping)
        } else if let property {
            location.append(property)
        }
        var text = location.isEmpty ? message : location.joined(separator: ": ") + ": " + message
        // A validation error's own text quotes the values; the message already names the issues.
        if let underlying, !(underlying is ValidationError) { text += " (\(underlying))" }
        if let hint { text += ". " + hint.prefix(1).uppercased() + hint.dropFirst() }
        return text
    }
}

extension MigrationError {
    /// `error` as a ``Code/storage`` error when a ``StorageFault`` is at its root: what
    /// happened, when (`doing`, or the error's own message), what to do and what became of
    /// the store (`afterwards`); `nil` when the error is not the environment's.
    static func storage(_ error: any Error, doing: String?, store: StoreURL, afterwards: String) -> MigrationError? {
        if let error = error as? MigrationError, error.code == .storage || error.code == .cancelled { return nil }
        guard let fault = StorageFault(error) else { return nil }
        let what = doing ?? (error as? MigrationError)?.message ?? (error as? StoreError)?.message ?? "the migration failed"
        // The engine's words, unless the message has them already.
        let detail = StorageFault.chain(of: error).first { cause in
            if let call = cause as? SystemCallError { return !what.contains(call.reason) }
            return cause is DatabaseError
        }
        let message = what.hasPrefix("\(fault)") ? what : "\(fault): \(what)"
        return MigrationError(.storage, message, hint: "\(fault.advice); \(afterwards)", store: store.description, underlying: detail)
    }
}
