extension ManagedObjectModel {
    /// The longest table, column or index name a store may have, in UTF-8 bytes.
    ///
    /// PostgreSQL keeps the first 63 bytes of a name (`NAMEDATALEN` − 1) and drops the rest
    /// without an error, so two names that differ only further on become one there. SQLite
    /// has no such limit, but a model is meant for either engine, so the limit holds for both.
    public static let longestStoreName = 63

    /// Refuses a model whose names would make store names the engines cannot keep apart:
    /// tables and columns longer than ``longestStoreName`` as the store spells them
    /// (`title` → `ZTITLE`, `ztitle` on PostgreSQL), or names equal to another once the
    /// engine ignores case or, for the secondary indexes PostgreSQL shortens itself, once
    /// shortened.
    ///
    /// Runs after the other checks: ``StoreSchema`` needs a model whose destinations exist.
    func validateStoreNames(declaredOrder: [EntityDescription]) throws(ModelError) {
        // The names people write first, on their own and in the order they are declared;
        // a huge name is refused here, before a schema is built from it.
        for entity in declaredOrder {
            if entity.parentName == nil {
                try checkLength(
                    StoreName(
                        "Z" + entity.name.uppercased(),
                        "the table of entity \(quoted: entity.name)",
                        entity: entity.name,
                        madeOf: [entity.name]
                    )
                )
            }
            for attribute in entity.attributes where !attribute.isTransient {
                try checkLength(
                    StoreName(
                        "Z" + attribute.name.uppercased(),
                        "the column of attribute \(quoted: attribute.name)",
                        entity: entity.name,
                        property: attribute.name,
                        madeOf: [attribute.name]
                    )
                )
            }
            for relationship in entity.relationships where !relationship.isTransient && !relationship.isToMany {
                try checkLength(
                    StoreName(
                        "Z" + relationship.name.uppercased(),
                        "the column of relationship \(quoted: relationship.name)",
                        entity: entity.name,
                        property: relationship.name,
                        madeOf: [relationship.name]
                    )
                )
            }
        }
        // Then every name the schema makes, as each engine spells it.
        for dialect in StoreEngines.dialects {
            let names = StoreSchema(model: self, dialect: dialect).storeNames()
            // A secondary index only needs a name of its own: PostgreSQL shortens a longer
            // look-up index's name, and the store finds it by its table, never by that name;
            // a model index's long name the schema shortens itself (``StoreSchema/modelIndexName(_:)``).
            for name in names.relations + names.columns.flatMap(\.value) where !name.isSecondaryIndex {
                try checkLength(name)
            }
            try checkDistinct(names.relations, dialect: dialect)
            for (_, columns) in names.columns.sorted(by: { $0.key < $1.key }) {
                try checkDistinct(columns, dialect: dialect)
            }
        }
    }

    private func checkLength(_ name: StoreName) throws(ModelError) {
        let bytes = name.name.utf8.count
        let excess = bytes - Self.longestStoreName
        guard excess > 0 else { return }
        let fix: String
        if name.madeOf.count == 1, let part = name.madeOf.first {
            fix = "rename \(quoted: part) to at most \(max(part.utf8.count - excess, 1)) bytes"
        } else {
            fix = "shorten " + name.madeOf.map { "\(quoted: $0)" }.joined(separator: " or ") + " by \(excess) bytes in all"
        }
        throw ModelError(
            .nameTooLong,
            "\(name.role) would be named \(quoted: name.name), \(bytes) bytes, and PostgreSQL keeps only the first "
                + "\(Self.longestStoreName) bytes of a name (names that differ only after that would be one); \(fix)",
            entity: name.entity,
            property: name.property
        )
    }

    /// Two names the engine would take for one. The store spells names in capitals on
    /// SQLite (which compares them ignoring ASCII case) and in lower case on PostgreSQL, so
    /// names that differ only in case in the model can be one name in the store.
    private func checkDistinct(_ names: [StoreName], dialect: any SQLDialect) throws(ModelError) {
        var seen: [String: StoreName] = [:]
        for name in names {
            let key = dialect.nameIdentity(name.name)
            guard let first = seen[key] else {
                seen[key] = name
                continue
            }
            let spelling = dialect.nameFoldingReason
            throw ModelError(
                .duplicateName,
                "\(first.role) and \(name.role) would both be named \(quoted: name.name)\(spelling); rename one of them",
                entity: name.entity,
                property: name.property
            )
        }
    }
}

/// A name a store would use, with what it names, for messages.
struct StoreName {
    var name: String
    /// What it names, e.g. "the column of attribute 'title'".
    var role: String
    var entity: String?
    var property: String?
    /// The model's names it is made of: what to shorten when it is too long.
    var madeOf: [String]
    /// A secondary index, whose name PostgreSQL may shorten.
    var isSecondaryIndex = false

    init(_ name: String, _ role: String, entity: String? = nil, property: String? = nil, madeOf: [String] = [], isSecondaryIndex: Bool = false) {
        self.name = name
        self.role = role
        self.entity = entity
        self.property = property
        self.madeOf = madeOf
        self.isSecondaryIndex = isSecondaryIndex
    }
}

extension StoreSchema {
    /// Every name the store creates for this schema, as this dialect spells it: tables and
    /// indexes, which share one namespace on both engines, the store's own tables among them;
    /// and each table's columns, by table.
    func storeNames() -> (relations: [StoreName], columns: [String: [StoreName]]) {
        let d = dialect
        var relations: [StoreName] = []
        var columns: [String: [StoreName]] = [:]
        for table in ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE", "Z_MIGRATIONASSOCIATION"] {
            let tableName = StoreName(d.name(table), "the store's table '\(d.name(table))'")
            relations.append(tableName)
            if table != "Z_MODELCACHE" { relations.append(contentsOf: primaryKeyIndex(of: tableName)) }
        }
        for index in ["Z_MIGRATIONASSOCIATION_SOURCE", "Z_MIGRATIONASSOCIATION_DESTINATION"] {
            relations.append(StoreName(d.name(index), "the store's index '\(d.name(index))'", isSecondaryIndex: true))
        }
        let owners = columnOwners()
        let fixedColumns = ["Z_PK", "Z_ENT", "Z_OPT"].map { d.name($0) }
        for table in rootTables {
            let root = table.entityName
            let tableName = StoreName(table.name, "the table of entity \(quoted: root)", entity: root, madeOf: [root])
            relations.append(tableName)
            relations.append(contentsOf: primaryKeyIndex(of: tableName))
            var tableColumns = fixedColumns.map { StoreName($0, "the column '\($0)'", entity: root) }
            var columnNames: [String: StoreName] = [:]
            for column in table.allColumns {
                let owner =
                    owners["\(table.rootEntityName).\(column.name)"]
                    ?? StoreName(column.name, "the column '\(column.name)' of the table of \(quoted: root)", entity: root)
                tableColumns.append(owner)
                columnNames[column.name] = owner
            }
            columns[table.name] = tableColumns
            for index in indexes(of: table) {
                switch index.purpose {
                case .uniqueness(let entity, let properties):
                    relations.append(
                        StoreName(
                            index.name,
                            "the unique index of \(quoted: entity)'s constraint on " + properties.joined(separator: ", "),
                            entity: entity,
                            madeOf: [entity] + properties,
                            isSecondaryIndex: true
                        )
                    )
                    continue
                case .fetchIndex(let entity, let name):
                    relations.append(
                        StoreName(
                            index.name,
                            "the index of \(quoted: entity)'s fetch index \(quoted: name)",
                            entity: entity,
                            madeOf: [entity, name],
                            isSecondaryIndex: true
                        )
                    )
                    continue
                case .lookup: break
                }
                if let column = index.columns.first.flatMap({ columnNames[$0] }), index.columns.count == 1, column.property != nil {
                    relations.append(
                        StoreName(
                            index.name,
                            "the index on \(column.role)",
                            entity: column.entity,
                            property: column.property,
                            madeOf: [root] + column.madeOf,
                            isSecondaryIndex: true
                        )
                    )
                } else {
                    relations.append(
                        StoreName(
                            index.name,
                            "the index on \(d.name("Z_ENT")) of the table of entity \(quoted: root)",
                            entity: root,
                            madeOf: [root],
                            isSecondaryIndex: true
                        )
                    )
                }
            }
        }
        for join in allJoinTables {
            let entity = join.sourceEntity
            let property = join.relationship
            let relationship = "relationship \(quoted: entity + "." + property)"
            let parts = [property] + (join.inverseRelationship.map { [$0] } ?? [])
            let tableName = StoreName(join.name, "the join table of \(relationship)", entity: entity, property: property, madeOf: [property])
            relations.append(tableName)
            relations.append(contentsOf: primaryKeyIndex(of: tableName))
            var joinColumns = [
                StoreName(
                    join.sourceColumn,
                    "the source column of the join table of \(relationship)",
                    entity: entity,
                    property: property,
                    madeOf: [join.inverseRelationship ?? property]
                ),
                StoreName(
                    join.destinationColumn,
                    "the destination column of the join table of \(relationship)",
                    entity: entity,
                    property: property,
                    madeOf: [property]
                ),
            ]
            if let order = join.orderColumn {
                joinColumns.append(
                    StoreName(order, "the order column of the join table of \(relationship)", entity: entity, property: property, madeOf: [property])
                )
            }
            columns[join.name] = joinColumns
            for index in indexes(of: join) {
                relations.append(
                    StoreName(
                        index.name,
                        "the index of the join table of \(relationship)",
                        entity: entity,
                        property: property,
                        madeOf: parts,
                        isSecondaryIndex: true
                    )
                )
            }
        }
        return (relations, columns)
    }

    /// The names the engine gives a table's own objects (PostgreSQL's `<table>_pkey`), which
    /// share the tables' namespace.
    private func primaryKeyIndex(of table: StoreName) -> [StoreName] {
        dialect.implicitNames(ofTable: table.name).map { implicit in
            StoreName(implicit.name, "\(implicit.role) of \(table.role)", entity: table.entity, property: table.property, madeOf: table.madeOf)
        }
    }

    /// The stored attributes and to-one relationships, and the order columns of ordered
    /// to-many relationships, by `<root entity>.<column>`: who declares each column.
    private func columnOwners() -> [String: StoreName] {
        var owners: [String: StoreName] = [:]
        for entity in model.entities {
            guard let table = tables[entity.name] else { continue }
            for attribute in entity.attributes where !attribute.isTransient {
                guard let column = table.column(for: attribute.name) else { continue }
                owners["\(table.rootEntityName).\(column.name)"] = StoreName(
                    column.name,
                    "the column of attribute \(quoted: entity.name + "." + attribute.name)",
                    entity: entity.name,
                    property: attribute.name,
                    madeOf: [attribute.name]
                )
            }
            for relationship in entity.relationships where !relationship.isTransient {
                if !relationship.isToMany, let column = table.column(for: relationship.name) {
                    owners["\(table.rootEntityName).\(column.name)"] = StoreName(
                        column.name,
                        "the column of relationship \(quoted: entity.name + "." + relationship.name)",
                        entity: entity.name,
                        property: relationship.name,
                        madeOf: [relationship.name]
                    )
                }
                // An ordered to-many relationship orders its destinations in a column of their table.
                guard relationship.isOrdered, relationship.isToMany, let inverse = model.inverse(of: relationship), !inverse.isToMany,
                    let destination = tables[relationship.destinationEntityName]
                else { continue }
                let orderColumns = destination.allColumns.filter { $0.kind == .orderKey && $0.propertyName == relationship.name }
                for column in orderColumns where owners["\(destination.rootEntityName).\(column.name)"] == nil {
                    owners["\(destination.rootEntityName).\(column.name)"] = StoreName(
                        column.name,
                        "the order column of relationship \(quoted: entity.name + "." + relationship.name)",
                        entity: entity.name,
                        property: relationship.name,
                        madeOf: [inverse.name]
                    )
                }
            }
        }
        return owners
    }
}
