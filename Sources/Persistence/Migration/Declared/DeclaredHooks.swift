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
        // The objects' slots, as every layout of the entities has them.
        let destinationSlots = EntityLayout(entity: declared.destinationEntity, schema: destination).attributeSlots.index
        let sourceSlots = EntityLayout(entity: declared.sourceEntity, schema: source).attributeSlots.index
        let destinationAccess = DeclaredAccess(
            side: .destination,
            keys: declared.sets.map(\.attribute),
            slots: destinationSlots,
            mapping: mapping.name,
            entityName: declared.destinationEntity.name
        )
        let destinationLayout = EntityLayout(entity: declared.destinationEntity, schema: destination, declared: destinationAccess)
        let sourceAccess = DeclaredAccess(
            side: .source,
            keys: declared.reads.map(\.attribute),
            slots: sourceSlots,
            mapping: mapping.name,
            entityName: declared.sourceEntity.name,
            destinationLayout: destinationLayout
        )
        self.sourceAccess = sourceAccess
        self.destinationAccess = destinationAccess
        self.destinationLayout = destinationLayout
        sourceLayout = EntityLayout(entity: declared.sourceEntity, schema: source, declared: sourceAccess)
        // Declared keys are attributes of the entities (``DeclaredInsert/plan``): each has a slot.
        readSlots = declared.reads.map { sourceSlots[$0.attribute]! }
        setSlots = declared.sets.map { destinationSlots[$0.attribute]! }
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
        do {
            for source in sources {
                try await policy.createDestinationInstances(forSource: source, in: mapping, manager: manager)
            }
        } catch {
            // A hook that failed on what an undeclared key gave it failed because of that key.
            try checkUndeclared()
            throw error
        }
        chunk.sourcesRead += rows.count
        try checkUndeclared()
        let (keys, destinations, misfit) = sourceAccess.endBatch()
        if let misfit { throw error(misfit) }
        for (key, destination) in zip(keys, destinations) {
            guard let destination else { continue }
            chunk.made.append(key)
            chunk.rows.append(try workRow(key, destination, dialect: dialect))
        }
    }

    /// The source objects of `rows`, their batch begun with what their destinations start with.
    private func objects(for rows: [Row]) -> [ManagedObject] {
        let noValues = [AttributeValue](repeating: .null, count: sourceLayout.attributesBySlot.count)
        let noDestinationValues = [AttributeValue](repeating: .null, count: destinationLayout.attributesBySlot.count)
        let (entity, root) = (sourceLayout.entity.name, sourceLayout.table.rootEntityName)
        let (readCount, reads, sets) = (declared.reads.count, declared.reads, declared.sets)
        var keys: [Int64] = []
        var starting: [[AttributeValue]] = []
        var sources: [ManagedObject] = []
        keys.reserveCapacity(rows.count)
        starting.reserveCapacity(rows.count)
        sources.reserveCapacity(rows.count)
        for row in rows {
            guard let key = row[0].int64 else { continue }
            var values = noValues
            for index in reads.indices {
                values[readSlots[index]] = ValueCoding.attributeValue(row[1 + index], type: reads[index].type)
            }
            var destinationValues = noDestinationValues
            for index in sets.indices {
                destinationValues[setSlots[index]] = ValueCoding.attributeValue(row[1 + readCount + index], type: sets[index].type)
            }
            keys.append(key)
            starting.append(destinationValues)
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
        sourceAccess.beginBatch(keys: keys, starting: starting)
        return sources
    }

    /// The work row of `destination`, made from the source keyed `key`: the key, a bit per
    /// declared value the hooks set, and those values as the store keeps them.
    private func workRow(_ key: Int64, _ destination: ManagedObject, dialect: any SQLDialect) throws -> [DatabaseValue] {
        let (changed, values) = destination.state.withLock { ($0.declaredSets, $0.values.values) }
        var row: [DatabaseValue] = [.integer(key), .integer(Int64(bitPattern: changed))]
        row.reserveCapacity(2 + declared.sets.count)
        for (index, set) in declared.sets.enumerated() {
            guard changed & (1 << UInt64(index)) != 0 else {
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
            row.append(dialect.databaseValue(value, type: set.type))
        }
        return row
    }

    /// Ends the hooks' access to the objects: the mapping's instances are written.
    func close() {
        sourceAccess.close()
        destinationAccess.close()
    }

    /// Fails on the first key the hooks used that their declarations do not name, or used
    /// at all once ``close()`` was called (in `hook`, named in the message).
    func checkUndeclared(after hook: String? = nil) throws {
        for (access, side) in [(sourceAccess, "source"), (destinationAccess, "destination")] {
            guard let key = access.takeUndeclared() else { continue }
            if let hook, access.isClosed {
                throw MigrationError(
                    .evaluationFailed,
                    "\(hook) of \(mapping.name) used '\(key)' of a \(side) \(access.entityName) after the mapping's instances were written",
                    hint:
                        "use the declared values in createDestinationInstances or associate, or declare no values: the hooks are then given whole objects, one by one",
                    entityMapping: mapping.name,
                    property: key
                )
            }
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

    /// The error of a pair the batch could not hold.
    private func error(_ misfit: DeclaredAccess.Misfit) -> MigrationError {
        let (message, hint): (String, String) =
            switch misfit {
            case .foreignDestination(let entityName):
                (
                    "a hook of \(mapping.name) associated a \(entityName) that super.createDestinationInstances did not make",
                    "with declared values, make the destination with super.createDestinationInstances and set the declared values on it; declare none to make destinations yourself"
                )
            case .secondDestination:
                (
                    "\(declaredBy) made more than one \(declared.destinationEntity.name) from one \(declared.sourceEntity.name) in \(mapping.name)",
                    "hooks that declare their values make at most one destination per source; declare none to make more"
                )
            case .sourceOutsideBatch:
                (
                    "a hook of \(mapping.name) made a destination for a \(declared.sourceEntity.name) it was not given in this call",
                    "with declared values, make destinations only in createDestinationInstances, for its source; declare none to do otherwise"
                )
            case .otherMapping(let other):
                (
                    "a hook of \(mapping.name) associated a pair with the entity mapping \(other)",
                    "with declared values, associate each destination with the mapping that makes it; declare none to do otherwise"
                )
            }
        return MigrationError(.evaluationFailed, message, hint: hint, entityMapping: mapping.name)
    }

    private var declaredBy: String { declared.declaredBy.joined(separator: " and ") }
}
