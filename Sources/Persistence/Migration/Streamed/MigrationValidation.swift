import Logging

/// Stage 3 of a step: every destination object against the destination model's rules.
struct MigrationValidation {
    let model: ManagedObjectModel
    let batchSize: Int
    let logger: Logger
    let file: String?

    /// Opens the store at `url`, validates it (see ``validate(_:progress:)``) and closes it.
    func validate(storeAt url: StoreURL, progress: (String, Int) -> Void) async throws {
        let store = try await PersistentStore.open(url, model: model, options: .existingOnly, logger: logger)
        do {
            try await validate(ManagedObjectContext(store: store, logger: logger), progress: progress)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    /// Validates every object in `context`'s store; `progress` gets each entity once it is
    /// validated, with its rows.
    ///
    /// One SQL scan per entity finds the rows that might break a rule
    /// (``ValidationCandidates``); only those are loaded and validated in Swift, a batch at
    /// a time, so memory stays flat and a valid store costs a scan per table.
    ///
    /// - Throws: ``MigrationError/Code/validationFailed`` with the first problems found
    ///   (up to 100 are collected), the whole list in a ``ValidationError``.
    func validate(_ context: ManagedObjectContext, progress: (String, Int) -> Void) async throws {
        var issues: [ValidationError.Issue] = []
        let store = context.store
        for entity in model.entities where !entity.isAbstract {
            guard let candidates = ValidationCandidates(entity: entity, schema: store.schema) else { continue }
            let started = ContinuousClock.now
            let table = candidates.table
            let own: SQL = "\(storeName: "Z_ENT") = \(literal: table.entityNumber)"
            let countSQL: SQL = "SELECT count(*) FROM \(identifier: table.name) WHERE \(own)"
            let rows = Int(try await store.database.read { try $0.scalar(countSQL) }?.int64 ?? 0)
            var checked = 0
            if let condition = candidates.condition(model: model) {
                var last: Int64 = 0
                while issues.count < 100 {
                    if Task.isCancelled {
                        throw MigrationError(
                            .cancelled,
                            "the migration was cancelled",
                            hint: "the source store was not changed; run the migration again"
                        )
                    }
                    let sql: SQL = """
                        SELECT \(storeName: "Z_PK") FROM \(identifier: table.name) WHERE \(own) AND \(storeName: "Z_PK") > \(last) \
                        AND (\(condition)) ORDER BY \(storeName: "Z_PK") LIMIT \(literal: batchSize)
                        """
                    let keys = try await store.database.read { try $0.rows(sql).compactMap { $0[0].int64 } }
                    guard let end = keys.last else { break }
                    let objects = try await context.objects(rootEntityName: table.rootEntityName, primaryKeys: keys)
                    for key in keys { if let object = objects[key] { issues += ManagedObjectContext.validate(object) } }
                    context.reset()
                    checked += keys.count
                    last = end
                }
            }
            progress(entity.name, rows)
            logger.info(
                "migration stage",
                metadata: [
                    LoggingKeys.migrationStage: "\(MigrationProgress.Stage.validateAndSave.rawValue)",
                    LoggingKeys.entity: "\(entity.name)", LoggingKeys.rows: "\(rows)", LoggingKeys.rowsCheckedInSwift: "\(checked)",
                    LoggingKeys.durationMilliseconds: "\(ManagedObjectContext.milliseconds(since: started))",
                ]
            )
        }
        if issues.count < 100 { issues += try await countIssues(context.store) }
        if !issues.isEmpty { throw failure(issues) }
    }

    /// The error for objects that break `model`'s rules: which objects and rules, never
    /// the values (those are the users' data).
    func failure(_ issues: [ValidationError.Issue]) -> MigrationError {
        let shown = issues.prefix(5).map { "\($0.objectID) \($0.key ?? "?"): \($0.code)" }.joined(separator: "; ")
        return MigrationError(
            .validationFailed,
            "the migrated objects break the rules of '\(model.name)': \(shown)\(issues.count > 5 ? " …" : "")",
            hint: "fix the mapping model's value expressions or the policy so every object is valid; the source store was not changed",
            file: file,
            underlying: ValidationError(issues: issues)
        )
    }

    /// To-many relationships with too few or too many destinations, counted in SQL.
    private func countIssues(_ store: PersistentStore) async throws -> [ValidationError.Issue] {
        let checks = RelationshipCountCheck.checks(model: model, schema: store.schema)
        return try await store.database.read { connection in try checks.flatMap { try $0.issues(on: connection) } }
    }
}

/// A to-many relationship's count limits, checked in SQL: `LIMIT 5` offenders per rule.
struct RelationshipCountCheck: Sendable {
    let sql: SQL
    let entity: String
    let root: String
    let key: String
    let code: ValidationError.Issue.Code

    /// The checks of every limited to-many relationship for which `include` says yes.
    static func checks(
        model: ManagedObjectModel,
        schema: StoreSchema,
        include: (EntityDescription, RelationshipDescription) -> Bool = { _, _ in true }
    ) -> [RelationshipCountCheck] {
        var checks: [RelationshipCountCheck] = []
        for entity in model.entities where !entity.isAbstract {
            guard let table = schema.table(for: entity.name) else { continue }
            for relationship in model.relationships(of: entity)
            where relationship.isToMany && (relationship.minCount > 0 || relationship.maxCount > 0) && include(entity, relationship) {
                let count: SQL
                switch schema.storage(of: relationship, in: entity) {
                case .inverseForeignKey(let destination, let column)?, .hiddenForeignKey(let destination, let column)?:
                    count = "(SELECT count(*) FROM \(identifier: destination.name) x WHERE x.\(identifier: column) = t.\(storeName: "Z_PK"))"
                case .joinTable(let join, let fromSource)?:
                    let column = fromSource ? join.sourceColumn : join.destinationColumn
                    count = "(SELECT count(*) FROM \(identifier: join.name) j WHERE j.\(identifier: column) = t.\(storeName: "Z_PK"))"
                default:
                    continue
                }
                let root = model.rootEntity(of: entity).name
                let select: SQL =
                    "SELECT t.\(storeName: "Z_PK") FROM \(identifier: table.name) t WHERE t.\(storeName: "Z_ENT") = \(literal: table.entityNumber) AND"
                if relationship.minCount > 0 {
                    checks.append(
                        .init(
                            sql: "\(select) \(count) < \(literal: relationship.minCount) LIMIT 5",
                            entity: entity.name,
                            root: root,
                            key: relationship.name,
                            code: .tooFewObjects
                        )
                    )
                }
                if relationship.maxCount > 0 {
                    checks.append(
                        .init(
                            sql: "\(select) \(count) > \(literal: relationship.maxCount) LIMIT 5",
                            entity: entity.name,
                            root: root,
                            key: relationship.name,
                            code: .tooManyObjects
                        )
                    )
                }
            }
        }
        return checks
    }

    func issues(on connection: any DatabaseConnection) throws -> [ValidationError.Issue] {
        try connection.rows(sql).compactMap { $0[0].int64 }.map { key in
            .init(
                code: code,
                entity: entity,
                objectID: ObjectID(entityName: entity, rootEntityName: root, key: .permanent(key)),
                key: self.key,
                message: "\(self.key) breaks its \(code) rule"
            )
        }
    }
}
