import Foundation

/// A Swift type an attribute value converts to and from.
public protocol AttributeValueConvertible: Sendable {
    /// The value, or `nil` when the attribute value is nil or of another kind.
    init?(attributeValue: AttributeValue)
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
    public let name: String
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
    public init?(attributeValue: AttributeValue) {
        guard case .string(let v) = attributeValue else { return nil }
        self = v
    }
    public var attributeValue: AttributeValue { .string(self) }
}

extension Double: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard let v = attributeValue.doubleValue, !(attributeValue.isBool) else { return nil }
        self = v
    }
    public var attributeValue: AttributeValue { .double(self) }
}

extension Float: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard let v = Double(attributeValue: attributeValue) else { return nil }
        self = Float(v)
    }
    public var attributeValue: AttributeValue { .double(Double(self)) }
}

extension Int: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue, let i = Int(exactly: v) else { return nil }
        self = i
    }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int16: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue, let i = Int16(exactly: v) else { return nil }
        self = i
    }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int32: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue, let i = Int32(exactly: v) else { return nil }
        self = i
    }
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
}

extension Int64: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let v) = attributeValue else { return nil }
        self = v
    }
    public var attributeValue: AttributeValue { .integer(self) }
}

extension Bool: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard case .bool(let v) = attributeValue else { return nil }
        self = v
    }
    public var attributeValue: AttributeValue { .bool(self) }
}

extension Decimal: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard case .decimal(let v) = attributeValue else { return nil }
        self = v
    }
    public var attributeValue: AttributeValue { .decimal(self) }
}

extension Date: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard case .date(let v) = attributeValue else { return nil }
        self = v
    }
    public var attributeValue: AttributeValue { .date(self) }
}

extension Data: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard case .binary(let v) = attributeValue else { return nil }
        self = v
    }
    public var attributeValue: AttributeValue { .binary(self) }
}

extension UUID: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard case .uuid(let v) = attributeValue else { return nil }
        self = v
    }
    public var attributeValue: AttributeValue { .uuid(self) }
}

extension URL: AttributeValueConvertible {
    public init?(attributeValue: AttributeValue) {
        guard case .uri(let v) = attributeValue else { return nil }
        self = v
    }
    public var attributeValue: AttributeValue { .uri(self) }
}

extension AttributeValue {
    var isBool: Bool { if case .bool = self { true } else { false } }
}
