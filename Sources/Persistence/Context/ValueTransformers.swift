import Foundation

/// Turns the bytes a Transformable attribute stores into a value and back, as a Core Data
/// `ValueTransformer` does for the attribute that names it.
///
/// ```swift
/// struct TagsTransformer: AttributeValueTransformer {
///     func value(from data: Data) throws -> [String] { try JSONDecoder().decode([String].self, from: data) }
///     func data(from value: [String]) throws -> Data { try JSONEncoder().encode(value) }
/// }
/// var transformers = ValueTransformers()
/// transformers.register(TagsTransformer(), as: "TagsTransformer")
/// let tags = try book.transformedValue(forKey: "tags", as: [String].self, in: transformers)
/// ```
public protocol AttributeValueTransformer<Value>: Sendable {
    associatedtype Value
    /// The value the stored bytes hold.
    func value(from data: Data) throws -> Value
    /// The bytes to store for a value.
    func data(from value: Value) throws -> Data
}

/// Value transformers by the name a model's Transformable attributes give
/// (`valueTransformerName`), as `ValueTransformer` names work in Core Data.
///
/// It starts with Core Data's default, `NSSecureUnarchiveFromData`
/// (``SecureUnarchiveFromDataTransformer``), which an attribute without a transformer name
/// uses too.
///
/// ```swift
/// var transformers = ValueTransformers()
/// transformers.register(ColorTransformer(), as: "ColorTransformer")
/// ```
public struct ValueTransformers: Sendable {
    /// The name of Core Data's default transformer for Transformable attributes.
    public static let secureUnarchiveFromDataName = "NSSecureUnarchiveFromData"

    private var transformers: [String: any AttributeValueTransformer]

    /// The built-in transformers: `NSSecureUnarchiveFromData`.
    public init() {
        transformers = [Self.secureUnarchiveFromDataName: SecureUnarchiveFromDataTransformer()]
    }

    /// Registers `transformer` under `name`, replacing any other of that name. A
    /// module-qualified name in a model (`App.ColorTransformer`) finds it by its last component.
    public mutating func register(_ transformer: some AttributeValueTransformer, as name: String) {
        transformers[name] = transformer
    }

    /// The names registered, sorted.
    public var names: [String] { transformers.keys.sorted() }

    /// The transformer registered under `name` (or, for a module-qualified name, its last
    /// component); the default one for `nil`.
    public func transformer(named name: String?) -> (any AttributeValueTransformer)? {
        guard let name, !name.isEmpty else { return transformers[Self.secureUnarchiveFromDataName] }
        if let found = transformers[name] { return found }
        if let dot = name.lastIndex(of: ".") { return transformers[String(name[name.index(after: dot)...])] }
        return nil
    }
}

/// Core Data's default transformer, `NSSecureUnarchiveFromData`: the stored bytes are a keyed
/// archive (`NSKeyedArchiver`) of a property-list value — a string, number, Boolean, date,
/// data, URL, array, dictionary or null — read and written with Foundation's
/// `NSKeyedUnarchiver` and `NSKeyedArchiver`, allowing those classes only.
public struct SecureUnarchiveFromDataTransformer: AttributeValueTransformer {
    /// The transformer; it has no settings.
    public init() {}

    static let allowedClasses: [AnyClass] = [
        NSString.self, NSNumber.self, NSDate.self, NSData.self, NSURL.self, NSArray.self, NSDictionary.self, NSNull.self,
    ]

    /// Unarchives the stored bytes into a property-list value.
    /// - Throws: When the bytes are not a keyed archive, or hold a class other than those allowed.
    public func value(from data: Data) throws -> PropertyListValue {
        let object = try NSKeyedUnarchiver.unarchivedObject(ofClasses: Self.allowedClasses, from: data)
        guard let object, let value = PropertyListValue(foundation: object) else {
            throw TransformError("the archive holds \(object.map { "a \(type(of: $0))" } ?? "nothing"), not a property-list value")
        }
        return value
    }

    /// Archives a property-list value with secure coding, as Core Data stores it.
    /// - Throws: Foundation's error when the value cannot be archived.
    public func data(from value: PropertyListValue) throws -> Data {
        try NSKeyedArchiver.archivedData(withRootObject: value.foundationValue, requiringSecureCoding: true)
    }

    struct TransformError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
