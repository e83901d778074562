/// A model file or model description that cannot be used.
///
/// It names what is wrong and where: the file and line, the entity and property. Its
/// `description` stays short whatever the model holds: long names are quoted by their start
/// and length, and a message is at most ``longestMessage`` bytes.
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let base: String
        public var description: String { base }
        public static let malformedXML = Code(base: "malformedXML")
        public static let missingFile = Code(base: "missingFile")
        public static let unknownAttributeType = Code(base: "unknownAttributeType")
        public static let invalidValue = Code(base: "invalidValue")
        public static let missingAttribute = Code(base: "missingAttribute")
        public static let duplicateName = Code(base: "duplicateName")
        public static let missingEntity = Code(base: "missingEntity")
        public static let missingInverse = Code(base: "missingInverse")
        public static let inconsistentInverse = Code(base: "inconsistentInverse")
        public static let inheritanceCycle = Code(base: "inheritanceCycle")
        /// A uniqueness constraint or fetch index names a property the entity does not store.
        public static let missingProperty = Code(base: "missingProperty")
        public static let unknownVersion = Code(base: "unknownVersion")
        /// A table, column or index name the store would make from the model's names is
        /// longer than the database keeps (63 bytes on PostgreSQL).
        public static let nameTooLong = Code(base: "nameTooLong")
    }

    /// The most UTF-8 bytes a message keeps; the middle of a longer one is left out.
    public static let longestMessage = 4096

    public var code: Code
    /// What is wrong, in a sentence.
    public var message: String
    public var file: String?
    public var line: Int?
    public var entity: String?
    public var property: String?

    public init(_ code: Code, _ message: String, file: String? = nil, line: Int? = nil, entity: String? = nil, property: String? = nil) {
        self.code = code
        self.message = Self.bounded(message)
        self.file = file
        self.line = line
        self.entity = entity
        self.property = property
    }

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
