import Foundation

extension ManagedObjectModel {
    /// The model as Xcode's `contents` XML, which Xcode's model editor opens and
    /// ``init(xml:name:file:)`` reads back to an equal model.
    ///
    /// ```swift
    /// try model.xmlData().write(to: folder.appendingPathComponent("contents"))
    /// ```
    public func xmlData() -> Data { Data(xmlString().utf8) }

    /// The `contents` XML as text, in Xcode's layout (four-space indentation, Xcode's attribute order).
    ///
    /// ```swift
    /// print(model.xmlString()) // <?xml version="1.0" …?>\n<model type="com.apple.IDECoreDataModeler.DataModel" …
    /// ```
    public func xmlString() -> String {
        var writer = XMLModelWriter()
        writer.line(0, #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#)
        writer.open(
            0,
            "model",
            [
                ("type", "com.apple.IDECoreDataModeler.DataModel"),
                ("documentVersion", "1.0"),
                ("lastSavedToolsVersion", "22758"),
                ("systemVersion", "23F79"),
                ("minimumToolsVersion", "Automatic"),
                ("sourceLanguage", "Swift"),
                ("userDefinedModelVersionIdentifier", versionIdentifier),
            ]
        )
        for entity in entities { writer.write(entity) }
        // Xcode's editor keeps the diagram layout here; it needs an element per entity.
        writer.open(1, "elements")
        for (index, entity) in entities.enumerated() {
            let propertyCount = entity.attributes.count + entity.relationships.count
            writer.empty(
                2,
                "element",
                [
                    ("name", entity.name),
                    ("positionX", String(-63 + 180 * (index % 4))),
                    ("positionY", String(-18 + 180 * (index / 4))),
                    ("width", "128"),
                    ("height", String(45 + 15 * propertyCount)),
                ]
            )
        }
        writer.close(1, "elements")
        writer.close(0, "model", newline: false)
        return writer.text
    }
}

/// Builds the XML text line by line.
struct XMLModelWriter {
    private(set) var text = ""

    mutating func line(_ level: Int, _ content: String, newline: Bool = true) {
        text += String(repeating: "    ", count: level) + content + (newline ? "\n" : "")
    }

    mutating func open(_ level: Int, _ name: String, _ attributes: [(String, String?)] = []) {
        line(level, "<\(name)\(Self.attributeText(attributes))>")
    }

    mutating func empty(_ level: Int, _ name: String, _ attributes: [(String, String?)]) {
        line(level, "<\(name)\(Self.attributeText(attributes))/>")
    }

    mutating func close(_ level: Int, _ name: String, newline: Bool = true) {
        line(level, "</\(name)>", newline: newline)
    }

    mutating func write(_ entity: EntityDescription) {
        open(
            1,
            "entity",
            [
                ("name", entity.name),
                ("representedClassName", entity.representedClassName),
                ("parentEntity", entity.parentName),
                ("isAbstract", entity.isAbstract ? "YES" : nil),
                ("elementID", entity.renamingIdentifier),
                ("versionHashModifier", entity.versionHashModifier),
                ("syncable", "YES"),
            ]
        )
        for attribute in entity.attributes { write(attribute) }
        for relationship in entity.relationships { write(relationship) }
        for index in entity.fetchIndexes {
            open(2, "fetchIndex", [("name", index.name)])
            for element in index.elements {
                empty(
                    3,
                    "fetchIndexElement",
                    [("property", element.property), ("type", element.type), ("order", element.isAscending ? "ascending" : "descending")]
                )
            }
            close(2, "fetchIndex")
        }
        if !entity.uniquenessConstraints.isEmpty {
            open(2, "uniquenessConstraints", [])
            for constraint in entity.uniquenessConstraints {
                open(3, "uniquenessConstraint", [])
                for property in constraint { empty(4, "constraint", [("value", property)]) }
                close(3, "uniquenessConstraint")
            }
            close(2, "uniquenessConstraints")
        }
        write(userInfo: entity.userInfo, level: 2)
        close(1, "entity")
    }

    mutating func write(_ attribute: AttributeDescription) {
        let isDate = attribute.type == .date
        let format = { (value: AttributeValue?) in value.map(XMLValueCoding.xmlString) }
        let scalar: String? =
            switch attribute.type {
            case .integer16, .integer32, .integer64, .double, .float, .boolean: "YES"
            case .date: "NO"
            default: nil
            }
        let attributes: [(String, String?)] = [
            ("name", attribute.name),
            ("optional", attribute.isOptional ? "YES" : nil),
            ("transient", attribute.isTransient ? "YES" : nil),
            // Xcode writes an Undefined transient without a type.
            ("attributeType", attribute.type == .undefined ? nil : attribute.type.rawValue),
            ("allowsExternalBinaryDataStorage", attribute.allowsExternalBinaryDataStorage ? "YES" : nil),
            ("valueTransformerName", attribute.valueTransformerName),
            ("customClassName", attribute.customClassName),
            (isDate ? "minDateTimeInterval" : "minValueString", format(attribute.minValue)),
            (isDate ? "maxDateTimeInterval" : "maxValueString", format(attribute.maxValue)),
            (isDate ? "defaultDateTimeInterval" : "defaultValueString", format(attribute.defaultValue)),
            ("elementID", attribute.renamingIdentifier),
            ("versionHashModifier", attribute.versionHashModifier),
            ("preserveAfterDeletion", attribute.preservesValueAfterDeletion ? "YES" : nil),
            ("usesScalarValueType", scalar),
            ("syncable", "YES"),
        ]
        writeProperty("attribute", attributes, userInfo: attribute.userInfo)
    }

    mutating func write(_ relationship: RelationshipDescription) {
        // Xcode writes maxCount="1" on every to-one and a maxCount on to-many only when limited.
        let maxCount = relationship.isToMany && relationship.maxCount == 0 ? nil : String(relationship.maxCount)
        let attributes: [(String, String?)] = [
            ("name", relationship.name),
            ("optional", relationship.isOptional ? "YES" : nil),
            ("transient", relationship.isTransient ? "YES" : nil),
            ("toMany", relationship.isToMany ? "YES" : nil),
            ("minCount", relationship.minCount == 0 ? nil : String(relationship.minCount)),
            ("maxCount", maxCount),
            ("deletionRule", relationship.deleteRule.rawValue),
            ("ordered", relationship.isOrdered ? "YES" : nil),
            ("destinationEntity", relationship.destinationEntityName),
            ("inverseName", relationship.inverseName),
            ("inverseEntity", relationship.inverseName == nil ? nil : relationship.destinationEntityName),
            ("elementID", relationship.renamingIdentifier),
            ("versionHashModifier", relationship.versionHashModifier),
            ("syncable", "YES"),
        ]
        writeProperty("relationship", attributes, userInfo: relationship.userInfo)
    }

    private mutating func writeProperty(_ element: String, _ attributes: [(String, String?)], userInfo: [String: String]) {
        if userInfo.isEmpty {
            empty(2, element, attributes)
        } else {
            open(2, element, attributes)
            write(userInfo: userInfo, level: 3)
            close(2, element)
        }
    }

    private mutating func write(userInfo: [String: String], level: Int) {
        guard !userInfo.isEmpty else { return }
        open(level, "userInfo")
        for key in userInfo.keys.sorted() {
            empty(level + 1, "entry", [("key", key), ("value", userInfo[key])])
        }
        close(level, "userInfo")
    }

    /// ` name="value"` for every attribute with a value, in the given order.
    static func attributeText(_ attributes: [(String, String?)]) -> String {
        attributes.compactMap { key, value in value.map { " \(key)=\"\(escape($0))\"" } }.joined()
    }

    /// Escapes text for a double-quoted XML attribute; newlines and tabs as character
    /// references because parsers normalise literal ones to spaces.
    static func escape(_ text: String) -> String {
        var result = ""
        // Scalars, not Characters: "\r\n" is one Character and would match neither case.
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\n": result += "&#10;"
            case "\r": result += "&#13;"
            case "\t": result += "&#9;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
