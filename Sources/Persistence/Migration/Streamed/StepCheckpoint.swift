import Foundation

/// How far a streamed step has written its output, recorded in the output itself with each
/// batch, in the batch's own transaction: what the output holds and what the checkpoint says
/// never disagree, so a run killed at any moment can be continued from its last batch
/// (``StepCheckpointing``).
struct StepCheckpoint: Codable, Sendable, Equatable {
    /// The part of the step the output is complete up to.
    enum Stage: String, Codable, Sendable {
        /// Stage 1: the instances of `createdMappings` are all written, and those of
        /// `mapping` up to the source key `lastSourceKey`.
        case instances
        /// Stage 2 has begun writing relationships one instance at a time: the step can no
        /// longer be continued, since a relationship may be half written.
        case relationships
        /// Stages 1 and 2 are complete: what is left only reads the output (validation).
        case validation
    }

    var stage: Stage = .instances
    /// Entity mappings whose instances are all written, and what ends the mapping too.
    var createdMappings: [String] = []
    /// The entity mapping whose instances are being written, one batch at a time (or, for
    /// an `INSERT … SELECT`, one chunk of source keys at a time).
    var mapping: String?
    /// The key of the last source instance of `mapping` whose destinations are written.
    var lastSourceKey: Int64 = 0
    /// How many source instances of `mapping` are done.
    var done = 0
    /// Batches written by the step so far, for the log.
    var batches = 0
}

/// What a step's output says of itself, besides its rows: the run that wrote it, the keys
/// its association index reserved, and how far it got.
struct SavedStep: Sendable {
    /// Says which step of which chain the output was written for.
    var fingerprint: String
    /// The store as the step found it (``MigrationWorkspace/sourceMark(of:)``).
    var sourceMark: String
    /// Each entity mapping's identity keys: where they lie, not which are taken (the
    /// destination's rows say that).
    var keys: [String: SavedKeys]
    /// The rows of each mapping's source root table when the step began.
    var sourceRows: [String: Int]
    var checkpoint: StepCheckpoint
}

/// An entity mapping's ``AssociationIndex/MappingKeys`` without its bits.
struct SavedKeys: Codable, Sendable, Equatable {
    var sourceRoot: String
    var destinationRoot: String
    var offset: Int64
    /// The largest source key with an identity pair; `nil` when the mapping has none.
    var capacity: Int64?

    init(_ keys: AssociationIndex.MappingKeys) {
        (sourceRoot, destinationRoot, offset, capacity) = (keys.sourceRoot, keys.destinationRoot, keys.offset, keys.identities?.capacity)
    }
}

/// The table `Z_MIGRATIONCHECKPOINT` of a step's output: a row per part of ``SavedStep``,
/// as JSON. It is dropped with the association table when the step completes.
struct StepCheckpointTable: Sendable {
    let database: any Database

    static let tableName = "Z_MIGRATIONCHECKPOINT"

    private enum Part: String {
        case fingerprint, sourceMark, keys, sourceRows, checkpoint
    }

    /// Records what the step begins with, in one transaction.
    func create(_ saved: SavedStep) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let parts: [(Part, String)] = [
            (.fingerprint, saved.fingerprint),
            (.sourceMark, saved.sourceMark),
            (.keys, String(decoding: try encoder.encode(saved.keys), as: UTF8.self)),
            (.sourceRows, String(decoding: try encoder.encode(saved.sourceRows), as: UTF8.self)),
            (.checkpoint, String(decoding: try encoder.encode(saved.checkpoint), as: UTF8.self)),
        ]
        try await database.write { connection in
            try connection.run("DROP TABLE IF EXISTS \(storeName: Self.tableName)")
            try connection.run(
                """
                CREATE TABLE \(storeName: Self.tableName) (\(storeName: "Z_NAME") VARCHAR PRIMARY KEY, \(storeName: "Z_VALUE") VARCHAR NOT NULL)
                """
            )
            for (part, value) in parts {
                try connection.run(
                    "INSERT INTO \(storeName: Self.tableName) (\(storeName: "Z_NAME"), \(storeName: "Z_VALUE")) VALUES (\(part.rawValue), \(value))"
                )
            }
        }
    }

    /// Records `checkpoint` on `connection`, inside the transaction that writes what it says.
    static func write(_ checkpoint: StepCheckpoint, on connection: any DatabaseConnection) throws {
        let value = String(decoding: try JSONEncoder().encode(checkpoint), as: UTF8.self)
        try connection.run(
            """
            UPDATE \(storeName: tableName) SET \(storeName: "Z_VALUE") = \(value) WHERE \(storeName: "Z_NAME") = \(Part.checkpoint.rawValue)
            """
        )
    }

    /// What the output says of itself; `nil` when it has no checkpoint (or not a whole one).
    func read() async throws -> SavedStep? {
        let exists = try await database.read { connection in
            try StoreCreation.tableExists(Self.tableName, on: connection)
        }
        guard exists else { return nil }
        let rows = try await database.read { connection in
            try connection.rows("SELECT \(storeName: "Z_NAME"), \(storeName: "Z_VALUE") FROM \(storeName: Self.tableName)")
        }
        var parts: [String: String] = [:]
        for row in rows {
            if let name = row[0].text, let value = row[1].text { parts[name] = value }
        }
        let decoder = JSONDecoder()
        guard let fingerprint = parts[Part.fingerprint.rawValue], let sourceMark = parts[Part.sourceMark.rawValue],
            let keys = parts[Part.keys.rawValue].flatMap({ try? decoder.decode([String: SavedKeys].self, from: Data($0.utf8)) }),
            let sourceRows = parts[Part.sourceRows.rawValue].flatMap({ try? decoder.decode([String: Int].self, from: Data($0.utf8)) }),
            let checkpoint = parts[Part.checkpoint.rawValue].flatMap({ try? decoder.decode(StepCheckpoint.self, from: Data($0.utf8)) })
        else { return nil }
        return SavedStep(fingerprint: fingerprint, sourceMark: sourceMark, keys: keys, sourceRows: sourceRows, checkpoint: checkpoint)
    }

    func drop() async throws {
        try await database.writeWithoutTransaction { try $0.execute("DROP TABLE IF EXISTS \(storeName: Self.tableName)") }
    }
}
