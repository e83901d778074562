import Synchronization

/// The source → destination association of a running mapping model, kept so that memory
/// stays flat and most pairs cost nothing to record.
///
/// The first destination instance an entity mapping associates with a source instance is
/// saved under the source's primary key plus the mapping's offset: an *identity pair*,
/// recorded as one bit for the source key (a million sources take 125 KB). Foreign keys
/// between migrated rows are then key arithmetic, as in SQL. Any other pair (a second
/// destination of one source, an object saved earlier, a mapping whose keys are too large
/// for bits) is an *exception*, a row of the ``AssociationTable`` in the destination store.
final class AssociationIndex: Sendable {
    /// Where one entity mapping's identity keys live.
    struct MappingKeys: Sendable {
        let sourceRoot: String
        let destinationRoot: String
        /// Destination key = source key + offset for identity pairs.
        let offset: Int64
        /// Identity pairs by source key; `nil` when the source keys are too large for bits.
        var identities: KeyBitSet?
        var exceptionCount = 0

        /// The destination keys identity pairs may take: `offset + 1 … offset + capacity`.
        var range: ClosedRange<Int64>? {
            guard let identities, identities.capacity > 0 else { return nil }
            return (offset + 1)...(offset + identities.capacity)
        }
    }

    /// Source keys above this take no bits (the bits of a mapping would pass 32 MB).
    static let largestIdentityKey: Int64 = 1 << 28

    let table: AssociationTable
    private let mappings: Mutex<[String: MappingKeys]>

    init(table: AssociationTable, mappings: [String: MappingKeys]) {
        self.table = table
        self.mappings = Mutex(mappings)
    }

    func keys(of mapping: String) -> MappingKeys? {
        mappings.withLock { $0[mapping] }
    }

    /// Every mapping's keys, for the step's later passes (see ``StepAssociations``).
    var allKeys: [String: MappingKeys] {
        mappings.withLock { $0 }
    }

    /// The identity key for `source`'s first destination of `mapping`, claimed now; `nil`
    /// when `source` has one already (or the mapping has no identity keys).
    func claimIdentity(mapping: String, source: Int64, destinationRoot: String) -> Int64? {
        mappings.withLock { all in
            // Mutated in place: a copy of the keys would copy the bits, once per source.
            guard all[mapping]?.destinationRoot == destinationRoot, all[mapping]?.identities?.insert(source) == true else { return nil }
            return source + all[mapping]!.offset
        }
    }

    /// Records identity pairs made in SQL, for sources `keys`.
    func claimIdentities(mapping: String, sources keys: [Int64]) {
        mappings.withLock { all in
            for key in keys { all[mapping]?.identities?.insert(key) }
        }
    }

    /// Counts exceptions written for `mapping`, so look-ups know to ask the table.
    func noteExceptions(_ count: Int, mapping: String) {
        mappings.withLock { $0[mapping]?.exceptionCount += count }
    }

    /// How many pairs a mapping has.
    func pairCount(mapping: String) async throws -> Int {
        guard let keys = keys(of: mapping) else { return 0 }
        let exceptions = keys.exceptionCount > 0 ? try await table.count(mapping: mapping) : 0
        return (keys.identities?.count ?? 0) + exceptions
    }

    /// Whether every row of the mapping's source root table has its identity pair: then a
    /// source foreign key plus the offset always names an existing destination row.
    func coversEveryRow(of mapping: String, sourceRows: Int) -> Bool {
        guard let keys = keys(of: mapping), let identities = keys.identities else { return false }
        return identities.count == sourceRows
    }

    /// The destination keys of each source key, for one mapping, identity pair first.
    func destinations(mapping name: String, sources: [Int64]) async throws -> [Int64: [Int64]] {
        guard let keys = keys(of: name) else { return [:] }
        var result: [Int64: [Int64]] = [:]
        for source in sources where keys.identities?.contains(source) == true {
            result[source] = [source + keys.offset]
        }
        if keys.exceptionCount > 0 {
            for (source, destinations) in try await table.destinations(mapping: name, sources: sources) {
                result[source, default: []].append(contentsOf: destinations)
            }
        }
        return result
    }

    /// The source keys of each destination key, for one mapping.
    func sources(mapping name: String, destinations: [Int64]) async throws -> [Int64: [Int64]] {
        guard let keys = keys(of: name) else { return [:] }
        var result: [Int64: [Int64]] = [:]
        if let range = keys.range, let identities = keys.identities {
            for destination in destinations where range.contains(destination) && identities.contains(destination - keys.offset) {
                result[destination] = [destination - keys.offset]
            }
        }
        if keys.exceptionCount > 0 {
            for (destination, sources) in try await table.sources(mapping: name, destinations: destinations) {
                result[destination, default: []].append(contentsOf: sources)
            }
        }
        return result
    }

    /// Where a walk over a mapping's pairs is: identity pairs by source key, then exceptions
    /// by their row in the table.
    enum Cursor: Sendable, Hashable {
        case identity(after: Int64)
        case exception(after: Int64)

        static let start = Cursor.identity(after: 0)
    }

    /// Up to `limit` pairs of a mapping after `cursor`, and the cursor after them (`nil` at the end).
    func pairs(mapping name: String, after cursor: Cursor, limit: Int) async throws -> (pairs: [(source: Int64, destination: Int64)], next: Cursor?) {
        guard let keys = keys(of: name) else { return ([], nil) }
        if case .identity(let after) = cursor, let identities = keys.identities {
            let sources = identities.keys(after: after, limit: limit)
            if let last = sources.last {
                return (sources.map { ($0, $0 + keys.offset) }, .identity(after: last))
            }
        }
        let after: Int64 = if case .exception(let row) = cursor { row } else { 0 }
        guard keys.exceptionCount > 0 else { return ([], nil) }
        let rows = try await table.pairs(mapping: name, after: after, limit: limit)
        guard let last = rows.last else { return ([], nil) }
        return (rows.map { ($0.source, $0.destination) }, .exception(after: last.row))
    }
}
