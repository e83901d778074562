import Foundation

/// The one compiler from ``Expression`` and ``Predicate`` to ``SQL`` over Core Data's
/// layout: fetch conditions and sort terms here, value expressions of a migration in
/// `SQLCompiler+Values.swift`.
///
/// Every value is bound in the ``SQL`` it returns, never spliced into its text. Key paths through
/// to-one relationships become `LEFT JOIN`s; key paths through to-many relationships
/// (`ANY pages.number > 3`, `pages.@count`) become correlated subqueries.
///
/// String operators mean the same on every engine: the dialect spells them (see
/// ``SQLiteDialect`` and ``PostgresDialect``), and strings compare and sort by code point.
struct SQLCompiler {
    let schema: StoreSchema
    let entity: EntityDescription
    private var joins: [SQL] = []
    private var joinAliases: [String: String] = [:]
    private var aliasCounter = 1

    init(schema: StoreSchema, entity: EntityDescription) {
        self.schema = schema
        self.entity = entity
    }

    var d: any SQLDialect { schema.dialect }
    var model: ManagedObjectModel { schema.model }

    /// The `LEFT JOIN`s the key paths needed.
    var joinClause: SQL { joins.joined(separator: " ") }

    /// An operand of a comparison, resolved but not yet rendered: constants are encoded
    /// for the type of the other side.
    indirect enum Operand {
        case column(SQL, AttributeType)
        /// A foreign key or `Z_PK`: compared with objects and `nil`.
        case objectKey(SQL, entity: String)
        case computed(SQL, AttributeType?)
        case constant(AttributeValue)
        case object(ObjectID)
        case list([Operand])
        /// A to-many key path: the relationship, where it starts, and the rest of the path.
        case toMany(RelationshipDescription, owner: EntityDescription, alias: String, rest: [String])

        var attributeType: AttributeType? {
            switch self {
            case .column(_, let type): type
            case .computed(_, let type): type
            default: nil
            }
        }
    }

    // MARK: Predicates

    mutating func condition(_ predicate: Predicate) throws -> SQL {
        try condition(predicate, entity: entity, alias: "t0")
    }

    mutating func condition(_ predicate: Predicate, entity: EntityDescription, alias: String) throws -> SQL {
        switch predicate {
        case .true: return "1 = 1"
        case .false: return "1 = 0"
        case .and(let parts):
            guard !parts.isEmpty else { return "1 = 1" }
            return try "(\(parts.map { try condition($0, entity: entity, alias: alias) }.joined(separator: " AND ")))"
        case .or(let parts):
            guard !parts.isEmpty else { return "1 = 0" }
            return try "(\(parts.map { try condition($0, entity: entity, alias: alias) }.joined(separator: " OR ")))"
        case .not(let inner):
            // A comparison with nil is false in NSPredicate but NULL in SQL, and NOT NULL is
            // NULL: `IS NOT TRUE` makes the negation of such a comparison true, as NSPredicate does.
            return try "(\(condition(inner, entity: entity, alias: alias))) IS NOT TRUE"
        case .comparison(let comparison):
            return try self.comparison(comparison, entity: entity, alias: alias)
        }
    }

    private mutating func comparison(_ c: Comparison, entity: EntityDescription, alias: String) throws -> SQL {
        let lhs = try operand(c.lhs, entity: entity, alias: alias)
        // `ANY pages.number > 3`, or a to-many key path without a modifier (Core Data reads it as ANY).
        if case .toMany(let relationship, let owner, let ownerAlias, let rest) = lhs {
            let inner = Comparison(rest.isEmpty ? .evaluatedObject : .keyPath(rest), c.op, c.rhs, options: c.options)
            switch c.modifier {
            case .all:
                return try "NOT "
                    + exists(relationship, owner: owner, alias: ownerAlias) { compiler, destination, sub in
                        // A destination whose comparison is NULL (a nil value) fails ALL, as in NSPredicate.
                        "(\(try compiler.comparison(inner, entity: destination, alias: sub))) IS NOT TRUE"
                    }
            case .none:
                return try "NOT "
                    + exists(relationship, owner: owner, alias: ownerAlias) { compiler, destination, sub in
                        try compiler.comparison(inner, entity: destination, alias: sub)
                    }
            case .any, .direct:
                return try exists(relationship, owner: owner, alias: ownerAlias) { compiler, destination, sub in
                    try compiler.comparison(inner, entity: destination, alias: sub)
                }
            }
        }
        // `%@ IN pages`: membership in a to-many relationship.
        if c.op == .in, case .toMany(let relationship, let owner, let ownerAlias, let rest) = try operand(c.rhs, entity: entity, alias: alias) {
            let inner = Comparison(rest.isEmpty ? .evaluatedObject : .keyPath(rest), .equal, c.lhs, options: c.options)
            return try exists(relationship, owner: owner, alias: ownerAlias) { compiler, destination, sub in
                try compiler.comparison(inner, entity: destination, alias: sub)
            }
        }
        let rhs = try operand(c.rhs, entity: entity, alias: alias)
        return try render(lhs, c.op, rhs, options: c.options)
    }

    /// `EXISTS (SELECT 1 FROM <destination> WHERE <linked to owner> AND <body>)`.
    private mutating func exists(
        _ relationship: RelationshipDescription,
        owner: EntityDescription,
        alias: String,
        body: (inout SQLCompiler, EntityDescription, String) throws -> SQL
    ) throws -> SQL {
        "EXISTS (\(try correlatedSubquery(selecting: "1", relationship, owner: owner, alias: alias, body: body)))"
    }

    /// `SELECT <selection> FROM <destination> WHERE <linked to owner> AND <body>`: the rows
    /// a to-many relationship of the outer row reaches.
    private mutating func correlatedSubquery(
        selecting selection: SQL,
        _ relationship: RelationshipDescription,
        owner: EntityDescription,
        alias: String,
        body: (inout SQLCompiler, EntityDescription, String) throws -> SQL
    ) throws -> SQL {
        try correlatedSubquery(selecting: { _ in selection }, relationship, owner: owner, alias: alias, body: body)
    }

    /// The subquery selecting what `selection` makes of the destination table's alias.
    private mutating func correlatedSubquery(
        selecting selection: (String) -> SQL,
        _ relationship: RelationshipDescription,
        owner: EntityDescription,
        alias: String,
        body: (inout SQLCompiler, EntityDescription, String) throws -> SQL
    ) throws -> SQL {
        guard let destination = model.entity(named: relationship.destinationEntityName),
            let table = schema.table(for: destination.name),
            let storage = schema.storage(of: relationship, in: owner)
        else { throw unsupported("the relationship '\(relationship.name)' is not stored") }
        let sub = nextAlias()
        var from: SQL = "\(identifier: table.name) \(identifier: sub)"
        var link: SQL
        switch storage {
        case .inverseForeignKey(_, let column), .hiddenForeignKey(_, let column):
            link = "\(identifier: sub).\(identifier: column) = \(identifier: alias).\(storeName: "Z_PK")"
        case .joinTable(let join, let fromSource):
            let j = nextAlias()
            let mine = fromSource ? join.sourceColumn : join.destinationColumn
            let theirs = fromSource ? join.destinationColumn : join.sourceColumn
            from +=
                " JOIN \(identifier: join.name) \(identifier: j) ON \(identifier: j).\(identifier: theirs) = \(identifier: sub).\(storeName: "Z_PK")"
            link = "\(identifier: j).\(identifier: mine) = \(identifier: alias).\(storeName: "Z_PK")"
        case .foreignKey:
            throw unsupported("'\(relationship.name)' is to-one")
        }
        if let filter = SelectQuery(table: table, schema: schema).entityFilter(alias: sub) {
            link += " AND " + filter
        }
        // The sub-compiler's joins belong to the subquery; its aliases continue this one's.
        var inner = SQLCompiler(schema: schema, entity: destination)
        inner.aliasCounter = aliasCounter
        let condition = try body(&inner, destination, sub)
        aliasCounter = inner.aliasCounter
        let innerJoins: SQL = inner.joinClause.isEmpty ? "" : " \(inner.joinClause)"
        return "SELECT \(selection(sub)) FROM \(from)\(innerJoins) WHERE \(link) AND \(condition)"
    }

    private mutating func nextAlias() -> String {
        defer { aliasCounter += 1 }
        return "t\(aliasCounter)"
    }

    // MARK: Operands

    mutating func operand(_ expression: Expression, entity: EntityDescription, alias: String) throws -> Operand {
        switch expression {
        case .constant(let value): return .constant(value)
        case .object(let id): return .object(id)
        case .evaluatedObject: return .objectKey("\(identifier: alias).\(storeName: "Z_PK")", entity: entity.name)
        case .keyPath(let path): return try keyPath(path, entity: entity, alias: alias)
        case .variable(let name, _):
            throw ExpressionError(.unboundVariable, "the variable $\(name) has no value; pass it in substitutionVariables")
        case .aggregate(let items):
            return .list(try items.map { try operand($0, entity: entity, alias: alias) })
        case .arithmetic(let op, let lhs, let rhs):
            let l = try scalarSQL(try operand(lhs, entity: entity, alias: alias), hint: .double)
            let r = try scalarSQL(try operand(rhs, entity: entity, alias: alias), hint: .double)
            switch op {
            case .add: return .computed("(\(l) + \(r))", .double)
            case .subtract: return .computed("(\(l) - \(r))", .double)
            case .multiply: return .computed("(\(l) * \(r))", .double)
            case .divide: return .computed("(CAST(\(l) AS \(raw: d.doubleType)) / \(r))", .double)
            case .power: return .computed("power(\(l), \(r))", .double)
            }
        case .function(let name, let args):
            return try function(name, args, entity: entity, alias: alias)
        case .functionCall(_, let selector, _):
            throw unsupported("FUNCTION(…, '\(selector)') cannot run inside a fetch")
        }
    }

    private mutating func function(_ name: String, _ args: [Expression], entity: EntityDescription, alias: String) throws -> Operand {
        func single(_ compiler: inout SQLCompiler) throws -> SQL {
            guard args.count == 1 else { throw compiler.unsupported("\(name) takes one argument, got \(args.count)") }
            return try compiler.scalarSQL(try compiler.operand(args[0], entity: entity, alias: alias), hint: .string)
        }
        switch name.lowercased() {
        case "lowercase": return .computed("lower(\(try single(&self)))", .string)
        case "uppercase": return .computed("upper(\(try single(&self)))", .string)
        case "length": return .computed("length(\(try single(&self)))", .integer64)
        case "abs": return .computed("abs(\(try single(&self)))", .double)
        case "now": return .constant(.date(Date()))
        default: throw unsupported("the function '\(name)' is not available in fetches")
        }
    }

    /// Resolves a key path from `entity`: attributes, to-one joins, to-many hand-off, `@count`.
    mutating func keyPath(_ path: [String], entity: EntityDescription, alias: String) throws -> Operand {
        var current = entity
        var currentAlias = alias
        var prefix: [String] = []
        for (index, component) in path.enumerated() {
            let isLast = index == path.count - 1
            guard let table = schema.table(for: current.name) else { throw unknownKey(path, entity) }
            if component == "SELF" || component == "self" {
                if isLast { return .objectKey("\(identifier: currentAlias).\(storeName: "Z_PK")", entity: current.name) }
                continue
            }
            if let attribute = model.attribute(named: component, of: current) {
                guard isLast else {
                    throw ExpressionError(
                        .unknownKeyPath,
                        "'\(path.joined(separator: "."))': '\(component)' is an attribute, a key path cannot go past it"
                    )
                }
                guard !attribute.isTransient, let column = table.column(for: component) else {
                    throw ExpressionError(.unsupported, "'\(component)' of \(current.name) is transient and cannot be used in a fetch")
                }
                return .column("\(identifier: currentAlias).\(identifier: column.name)", attribute.type)
            }
            guard let relationship = model.relationship(named: component, of: current) else {
                throw unknownKey(path, current)
            }
            if relationship.isToMany {
                let rest = Array(path[(index + 1)...])
                if rest == ["@count"] {
                    return .computed(try countSubquery(relationship, owner: current, alias: currentAlias), .integer64)
                }
                if rest.count == 2, let operation = CollectionOperator(rawValue: rest[0]), operation.isAggregate {
                    return try aggregateSubquery(operation, of: rest[1], relationship, owner: current, alias: currentAlias)
                }
                return .toMany(relationship, owner: current, alias: currentAlias, rest: rest)
            }
            guard let column = table.column(for: component), let destination = model.entity(named: relationship.destinationEntityName),
                let destinationTable = schema.table(for: destination.name)
            else { throw unknownKey(path, current) }
            if isLast { return .objectKey("\(identifier: currentAlias).\(identifier: column.name)", entity: destination.name) }
            prefix.append(component)
            let key = prefix.joined(separator: ".") + "@" + alias
            if let existing = joinAliases[key] {
                currentAlias = existing
            } else {
                let joined = nextAlias()
                joins.append(
                    "LEFT JOIN \(identifier: destinationTable.name) \(identifier: joined) ON \(identifier: joined).\(storeName: "Z_PK") = \(identifier: currentAlias).\(identifier: column.name)"
                )
                joinAliases[key] = joined
                currentAlias = joined
            }
            current = destination
        }
        return .objectKey("\(identifier: currentAlias).\(storeName: "Z_PK")", entity: current.name)
    }

    /// `pages.@sum.number` as a correlated subquery: `@sum` of none is 0, as Key-Value
    /// Coding has it (SQL's `SUM` gives `NULL`); the others of none are `NULL`. A decimal
    /// column, text on SQLite, is aggregated as a number.
    private mutating func aggregateSubquery(
        _ operation: CollectionOperator,
        of key: String,
        _ relationship: RelationshipDescription,
        owner: EntityDescription,
        alias: String
    ) throws -> Operand {
        guard let destination = model.entity(named: relationship.destinationEntityName),
            let attribute = model.attribute(named: key, of: destination), !attribute.isTransient,
            let column = schema.table(for: destination.name)?.column(for: key)
        else {
            throw ExpressionError(
                .unknownKeyPath,
                "\(operation.rawValue) needs a stored attribute of \(relationship.destinationEntityName) after it, not '\(key)'"
            )
        }
        let asNumber = attribute.type == .decimal && d.storesDecimalsAsText
        let function = [CollectionOperator.sum: "sum", .average: "avg", .minimum: "min", .maximum: "max"][operation] ?? "max"
        let type: AttributeType = asNumber || operation == .average ? .double : attribute.type
        let doubleType = d.doubleType
        let subquery = try correlatedSubquery(
            selecting: { sub in
                let value: SQL =
                    asNumber
                    ? "CAST(\(identifier: sub).\(identifier: column.name) AS \(raw: doubleType))" : "\(identifier: sub).\(identifier: column.name)"
                return "\(raw: function)(\(value))"
            },
            relationship,
            owner: owner,
            alias: alias
        ) { _, _, _ in "1 = 1" }
        return .computed(operation == .sum ? "COALESCE((\(subquery)), 0)" : "(\(subquery))", type)
    }

    private mutating func countSubquery(_ relationship: RelationshipDescription, owner: EntityDescription, alias: String) throws -> SQL {
        "(\(try correlatedSubquery(selecting: "count(*)", relationship, owner: owner, alias: alias) { _, _, _ in "1 = 1" }))"
    }

    // MARK: Rendering

    /// A bound constant, encoded for the attribute type it is compared with.
    private func bindConstant(_ value: AttributeValue, as type: AttributeType?) -> SQL {
        let type = type ?? Self.naturalType(of: value)
        if type == .decimal, d.storesDecimalsAsText, let number = value.doubleValue {
            // Decimal columns hold exact text; compare them as numbers.
            return "\(DatabaseValue.double(number))"
        }
        return "\(d.databaseValue(value, type: type))"
    }

    static func naturalType(of value: AttributeValue) -> AttributeType {
        switch value {
        case .integer: .integer64
        case .double: .double
        case .decimal: .decimal
        case .string, .null: .string
        case .bool: .boolean
        case .date: .date
        case .binary: .binary
        case .uuid: .uuid
        case .uri: .uri
        }
    }

    /// SQL for a single-valued operand.
    private func scalarSQL(_ operand: Operand, hint: AttributeType?) throws -> SQL {
        switch operand {
        case .column(let sql, let type):
            return type == .decimal && d.storesDecimalsAsText ? "CAST(\(sql) AS \(raw: d.doubleType))" : sql
        case .computed(let sql, _): return sql
        case .objectKey(let sql, _): return sql
        case .constant(let value): return bindConstant(value, as: hint)
        case .object(let id):
            guard let pk = id.primaryKey else { throw unsupported("the object \(id) is not saved yet, so no fetch can match it") }
            return "\(pk)"
        case .list: throw unsupported("a list can only stand on the right of IN or BETWEEN")
        case .toMany(let relationship, _, _, _):
            throw unsupported("'\(relationship.name)' is a to-many relationship; use ANY, ALL, NONE or @count")
        }
    }

    private func render(_ lhs: Operand, _ op: ComparisonOperator, _ rhs: Operand, options: ComparisonOptions) throws -> SQL {
        let flags = Int32(options.rawValue)
        // The type a constant on one side is encoded as comes from the other side.
        let lhsHint = rhs.attributeType
        let rhsHint = lhs.attributeType

        func folded(_ sql: SQL) -> SQL { fold(sql, flags: flags) }

        switch op {
        case .equal, .notEqual:
            if case .constant(.null) = rhs { return "\(try scalarSQL(lhs, hint: nil)) IS \(raw: op == .equal ? "" : "NOT ")NULL" }
            if case .constant(.null) = lhs { return "\(try scalarSQL(rhs, hint: nil)) IS \(raw: op == .equal ? "" : "NOT ")NULL" }
            let l = try side(lhs, hint: lhsHint, flags: flags)
            let r = try side(rhs, hint: rhsHint, flags: flags)
            if op == .equal { return "\(l) = \(r)" }
            // NSPredicate's != is true for nil, unlike SQL's <>.
            return d.isDistinct(l, r)
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual:
            let l = try side(lhs, hint: lhsHint, flags: flags)
            let r = try side(rhs, hint: rhsHint, flags: flags)
            if lhs.attributeType != .string, rhs.attributeType == .string { return "\(l) \(raw: op.rawValue) \(codePointOrder(r))" }
            return "\(codePointOrder(l, when: lhs.attributeType == .string)) \(raw: op.rawValue) \(r)"
        case .between:
            guard case .list(let bounds) = rhs, bounds.count == 2 else {
                throw unsupported("BETWEEN needs two bounds, as in BETWEEN {1, 5}")
            }
            let l = codePointOrder(try side(lhs, hint: nil, flags: flags), when: lhs.attributeType == .string)
            return "\(l) BETWEEN \(try side(bounds[0], hint: rhsHint, flags: flags)) AND \(try side(bounds[1], hint: rhsHint, flags: flags))"
        case .in:
            let items: [Operand]
            switch rhs {
            case .list(let list): items = list
            case .constant(let value): items = [.constant(value)]
            default: throw unsupported("IN needs a list or a to-many relationship on its right")
            }
            guard !items.isEmpty else { return "1 = 0" }
            let l = try side(lhs, hint: nil, flags: flags)
            let list = try items.map { try side($0, hint: rhsHint, flags: flags) }
            return "\(l) IN (\(list.joined(separator: ", ")))"
        case .beginsWith, .endsWith, .contains, .like:
            func text(_ sql: SQL, _ operand: Operand) -> SQL { operand.attributeType == .string ? sql : d.castToText(sql) }
            let l = folded(text(try scalarSQL(lhs, hint: .string), lhs))
            let needle: StringNeedle
            if case .constant(let value) = rhs {
                guard let text = value.stringValue else { throw unsupported("\(op.rawValue) needs a string, got \(value.kindName)") }
                needle = .constant(text)
            } else {
                guard op != .like else { throw unsupported("LIKE needs a constant pattern") }
                needle = .expression(folded(text(try scalarSQL(rhs, hint: .string), rhs)))
            }
            return try d.stringComparison(op, l, needle, flags: flags)
        case .matches:
            guard case .constant(.string(let pattern)) = rhs else { throw unsupported("MATCHES needs a constant regular expression") }
            let text = try scalarSQL(lhs, hint: .string)
            let l = options.contains(.diacriticInsensitive) ? fold(text, flags: 2) : text
            return d.matches(l, pattern: pattern, caseInsensitive: options.contains(.caseInsensitive))
        }
    }

    /// One side of a comparison; strings are folded under `[c]`/`[d]`.
    private func side(_ operand: Operand, hint: AttributeType?, flags: Int32) throws -> SQL {
        if flags != 0 {
            if case .constant(.string(let text)) = operand {
                return d.foldedConstant(text, flags: flags)
            }
            if operand.attributeType == .string {
                return fold(try scalarSQL(operand, hint: hint), flags: flags)
            }
        }
        return try scalarSQL(operand, hint: hint)
    }

    /// `sql` folded the way `[c]` (flag 1) and `[d]` (flag 2) ask, as the dialect folds.
    func fold(_ sql: SQL, flags: Int32) -> SQL {
        flags == 0 ? sql : d.fold(sql, flags: flags)
    }

    /// `sql` compared by code point, when it is a string.
    private func codePointOrder(_ sql: SQL, when isString: Bool = true) -> SQL {
        isString ? d.codePointOrdered(sql) : sql
    }

    // MARK: Sorting

    mutating func sortTerm(_ descriptor: FetchRequest.SortDescriptor) throws -> SQL {
        let path = descriptor.key.split(separator: ".").map(String.init)
        let operand = try keyPath(path, entity: entity, alias: "t0")
        var sql = try scalarSQL(operand, hint: nil)
        if descriptor.caseInsensitive { sql = fold(sql, flags: 1) }
        sql = codePointOrder(sql, when: operand.attributeType == .string)
        // nil sorts first, as in Core Data; PostgreSQL's default is the other way. The
        // object itself (its primary key) is never nil: without the clause PostgreSQL reads
        // the key's index in order, where `NULLS FIRST` would make it sort every row.
        let isObjectItself = path.count == 1 && path[0].uppercased() == "SELF"
        let nulls = isObjectItself ? "" : d.nullOrdering(ascending: descriptor.ascending)
        return "\(sql) \(raw: descriptor.ascending ? "ASC" : "DESC")\(raw: nulls)"
    }

    // MARK: Errors

    private func unknownKey(_ path: [String], _ entity: EntityDescription) -> ExpressionError {
        ExpressionError(.unknownKeyPath, "the entity \(entity.name) has no property for the key path '\(path.joined(separator: "."))'")
    }

    func unsupported(_ message: String) -> ExpressionError {
        ExpressionError(.unsupported, message)
    }
}
