/// A model file or model description that cannot be used.
///
/// It names what is wrong and where: the file and line, the entity and property.
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
        public static let unknownVersion = Code(base: "unknownVersion")
    }

    public var code: Code
    /// What is wrong, in a sentence.
    public var message: String
    public var file: String?
    public var line: Int?
    public var entity: String?
    public var property: String?

    public init(_ code: Code, _ message: String, file: String? = nil, line: Int? = nil, entity: String? = nil, property: String? = nil) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
        self.entity = entity
        self.property = property
    }

    public var description: String {
        var location: [String] = []
        if let file { location.append(line.map { "\(file):\($0)" } ?? file) }
        if let entity { location.append("entity '\(entity)'") }
        if let property { location.append("property '\(property)'") }
        return location.isEmpty ? message : "\(location.joined(separator: ", ")): \(message)"
    }
}
