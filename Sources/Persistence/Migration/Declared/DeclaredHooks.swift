/// Runs the hooks of a mapping with declared values (``DeclaredInsert``) over batches of
/// source rows: makes each row's source object (its declared reads only), calls the policy's
/// `createDestinationInstances` (whose default makes the destination and calls the manager's
/// `associate`), and turns what the hooks set into work rows.
struct DeclaredHooks: Sendable {
    let declared: DeclaredInsert
    let mapping: EntityMapping
    let sourceAccess: DeclaredAccess
    let destinationAccess: DeclaredAccess
    let sourceLayout: EntityLayout
    let destinationLayout: EntityLayout
    /// The slot of each declared read in a source object, of each declared set in a destination.
    private let readSlots: [Int]
    private let setSlots: [Int]

    /// What one chunk's batches made: the work rows and the sources that got a destination.
    struct Chunk {
        var rows: [[DatabaseValue]] = []
        var made: [Int64] = []
        var sourcesRead = 0
    }

    init(_ declared: DeclaredInsert, mapping: EntityMapping, source: StoreSchema, destination: StoreSchema) {
        self.declared = declared
        self.mapping = mapping
        let destinationAccess = DeclaredAccess(
            side: .destination,
            keys: Set(declared.sets.map(\.attribute)),
            mapping: mapping.name,
            entityName: declared.destinationEntity.name
        )
        let destinationLayout = EntityLayout(entity: declared.destinationEntity, schema: destination, declared: destinationAccess)
        let sourceAccess = DeclaredAccess(
            side: .source,
            keys: Set(declared.reads.map(\.attribute)),
            mapping: mapping.name,
            entityName: declared.sourceEntity.name,
            destinationLayout: destinationLayout
        )
        self.sourceAccess = sourceAccess
        self.destinationAccess = destinationAccess
        self.destinationLayout = destinationLayout
        let sourceLayout = EntityLayout(entity: declared.sourceEntity, schema: source, declared: sourceAccess)
        self.sourceLayout = sourceLayout
        // Declared keys are attributes of the entities (``DeclaredInsert/plan``): each has a slot.
        readSlots = declared.reads.map { sourceLayout.attributeSlots.index[$0.attribute]! }
        setSlots = declared.sets.map { destinationLayout.attributeSlots.index[$0.attribute]! }
    }

    /// Runs the hooks over `rows` (as ``DeclaredInsert/readStatement(after:limit:)`` reads
    /// them) and adds their work rows to `chunk`.
    func run(
        _ rows: [Row],
        policy: EntityMigrationPolicy,
        manager: MigrationManager,
        into chunk: inout Chunk,
        dialect: any SQLDialect
    ) async throws {
        let sources = objects(for: rows)
        for source in sources {
            try await policy.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        }
        chunk.sourcesRead += rows.count
        try checkUndeclared()
        let pending = manager.updateRun { $0.batch.startNext() } ?? []
        var seen = Set<Int64>()
        seen.reserveCapacity(pending.count)
        for pair in pending {
            guard pair.mapping == mapping.name, pair.destination.layout.declared === destinationAccess,
                let key = pair.source.objectID.primaryKey
            else { throw foreignDestination(pair) }
            guard seen.insert(key).inserted else {
                throw MigrationError(
                    .evaluationFailed,
                    "\(declaredBy) made more than one \(declared.destinationEntity.name) from one \(declared.sourceEntity.name) in \(mapping.name)",
                    hint: "hooks that declare their values make at most one destination per source; declare none to make more",
                    entityMapping: mapping.name
                )
            }
            chunk.made.append(key)
            chunk.rows.append(try workRow(key, pair.destination, dialect: dialect))
        }
    }

    /// The source objects of `rows`, and what their destinations start with.
    private func objects(for rows: [Row]) -> [ManagedObject] {
        let noValues = [AttributeValue](repeating: .null, count: sourceLayout.attributesBySlot.count)
        let noDestinationValues = [AttributeValue](repeating: .null, count: destinationLayout.attributesBySlot.count)
        let (entity, root) = (sourceLayout.entity.name, sourceLayout.table.rootEntityName)
        var starting: [Int64: [AttributeValue]] = [:]
        starting.reserveCapacity(rows.count)
        var sources: [ManagedObject] = []
        sources.reserveCapacity(rows.count)
        for row in rows {
            guard let key = row[0].int64 else { continue }
            var values = noValues
            for (index, read) in declared.reads.enumerated() {
                values[readSlots[index]] = ValueCoding.attributeValue(row[1 + index], type: read.type)
            }
            var destinationValues = noDestinationValues
            for (index, set) in declared.sets.enumerated() {
                destinationValues[setSlots[index]] = ValueCoding.attributeValue(row[1 + declared.reads.count + index], type: set.type)
            }
            starting[key] = destinationValues
            let id = ObjectID(entityName: entity, rootEntityName: root, key: .permanent(key))
            sources.append(
                ManagedObject(
                    layout: sourceLayout,
                    state: .init(
                        objectID: id,
                        values: PropertyValues(slots: sourceLayout.attributeSlots, values: values),
                        toOne: sourceLayout.noDestinations,
                        version: 0,
                        isInserted: false,
                        context: nil
                    )
                )
            )
        }
        sourceAccess.setStartingValues(starting)
        return sources
    }

    /// The work row of `destination`, made from the source keyed `key`: the key, a bit per
    /// declared value the hooks set, and those values as the store keeps them.
    private func workRow(_ key: Int64, _ destination: ManagedObject, dialect: any SQLDialect) throws -> [DatabaseValue] {
        let (changed, values) = destination.state.withLock { ($0.changedKeys, $0.values.values) }
        var mask: Int64 = 0
        var row: [DatabaseValue] = [.integer(key), .integer(0)]
        row.reserveCapacity(2 + declared.sets.count)
        for (index, set) in declared.sets.enumerated() {
            guard changed.contains(set.attribute) else {
                row.append(.null)
                continue
            }
            let value = values[setSlots[index]]
            guard value == .null || ManagedObjectContext.value(value, fits: set.type) else {
                throw MigrationError(
                    .validationFailed,
                    "\(declaredBy) set '\(set.attribute)' of a \(declared.destinationEntity.name) to a value its type (\(set.type)) cannot hold",
                    hint: "set a value of the attribute's type",
                    entityMapping: mapping.name,
                    property: set.attribute
                )
            }
            mask |= Int64(1) << index
            row.append(dialect.databaseValue(value, type: set.type))
        }
        row[1] = .integer(mask)
        return row
    }

    /// Fails on the first key the hooks used that their declarations do not name.
    private func checkUndeclared() throws {
        for (access, side) in [(sourceAccess, "source"), (destinationAccess, "destination")] {
            guard let key = access.takeUndeclared() else { continue }
            let declaration = side == "source" ? "reads" : "sets"
            throw MigrationError(
                .evaluationFailed,
                "a hook of \(mapping.name) used '\(key)' of its \(side) \(access.entityName), which \(declaredBy) do not declare",
                hint:
                    "name '\(key)' in the declared \(declaration) (an attribute), or declare no values: the hooks are then given whole objects, one by one",
                entityMapping: mapping.name,
                property: key
            )
        }
    }

    private func foreignDestination(_ pair: MigrationManager.Pending) -> MigrationError {
        MigrationError(
            .evaluationFailed,
            "a hook of \(mapping.name) associated a \(pair.destination.entity.name) that super.createDestinationInstances did not make",
            hint:
                "with declared values, make the destination with super.createDestinationInstances and set the declared values on it; declare none to make destinations yourself",
            entityMapping: mapping.name
        )
    }

    private var declaredBy: String { declared.declaredBy.joined(separator: " and ") }
}
