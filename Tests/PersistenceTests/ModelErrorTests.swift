import Foundation
import Testing

@testable import Persistence

extension ModelTests {
    /// Every way a model file or description can be wrong: the error names the code, the
    /// file and line of the element at fault, the entity and the property.
    ///
    /// Line numbers count from the document start; `ModelFixtures.xml` puts the body on line 3.
    @Suite("Model errors")
    struct Errors {
        @Test("malformed XML reports the file and the line where it breaks")
        func malformedXML() throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="Book">
                        <attribute name="title" attributeType="String">
                    </entity>
                    """
                )
            )
            #expect(error.code == .malformedXML)
            #expect(error.file == ModelFixtures.file)
            #expect(error.line == 5)
            #expect(error.message.contains("XML"))
        }

        @Test(
            "other malformed documents",
            arguments: [
                ("", 1),
                ("<model>\n<entity name=\"A\" name=\"B\"/>\n</model>", 2),
                ("<model>\n<entity name=\"A & B\"/>\n</model>", 2),
                ("<model>\n\n<entity name=\"A\"", 3),
            ]
        )
        func malformedDocuments(text: String, line: Int) throws {
            do throws(ModelError) {
                _ = try ManagedObjectModel(xml: Data(text.utf8), name: "X", file: "x/contents")
                Issue.record("malformed XML parsed")
            } catch {
                #expect(error.code == .malformedXML)
                #expect(error.file == "x/contents")
                #expect(error.line == line)
            }
        }

        @Test("a document whose root is not <model> is refused")
        func notAModel() throws {
            let data = Data(#"<?xml version="1.0"?>\#n<plist version="1.0"><dict/></plist>"#.utf8)
            do throws(ModelError) {
                _ = try ManagedObjectModel(xml: data, name: "X", file: "x")
                Issue.record("a plist parsed as a model")
            } catch {
                #expect(error.code == .malformedXML)
                #expect(error.line == 2)
                #expect(error.message.contains("<plist>"))
            }
        }

        @Test("an unknown attribute type names the file, line, entity, property and the valid types")
        func unknownAttributeType() throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="Book">
                        <attribute name="title" attributeType="String"/>
                        <attribute name="cover" optional="YES" attributeType="Composite"/>
                    </entity>
                    """
                )
            )
            #expect(error.code == .unknownAttributeType)
            #expect(error.file == ModelFixtures.file)
            #expect(error.line == 5)
            #expect(error.entity == "Book")
            #expect(error.property == "cover")
            for type in AttributeType.storedCases {
                #expect(error.message.contains("'\(type.rawValue)'"))
            }
            // Only a transient may be Undefined, and one is by leaving the type out.
            #expect(!error.message.contains("'Undefined'"))
            #expect(error.description.hasPrefix("\(ModelFixtures.file):5, entity 'Book', property 'cover': "))
        }

        @Test(
            "a value that does not parse for its type",
            arguments: [
                (#"attributeType="Integer 16" defaultValueString="abc""#, "defaultValueString"),
                (#"attributeType="Integer 16" defaultValueString="40000""#, "defaultValueString"),
                (#"attributeType="Integer 32" minValueString="1.5""#, "minValueString"),
                (#"attributeType="Double" maxValueString="lots""#, "maxValueString"),
                (#"attributeType="Float" defaultValueString="""#, "defaultValueString"),
                (#"attributeType="Decimal" defaultValueString="1.5abc""#, "defaultValueString"),
                (#"attributeType="Boolean" defaultValueString="maybe""#, "defaultValueString"),
                (#"attributeType="Boolean" minValueString="0""#, "minValueString"),
                (#"attributeType="String" maxValueString="-1""#, "maxValueString"),
                (#"attributeType="Binary" defaultValueString="AAAA""#, "defaultValueString"),
                (#"attributeType="Date" defaultDateTimeInterval="yesterday""#, "defaultDateTimeInterval"),
                (#"attributeType="Date" minDateTimeInterval="soon""#, "minDateTimeInterval"),
                (#"attributeType="UUID" defaultValueString="not-a-uuid""#, "defaultValueString"),
            ]
        )
        func invalidValue(xml: String, key: String) throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="Thing">

                        <attribute name="value" optional="YES" \(xml)/>
                    </entity>
                    """
                )
            )
            #expect(error.code == .invalidValue)
            #expect(error.file == ModelFixtures.file)
            #expect(error.line == 5)
            #expect(error.entity == "Thing")
            #expect(error.property == "value")
            #expect(error.message.contains(key))
        }

        @Test(
            "an invalid relationship count or delete rule",
            arguments: [
                #"minCount="-1""#, #"maxCount="many""#, #"deletionRule="Explode""#,
            ]
        )
        func invalidRelationshipValue(xml: String) throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="Node">
                        <relationship name="next" optional="YES" \(xml) destinationEntity="Node"/>
                    </entity>
                    """
                )
            )
            #expect(error.code == .invalidValue)
            #expect(error.line == 4)
            #expect(error.entity == "Node" && error.property == "next")
        }

        struct MissingCase: Sendable, CustomTestStringConvertible {
            var body: String
            var line: Int
            var entity: String?
            var property: String?
            var key: String
            var testDescription: String { "missing \(key)" }
        }

        @Test(
            "a required XML attribute is missing",
            arguments: [
                MissingCase(body: "<entity representedClassName=\"X\"/>", line: 3, entity: nil, property: nil, key: "name"),
                MissingCase(
                    body: "<entity name=\"Book\">\n<attribute attributeType=\"String\"/>\n</entity>",
                    line: 4,
                    entity: "Book",
                    property: nil,
                    key: "name"
                ),
                MissingCase(
                    body: "<entity name=\"Book\">\n<attribute name=\"title\" optional=\"YES\"/>\n</entity>",
                    line: 4,
                    entity: "Book",
                    property: "title",
                    key: "attributeType"
                ),
                MissingCase(
                    body: "<entity name=\"Book\">\n<relationship name=\"pages\" toMany=\"YES\"/>\n</entity>",
                    line: 4,
                    entity: "Book",
                    property: "pages",
                    key: "destinationEntity"
                ),
                MissingCase(
                    body: "<entity name=\"Book\">\n<relationship destinationEntity=\"Book\"/>\n</entity>",
                    line: 4,
                    entity: "Book",
                    property: nil,
                    key: "name"
                ),
            ]
        )
        func missingAttribute(_ missing: MissingCase) throws {
            let error = try #require(ModelFixtures.error(missing.body))
            #expect(error.code == .missingAttribute)
            #expect(error.file == ModelFixtures.file)
            #expect(error.line == missing.line)
            #expect(error.entity == missing.entity)
            #expect(error.property == missing.property)
            #expect(error.message.contains(missing.key))
        }

        // MARK: Validation, located in the file

        @Test("two entities with one name: the second one is at fault")
        func duplicateEntity() throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="Book"/>
                    <entity name="Page"/>
                    <entity name="Book"/>
                    """
                )
            )
            #expect(error.code == .duplicateName)
            #expect(error.file == ModelFixtures.file)
            #expect(error.line == 5)
            #expect(error.entity == "Book")
            #expect(error.property == nil)
        }

        @Test("two properties with one name in an entity, attribute or relationship")
        func duplicateProperty() throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="Book">
                        <attribute name="title" attributeType="String"/>
                        <attribute name="price" attributeType="Float"/>
                        <relationship name="title" optional="YES" maxCount="1" destinationEntity="Book"/>
                    </entity>
                    """
                )
            )
            #expect(error.code == .duplicateName)
            #expect(error.line == 6)
            #expect(error.entity == "Book")
            #expect(error.property == "title")
            #expect(error.message.contains("twice"))
        }

        @Test("a sub-entity redeclaring an inherited property")
        func duplicateInheritedProperty() throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="Item" isAbstract="YES">
                        <attribute name="name" attributeType="String"/>
                    </entity>
                    <entity name="Book" parentEntity="Item">
                        <attribute name="title" attributeType="String"/>
                        <attribute name="name" attributeType="String"/>
                    </entity>
                    """
                )
            )
            #expect(error.code == .duplicateName)
            #expect(error.line == 8)
            #expect(error.entity == "Book")
            #expect(error.property == "name")
            #expect(error.message.contains("'Item'"))
        }

        @Test("a parent entity that does not exist")
        func missingParent() throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="Item"/>
                    <entity name="Book" parentEntity="Itme"/>
                    """
                )
            )
            #expect(error.code == .missingEntity)
            #expect(error.line == 4)
            #expect(error.entity == "Book")
            #expect(error.property == nil)
            #expect(error.message.contains("'Itme'"))
        }

        @Test("an inheritance cycle")
        func inheritanceCycle() throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="A" parentEntity="C"/>
                    <entity name="B" parentEntity="A"/>
                    <entity name="C" parentEntity="B"/>
                    """
                )
            )
            #expect(error.code == .inheritanceCycle)
            #expect(error.line == 3)
            #expect(error.entity == "A")
            #expect(error.message.contains("A → C → B → A"))
        }

        @Test("an entity that is its own parent")
        func selfParent() throws {
            let error = try #require(ModelFixtures.error(#"<entity name="A" parentEntity="A"/>"#))
            #expect(error.code == .inheritanceCycle)
            #expect(error.entity == "A")
        }

        @Test("a relationship whose destination does not exist")
        func missingDestination() throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="Book">
                        <attribute name="title" attributeType="String"/>
                        <relationship name="pages" optional="YES" toMany="YES" destinationEntity="Pgae"/>
                    </entity>
                    """
                )
            )
            #expect(error.code == .missingEntity)
            #expect(error.line == 5)
            #expect(error.entity == "Book")
            #expect(error.property == "pages")
            #expect(error.message.contains("'Pgae'"))
        }

        @Test("an inverse that the destination does not have")
        func missingInverse() throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="Book">
                        <relationship name="pages" optional="YES" toMany="YES" destinationEntity="Page" inverseName="book"/>
                    </entity>
                    <entity name="Page">
                        <attribute name="number" attributeType="Integer 16"/>
                    </entity>
                    """
                )
            )
            #expect(error.code == .missingInverse)
            #expect(error.line == 4)
            #expect(error.entity == "Book")
            #expect(error.property == "pages")
            #expect(error.message.contains("'book'") && error.message.contains("'Page'"))
        }

        // Xcode warns of it and Core Data loads it: a warning at the element, not an error.
        @Test("an inverse that names another relationship as its inverse")
        func inverseNamesAnother() throws {
            let model = try ModelFixtures.model(
                """
                <entity name="Book">
                    <relationship name="pages" optional="YES" toMany="YES" destinationEntity="Page" inverseName="book"/>
                    <relationship name="cover" optional="YES" maxCount="1" destinationEntity="Page" inverseName="book"/>
                </entity>
                <entity name="Page">
                    <relationship name="book" optional="YES" maxCount="1" destinationEntity="Book" inverseName="pages"/>
                </entity>
                """
            )
            let warning = try #require(model.warnings.first)
            #expect(model.warnings.count == 1)
            #expect(warning.file == ModelFixtures.file)
            #expect(warning.line == 5)
            #expect(warning.entity == "Book")
            #expect(warning.property == "cover")
            #expect(warning.message.contains("'pages'"), "\(warning.message)")
        }

        @Test("an inverse whose destination is another entity")
        func inverseLeadsElsewhere() throws {
            let error = try #require(
                ModelFixtures.error(
                    """
                    <entity name="Author"/>
                    <entity name="Book">
                        <relationship name="pages" optional="YES" toMany="YES" destinationEntity="Page" inverseName="book"/>
                    </entity>
                    <entity name="Page">
                        <relationship name="book" optional="YES" maxCount="1" destinationEntity="Author" inverseName="pages"/>
                    </entity>
                    """
                )
            )
            #expect(error.code == .inconsistentInverse)
            #expect(error.line == 5)
            #expect(error.entity == "Book")
            #expect(error.property == "pages")
            #expect(error.message.contains("'Author'"))
        }

        @Test("an inverse that names no inverse back")
        func oneSidedInverse() throws {
            let model = try ManagedObjectModel(
                name: "Test",
                entities: [
                    EntityDescription(
                        name: "Book",
                        relationships: [
                            RelationshipDescription(name: "pages", destinationEntityName: "Page", inverseName: "book", isToMany: true)
                        ]
                    ),
                    EntityDescription(
                        name: "Page",
                        relationships: [
                            RelationshipDescription(name: "book", destinationEntityName: "Book")
                        ]
                    ),
                ]
            )
            let warning = try #require(model.warnings.first)
            #expect(model.warnings.count == 1)
            #expect(warning.entity == "Book" && warning.property == "pages")
            #expect(warning.message.contains("'none'"), "\(warning.message)")
            // Built from descriptions, not a file: no location.
            #expect(warning.file == nil && warning.line == nil)
        }

        @Test("abstract entities, inherited inverses and one-way relationships are valid")
        func validModels() {
            #expect(
                ModelFixtures.error([
                    EntityDescription(
                        name: "Item",
                        isAbstract: true,
                        relationships: [
                            RelationshipDescription(name: "owner", destinationEntityName: "Owner", inverseName: "items")
                        ]
                    ),
                    EntityDescription(name: "Book", parentName: "Item"),
                    EntityDescription(
                        name: "Owner",
                        relationships: [
                            RelationshipDescription(name: "items", destinationEntityName: "Item", inverseName: "owner", isToMany: true),
                            RelationshipDescription(name: "favourite", destinationEntityName: "Book"),
                        ]
                    ),
                ]) == nil
            )
            #expect(ModelFixtures.error([EntityDescription(name: "Lonely", isAbstract: true)]) == nil)
        }

        @Test(
            "validation errors from descriptions carry no file or line",
            arguments: [
                ([EntityDescription(name: "A"), EntityDescription(name: "A")], ModelError.Code.duplicateName, "A", String?.none),
                ([EntityDescription(name: "A", parentName: "Z")], .missingEntity, "A", nil),
                (
                    [EntityDescription(name: "A", relationships: [RelationshipDescription(name: "r", destinationEntityName: "Z")])], .missingEntity,
                    "A", "r"
                ),
                (
                    [
                        EntityDescription(
                            name: "A",
                            attributes: [AttributeDescription(name: "x", type: .string), AttributeDescription(name: "x", type: .date)]
                        )
                    ], .duplicateName, "A", "x"
                ),
            ]
        )
        func descriptionErrors(entities: [EntityDescription], code: ModelError.Code, entity: String, property: String?) throws {
            let error = try #require(ModelFixtures.error(entities))
            #expect(error.code == code)
            #expect(error.entity == entity)
            #expect(error.property == property)
            #expect(error.file == nil && error.line == nil)
        }
    }
}
