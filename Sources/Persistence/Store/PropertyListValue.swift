import Foundation

/// A property-list value, `Sendable` and comparable, for metadata keys kept verbatim.
public indirect enum PropertyListValue: Sendable, Hashable {
    case string(String)
    case integer(Int)
    case real(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// Converts a value from `PropertyListSerialization`; `nil` for anything else.
    init?(foundation value: Any) {
        switch value {
        case let v as String: self = .string(v)
        case let v as Bool where type(of: value) == Bool.self: self = .bool(v)
        case let v as Int: self = .integer(v)
        case let v as Double: self = .real(v)
        case let v as Date: self = .date(v)
        case let v as Data: self = .data(v)
        case let v as [Any]:
            self = .array(v.compactMap(PropertyListValue.init(foundation:)))
        case let v as [String: Any]:
            self = .dictionary(v.compactMapValues(PropertyListValue.init(foundation:)))
        case let v as [AnyHashable: Any]:
            var result: [String: PropertyListValue] = [:]
            for (key, element) in v {
                if let key = key.base as? String, let element = PropertyListValue(foundation: element) {
                    result[key] = element
                }
            }
            self = .dictionary(result)
        default: return nil
        }
    }

    /// The value as `PropertyListSerialization` takes it.
    var foundationValue: Any {
        switch self {
        case .string(let v): v
        case .integer(let v): v
        case .real(let v): v
        case .bool(let v): v
        case .date(let v): v
        case .data(let v): v
        case .array(let v): v.map(\.foundationValue)
        case .dictionary(let v): v.mapValues(\.foundationValue)
        }
    }
}
