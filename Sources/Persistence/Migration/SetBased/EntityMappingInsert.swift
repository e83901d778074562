/// The `INSERT … SELECT` that creates one entity mapping's instances from its source table:
/// the destination's `Z_PK` (the source key plus the mapping's offset), `Z_ENT`, `Z_OPT`,
/// each attribute's SQL over the source row `s` (``SQLCompiler/attributeValues(of:into:of:table:row:)``),
/// and the foreign keys a caller adds (look-ups: a source key plus the target mapping's offset).
///
/// The one statement both the set-based step and a streamed step's SQL instances run for an
/// entity mapping. It names source tables and offsets symbolically; the step resolves them
/// when it runs (``SQL/resolved(sourceSchema:offsets:)``):
///
/// ```swift
/// var insert = try EntityMappingInsert(mapping, source: (book, bookTable), sourceSchema: v2,
///                                      destination: (publication, publicationTable), of: v3.model)
/// insert.set("ZAUTHOR", to: "s.\(identifier: "ZWRITER") + \(offsetOf: "AuthorToAuthor")")
/// try connection.run(insert.statement.resolved(sourceSchema: "src", offsets: offsets))
/// ```
struct EntityMappingInsert: Sendable {
    /// The entity mapping's name, whose key offset the destination keys take.
    let mapping: String
    let sourceTable: EntityTable
    let destinationTable: EntityTable
    /// Destination column → its value over the source row `s`, arguments bound.
    private(set) var columns: [(column: String, value: SQL)]

    /// The insert of `entityMapping`'s instances with their attributes.
    ///
    /// - Throws: ``SQLCompiler/Untranslatable`` naming the first attribute whose value
    ///   expression has no SQL equivalent.
    init(
        _ entityMapping: EntityMapping,
        source: (entity: EntityDescription, table: EntityTable),
        sourceSchema: StoreSchema,
        destination: (entity: EntityDescription, table: EntityTable),
        of destinationModel: ManagedObjectModel
    ) throws {
        mapping = entityMapping.name
        sourceTable = source.table
        destinationTable = destination.table
        let compiler = SQLCompiler(schema: sourceSchema, entity: source.entity)
        columns = try compiler.attributeValues(
            of: entityMapping,
            into: destination.entity,
            of: destinationModel,
            table: destination.table,
            row: "s"
        )
    }

    /// Sets the destination column `column` to `value` over the source row `s`.
    mutating func set(_ column: String, to value: SQL) {
        columns.append((column, value))
    }

    /// Sets the to-one `relationship`'s key column `column` to `key`, a key of rows of the
    /// entity numbered `entityNumber`; where Core Data keeps the destination's entity beside
    /// the key (a destination with sub-entities), that column gets the number wherever the
    /// key is set.
    mutating func setKey(of relationship: String, column: String, to key: SQL, entityNumber: Int) {
        set(column, to: key)
        guard let typeColumn = destinationTable.entityTypeColumn(for: relationship) else { return }
        set(typeColumn.name, to: "CASE WHEN (\(key)) IS NULL THEN NULL ELSE \(literal: entityNumber) END")
    }

    /// The statement, its source table and key offsets still symbolic.
    var statement: SQL { statement(joining: nil) }

    /// The statement with `join` after the source row `s` (a `JOIN` of values worked out
    /// elsewhere, which only the joined rows then take), and the values of the columns in
    /// `replacing` instead of the mapping's.
    func statement(joining join: SQL?, replacing: [String: SQL] = [:]) -> SQL {
        let names: [SQL] = ["\(storeName: "Z_PK")", "\(storeName: "Z_ENT")", "\(storeName: "Z_OPT")"] + columns.map { "\(identifier: $0.column)" }
        let values: [SQL] =
            ["s.\(storeName: "Z_PK") + \(offsetOf: mapping)", "\(literal: destinationTable.entityNumber)", "1"]
            + columns.map { replacing[$0.column] ?? $0.value }
        let joined: SQL = join.map { " \($0)" } ?? ""
        return """
            INSERT INTO \(identifier: destinationTable.name) (\(names.joined(separator: ", "))) \
            SELECT \(values.joined(separator: ", ")) FROM \(sourceTable: sourceTable.name) s\(joined) WHERE s.\(storeName: "Z_ENT") = \(literal: sourceTable.entityNumber)
            """
    }

    /// The value over the source row `s` the mapping gives `column`, if it sets it.
    func value(of column: String) -> SQL? {
        columns.first { $0.column == column }?.value
    }

    /// ``statement`` for the source rows whose keys are after `lower`, up to `upper`: one
    /// chunk of the mapping's rows.
    func statement(sourceKeysAfter lower: Int64, upTo upper: Int64) -> SQL {
        statement + Self.keyRange(after: lower, upTo: upper)
    }

    /// The condition on the source row `s` that keeps a chunk's keys.
    static func keyRange(after lower: Int64, upTo upper: Int64) -> SQL {
        " AND s.\(storeName: "Z_PK") > \(lower) AND s.\(storeName: "Z_PK") <= \(upper)"
    }
}
