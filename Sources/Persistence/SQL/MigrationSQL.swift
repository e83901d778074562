/// SQL of a migration step, planned before the step runs: its text, the source tables it
/// reads and the key offsets it adds, kept apart until ``resolved(sourceSchema:offsets:)``
/// knows the schema the source is reached through and the offsets the engine chose.
///
/// ```swift
/// let keys: MigrationSQL = "SELECT s.Z_PK + \(offsetOf: "BookToBook") FROM \(sourceTable: "ZBOOK") s"
/// keys.resolved(sourceSchema: "src", offsets: ["BookToBook": 0])
/// // SELECT s.Z_PK + 0 FROM src.ZBOOK s
/// ```
///
/// Plain interpolations are SQL text: identifiers quoted by the dialect, placeholders,
/// numbers. Values are bound, never interpolated.
struct MigrationSQL: Sendable, Hashable, ExpressibleByStringInterpolation {
    enum Part: Sendable, Hashable {
        case text(String)
        /// A table of the source store, qualified by the source's schema when resolved.
        case sourceTable(String)
        /// The offset added to an entity mapping's source keys: an integer the engine chose.
        case keyOffset(mapping: String)
    }

    private(set) var parts: [Part]

    init(stringLiteral value: String) {
        parts = [.text(value)]
    }

    init(stringInterpolation: StringInterpolation) {
        parts = stringInterpolation.parts
    }

    struct StringInterpolation: StringInterpolationProtocol {
        var parts: [Part] = []

        init(literalCapacity: Int, interpolationCount: Int) {}

        mutating func appendLiteral(_ literal: String) {
            parts.append(.text(literal))
        }

        /// SQL text: a quoted identifier, a placeholder, a number.
        mutating func appendInterpolation(_ text: String) {
            parts.append(.text(text))
        }

        mutating func appendInterpolation(_ number: Int) {
            parts.append(.text("\(number)"))
        }

        mutating func appendInterpolation(sourceTable name: String) {
            parts.append(.sourceTable(name))
        }

        mutating func appendInterpolation(offsetOf mapping: String) {
            parts.append(.keyOffset(mapping: mapping))
        }

        mutating func appendInterpolation(_ sql: MigrationSQL) {
            parts += sql.parts
        }
    }

    /// The SQL to run, with source tables as `sourceSchema.NAME` and each mapping's offset.
    func resolved(sourceSchema: String, offsets: [String: Int64]) -> String {
        parts.map { part in
            switch part {
            case .text(let text): text
            case .sourceTable(let name): "\(sourceSchema).\(name)"
            case .keyOffset(let mapping): "\(offsets[mapping] ?? 0)"
            }
        }.joined()
    }

    /// The parts joined by `separator`.
    static func joined(_ pieces: [MigrationSQL], separator: String) -> MigrationSQL {
        var result = MigrationSQL(parts: [])
        for (index, piece) in pieces.enumerated() {
            if index > 0 { result.parts.append(.text(separator)) }
            result.parts += piece.parts
        }
        return result
    }

    private init(parts: [Part]) {
        self.parts = parts
    }
}
