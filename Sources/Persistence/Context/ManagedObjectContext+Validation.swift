import Foundation

extension ManagedObjectContext {
    /// The model's rules an object breaks: required values, types, ranges, lengths,
    /// required to-one relationships. To-many counts need the store and are checked by the save.
    static func validate(_ object: ManagedObject) -> [ValidationError.Issue] {
        let layout = object.layout
        let (id, values, toOne) = object.state.withLock { ($0.objectID, $0.values, $0.toOne) }
        var issues: [ValidationError.Issue] = []
        func issue(_ code: ValidationError.Issue.Code, _ key: String, _ message: String) {
            issues.append(.init(code: code, entity: layout.entity.name, objectID: id, key: key, message: message))
        }
        // Every attribute has a slot: a key set aside is one the entity does not have.
        for key in values.unknown.keys.sorted() {
            issue(.unknownKey, key, "\(layout.entity.name) has no attribute '\(key)'")
        }
        for (attribute, slot) in layout.validatedAttributes {
            let value = values.values[slot]
            if value.isNull {
                if !attribute.isOptional { issue(.missingValue, attribute.name, "\(attribute.name) is required") }
                continue
            }
            guard Self.value(value, fits: attribute.type) else {
                issue(.wrongType, attribute.name, "\(attribute.name) must be \(attribute.type.rawValue), got \(value.kindName) \(value)")
                continue
            }
            checkRange(value, attribute) { code, message in issue(code, attribute.name, message) }
        }
        for (name, slot) in layout.requiredToOneSlots where toOne.values[slot] == nil {
            issue(.missingValue, name, "\(name) is required")
        }
        return issues
    }

    static func value(_ value: AttributeValue, fits type: AttributeType) -> Bool {
        switch (value, type) {
        case (.integer(let v), _) where type.isInteger: type.integerRange!.contains(v)
        case (.double(let v), .float): v.isNaN || v.isInfinite || abs(v) <= Double(Float.greatestFiniteMagnitude)
        case (.double, .double), (.decimal, .decimal), (.string, .string), (.bool, .boolean), (.date, .date),
            (.binary, .binary), (.binary, .transformable), (.uuid, .uuid), (.uri, .uri):
            true
        default: false
        }
    }

    private static func checkRange(_ value: AttributeValue, _ attribute: AttributeDescription, report: (ValidationError.Issue.Code, String) -> Void) {
        let name = attribute.name
        switch value {
        case .string(let text):
            // Counting characters walks the whole string: only for a bounded attribute.
            guard attribute.minValue != nil || attribute.maxValue != nil else { return }
            let length = text.count
            if let min = attribute.minValue?.integerValue, length < min {
                report(.stringTooShort, "\(name) must be at least \(min) characters long, got \(length)")
            }
            if let max = attribute.maxValue?.integerValue, length > max {
                report(.stringTooLong, "\(name) must be at most \(max) characters long, got \(length)")
            }
        case .binary(let data):
            if let min = attribute.minValue?.integerValue, data.count < min {
                report(.stringTooShort, "\(name) must be at least \(min) bytes, got \(data.count)")
            }
            if let max = attribute.maxValue?.integerValue, data.count > max {
                report(.stringTooLong, "\(name) must be at most \(max) bytes, got \(data.count)")
            }
        case .date(let date):
            if let min = attribute.minValue.flatMap(Self.date), date < min {
                report(.valueTooSmall, "\(name) must not be before \(min), got \(date)")
            }
            if let max = attribute.maxValue.flatMap(Self.date), date > max {
                report(.valueTooLarge, "\(name) must not be after \(max), got \(date)")
            }
        default:
            guard let number = value.doubleValue else { return }
            if let min = attribute.minValue?.doubleValue, number < min {
                report(.valueTooSmall, "\(name) must be at least \(Self.format(min)), got \(Self.format(number))")
            }
            if let max = attribute.maxValue?.doubleValue, number > max {
                report(.valueTooLarge, "\(name) must be at most \(Self.format(max)), got \(Self.format(number))")
            }
        }
    }

    private static func date(_ bound: AttributeValue) -> Date? {
        switch bound {
        case .date(let date): date
        default: bound.doubleValue.map { Date(timeIntervalSinceReferenceDate: $0) }
        }
    }

    private static func format(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
