import Synchronization

/// The compiled columns of values fetches, by entity and properties: a service asks the
/// same few on every request, and compiling their key paths cost more than reading the row.
final class CompiledSelections: Sendable {
    struct Key: Hashable {
        let entityName: String
        let properties: [FetchRequest.Property]
    }

    /// A compiled selection: the compiler holding the joins the columns need (a fetch's
    /// predicate and sort terms are compiled on a copy of it), the columns, and each
    /// property's position by name.
    struct Entry: Sendable {
        let compiler: SQLCompiler
        let columns: [SQLCompiler.Selected]
        let positions: [String: Int]
    }

    /// Selections kept at most; past it the cache starts again, so fetches whose properties
    /// vary without end cannot make it grow.
    static let capacity = 64

    private let entries = Mutex<[Key: Entry]>([:])

    /// The entry for `key`, compiled by `compile` the first time.
    func entry(for key: Key, compile: () throws -> Entry) throws -> Entry {
        if let entry = entries.withLock({ $0[key] }) { return entry }
        let entry = try compile()
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
        return entry
    }
}
