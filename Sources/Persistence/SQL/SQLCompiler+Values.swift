/// Value expressions of a migration over `$source`, compiled to SQL over a source row, only
/// where SQL means exactly what the Swift evaluator does; `nil` otherwise.
///
/// Compiled: `$source.<attribute>` (numeric widening by `CAST`), constants (bound), `+ - *`
/// where a floating-point number takes part, and `stringByAppendingString:`. Not compiled,
/// because SQLite's meaning differs: integer-only arithmetic (overflow fails in SQLite but
/// becomes floating point in Swift), division (integer division, `NULL` for zero),
/// `uppercase:` and `lowercase:` (ASCII only), `length:` (code points, not characters).
///
/// The compiler's schema is the source store's and its entity the source entity; `row` is
/// the alias of the source row in the statement (`s` in an `INSERT … SELECT … FROM … s`).
extension SQLCompiler {
    /// An attribute whose value expression has no SQL equivalent.
    struct Untranslatable: Error, Sendable {
        let attribute: String
    }

    /// The SQL for `expression` as a value of `type`, or `nil`.
    func value(of expression: Expression, as type: AttributeType, row: String) throws -> SQL? {
        guard let (sql, sourceType) = try translate(expression, row: row) else { return nil }
        guard let sourceType else { return sql }
        if sourceType == type { return sql }
        // A number for a Boolean, as the Swift path has it (MigrationManager.boolean): 0 is
        // false, any other true, NULL stays NULL. A comparison is 0/1 in SQLite and a boolean
        // in PostgreSQL, each engine's Boolean column. Not for decimals, which SQLite keeps as text.
        if type == .boolean, sourceType.storageClass == .integer || sourceType.storageClass == .real, sourceType.isNumeric {
            return "(\(sql) <> 0)"
        }
        // A Boolean for a number: 1 or 0, NULL staying NULL, from SQLite's 0/1 and
        // PostgreSQL's boolean alike.
        if sourceType == .boolean, type.isNumeric, type.storageClass == .integer || type.storageClass == .real {
            let number: SQL = "(CASE WHEN \(sql) THEN 1 WHEN NOT \(sql) THEN 0 END)"
            return type.storageClass == .integer ? number : "CAST(\(number) AS \(raw: d.doubleType))"
        }
        guard sourceType.isNumeric, type.isNumeric else { return nil }
        switch (sourceType.storageClass, type.storageClass) {
        case (.integer, .integer): return sql
        case (.integer, .real), (.real, .real): return "CAST(\(sql) AS \(raw: d.doubleType))"
        default: return nil
        }
    }

    /// The destination column and SQL over the source row of each stored attribute of
    /// `entity` (of the `destination` model, in `table`) as `entityMapping` sets it: its
    /// value expression's SQL, `NULL` where it has none, and the attribute's default where a
    /// new object keeps it. The one place the set-based and streamed steps translate attributes.
    ///
    /// - Throws: ``Untranslatable`` naming the first attribute whose expression has no SQL equivalent.
    func attributeValues(
        of entityMapping: EntityMapping,
        into entity: EntityDescription,
        of destination: ManagedObjectModel,
        table: EntityTable,
        row: String
    ) throws -> [(column: String, value: SQL)] {
        var columns: [(column: String, value: SQL)] = []
        for attribute in destination.attributes(of: entity) where !attribute.isTransient {
            guard let column = table.column(for: attribute.name) else { continue }
            let expression = entityMapping.propertyMapping(named: attribute.name)?.valueExpression
            guard var sql = try expression.map({ try value(of: $0, as: attribute.type, row: row) }) ?? Optional("NULL") else {
                throw Untranslatable(attribute: attribute.name)
            }
            // A new object starts with its defaults; a value expression's nil keeps the
            // default only where the attribute is required, as the streamed path does.
            if let defaultValue = attribute.defaultValue, expression == nil || !attribute.isOptional {
                sql = "coalesce(\(sql), \(d.typedConstant(d.databaseValue(defaultValue, type: attribute.type), type: attribute.type)))"
            }
            columns.append((column.name, sql))
        }
        return columns
    }

    /// The SQL and, when known, the attribute type it yields (`nil` for NULL).
    private func translate(_ expression: Expression, row: String) throws -> (SQL, AttributeType?)? {
        switch expression {
        case .variable("source", let path) where path.count == 1:
            guard let attribute = model.attribute(named: path[0], of: entity), !attribute.isTransient,
                let column = schema.table(for: entity.name)?.column(for: attribute.name)
            else { return nil }
            return ("\(identifier: row).\(identifier: column.name)", attribute.type)
        case .constant(let value):
            switch value {
            case .null: return ("NULL", nil)
            case .integer: return ("\(d.databaseValue(value, type: .integer64))", .integer64)
            case .double: return ("\(d.databaseValue(value, type: .double))", .double)
            case .string: return ("\(d.databaseValue(value, type: .string))", .string)
            case .bool: return (d.typedConstant(d.databaseValue(value, type: .boolean), type: .boolean), .boolean)
            default: return nil
            }
        case .arithmetic(let op, let lhs, let rhs) where op == .add || op == .subtract || op == .multiply:
            guard let (l, lt) = try translate(lhs, row: row), let (r, rt) = try translate(rhs, row: row) else { return nil }
            let types = [lt, rt].compactMap { $0 }
            guard types.allSatisfy({ $0.storageClass == .integer || $0.storageClass == .real }) else { return nil }
            // Integer overflow becomes floating point in Swift's evaluator; SQLite would fail.
            let isInteger = types.allSatisfy { $0.storageClass == .integer }
            if isInteger { return nil }
            return ("(\(l) \(raw: op.rawValue) \(r))", .double)
        case .functionCall(let target, "stringByAppendingString:", let arguments) where arguments.count == 1:
            guard let (t, tt) = try translate(target, row: row), let (a, at) = try translate(arguments[0], row: row),
                [tt, at].allSatisfy({ $0 == nil || $0 == .string })
            else { return nil }
            return ("(\(t) || coalesce(\(a), ''))", .string)
        default:
            return nil
        }
    }
}

extension AttributeType {
    /// How SQLite stores values of the type.
    enum StorageClass { case integer, real, text, blob }

    var storageClass: StorageClass {
        switch self {
        case .integer16, .integer32, .integer64, .boolean: .integer
        case .double, .float, .date: .real
        case .string, .decimal, .uri: .text
        // Only a transient is Undefined, and transients are never stored.
        case .binary, .uuid, .transformable, .undefined: .blob
        }
    }
}
