import Foundation

/// A stored (or transient) attribute of an entity, as in Core Data's `NSAttributeDescription`.
///
/// ```swift
/// let price = AttributeDescription(name: "price", type: .float, minValue: .double(0), maxValue: .double(1000))
/// ```
public struct AttributeDescription: Sendable, Hashable {
    /// The property name, e.g. `title`.
    public var name: String
    /// The attribute's type, which decides the values it takes and the column it is stored in.
    public var type: AttributeType
    /// Whether `nil` is a valid value. Xcode's default for a new attribute is `true`.
    public var isOptional: Bool
    /// Transient attributes live only in memory and are never stored.
    public var isTransient: Bool
    /// The value a new object starts with (`defaultValueString`).
    public var defaultValue: AttributeValue?
    /// The smallest allowed value (numbers, dates) or length (strings, binary data).
    public var minValue: AttributeValue?
    /// The largest allowed value (numbers, dates) or length (strings, binary data).
    public var maxValue: AttributeValue?
    /// The renaming identifier (`elementID`): the name this attribute had in an earlier version.
    public var renamingIdentifier: String?
    /// Changes the version hash without changing the schema, forcing a migration.
    public var versionHashModifier: String?
    /// Binary data that Core Data may keep in files beside the store ("Allows External
    /// Storage"). Stores of this framework keep every value in the database; in a store of
    /// Apple's Core Data the values are read where Core Data put them (``ExternalBinaryStorage``).
    public var allowsExternalBinaryDataStorage: Bool
    /// The name of the value transformer a Transformable attribute's bytes are made with
    /// (`valueTransformerName` in the model file); `nil` for Core Data's default,
    /// `NSSecureUnarchiveFromData`. See ``ValueTransformers``.
    public var valueTransformerName: String?
    /// The class a Transformable attribute's value is in the app (`customClassName`), kept
    /// so that the model is written back as it was read.
    public var customClassName: String?
    /// Free-form key/value pairs from the model editor.
    public var userInfo: [String: String]
    /// Whether Core Data's persistent history keeps the value of a deleted object
    /// (`preserveAfterDeletion`, "Preserve Value On Deletion"): it counts in Core Data's
    /// version hash, not in where the value is stored.
    public var preservesValueAfterDeletion = false

    /// An attribute with Xcode's defaults for a new one: optional, stored, no default value and no bounds.
    public init(
        name: String,
        type: AttributeType,
        isOptional: Bool = true,
        isTransient: Bool = false,
        defaultValue: AttributeValue? = nil,
        minValue: AttributeValue? = nil,
        maxValue: AttributeValue? = nil,
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil,
        allowsExternalBinaryDataStorage: Bool = false,
        valueTransformerName: String? = nil,
        customClassName: String? = nil,
        userInfo: [String: String] = [:]
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.defaultValue = defaultValue
        self.minValue = minValue
        self.maxValue = maxValue
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
        self.valueTransformerName = valueTransformerName
        self.customClassName = customClassName
        self.userInfo = userInfo
    }

    /// The identifier migrations match on: the renaming identifier if set, else the name.
    public var migrationIdentifier: String { renamingIdentifier ?? name }
}
