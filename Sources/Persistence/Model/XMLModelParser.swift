import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// What the parser read from a `contents` file, before the model is validated, with the
/// line of each element so that validation errors can point into the file.
struct ParsedModelXML {
    struct PropertyKey: Hashable {
        var entity: String
        var property: String
    }

    var versionIdentifier = ""
    var entities: [EntityDescription] = []
    /// The line of the last `<entity>` with a name; the last one, because a duplicate is
    /// the offending element.
    var entityLines: [String: Int] = [:]
    var propertyLines: [PropertyKey: Int] = [:]
    /// What the file says that Core Data reads otherwise than it looks, with where it is.
    var warnings: [ModelWarning] = []

    /// The line of the element an error names: the property's if it names one, else the entity's.
    func line(entity: String?, property: String?) -> Int? {
        guard let entity else { return nil }
        if let property, let line = propertyLines[PropertyKey(entity: entity, property: property)] {
            return line
        }
        return entityLines[entity]
    }
}

/// Reads Xcode's `.xcdatamodel/contents` XML with FoundationXML's event-driven `XMLParser`.
///
/// Elements the model does not describe (`<elements>`, `<fetchRequest>`, `<configuration>`,
/// `<fetchedProperty>`, …) are skipped with everything inside them, so an `<entry>` of a
/// fetched property never lands in the entity's user info. A fetch index with an element
/// on an expression rather than a property is not carried: without it, it would be
/// another index.
final class XMLModelParser: NSObject, XMLParserDelegate {
    /// Which element is open, so that nested elements are read in context.
    private enum Context {
        case model, entity, attribute, relationship, userInfo, entry
        case fetchIndex, fetchIndexElement, uniquenessConstraints, uniquenessConstraint, constraint
    }

    private let file: String?
    /// The document, to find where an element's start tag begins.
    fileprivate let bytes: [UInt8]
    /// Where each line of the document starts, by byte offset; made when first needed.
    private lazy var lineStarts: [Int] = [0] + bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") }.map { $0 + 1 }
    private var result = ParsedModelXML()
    private var stack: [Context] = []
    /// How deep we are inside an element that is skipped.
    private var skippedDepth = 0
    private var sawModel = false
    /// Whether `</model>` was read: what follows it is not part of the model.
    private var modelClosed = false
    private var entity: EntityDescription?
    /// The fetch index or uniqueness constraint being read.
    private var fetchIndex: FetchIndex?
    private var constraint: [String] = []
    private var fetchIndexHasExpression = false
    private var error: ModelError?
    /// Where the parser was when `error` was found, and whether the parser found it
    /// (XML that is not well-formed) rather than this delegate (a model that is wrong).
    private var failedAtLine = 0
    private var errorIsTheParsers = false

    private init(file: String?, bytes: [UInt8]) {
        self.file = file
        self.bytes = bytes
    }

    /// Parses the XML; the returned entities are not validated yet.
    static func parse(_ data: Data, file: String?) throws(ModelError) -> ParsedModelXML {
        let delegate = XMLModelParser(file: file, bytes: [UInt8](data))
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        let ok = parser.parse()
        if let error = delegate.error {
            // A file cut inside a start tag is handed over as the tag without its missing
            // attributes: the problem is the cut, not the attributes.
            if !delegate.errorIsTheParsers, XMLParser.looksCutOff(delegate.bytes, at: delegate.failedAtLine, root: "model", code: nil) {
                throw delegate.cutOff(line: delegate.failedAtLine)
            }
            throw error
        }
        // On Linux, libxml2 recovers from some errors and parse() still returns true.
        if !ok || parser.parserError != nil {
            throw delegate.malformed(parser.parserError, line: parser.lineNumber)
        }
        guard delegate.sawModel else {
            // No element at all: any other root was refused above.
            let isBlank = data.allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
            let message =
                isBlank
                ? "the model file is empty; it should hold a <model> element, as Xcode writes it"
                : "the model file is not well-formed XML: it has no root element, so it holds no <model> or ends before one starts, "
                    + "as a file that was cut off does; \(restore)"
            throw ModelError(.malformedXML, message, file: file, line: max(parser.lineNumber, 1))
        }
        return delegate.result
    }

    // MARK: XMLParserDelegate

    func parser(
        _ parser: XMLParser,
        didStartElement elementName: String,
        namespaceURI: String?,
        qualifiedName qName: String?,
        attributes: [String: String] = [:]
    ) {
        guard error == nil else { return }
        if skippedDepth > 0 {
            skippedDepth += 1
            return
        }
        let line = startLine(of: elementName, parser)
        do throws(ModelError) {
            switch (stack.last, elementName) {
            case (nil, "model"):
                sawModel = true
                result.versionIdentifier = attributes["userDefinedModelVersionIdentifier"] ?? ""
                stack.append(.model)
            case (nil, _):
                throw ModelError(
                    .malformedXML,
                    "the root element is <\(elementName.shortenedForMessage)>, not <model>; this is not a Core Data model file",
                    file: file,
                    line: line
                )
            case (.model, "entity"):
                let name = try required("name", in: attributes, element: "entity", line: line, entity: nil)
                entity = EntityDescription(
                    name: name,
                    isAbstract: attributes["isAbstract"] == "YES",
                    parentName: attributes["parentEntity"],
                    renamingIdentifier: attributes["elementID"],
                    versionHashModifier: attributes["versionHashModifier"],
                    representedClassName: attributes["representedClassName"]
                )
                result.entityLines[name] = line
                stack.append(.entity)
            case (.entity, "attribute"):
                let attribute = try readAttribute(attributes, line: line)
                entity?.attributes.append(attribute)
                recordLine(line, property: attribute.name)
                stack.append(.attribute)
            case (.entity, "relationship"):
                let relationship = try readRelationship(attributes, line: line)
                entity?.relationships.append(relationship)
                recordLine(line, property: relationship.name)
                stack.append(.relationship)
            case (.entity, "userInfo"), (.attribute, "userInfo"), (.relationship, "userInfo"):
                stack.append(.userInfo)
            case (.entity, "fetchIndex"):
                let name = try required("name", in: attributes, element: "fetchIndex", line: line, entity: entity?.name)
                fetchIndex = FetchIndex(name: name, elements: [])
                fetchIndexHasExpression = false
                stack.append(.fetchIndex)
            case (.fetchIndex, "fetchIndexElement"):
                // An element on an expression names no property: the index is not carried.
                if let property = attributes["property"] {
                    fetchIndex?.elements.append(
                        FetchIndex.Element(
                            property: property,
                            type: attributes["type"] ?? "Binary",
                            isAscending: attributes["order"] != "descending"
                        )
                    )
                } else {
                    fetchIndexHasExpression = true
                }
                stack.append(.fetchIndexElement)
            case (.entity, "uniquenessConstraints"):
                stack.append(.uniquenessConstraints)
            case (.uniquenessConstraints, "uniquenessConstraint"):
                constraint = []
                stack.append(.uniquenessConstraint)
            case (.uniquenessConstraint, "constraint"):
                constraint.append(try required("value", in: attributes, element: "constraint", line: line, entity: entity?.name))
                stack.append(.constraint)
            case (.userInfo, "entry"):
                let key = try required("key", in: attributes, element: "entry", line: line, entity: entity?.name)
                addUserInfo(key: key, value: attributes["value"] ?? "")
                stack.append(.entry)
            default:
                skippedDepth = 1
            }
        } catch {
            fail(error, parser)
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
        // Report the first error where it happened; later ones are consequences of it.
        fail(malformed(parseError, line: parser.lineNumber), parser, foundByParser: true)
    }

    func parser(_ parser: XMLParser, validationErrorOccurred validationError: Error) {
        fail(malformed(validationError, line: parser.lineNumber), parser, foundByParser: true)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        guard error == nil else { return }
        if skippedDepth > 0 {
            skippedDepth -= 1
            return
        }
        switch stack.popLast() {
        case .entity?:
            if let entity { result.entities.append(entity) }
            entity = nil
        case .fetchIndex?:
            if let fetchIndex, !fetchIndex.elements.isEmpty, !fetchIndexHasExpression { entity?.fetchIndexes.append(fetchIndex) }
            fetchIndex = nil
        case .uniquenessConstraint?:
            if !constraint.isEmpty { entity?.uniquenessConstraints.append(constraint) }
        case .model?:
            modelClosed = true
        default:
            break
        }
    }

    // MARK: Elements

    private func readAttribute(_ xml: [String: String], line: Int) throws(ModelError) -> AttributeDescription {
        let entityName = entity?.name
        let name = try required("name", in: xml, element: "attribute", line: line, entity: entityName)
        let isTransient = xml["transient"] == "YES"
        // Xcode saves an "Undefined" transient without attributeType; Core Data loads it as
        // NSUndefinedAttributeType. A stored attribute needs a type: its column has one.
        let typeName =
            isTransient && (xml["attributeType"] ?? "").isEmpty
            ? AttributeType.undefined.rawValue
            : try required("attributeType", in: xml, element: "attribute", line: line, entity: entityName, property: name)
        guard let type = AttributeType(rawValue: typeName), type != .undefined || isTransient else {
            let valid = AttributeType.storedCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            let what =
                typeName == AttributeType.undefined.rawValue
                ? "an \(quoted: typeName) attribute cannot be stored; make it transient or give it a type, one of \(valid)"
                : "unknown attribute type \(quoted: typeName); use one of \(valid)"
            throw ModelError(.unknownAttributeType, what, file: file, line: line, entity: entityName, property: name)
        }
        func value(_ key: String, _ parse: (String, AttributeType) -> AttributeValue?) throws(ModelError) -> AttributeValue? {
            guard let text = xml[key] else { return nil }
            guard let value = parse(text, type) else {
                throw ModelError(
                    .invalidValue,
                    "\(key) \(quoted: text) is not valid for a \(type.rawValue) attribute\(Self.hint(for: type, key: key))",
                    file: file,
                    line: line,
                    entity: entityName,
                    property: name
                )
            }
            return value
        }
        let isDate = type == .date
        let dateParse: (String, AttributeType) -> AttributeValue? = { text, _ in XMLValueCoding.parseDate(text) }
        // Xcode keeps a Date default in defaultDateTimeInterval; a defaultValueString next to it
        // ("now") is only the editor's display text.
        let defaultValue: AttributeValue?
        if isDate {
            defaultValue = try value("defaultDateTimeInterval", dateParse)
        } else if let word = integerDefaultFromBooleanWord(xml, type: type, line: line, property: name) {
            defaultValue = word
        } else {
            defaultValue = try value("defaultValueString", XMLValueCoding.parseDefault)
        }
        let minValue = try isDate ? value("minDateTimeInterval", dateParse) : value("minValueString", XMLValueCoding.parseBound)
        let maxValue = try isDate ? value("maxDateTimeInterval", dateParse) : value("maxValueString", XMLValueCoding.parseBound)
        var attribute = AttributeDescription(
            name: name,
            type: type,
            isOptional: xml["optional"] == "YES",
            isTransient: isTransient,
            defaultValue: defaultValue,
            minValue: minValue,
            maxValue: maxValue,
            renamingIdentifier: xml["elementID"],
            versionHashModifier: xml["versionHashModifier"],
            allowsExternalBinaryDataStorage: xml["allowsExternalBinaryDataStorage"] == "YES",
            valueTransformerName: type == .transformable ? xml["valueTransformerName"] : nil,
            customClassName: type == .transformable ? xml["customClassName"] : nil
        )
        attribute.preservesValueAfterDeletion = xml["preserveAfterDeletion"] == "YES"
        return attribute
    }

    /// The words of a Boolean's default, which Xcode leaves in `defaultValueString` when an
    /// attribute's type changes from Boolean to an integer.
    private static let booleanWords: Set<String> = ["yes", "no", "true", "false"]

    /// The default of an integer attribute whose `defaultValueString` is a Boolean word
    /// (Feedback's `ATMessage.pendingState` says `YES`), as Core Data has it: its model
    /// compiler reads the text as NSString's `intValue` does, the number its leading digits
    /// make, so 0 for `YES` too (the model Core Data cached in a store of that app holds 0).
    /// Warned of, since `YES` reads as 0; `nil` for any other text, which is parsed strictly.
    private func integerDefaultFromBooleanWord(_ xml: [String: String], type: AttributeType, line: Int, property: String) -> AttributeValue? {
        guard type.isInteger, let text = xml["defaultValueString"], Self.booleanWords.contains(text.lowercased()) else { return nil }
        result.warnings.append(
            ModelWarning(
                "defaultValueString \(quoted: text) of a \(type.rawValue) attribute is not a number; Core Data reads it as 0 (as NSString's intValue does), "
                    + "whatever the word; write 0 or 1 in Xcode's Default Value",
                file: file,
                line: line,
                entity: entity?.name,
                property: property
            )
        )
        return .integer(0)
    }

    private func readRelationship(_ xml: [String: String], line: Int) throws(ModelError) -> RelationshipDescription {
        let entityName = entity?.name
        let name = try required("name", in: xml, element: "relationship", line: line, entity: entityName)
        let destination = try required("destinationEntity", in: xml, element: "relationship", line: line, entity: entityName, property: name)
        func count(_ key: String) throws(ModelError) -> Int? {
            guard let text = xml[key] else { return nil }
            guard let value = Int(text), value >= 0 else {
                throw ModelError(
                    .invalidValue,
                    "\(key) \(quoted: text) is not a count; use a whole number ≥ 0 (0 means no limit)",
                    file: file,
                    line: line,
                    entity: entityName,
                    property: name
                )
            }
            return value
        }
        var deleteRule = DeleteRule.nullify
        if let text = xml["deletionRule"] {
            guard let rule = DeleteRule(rawValue: text) else {
                let valid = DeleteRule.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                throw ModelError(
                    .invalidValue,
                    "unknown deletionRule \(quoted: text); use one of \(valid)",
                    file: file,
                    line: line,
                    entity: entityName,
                    property: name
                )
            }
            deleteRule = rule
        }
        return RelationshipDescription(
            name: name,
            destinationEntityName: destination,
            inverseName: xml["inverseName"],
            isToMany: xml["toMany"] == "YES",
            isOrdered: xml["ordered"] == "YES",
            isOptional: xml["optional"] == "YES",
            isTransient: xml["transient"] == "YES",
            minCount: try count("minCount") ?? 0,
            maxCount: try count("maxCount"),
            deleteRule: deleteRule,
            renamingIdentifier: xml["elementID"],
            versionHashModifier: xml["versionHashModifier"]
        )
    }

    // MARK: Helpers

    /// The line an element's start tag begins on. The parser reports where it is, which is
    /// the end of the start tag: an element written over several lines began lines earlier.
    private func startLine(of elementName: String, _ parser: XMLParser) -> Int {
        let line = parser.lineNumber
        guard line >= 1, line <= lineStarts.count else { return line }
        // The column counts characters from 1; step over each one's UTF-8 bytes.
        var end = lineStarts[line - 1]
        for _ in 1..<max(parser.columnNumber, 1) where end < bytes.count {
            end += 1
            while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        }
        // No '<' stands inside a start tag, not even in an attribute value, so the last one
        // before the tag's end opens it.
        guard let open = bytes[..<min(end + 1, bytes.count)].lastIndex(of: UInt8(ascii: "<")),
            bytes[(open + 1)...].starts(with: elementName.utf8)
        else { return line }
        // The number of lines that start at or before the '<'.
        var low = 0
        var high = lineStarts.count
        while low < high {
            let middle = (low + high) / 2
            if lineStarts[middle] <= open { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func required(
        _ key: String,
        in xml: [String: String],
        element: String,
        line: Int,
        entity: String?,
        property: String? = nil
    ) throws(ModelError) -> String {
        guard let value = xml[key], !value.isEmpty else {
            throw ModelError(
                .missingAttribute,
                "<\(element)> has no \(key)=\"…\"; every <\(element)> needs one",
                file: file,
                line: line,
                entity: entity,
                property: property
            )
        }
        return value
    }

    private func recordLine(_ line: Int, property: String) {
        guard let entity else { return }
        result.propertyLines[.init(entity: entity.name, property: property)] = line
    }

    /// Puts a user-info entry on the element that encloses the `<userInfo>`.
    private func addUserInfo(key: String, value: String) {
        guard stack.count >= 2 else { return }
        switch stack[stack.count - 2] {
        case .attribute:
            if let last = entity?.attributes.indices.last { entity?.attributes[last].userInfo[key] = value }
        case .relationship:
            if let last = entity?.relationships.indices.last { entity?.relationships[last].userInfo[key] = value }
        case .entity:
            entity?.userInfo[key] = value
        default:
            break
        }
    }

    private func fail(_ error: ModelError, _ parser: XMLParser, foundByParser: Bool = false) {
        if self.error == nil {
            self.error = error
            failedAtLine = parser.lineNumber
            errorIsTheParsers = foundByParser
        }
        parser.abortParsing()
    }

    fileprivate func malformed(_ error: Error?, line: Int) -> ModelError {
        let failure = XMLParser.describeFailure(error, in: bytes, line: line, root: "model", rootClosed: modelClosed)
        let fix = failure.isCutOff ? Self.restore : "fix the XML or re-save the model in Xcode"
        return ModelError(
            .malformedXML,
            "the model file is not well-formed XML: \(failure.words); \(fix)",
            file: file,
            line: max(line, 1)
        )  // libxml2 says line 0 for an empty document
    }

    fileprivate func cutOff(line: Int) -> ModelError {
        ModelError(
            .malformedXML,
            "the model file is not well-formed XML: \(XMLParser.cutOffWords(root: "model")); \(Self.restore)",
            file: file,
            line: max(line, 1)
        )
    }

    private static let restore = "restore the whole file (e.g. from version control) or re-save the model in Xcode"

    private static func hint(for type: AttributeType, key: String) -> String {
        let isBound = key.hasPrefix("min") || key.hasPrefix("max")
        if isBound, [.boolean, .uuid, .uri, .transformable].contains(type) {
            return "; \(type.rawValue) attributes have no minimum or maximum, remove \(key)"
        }
        if !isBound, type == .binary || type == .transformable {
            return "; \(type.rawValue) attributes have no default value, remove \(key)"
        }
        switch type {
        case .integer16, .integer32, .integer64:
            if key.hasPrefix("default"), let range = type.integerRange {
                return "; use a whole number in \(range.lowerBound)…\(range.upperBound)"
            }
            return "; use a whole number"
        case .double, .float, .decimal: return "; use a number such as 12.5"
        case .boolean: return "; use YES or NO"
        case .string, .binary: return key.hasPrefix("default") ? "" : "; use a length, a whole number ≥ 0"
        case .date: return "; use seconds since 2001-01-01 (\(key.replacingOccurrences(of: "ValueString", with: "DateTimeInterval")))"
        case .uuid: return "; use a UUID such as 123E4567-E89B-12D3-A456-426614174000"
        case .uri: return "; use a URI"
        case .transformable, .undefined: return ""
        }
    }
}
