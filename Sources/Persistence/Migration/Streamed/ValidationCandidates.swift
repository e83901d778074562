/// The rows of an entity that might break the model's rules, found by one SQL scan: a
/// condition that holds for every row the Swift validation would refuse (and maybe for a
/// few it accepts). Only those rows are then loaded and validated in Swift, which decides.
///
/// Per stored attribute: NULL where it is required; on SQLite a storage class other than
/// the type's own (a text in an integer column); integers outside their type's range;
/// numbers outside min/max; strings and binary data longer than their maximum (SQL counts
/// code points or bytes, never fewer than the characters Swift counts). Rules SQL cannot
/// bound from one side (a minimum string length, date and decimal bounds) take every
/// non-NULL row as a candidate. Required to-one relationships: a NULL foreign key.
struct ValidationCandidates {
    let entity: EntityDescription
    let table: EntityTable
    let dialect: any SQLDialect

    init?(entity: EntityDescription, schema: StoreSchema) {
        guard !entity.isAbstract, let table = schema.table(for: entity.name) else { return nil }
        self.entity = entity
        self.table = table
        self.dialect = schema.dialect
    }

    /// The condition over the table's columns, or `nil` when no row can break a rule.
    func condition(model: ManagedObjectModel) -> SQL? {
        var conditions: [SQL] = []
        for attribute in model.attributes(of: entity) where !attribute.isTransient {
            guard let column = table.column(for: attribute.name)?.name else { continue }
            conditions += self.conditions(for: attribute, column: "\(identifier: column)")
        }
        for relationship in model.relationships(of: entity) where !relationship.isToMany && !relationship.isTransient && !relationship.isOptional {
            if let column = table.column(for: relationship.name)?.name { conditions.append("\(identifier: column) IS NULL") }
        }
        return conditions.isEmpty ? nil : conditions.joined(separator: " OR ")
    }

    private func conditions(for attribute: AttributeDescription, column c: SQL) -> [SQL] {
        var result: [SQL] = []
        if !attribute.isOptional { result.append("\(c) IS NULL") }
        let type = attribute.type
        if let mismatch = dialect.storageMismatch(c, type: type) { result.append(mismatch) }
        if let range = type.integerRange, type != .integer64 {
            result.append("\(c) < \(literal: range.lowerBound) OR \(c) > \(literal: range.upperBound)")
        }
        if type == .float { result.append("abs(\(c)) > \(literal: Double(Float.greatestFiniteMagnitude))") }
        let (min, max) = (attribute.minValue, attribute.maxValue)
        guard min != nil || max != nil else { return result }
        switch type {
        case .integer16, .integer32, .integer64, .double, .float:
            if let bound = min?.doubleValue { result.append("\(c) < \(literal: bound)") }
            if let bound = max?.doubleValue { result.append("\(c) > \(literal: bound)") }
        case .string, .uri:
            if min.map({ ($0.integerValue ?? 0) > 0 }) == true { result.append("\(c) IS NOT NULL") }
            if let bound = max?.integerValue { result.append("length(\(c)) > \(literal: bound)") }
        case .binary:
            let length = dialect.byteLength(c)
            if let bound = min?.integerValue { result.append("\(length) < \(literal: bound)") }
            if let bound = max?.integerValue { result.append("\(length) > \(literal: bound)") }
        default:
            result.append("\(c) IS NOT NULL")
        }
        return result
    }
}
