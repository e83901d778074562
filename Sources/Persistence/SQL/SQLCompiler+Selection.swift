extension SQLCompiler {
    /// A key path compiled as a column of a values fetch (``ManagedObjectContext/fetchValues(_:properties:)``).
    enum Selected {
        /// A value, decoded as an attribute of the type is.
        case value(SQL, AttributeType)
        /// The key of an object of the entity, whose hierarchy's root is `root` (a to-one
        /// relationship's destination), `NULL` for none.
        case object(SQL, entity: String, root: String)

        var sql: SQL {
            switch self {
            case .value(let sql, _), .object(let sql, _, _): sql
            }
        }
    }

    /// `keyPath` from the compiler's entity as a selected column: an attribute, one through
    /// to-one relationships (`publication.title`, a `LEFT JOIN`), a to-one relationship (its
    /// destination's key), or `@count` and the aggregates of a to-many relationship
    /// (`pages.@count`, `pages.@max.number`, a correlated subquery).
    mutating func selected(_ keyPath: String) throws -> Selected {
        let path = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        switch try self.keyPath(path, entity: entity, alias: "t0") {
        case .column(let sql, let type): return .value(sql, type)
        case .computed(let sql, let type): return .value(sql, type ?? .integer64)
        case .objectKey(let sql, let entity): return .object(sql, entity: entity, root: schema.table(for: entity)?.rootEntityName ?? entity)
        case .toMany(let relationship, _, _, _):
            throw unsupported(
                "'\(keyPath)' leads through the to-many relationship '\(relationship.name)'; fetch its @count or an aggregate such as @max.<attribute>"
            )
        case .constant, .object, .list:
            throw unsupported("'\(keyPath)' is not a property to fetch")
        }
    }
}
