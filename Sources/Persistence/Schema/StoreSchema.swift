/// Where a model's entities and properties live in a SQL store: Core Data's layout.
///
/// - One table per root entity, `Z` + the upper-cased name (`ZBOOK`); sub-entities share
///   their root's table and are told apart by `Z_ENT`.
/// - Columns `Z_PK`, `Z_ENT`, `Z_OPT`, then `Z` + the upper-cased property name for every
///   stored attribute and to-one relationship (a foreign key holding the destination's `Z_PK`).
/// - A to-many relationship whose inverse is to-one lives in the inverse's foreign key; an
///   ordered one also has a `Z_FOK_<INVERSE>` ordering column on the destination.
/// - Many-to-many relationships use a join table `Z_<n><NAME>`.
/// - Entities are numbered 1… (`Z_ENT`) as ``EntityNumbering`` says: as the store's
///   `Z_PRIMARYKEY` says for a store that exists.
///
/// ```swift
/// let schema = StoreSchema(model: model, dialect: .sqlite)
/// schema.table(for: "Book")?.name            // "ZBOOK"
/// schema.table(for: "Book")?.column(for: "title")?.name // "ZTITLE"
/// ```
public struct StoreSchema: Sendable {
    /// The model whose entities the schema lays out.
    public let model: ManagedObjectModel
    /// The SQL dialect the names and types are spelled for.
    public let dialect: any SQLDialect
    /// Entity name → its table layout.
    public let tables: [String: EntityTable]
    /// Entity number → entity name.
    public let entityNames: [Int: String]
    /// Every join table, keyed by the name of the side that owns it (`entity.relationship`).
    public let joinTables: [String: JoinTable]

    /// How the entities are numbered (`Z_ENT`).
    public let numbering: EntityNumbering

    /// Order columns of ordered to-many relationships stored on their destination's table
    /// (an inverse's foreign key or a hidden one), by `entity.relationship` of the side that
    /// declares the relationship.
    let orderColumns: [String: String]
    /// Hidden foreign keys of to-many relationships without an inverse, by `entity.relationship`.
    let hiddenForeignKeys: [String: String]
    /// The order column a to-one's row gets a key in when the to-one is set: the column of
    /// the ordered to-many that is its inverse, by `entity.relationship` of the to-one, for
    /// every entity that has the to-one.
    let orderColumnsOfOrderedInverses: [String: String]

    /// The layout of `model`'s store with its entities numbered by `numbering`: a store's
    /// own (``EntityNumbering/stored(_:in:)``) for a store that exists, by default the
    /// numbering a new store is created with.
    ///
    /// `existing` is the store's own tables and columns, for a store that exists: where Core
    /// Data's rules allow more than one name (which side of a many-to-many names its join
    /// table, the order columns of an ordered one, the entity-type column beside a to-one's
    /// key, a to-many without inverse kept as a hidden foreign key or, in the first releases
    /// of this framework, a join table), the names the store has are taken. Without it, the
    /// names are the ones Core Data gives a new store (`StoreLayoutRules`).
    public init(model: ManagedObjectModel, dialect: some SQLDialect, numbering: EntityNumbering? = nil, existing: ExistingTables? = nil) {
        self.model = model
        self.dialect = dialect
        let numbering = numbering ?? Self.newStoreNumbering(model)
        self.numbering = numbering
        let numbers = numbering.numbers
        var entityNames: [Int: String] = [:]
        for (name, number) in numbers { entityNames[number] = name }
        let rules = StoreLayoutRules(model: model, numbers: numbers, existing: existing)

        // Columns per root table, shared by every entity of the hierarchy.
        var columnsByRoot: [String: [String: Column]] = [:]
        var usedNamesByRoot: [String: Set<String>] = [:]
        var tables: [String: EntityTable] = [:]
        for entity in model.entities {
            let root = model.rootEntity(of: entity)
            let rootTable = "Z" + root.name.uppercased()
            var columns = columnsByRoot[root.name] ?? [:]
            var used = usedNamesByRoot[root.name] ?? ["Z_PK", "Z_ENT", "Z_OPT"]
            // Inherited properties are declared on an ancestor; give each declaring
            // entity's properties a column once and share it with descendants.
            for ancestor in model.ancestors(of: entity).reversed() + [entity] {
                for relationship in ancestor.relationships.sorted(by: { $0.name < $1.name })
                where !relationship.isTransient && !relationship.isToMany {
                    let key = "\(ancestor.name).\(relationship.name)"
                    guard columns[key] == nil else { continue }
                    let name = Self.uniqueName("Z" + relationship.name.uppercased(), used: &used)
                    columns[key] = Column(
                        propertyName: relationship.name,
                        name: name,
                        kind: .foreignKey(destination: relationship.destinationEntityName)
                    )
                    if let typeColumn = rules.entityTypeColumn(of: relationship, keyColumn: name, inTable: rootTable) {
                        used.insert(typeColumn)
                        columns[key + "#type"] = Column(propertyName: relationship.name, name: typeColumn, kind: .entityType)
                    }
                }
                for attribute in ancestor.attributes.sorted(by: { $0.name < $1.name }) where !attribute.isTransient {
                    let key = "\(ancestor.name).\(attribute.name)"
                    guard columns[key] == nil else { continue }
                    let name = Self.uniqueName("Z" + attribute.name.uppercased(), used: &used)
                    columns[key] = Column(propertyName: attribute.name, name: name, kind: .attribute(attribute.type))
                }
            }
            columnsByRoot[root.name] = columns
            usedNamesByRoot[root.name] = used
        }

        // To-many relationships kept on their destination's table: the order column of an
        // ordered one whose inverse is to-one, the hidden key (and order column) of one
        // without an inverse.
        var orderColumns: [String: String] = [:]
        var hiddenForeignKeys: [String: String] = [:]
        for entity in model.entities {
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                guard let destination = model.entity(named: relationship.destinationEntityName) else { continue }
                let root = model.rootEntity(of: destination)
                let destinationTable = "Z" + root.name.uppercased()
                var used = usedNamesByRoot[root.name] ?? []
                let key = "\(entity.name).\(relationship.name)"
                switch rules.toManyStorage(of: relationship, in: entity, destinationTable: destinationTable) {
                case .inverseKey(let order):
                    guard let order else { break }
                    let name = Self.uniqueName(order, used: &used)
                    columnsByRoot[root.name, default: [:]][key + "#order"] = Column(propertyName: relationship.name, name: name, kind: .orderKey)
                    orderColumns[key] = dialect.name(name)
                case .hiddenKey(let column, let order):
                    let name = Self.uniqueName(column, used: &used)
                    columnsByRoot[root.name, default: [:]][key + "#hidden"] = Column(
                        propertyName: relationship.name,
                        name: name,
                        kind: .hiddenForeignKey(source: entity.name)
                    )
                    hiddenForeignKeys[key] = dialect.name(name)
                    if let order {
                        let orderName = Self.uniqueName(order, used: &used)
                        columnsByRoot[root.name, default: [:]][key + "#order"] = Column(
                            propertyName: relationship.name,
                            name: orderName,
                            kind: .orderKey
                        )
                        orderColumns[key] = dialect.name(orderName)
                    }
                case .joinTable:
                    break
                }
                usedNamesByRoot[root.name] = used
            }
        }

        for entity in model.entities {
            let root = model.rootEntity(of: entity)
            let all = columnsByRoot[root.name] ?? [:]
            var byProperty: [String: Column] = [:]
            var typeColumns: [String: Column] = [:]
            for owner in model.ancestors(of: entity).reversed() + [entity] {
                for (key, column) in all where key.hasPrefix(owner.name + ".") {
                    if column.kind.isProperty { byProperty[column.propertyName] = column }
                    if column.kind == .entityType { typeColumns[column.propertyName] = column }
                }
            }
            let ordered = all.values.sorted { lhs, rhs in
                // Keys, then attributes, then ordering keys; by name within each.
                (lhs.kind.sortRank, lhs.name) < (rhs.kind.sortRank, rhs.name)
            }
            tables[entity.name] = EntityTable(
                entityName: entity.name,
                entityNumber: numbers[entity.name]!,
                superNumber: entity.parentName.flatMap { numbers[$0] } ?? 0,
                rootEntityName: root.name,
                name: dialect.name("Z" + root.name.uppercased()),
                columnsByProperty: byProperty.mapValues { $0.named(dialect) },
                allColumns: ordered.map { $0.named(dialect) },
                entityNumbers: model.entityAndDescendants(of: entity).compactMap { numbers[$0.name] }.sorted(),
                entityTypeColumns: typeColumns.mapValues { $0.named(dialect) }
            )
        }

        // Join tables of many-to-many relationships (and, in stores of the first releases,
        // of to-many relationships without an inverse).
        var joinTables: [String: JoinTable] = [:]
        for entity in model.entities {
            for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
                let key = "\(entity.name).\(relationship.name)"
                guard joinTables[key] == nil, let names = rules.joinTable(of: relationship, in: entity) else { continue }
                let table = JoinTable(
                    name: dialect.name(names.table),
                    sourceEntity: names.owner.entity,
                    relationship: names.owner.relationship,
                    destinationEntity: names.destinationEntity,
                    inverseRelationship: names.inverse,
                    sourceColumn: dialect.name(names.sourceColumn),
                    destinationColumn: dialect.name(names.destinationColumn),
                    orderColumn: names.orderColumn.map { dialect.name($0) },
                    inverseOrderColumn: names.inverseOrderColumn.map { dialect.name($0) }
                )
                joinTables["\(names.owner.entity).\(names.owner.relationship)"] = table
                if let inverse = names.inverse { joinTables["\(names.destinationEntity).\(inverse)"] = table }
            }
        }

        self.tables = tables
        self.entityNames = entityNames
        self.joinTables = joinTables
        self.orderColumns = orderColumns
        self.hiddenForeignKeys = hiddenForeignKeys
        var inverseOrders: [String: String] = [:]
        for entity in model.entities {
            for relationship in entity.relationships where relationship.isToMany && relationship.isOrdered {
                guard let order = orderColumns["\(entity.name).\(relationship.name)"], let inverse = model.inverse(of: relationship),
                    !inverse.isToMany,
                    let destination = model.entity(named: relationship.destinationEntityName)
                else { continue }
                for holder in model.entityAndDescendants(of: destination) { inverseOrders["\(holder.name).\(inverse.name)"] = order }
            }
        }
        self.orderColumnsOfOrderedInverses = inverseOrders
    }

    /// The numbering a new store of `model` is created with: Core Data's, so that the store
    /// opens with Core Data on an Apple device.
    static func newStoreNumbering(_ model: ManagedObjectModel) -> EntityNumbering {
        .coreData(model)
    }

    private static func uniqueName(_ base: String, used: inout Set<String>) -> String {
        var name = base
        var suffix = 1
        while used.contains(name) {
            name = "\(base)\(suffix)"
            suffix += 1
        }
        used.insert(name)
        return name
    }

    /// The table layout of an entity.
    public func table(for entityName: String) -> EntityTable? { tables[entityName] }

    /// The join table of a many-to-many relationship, from either side; a sub-entity finds
    /// the one of the ancestor that declares the relationship.
    public func joinTable(entity: String, relationship: String) -> JoinTable? {
        if let table = joinTables["\(entity).\(relationship)"] { return table }
        guard let description = model.entity(named: entity) else { return nil }
        for ancestor in model.ancestors(of: description) {
            if let table = joinTables["\(ancestor.name).\(relationship)"] { return table }
        }
        return nil
    }

    /// Every distinct join table.
    public var allJoinTables: [JoinTable] {
        Array(Set(joinTables.values)).sorted { $0.name < $1.name }
    }

    /// Every root table, one per entity hierarchy.
    public var rootTables: [EntityTable] {
        model.entities.filter { $0.parentName == nil }.compactMap { tables[$0.name] }
    }

    /// How a relationship is stored.
    public func storage(of relationship: RelationshipDescription, in entity: EntityDescription) -> RelationshipStorage? {
        if relationship.isTransient { return nil }
        if !relationship.isToMany {
            guard let column = tables[entity.name]?.column(for: relationship.name) else { return nil }
            return .foreignKey(column: column.name)
        }
        if let inverse = model.inverse(of: relationship), !inverse.isToMany,
            let destinationTable = tables[relationship.destinationEntityName],
            let column = destinationTable.column(for: inverse.name)
        {
            return .inverseForeignKey(table: destinationTable, column: column.name)
        }
        if let hidden = declared(relationship, in: entity, from: hiddenForeignKeys), let destinationTable = tables[relationship.destinationEntityName]
        {
            return .hiddenForeignKey(table: destinationTable, column: hidden)
        }
        guard let join = joinTable(entity: entity.name, relationship: relationship.name) else { return nil }
        // The side is the declaring entity's: a sub-entity uses its ancestor's relationship.
        let declaring = ([entity] + model.ancestors(of: entity)).first { $0.relationships.contains { $0.name == relationship.name } } ?? entity
        return .joinTable(join, fromSource: join.sourceEntity == declaring.name && join.relationship == relationship.name)
    }

    /// The column keeping an ordered to-many relationship's order on its destination's table
    /// (`Z_FOK_PARENT`): when its inverse is to-one, or when it has none; `nil` for others, and
    /// where the store keeps no order.
    public func orderColumn(of relationship: RelationshipDescription, in entity: EntityDescription) -> String? {
        guard relationship.isOrdered, relationship.isToMany else { return nil }
        return declared(relationship, in: entity, from: orderColumns)
    }

    /// `values[entity.relationship]` for the entity or the ancestor that declares the relationship.
    private func declared<Value>(_ relationship: RelationshipDescription, in entity: EntityDescription, from values: [String: Value]) -> Value? {
        for owner in [entity] + model.ancestors(of: entity) {
            if let value = values["\(owner.name).\(relationship.name)"] { return value }
        }
        return nil
    }
}

/// How a relationship is stored in SQL.
public enum RelationshipStorage: Sendable, Hashable {
    /// A to-one: a foreign-key column on the entity's own table.
    case foreignKey(column: String)
    /// A to-many whose inverse is to-one: the inverse's foreign key on the destination table.
    case inverseForeignKey(table: EntityTable, column: String)
    /// A to-many without an inverse, as Core Data keeps it: a hidden foreign key on the
    /// destination's table holding the source's `Z_PK` (`ZCDCARTITEMMODIFIER.Z2MODIFIERS`).
    case hiddenForeignKey(table: EntityTable, column: String)
    /// A many-to-many: rows in a join table. `fromSource` tells which column is this side's.
    case joinTable(JoinTable, fromSource: Bool)
}
