/// A model file or model description that cannot be used.
///
/// It names what is wrong and where: the file and line, the entity and property. Its
/// `description` stays short whatever the model holds: long names are quoted by their start
/// and length, and a message is at most ``longestMessage`` bytes.
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem a model error is, for code that handles some kinds itself.
    ///
    /// ```swift
    /// do { _ = try VersionedModel(contentsOf: url) } catch where error.code == .missingFile {
    ///     print("no model at \(error.file ?? url.path)")
    /// }
    /// ```
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let base: String
        /// The code's name, as `missingEntity`.
        public var description: String { base }
        /// A model file is not well-formed XML, or `.xccurrentversion` is not a property list: fix the file or export it again from Xcode.
        public static let malformedXML = Code(base: "malformedXML")
        /// A model folder, version or file is missing or cannot be read: check the path and its permissions.
        public static let missingFile = Code(base: "missingFile")
        /// An attribute's `attributeType` is not one Core Data knows, or is Undefined on a stored attribute:
        /// use one of ``AttributeType/storedCases``, or make the attribute transient.
        public static let unknownAttributeType = Code(base: "unknownAttributeType")
        /// A value in the file cannot be read: a default, minimum or maximum of the wrong type, a count
        /// that is not a whole number, or an unknown delete rule.
        public static let invalidValue = Code(base: "invalidValue")
        /// An element lacks an XML attribute it needs (a `name`, a `destinationEntity`, …), or
        /// `.xccurrentversion` names no version.
        public static let missingAttribute = Code(base: "missingAttribute")
        /// Two entities or two properties of one entity (with its ancestors) have the same name, or two
        /// store names would be spelled alike: rename one.
        public static let duplicateName = Code(base: "duplicateName")
        /// A parent entity or a relationship's destination entity is not in the model: add it or correct the name.
        public static let missingEntity = Code(base: "missingEntity")
        /// A relationship's inverse is not a relationship of the destination entity: add it there or correct `inverseName`.
        public static let missingInverse = Code(base: "missingInverse")
        /// A relationship's inverse does not lead back to the entity, or a many-to-many's two sides do not name each other:
        /// make both sides name each other.
        public static let inconsistentInverse = Code(base: "inconsistentInverse")
        /// An entity inherits from itself through its parents: remove one of the parent links.
        public static let inheritanceCycle = Code(base: "inheritanceCycle")
        /// A uniqueness constraint or fetch index names a property the entity does not store.
        public static let missingProperty = Code(base: "missingProperty")
        /// The current version that `.xccurrentversion` (or ``VersionedModel``'s initialiser) names is not among the model's versions.
        public static let unknownVersion = Code(base: "unknownVersion")
        /// A version lock (``ModelVersionLock``) that cannot be read: not JSON, not a lock, or
        /// of a later format. Write it again with `persistence lock`, or restore it from
        /// version control.
        public static let malformedLock = Code(base: "malformedLock")
        /// A model version changed since it was locked (``LockedVersionChange``): restore the
        /// version as it shipped and make the change in a new model version.
        public static let lockedVersionChanged = Code(base: "lockedVersionChanged")
        /// A table, column or index name the store would make from the model's names is
        /// longer than the database keeps (63 bytes on PostgreSQL).
        public static let nameTooLong = Code(base: "nameTooLong")
    }

    /// The most UTF-8 bytes a message keeps; the middle of a longer one is left out.
    public static let longestMessage = 4096

    /// What kind of problem it is.
    public var code: Code
    /// What is wrong, in a sentence.
    public var message: String
    /// The model file at fault, when it was read from one.
    public var file: String?
    /// The line in ``ModelError/file`` where the problem is, when known.
    public var line: Int?
    /// The entity at fault, when the problem is in one.
    public var entity: String?
    /// The attribute or relationship at fault, when the problem is in one.
    public var property: String?

    /// An error of kind `code`; a message longer than ``ModelError/longestMessage`` bytes is shortened in the middle.
    public init(_ code: Code, _ message: String, file: String? = nil, line: Int? = nil, entity: String? = nil, property: String? = nil) {
        self.code = code
        self.message = Self.bounded(message)
        self.file = file
        self.line = line
        self.entity = entity
        self.property = property
    }

    /// `file:line, entity 'E', property 'p': message`, each part where it is known.
    public var description: String {
        ModelError.located(message, file: file, line: line, entity: entity, property: property)
    }

    /// `file:line, entity 'E', property 'p': message`, each part where it is known: how
    /// model errors and warnings say where they are.
    static func located(_ message: String, file: String?, line: Int?, entity: String?, property: String?) -> String {
        var location: [String] = []
        if let file { location.append(line.map { "\(file):\($0)" } ?? file) }
        if let entity { location.append("entity \(quoted: entity)") }
        if let property { location.append("property \(quoted: property)") }
        return location.isEmpty ? message : "\(location.joined(separator: ", ")): \(message)"
    }

    /// The message, or its start and end when it is longer than ``longestMessage``: messages
    /// quote names shortened, and this keeps one that does not from growing with the model.
    private static func bounded(_ message: String) -> String {
        let bytes = message.utf8.count
        guard bytes > longestMessage else { return message }
        let head = message.prefix(utf8Bytes: longestMessage / 2)
        let tail = message.suffix(utf8Bytes: longestMessage / 4)
        return "\(head) … (\(bytes) bytes in all) … \(tail)"
    }
}
