import Persistence

/// A field of a request body: left out, sent as `null`, or sent with a value. PUT and
/// PATCH treat the first two differently.
enum FieldValue<Value: Sendable>: Sendable {
    case absent
    case null
    case value(Value)
}

/// Reads a body's fields by name and type, collecting every problem before refusing it,
/// so a client learns about all of its mistakes from one response.
///
/// ```swift
/// var reader = FieldReader(fields, writable: ["title", "price"], readOnly: ["id"], resource: "publication")
/// let title = reader.string("title")
/// let price = reader.number("price")
/// try reader.finish()   // 400 listing unknown, read-only and mistyped fields
/// ```
struct FieldReader {
    private let fields: [String: JSONValue]
    private(set) var errors: [Problem.FieldError] = []
    /// Texts over their limit: well-formed, but more than the API stores (422, not 400).
    private(set) var tooLong: [Problem.FieldError] = []
    private let resource: String

    init(_ fields: [String: JSONValue], writable: [String], readOnly: [String], resource: String) {
        self.fields = fields
        self.resource = resource
        for name in fields.keys.sorted() where !writable.contains(name) {
            if readOnly.contains(name) {
                errors.append(.init(field: name, code: "readOnly", message: "\(name) is read-only; leave it out"))
            } else {
                errors.append(
                    .init(
                        field: name,
                        code: "unknownField",
                        message: "a \(resource) has no field '\(name)'; the writable fields are \(writable.joined(separator: ", "))"
                    )
                )
            }
        }
    }

    /// A string of at most `maxLength` Unicode scalars and without NUL.
    mutating func string(_ name: String, maxLength: Int) -> FieldValue<String> {
        switch fields[name] {
        case nil: return .absent
        case .null: return .null
        case .string(let text):
            switch TextLimit.refusal(of: text, field: name, maximum: maxLength) {
            case .invalidCharacter(let error)?:
                errors.append(error)
                return .absent
            case .tooLong(let error)?:
                tooLong.append(error)
                return .absent
            case nil:
                break
            }
            return .value(text)
        case let other?:
            wrongType(name, expected: "a string", got: other)
            return .absent
        }
    }

    mutating func number(_ name: String) -> FieldValue<Double> {
        switch fields[name] {
        case nil: return .absent
        case .null: return .null
        case .number(let number) where number.isFinite: return .value(number)
        case .number:
            errors.append(.init(field: name, code: "wrongType", message: "\(name) must be a finite number"))
            return .absent
        case let other?:
            wrongType(name, expected: "a number", got: other)
            return .absent
        }
    }

    /// A whole number that fits `range` (the attribute's integer type; the model's own
    /// bounds are the save's to check).
    mutating func integer(_ name: String, in range: ClosedRange<Int64>) -> FieldValue<Int64> {
        switch number(name) {
        case .absent: return .absent
        case .null: return .null
        case .value(let number):
            guard number.rounded() == number, let whole = Int64(exactly: number), range.contains(whole) else {
                errors.append(
                    .init(
                        field: name,
                        code: "wrongType",
                        message:
                            "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got \(JSONValue.number(number).description)"
                    )
                )
                return .absent
            }
            return .value(whole)
        }
    }

    private mutating func wrongType(_ name: String, expected: String, got value: JSONValue) {
        errors.append(.init(field: name, code: "wrongType", message: "\(name) must be \(expected) or null, got \(value.kindName)"))
    }

    /// Refuses the body with every problem found: a 400 when something is not a
    /// \(resource) at all, else a 422 for texts over their limit.
    func finish() throws(Problem) {
        guard errors.isEmpty else {
            let all = errors + tooLong
            throw Problem.invalidBody("the body is not a \(resource): " + all.map(\.message).joined(separator: "; "), errors: all)
        }
        guard tooLong.isEmpty else {
            throw Problem(
                .unprocessableContent,
                type: .validationFailed,
                title: "The \(resource) breaks the API's limits",
                detail: tooLong.map(\.message).joined(separator: "; "),
                errors: tooLong
            )
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON with sorted keys, as error messages quote it.
    public var description: String { String(decoding: serialized(sortedKeys: true), as: UTF8.self) }
}

extension ManagedObject {
    /// Stores a body's field: `absent` keeps the current value (PATCH) unless `replacing`
    /// (POST, PUT), when it becomes the attribute's default, as for a new object.
    func write<Value>(_ field: FieldValue<Value>, forKey key: String, replacing: Bool, _ convert: (Value) -> AttributeValue) {
        switch field {
        case .absent:
            if replacing { setValue(entity.attribute(named: key)?.defaultValue ?? .null, forKey: key) }
        case .null:
            setValue(.null, forKey: key)
        case .value(let value):
            setValue(convert(value), forKey: key)
        }
    }
}
