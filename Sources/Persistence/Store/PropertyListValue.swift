import Foundation

/// A property-list value, `Sendable` and comparable: metadata keys kept verbatim, and the
/// values Core Data's default transformer (`NSSecureUnarchiveFromData`) archives, which adds
/// URLs and null to the property-list types.
public indirect enum PropertyListValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// An integer.
    case integer(Int)
    /// A floating-point number.
    case real(Double)
    /// A Boolean.
    case bool(Bool)
    /// A date.
    case date(Date)
    /// Bytes.
    case data(Data)
    /// An array, in its order.
    case array([PropertyListValue])
    /// A dictionary with string keys.
    case dictionary([String: PropertyListValue])
    /// Only in keyed archives: property lists have no URL.
    case url(URL)
    /// Only in keyed archives (`NSNull`): property lists have no null.
    case null

    /// Converts a value from `PropertyListSerialization`; `nil` for anything else.
    init?(foundation value: Any) {
        switch value {
        case let v as String: self = .string(v)
        case is NSNull: self = .null
        case let v as URL: self = .url(v)
        case let v as Bool where type(of: value) == Bool.self: self = .bool(v)
        // An unarchived Boolean is an NSNumber of a C `char`.
        case let v as NSNumber where String(cString: v.objCType) == "c": self = .bool(v.boolValue)
        // A whole double stays a double, where bridging to Int would take it.
        case let v as NSNumber where ["d", "f"].contains(String(cString: v.objCType)): self = .real(v.doubleValue)
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
        case .url(let v): v
        case .null: NSNull()
        }
    }
}
