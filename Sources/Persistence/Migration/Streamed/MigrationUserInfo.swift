import Synchronization

/// Values shared by the policies of one migration step: Core Data's manager `userInfo`,
/// e.g. a lookup of the authors created so far by name.
///
/// ```swift
/// manager.userInfo["author:\(name)"] = author.objectID
/// if let id = manager.userInfo["author:\(name)"] as? ObjectID { … }
/// ```
public final class MigrationUserInfo: Sendable {
    private let storage = Mutex<[String: any Sendable]>([:])

    /// An empty store of values.
    public init() {}

    /// The value stored under `key`, or `nil`; setting `nil` removes it.
    public subscript(key: String) -> (any Sendable)? {
        get { storage.withLock { $0[key] } }
        set { storage.withLock { $0[key] = newValue } }
    }

    /// Reads and changes the values in one step.
    public func withValues<T: Sendable>(_ body: (inout [String: any Sendable]) throws -> T) rethrows -> T {
        try storage.withLock { try body(&$0) }
    }
}
