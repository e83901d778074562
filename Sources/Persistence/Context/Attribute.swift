import Foundation

/// A Swift type an attribute value converts to and from.
public protocol AttributeValueConvertible: Sendable {
    /// The value, or `nil` when the attribute value is nil or of another kind.
    init?(attributeValue: AttributeValue)
    /// The value as an ``AttributeValue``, of the case its attribute type stores.
    var attributeValue: AttributeValue { get }
}

/// A typed key for an attribute, so app code reads and writes its records without casts.
///
/// ```swift
/// enum Publication {
///     static let title = Attribute<String>("title")
///     static let price = Attribute<Double>("price")
/// }
/// object[Publication.title] = "The first book"
/// let price = object[Publication.price] // Double?
/// ```
public struct Attribute<Value: AttributeValueConvertible>: Sendable, Hashable {
    /// The attribute's name in the entity, as the model spells it.
    public let name: String
    /// The key of the attribute named `name`; an entity without it reports the key when saved.
    public init(_ name: String) { self.name = name }
}

extension ManagedObject {
    /// The attribute's value as `Value`, `nil` when it is nil.
    public subscript<Value>(_ attribute: Attribute<Value>) -> Value? {
        get { Value(attributeValue: value(forKey: attribute.name)) }
        set { setValue(newValue?.attributeValue ?? .null, forKey: attribute.name) }
    }
}

extension String: AttributeValueConvertible {
    /// The text of a `.string` value; `nil` for any other kind.
    public init?(attributeValue: AttributeValue) {
        guard case .string(let v) = attributeValue else { return nil }
        self = v
    }
    /// The text as a `.string` value.
    public var attributeValue: AttributeValue { .string(self) }
}

extension Double: AttributeValueConvertible {
    /// The number of an `.integer`, `.double` or `.decimal` value, as a `Double`; `nil` for a Boolean or any other kind.
    public init?(attributeValue: AttributeValue) {
        guard let v = attributeValue.doubleValue, !(attributeValue.isBool) else { return nil }
        self = v
    }
    /// The number as a `.double` value.
    public var attributeValue: AttributeValue { .double(self) }
}

extension Float: AttributeValueConvertible {
    /// The number of an `.integer`, `.double` or `.decimal` value, as a `Float`; `nil` for a Boolean or any other kind.
    public init?(attributeValue: AttributeValue) {
        guard let v = Double(attributeValue: attributeValue) else { return nil }
        self = Float(v)
    }
    /// The number as a `.double` value.
    public var attributeValue: AttributeValue { .double(Double(self)) }
}

extension Int: AttributeValueConvertible {
    /// The number of an `.integer` value; `nil` for any other kind, or one that does not fit an `Int`.
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue, let i = Int(exactly: v) else { return nil }
        self = i
    }
    /// The number as an `.integer` value.
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int16: AttributeValueConvertible {
    /// The number of an `.integer` value; `nil` for any other kind, or one that does not fit an `Int16`.
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue, let i = Int16(exactly: v) else { return nil }
        self = i
    }
    /// The number as an `.integer` value.
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int32: AttributeValueConvertible {
    /// The number of an `.integer` value; `nil` for any other kind, or one that does not fit an `Int32`.
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue, let i = Int32(exactly: v) else { return nil }
        self = i
    }
    /// The number as an `.integer` value.
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int64: AttributeValueConvertible {
    /// The number of an `.integer` value; `nil` for any other kind.
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue else { return nil }
        self = v
    }
    /// The number as an `.integer` value.
    public var attributeValue: AttributeValue { .integer(self) }
}

extension Bool: AttributeValueConvertible {
    /// The flag of a `.bool` value; `nil` for any other kind (an integer is not read as a Boolean).
    public init?(attributeValue: AttributeValue) {
        guard case .bool(let v) = attributeValue else { return nil }
        self = v
    }
    /// The flag as a `.bool` value.
    public var attributeValue: AttributeValue { .bool(self) }
}

extension Decimal: AttributeValueConvertible {
    /// The number of a `.decimal` value; `nil` for any other kind.
    public init?(attributeValue: AttributeValue) {
        guard case .decimal(let v) = attributeValue else { return nil }
        self = v
    }
    /// The number as a `.decimal` value.
    public var attributeValue: AttributeValue { .decimal(self) }
}

extension Date: AttributeValueConvertible {
    /// The date of a `.date` value; `nil` for any other kind.
    public init?(attributeValue: AttributeValue) {
        guard case .date(let v) = attributeValue else { return nil }
        self = v
    }
    /// The date as a `.date` value.
    public var attributeValue: AttributeValue { .date(self) }
}

extension Data: AttributeValueConvertible {
    /// The bytes of a `.binary` value; `nil` for any other kind.
    public init?(attributeValue: AttributeValue) {
        guard case .binary(let v) = attributeValue else { return nil }
        self = v
    }
    /// The bytes as a `.binary` value.
    public var attributeValue: AttributeValue { .binary(self) }
}

extension UUID: AttributeValueConvertible {
    /// The UUID of a `.uuid` value; `nil` for any other kind.
    public init?(attributeValue: AttributeValue) {
        guard case .uuid(let v) = attributeValue else { return nil }
        self = v
    }
    /// The UUID as a `.uuid` value.
    public var attributeValue: AttributeValue { .uuid(self) }
}

extension URL: AttributeValueConvertible {
    /// The URL of a `.uri` value; `nil` for any other kind.
    public init?(attributeValue: AttributeValue) {
        guard case .uri(let v) = attributeValue else { return nil }
        self = v
    }
    /// The URL as a `.uri` value.
    public var attributeValue: AttributeValue { .uri(self) }
}

extension AttributeValue {
    var isBool: Bool { if case .bool = self { true } else { false } }
}
