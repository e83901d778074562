import Foundation

/// An inferred mapping run as SQL inside the store: ALTER TABLE … ADD / RENAME / DROP COLUMN,
/// table renames, Z_ENT renumbering, and table rebuilds only where SQLite requires them.
///
/// No row is ever loaded into Swift: every change of data is a statement the database runs
/// over whole tables (`UPDATE … SET Z_ENT = CASE …`, `INSERT … SELECT` into join tables).
/// Primary keys never change, so every foreign key stays valid; that is also the limit of
/// what runs in place: a step that would put rows of two tables into one (their keys
/// overlap) or move rows to another table is left to a streamed migration.
///
/// ```swift
/// switch InPlaceMigration.plan(mapping: mapping, source: v2, destination: v3, dialect: .sqlite) {
/// case .success(let migration):
///     try await database.write { try migration.run(on: $0, metadata: metadata) }
/// case .failure(let unsupported):
///     logger.info("streaming: \(unsupported.reason)")
/// }
/// ```
struct InPlaceMigration: Sendable {
    /// What a step leaves as it was, where a new store of its destination would have it
    /// otherwise: decided by what follows it in its run.
    enum Keeping: Sendable, Hashable {
        /// Nothing: the store ends numbered and named as a new store of the destination.
        case nothing
        /// The entities' numbers (``InPlaceMigration/keptNumbering``): an in-place step
        /// follows, planned to read them, and then a streamed step. Indexes still get the
        /// names a new store gives them (renamed where the engine can).
        case entityNumbers
        /// The numbers, and the names of indexes the engine cannot rename (SQLite): a
        /// streamed step follows, which reads no index by name and builds every one anew.
        case entityNumbersAndIndexNames

        var keepsEntityNumbers: Bool { self != .nothing }
    }

    /// Why a mapping cannot run in place; the caller streams the step instead.
    struct Unsupported: Error, Sendable, Hashable, CustomStringConvertible {
        var reason: String

        init(_ reason: String) { self.reason = reason }

        var description: String { "cannot migrate in place: \(reason)" }
    }

    /// One statement and the values bound to its placeholders.
    struct Step: Sendable, Hashable {
        /// The statement, with the values it binds.
        var sql: SQL
    }

    /// A `Z_PRIMARYKEY` row of the destination, and the source entities whose `Z_MAX` it
    /// must not fall below (the highest of them is carried over).
    struct PrimaryKeyRow: Sendable, Hashable {
        var entity: Int
        var name: String
        var superEntity: Int
        var carriedFrom: [String]
    }

    let steps: [Step]
    let primaryKeyRows: [PrimaryKeyRow]
    let dialect: any SQLDialect
    /// Whether its statements rewrite every row of every table (each row's `Z_ENT`
    /// renumbered): then a rebuild may be faster (``SQLDialect/rebuildsRatherThanRewritingEveryRow``).
    var rewritesEveryRow = false
    /// The destination's numbering where the step leaves every continued entity its number
    /// (``Keeping``), where a new store of the destination would number them otherwise:
    /// planned so where a later step writes every row anew (a streamed step), which numbers
    /// them as a new store. The store between the two is
    /// one this framework reads as any store numbered otherwise (its `Z_PRIMARYKEY` says
    /// how); the step itself rewrites no row for a renumbering. `nil` for a step that numbers
    /// them as a new store.
    var keptNumbering: EntityNumbering?
    /// The destination's rules the statements could break; see ``checks(mapping:source:destination:dialect:)``.
    var checks: [Check] = []
    var countChecks: [RelationshipCountCheck] = []
    var destination: ManagedObjectModel?
    /// The cells of a store of Apple's to make plain before anything else (the first step's).
    var externallyStoredValues: ExternallyStoredValues?

    /// Plans the statements that turn a store of `source` into one of `destination`.
    ///
    /// Never throws: when the mapping cannot run in place it returns the reason, and the
    /// caller streams the step instead.
    /// `sourceLayout` is how the store is laid out now: its entities' numbers and its tables' names (by default as a new
    /// store of `source` is); the step leaves them numbered as a new store of `destination`,
    /// or as `keeping` says.
    static func plan(
        mapping: MappingModel,
        source: ManagedObjectModel,
        destination: ManagedObjectModel,
        dialect: any SQLDialect,
        sourceLayout: StoreLayout? = nil,
        keeping: Keeping = .nothing
    ) -> Result<InPlaceMigration, InPlaceMigration.Unsupported> {
        Result { () throws(Unsupported) -> InPlaceMigration in
            // SQLite's CAST of a double to decimal text keeps 15 digits, not the value Swift
            // would store: such a step streams.
            for entityMapping in mapping.entityMappings {
                guard let sourceName = entityMapping.sourceEntityName, let sourceEntity = source.entity(named: sourceName),
                    let destinationName = entityMapping.destinationEntityName, let destinationEntity = destination.entity(named: destinationName)
                else { continue }
                for attribute in destination.attributes(of: destinationEntity) where attribute.type == .decimal {
                    if let path = entityMapping.propertyMapping(named: attribute.name)?.valueExpression?.sourceKeyPath, path.count == 1,
                        let old = source.attribute(named: path[0], of: sourceEntity), old.type == .double || old.type == .float
                    {
                        throw Unsupported("\(destinationName).\(attribute.name) changes from \(old.type.rawValue) to Decimal")
                    }
                }
            }
            let analysis = try InPlaceMappingAnalysis(mapping: mapping, source: source, destination: destination)
            var planner = InPlacePlanner(analysis: analysis, dialect: dialect, sourceLayout: sourceLayout, keeping: keeping)
            var migration = try planner.plan()
            // The rows as the step leaves them numbered.
            let numbering = migration.keptNumbering
            migration.checks = checks(
                mapping: mapping,
                source: source,
                destination: destination,
                dialect: dialect,
                sourceLayout: sourceLayout,
                destinationNumbering: numbering
            )
            migration.countChecks = countChecks(
                mapping: mapping,
                source: source,
                destination: destination,
                dialect: dialect,
                destinationNumbering: numbering
            )
            migration.destination = destination
            return migration
        }
    }

    /// Whether the step keeps entity numbers for the next step to renumber (``keptNumbering``).
    var keepsEntityNumbers: Bool { keptNumbering != nil }

    /// The statements, for a `--plan` display and tests.
    var statements: [String] { steps.map { $0.sql.rendered(for: dialect).text } }

    /// Runs every statement on `connection` (the caller wraps it in ONE transaction), then
    /// rewrites Z_PRIMARYKEY for the destination's entity numbers (carrying Z_MAX of each
    /// continued entity; new entities get 0) and Z_METADATA with `metadata`.
    ///
    /// - Throws: ``MigrationError`` with code `store`, naming the step that failed; the
    ///   transaction around it must then be rolled back.
    func run(on connection: any DatabaseConnection, metadata: StoreMetadata) throws {
        let d = connection.dialect
        guard d.isSame(as: dialect) else {
            throw MigrationError(.store, "the in-place migration was planned for \(dialect.engineName), but the store is \(d.engineName)")
        }
        do {
            // Read the key counters before anything changes; entity names are their keys.
            var maxima: [String: Int64] = [:]
            for row in try connection.rows("SELECT \(storeName: "Z_NAME"), \(storeName: "Z_MAX") FROM \(storeName: "Z_PRIMARYKEY")") {
                if let name = row[0].text { maxima[name] = max(maxima[name] ?? 0, row[1].int64 ?? 0) }
            }
            try externallyStoredValues?.run(on: connection)
            if let destination { try runChecks(on: connection, destination: destination, beforeSteps: true) }
            // Names the rows that keep a new uniqueness constraint's index from being built.
            let destinationSchema = destination.map { StoreSchema(model: $0, dialect: d, numbering: keptNumbering) }
            for (index, step) in steps.enumerated() {
                do {
                    if let destinationSchema, step.sql.description.hasPrefix("CREATE UNIQUE INDEX") {
                        try destinationSchema.explainingUniqueIndexes(on: connection) { try connection.execute(step.sql) }
                        continue
                    }
                    // DDL goes through `execute`, so the connection's statement cache does not
                    // keep statements on tables that are about to be dropped.
                    if step.sql.argumentCount == 0 {
                        try connection.execute(step.sql)
                    } else {
                        try connection.run(step.sql)
                    }
                } catch {
                    throw MigrationError(
                        .store,
                        "step \(index + 1) of \(steps.count) of the in-place migration failed",
                        hint: "the store is unchanged once the transaction is rolled back",
                        underlying: error
                    )
                }
            }
            if let destination { try runChecks(on: connection, destination: destination, beforeSteps: false) }
            try connection.run("DELETE FROM \(storeName: "Z_PRIMARYKEY")")
            for row in primaryKeyRows {
                let carried = row.carriedFrom.compactMap { maxima[$0] }.max() ?? 0
                try connection.run(
                    """
                    INSERT INTO \(storeName: "Z_PRIMARYKEY") (\(storeName: "Z_ENT"), \(storeName: "Z_NAME"), \(storeName: "Z_SUPER"), \(storeName: "Z_MAX")) \
                    VALUES (\(row.entity), \(row.name), \(row.superEntity), \(carried))
                    """
                )
            }
            try StoreCreation.writeMetadata(metadata, on: connection)
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(.store, "the in-place migration could not update the store's bookkeeping", underlying: error)
        }
    }
}
