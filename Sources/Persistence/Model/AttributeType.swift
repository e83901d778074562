/// The type of an attribute, named as Xcode's model editor writes it in `attributeType`.
///
/// ```swift
/// let type = AttributeType(rawValue: "Integer 16") // .integer16
/// ```
public enum AttributeType: String, Sendable, Hashable, CaseIterable, Codable {
    /// A 16-bit integer (Core Data's `Integer 16`), held in ``AttributeValue/integer(_:)``.
    case integer16 = "Integer 16"
    /// A 32-bit integer (`Integer 32`).
    case integer32 = "Integer 32"
    /// A 64-bit integer (`Integer 64`).
    case integer64 = "Integer 64"
    /// A double-precision floating-point number.
    case double = "Double"
    /// A single-precision floating-point number, held as a `Double` in memory.
    case float = "Float"
    /// A decimal number (`Decimal`), exact in base 10.
    case decimal = "Decimal"
    /// A string.
    case string = "String"
    /// A Boolean.
    case boolean = "Boolean"
    /// A point in time.
    case date = "Date"
    /// Binary data.
    case binary = "Binary"
    /// A UUID.
    case uuid = "UUID"
    /// A URL (Core Data's `URI` attribute type).
    case uri = "URI"
    /// A value kept as the bytes a value transformer makes of it (a BLOB), read as `Data`
    /// unless a transformer is asked for; see ``AttributeDescription/valueTransformerName``.
    case transformable = "Transformable"
    /// Xcode's "Undefined" (Core Data's `NSUndefinedAttributeType`): a transient that holds
    /// any value in memory. Only transients have it; it is never stored, so no column, SQL
    /// type or version hash ever sees it. Xcode saves it without `attributeType`.
    case undefined = "Undefined"

    /// The types an attribute that is stored can have: all but ``undefined``.
    public static var storedCases: [AttributeType] { allCases.filter { $0 != .undefined } }

    /// Whether values of this type are integers.
    public var isInteger: Bool {
        switch self {
        case .integer16, .integer32, .integer64: true
        default: false
        }
    }

    /// Whether values of this type are numbers (integers, floating point or decimal).
    public var isNumeric: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .double, .float, .decimal: true
        default: false
        }
    }

    /// A number or a Boolean: what Core Data keeps as an `NSNumber`, and a lightweight
    /// migration turns into one another.
    public var isNumberOrBoolean: Bool { isNumeric || self == .boolean }

    /// The range an integer attribute of this type can hold.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        default: nil
        }
    }
}
