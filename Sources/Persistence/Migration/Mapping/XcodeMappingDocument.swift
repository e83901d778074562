import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The objects of an Xcode mapping model's `xcmapping.xml`: a Core Data XML store of
/// Xcode's own editing objects.
///
/// ```xml
/// <object type="XDDEVENTITYMAPPING" id="z105">
///     <attribute name="sourcename" type="string">Post</attribute>
///     <attribute name="mappingnumber" type="int16">1</attribute>
///     <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z106 z103"></relationship>
/// </object>
/// ```
///
/// The document only collects the objects, their attributes as text and their
/// relationships as object ids; ``MappingModel/init(xcodeMappingModelAt:versions:)`` gives
/// them meaning.
struct XcodeMappingDocument {
    struct Object {
        var id: String
        /// `XDDEVENTITYMAPPING`.
        var type: String
        /// The line of its `<object>` element.
        var line: Int
        /// Attribute name → its text (base64 for `binary` ones).
        var attributes: [String: String] = [:]
        /// Relationship name → the ids it refers to, in the file's order.
        var relationships: [String: [String]] = [:]

        /// `attributes[name]` when it is there and not empty.
        func text(_ name: String) -> String? {
            attributes[name].flatMap { $0.isEmpty ? nil : $0 }
        }

        /// `attributes[name]` decoded from base64, or `nil` when absent.
        func data(_ name: String) -> Data?? {
            guard let text = attributes[name] else { return nil }
            return .some(Data(base64Encoded: text, options: .ignoreUnknownCharacters))
        }

        /// `autogenerateexpression` and other `bool` attributes: `nil` when absent.
        func flag(_ name: String) -> Bool? {
            attributes[name].map { $0 == "1" || $0.uppercased() == "YES" || $0.lowercased() == "true" }
        }
    }

    /// Every object, in the file's order.
    let objects: [Object]
    private let indexByID: [String: Int]

    init(objects: [Object]) {
        self.objects = objects
        // The first of two objects with one id, as a lookup by the file's order would find.
        indexByID = Dictionary(objects.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func object(id: String) -> Object? {
        indexByID[id].map { objects[$0] }
    }

    /// Reads the XML.
    ///
    /// - Throws: ``MigrationError/Code/invalidMappingModel`` naming the line when the XML is
    ///   not well-formed, is not a Core Data XML store, or an object has no id or type.
    static func parse(_ data: Data, file: String?) throws(MigrationError) -> XcodeMappingDocument {
        let delegate = XcodeMappingParser(file: file)
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        let ok = parser.parse()
        if let error = delegate.error {
            // A file cut inside a start tag is handed over as the tag without its missing
            // attributes: the problem is the cut, not the attributes.
            guard let line = error.line, XMLParser.looksCutOff([UInt8](data), at: line, root: "database", code: nil) else { throw error }
            throw MigrationError.xcodeMapping(
                "the mapping model is not well-formed XML: \(XMLParser.cutOffWords(root: "database"))",
                file: file,
                line: line
            )
        }
        if !ok || parser.parserError != nil {
            // The first error is where the XML breaks; later ones follow from it.
            let (error, line) = delegate.firstParseError ?? (parser.parserError, parser.lineNumber)
            let failure = XMLParser.describeFailure(error, in: [UInt8](data), line: line, root: "database", rootClosed: delegate.databaseClosed)
            throw MigrationError.xcodeMapping(
                "the mapping model is not well-formed XML: \(failure.words)",
                file: file,
                line: max(line, 1)
            )
        }
        guard delegate.sawDatabase else {
            throw MigrationError.xcodeMapping(
                "the file has no <database> element; it is not an Xcode mapping model",
                file: file,
                line: 1,
                hint: "Point at the .xcmappingmodel folder Xcode made, or at its xcmapping.xml"
            )
        }
        return XcodeMappingDocument(objects: delegate.objects)
    }
}

/// The event-driven reader behind ``XcodeMappingDocument/parse(_:file:)``.
private final class XcodeMappingParser: NSObject, XMLParserDelegate {
    let file: String?
    var objects: [XcodeMappingDocument.Object] = []
    var sawDatabase = false
    /// Whether `</database>` was read.
    var databaseClosed = false
    var error: MigrationError?
    /// The parser's first error and its line.
    var firstParseError: (Error, Int)?
    /// The object being read, and the attribute whose text is being collected.
    private var current: XcodeMappingDocument.Object?
    private var attribute: String?
    private var text = ""
    private var depth = 0

    init(file: String?) {
        self.file = file
    }

    func fail(_ message: String, line: Int, _ parser: XMLParser) {
        if error == nil { error = MigrationError.xcodeMapping(message, file: file, line: line) }
        parser.abortParsing()
    }

    func parser(
        _ parser: XMLParser,
        didStartElement elementName: String,
        namespaceURI: String?,
        qualifiedName qName: String?,
        attributes: [String: String] = [:]
    ) {
        guard error == nil else { return }
        depth += 1
        let line = parser.lineNumber
        if depth == 1 {
            guard elementName == "database" else {
                return fail(
                    "the root element is <\(elementName.shortenedForMessage)>, not <database>; this is not an Xcode mapping model",
                    line: line,
                    parser
                )
            }
            sawDatabase = true
            return
        }
        switch elementName {
        case "object" where depth == 2:
            guard let id = attributes["id"], !id.isEmpty, let type = attributes["type"], !type.isEmpty else {
                return fail("an <object> has no id or type", line: line, parser)
            }
            current = XcodeMappingDocument.Object(id: id, type: type.uppercased(), line: line)
        case "attribute" where depth == 3 && current != nil:
            guard let name = attributes["name"] else { return fail("an <attribute> has no name", line: line, parser) }
            attribute = name.lowercased()
            text = ""
        case "relationship" where depth == 3 && current != nil:
            guard let name = attributes["name"] else { return fail("a <relationship> has no name", line: line, parser) }
            let ids = (attributes["idrefs"] ?? "").split(separator: " ").map(String.init)
            current?.relationships[name.lowercased()] = ids
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        if firstParseError == nil { firstParseError = (parseError, parser.lineNumber) }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if attribute != nil { text += string }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        defer { depth -= 1 }
        if depth == 1 { databaseClosed = true }
        guard error == nil else { return }
        if elementName == "attribute", depth == 3, let name = attribute {
            current?.attributes[name] = text
            attribute = nil
        } else if elementName == "object", depth == 2, let object = current {
            objects.append(object)
            current = nil
        }
    }
}

extension MigrationError {
    /// What to do about an `xcmapping.xml` that is damaged rather than wrong.
    static let xcodeMappingRepairHint = "Restore xcmapping.xml from version control, or open the mapping model in Xcode and save it again"

    /// An `invalidMappingModel` error in an Xcode mapping model, at a line of its `xcmapping.xml`.
    static func xcodeMapping(
        _ message: String,
        file: String?,
        line: Int?,
        entityMapping: String? = nil,
        property: String? = nil,
        hint: String = xcodeMappingRepairHint
    ) -> MigrationError {
        var error = MigrationError(.invalidMappingModel, message, hint: hint, file: file, entityMapping: entityMapping, property: property)
        error.line = line
        return error
    }
}
