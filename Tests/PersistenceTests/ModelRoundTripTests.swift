import Foundation
import Testing

@testable import Persistence

extension ModelTests {
    /// Writing a model as Xcode's XML and reading it back gives the same model, and real
    /// Xcode files read.
    @Suite("Model XML round trip")
    struct RoundTrip {
        /// A model that uses every feature the XML can carry.
        static func richModel() throws -> ManagedObjectModel {
            let attributes: [AttributeDescription] = [
                AttributeDescription(
                    name: "i16",
                    type: .integer16,
                    isOptional: false,
                    defaultValue: .integer(-3),
                    minValue: .integer(-10),
                    maxValue: .integer(10)
                ),
                AttributeDescription(name: "i32", type: .integer32, defaultValue: .integer(70_000), renamingIdentifier: "int32"),
                AttributeDescription(name: "i64", type: .integer64, minValue: .integer(Int64.min), maxValue: .integer(Int64.max)),
                AttributeDescription(
                    name: "double",
                    type: .double,
                    defaultValue: .double(0.1),
                    minValue: .double(-1e300),
                    maxValue: .double(123.456)
                ),
                AttributeDescription(
                    name: "float",
                    type: .float,
                    isOptional: false,
                    defaultValue: .double(0),
                    minValue: .double(0),
                    maxValue: .double(1000)
                ),
                AttributeDescription(
                    name: "decimal",
                    type: .decimal,
                    defaultValue: .decimal(Decimal(string: "-12.345678901234567890123")!),
                    minValue: .decimal(Decimal(string: "0.01")!),
                    maxValue: .decimal(1_000_000)
                ),
                AttributeDescription(
                    name: "string",
                    type: .string,
                    defaultValue: .string("a <b> & \"c\"\n\ttab 'q' é ✓"),
                    minValue: .integer(1),
                    maxValue: .integer(200),
                    versionHashModifier: "s1"
                ),
                AttributeDescription(name: "empty", type: .string, defaultValue: .string("")),
                AttributeDescription(name: "yes", type: .boolean, defaultValue: .bool(true)),
                AttributeDescription(name: "no", type: .boolean, isOptional: false, defaultValue: .bool(false)),
                AttributeDescription(
                    name: "date",
                    type: .date,
                    defaultValue: .date(Date(timeIntervalSinceReferenceDate: 123.5)),
                    minValue: .date(Date(timeIntervalSinceReferenceDate: -978_307_200)),
                    maxValue: .date(Date(timeIntervalSinceReferenceDate: 1e9))
                ),
                AttributeDescription(name: "binary", type: .binary, minValue: .integer(0), maxValue: .integer(4096)),
                AttributeDescription(name: "uuid", type: .uuid, defaultValue: .uuid(UUID(uuidString: "123E4567-E89B-12D3-A456-426614174000")!)),
                AttributeDescription(name: "uri", type: .uri, defaultValue: .uri(URL(string: "https://example.com/a?b=c&d=e#f")!)),
                AttributeDescription(name: "scratch", type: .string, isTransient: true, userInfo: ["why": "UI state", "a&b": "<x>"]),
            ]
            return try ManagedObjectModel(
                name: "Rich",
                versionIdentifier: "7.1 \"beta\"",
                entities: [
                    EntityDescription(
                        name: "Item",
                        isAbstract: true,
                        attributes: [AttributeDescription(name: "name", type: .string, isOptional: false)],
                        relationships: [
                            RelationshipDescription(
                                name: "shelf",
                                destinationEntityName: "Shelf",
                                inverseName: "items",
                                isOptional: false,
                                deleteRule: .nullify
                            )
                        ],
                        representedClassName: "Item",
                        userInfo: ["kind": "base"]
                    ),
                    EntityDescription(
                        name: "Everything",
                        parentName: "Item",
                        attributes: attributes,
                        relationships: [
                            RelationshipDescription(
                                name: "related",
                                destinationEntityName: "Everything",
                                inverseName: "related",
                                isToMany: true,
                                deleteRule: .noAction
                            ),
                            RelationshipDescription(name: "transientLink", destinationEntityName: "Shelf", isTransient: true),
                        ],
                        renamingIdentifier: "AllTypes",
                        versionHashModifier: "e2",
                        representedClassName: "EverythingMO"
                    ),
                    EntityDescription(
                        name: "Shelf",
                        relationships: [
                            RelationshipDescription(
                                name: "items",
                                destinationEntityName: "Item",
                                inverseName: "shelf",
                                isToMany: true,
                                isOrdered: true,
                                minCount: 1,
                                maxCount: 50,
                                deleteRule: .cascade,
                                renamingIdentifier: "things",
                                versionHashModifier: "r1",
                                userInfo: ["order": "manual"]
                            ),
                            RelationshipDescription(name: "guard", destinationEntityName: "Shelf", isOptional: true, deleteRule: .deny),
                            RelationshipDescription(name: "odd", destinationEntityName: "Shelf", minCount: 2, maxCount: 3),
                        ]
                    ),
                ]
            )
        }

        @Test("a model using every feature survives writing and reading back")
        func richRoundTrip() throws {
            let model = try Self.richModel()
            let data = model.xmlData()
            let back = try ManagedObjectModel(xml: data, name: "Rich", file: "Rich.xcdatamodel/contents")
            #expect(back == model)
            for entity in model.entities {
                #expect(back.entity(named: entity.name) == entity)
            }
            // Writing again gives the same bytes: the writer is deterministic.
            #expect(back.xmlData() == data)
        }

        @Test("the writer uses Xcode's layout")
        func xcodeLayout() throws {
            let text = try Self.richModel().xmlString()
            let lines = text.components(separatedBy: "\n")
            #expect(lines.first == #"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#)
            #expect(lines[1].hasPrefix(#"<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" "#))
            #expect(lines[1].contains(#"userDefinedModelVersionIdentifier="7.1 &quot;beta&quot;""#))
            #expect(lines.last == "</model>")
            #expect(
                lines.contains(
                    #"    <entity name="Everything" representedClassName="EverythingMO" parentEntity="Item" elementID="AllTypes" versionHashModifier="e2" syncable="YES">"#
                )
            )
            #expect(lines.contains(#"    <entity name="Item" representedClassName="Item" isAbstract="YES" syncable="YES">"#))
            #expect(
                lines.contains(
                    #"        <attribute name="float" attributeType="Float" minValueString="0" maxValueString="1000" defaultValueString="0" usesScalarValueType="YES" syncable="YES"/>"#
                )
            )
            #expect(
                lines.contains(
                    #"        <attribute name="date" optional="YES" attributeType="Date" minDateTimeInterval="-978307200" maxDateTimeInterval="1000000000" defaultDateTimeInterval="123.5" usesScalarValueType="NO" syncable="YES"/>"#
                )
            )
            #expect(
                lines.contains(
                    #"        <relationship name="items" optional="YES" toMany="YES" minCount="1" maxCount="50" deletionRule="Cascade" ordered="YES" destinationEntity="Item" inverseName="shelf" inverseEntity="Item" elementID="things" versionHashModifier="r1" syncable="YES">"#
                )
            )
            #expect(
                lines.contains(
                    #"        <relationship name="shelf" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="items" inverseEntity="Shelf" syncable="YES"/>"#
                )
            )
            #expect(lines.contains(#"                <entry key="order" value="manual"/>"#))
            #expect(lines.contains("    <elements>"))
            #expect(lines.contains(#"        <element name="Shelf" positionX="297" positionY="-18" width="128" height="90"/>"#))
            // Every line is indented by a multiple of four spaces.
            for line in lines {
                let indent = line.prefix { $0 == " " }.count
                #expect(indent % 4 == 0, "\(line)")
            }
        }

        @Test("an empty model round-trips")
        func emptyModel() throws {
            let model = try ManagedObjectModel(name: "Empty", entities: [])
            #expect(try ManagedObjectModel(xml: model.xmlData(), name: "Empty") == model)
        }

        @Test("each BookStore version round-trips and is written exactly as its file", arguments: 1...5)
        func bookStoreRoundTrip(_ version: Int) throws {
            let name = version == 1 ? "BookStore" : "BookStore \(version)"
            let contents = ModelFixtures.bookStore.appendingPathComponent("\(name).xcdatamodel/contents")
            let model = try ManagedObjectModel(contentsOf: contents.deletingLastPathComponent())
            #expect(model.name == name)
            let back = try ManagedObjectModel(xml: model.xmlData(), name: name)
            #expect(back == model)
            let file = try String(contentsOf: contents, encoding: .utf8)
            #expect(model.xmlString() == file)
        }

        @Test("the Colourful Posts models written by Xcode parse")
        func colourPosts() throws {
            let folder = ModelFixtures.colourPosts
            try #require(
                FileManager.default.fileExists(atPath: folder.path),
                "the shared fixture \(folder.path) is missing; the Xcode model fixtures must be present next to the repository"
            )
            let versions = try VersionedModel(contentsOf: folder)
            #expect(versions.name == "CoreDataMigration_Example")
            #expect(
                versions.versions.map(\.name) == [
                    "CoreDataMigration_Example", "CoreDataMigration_Example 2",
                    "CoreDataMigration_Example 3", "CoreDataMigration_Example 4",
                ]
            )
            #expect(versions.current.name == "CoreDataMigration_Example 4")

            let v1 = try #require(versions.version(named: "CoreDataMigration_Example")?.entity(named: "Post"))
            #expect(v1.attributes.map(\.name) == ["color", "date", "postID"])
            #expect(v1.attributes.map(\.type) == [.string, .date, .string])
            #expect(v1.attributes.allSatisfy { $0.isOptional })
            #expect(v1.representedClassName == "Post")

            let v4 = try #require(versions.version(named: "CoreDataMigration_Example 4"))
            #expect(v4.entities.map(\.name) == ["Color", "Post"])
            let hide = try #require(v4.entity(named: "Post")?.attribute(named: "hide"))
            #expect(hide.type == .boolean && hide.defaultValue == .bool(false) && hide.isOptional)
            let color = try #require(v4.entity(named: "Post")?.relationship(named: "color"))
            #expect(color.destinationEntityName == "Color" && color.inverseName == "post")
            #expect(!color.isOptional && !color.isToMany && color.maxCount == 1 && color.deleteRule == .nullify)
            let post = try #require(v4.entity(named: "Color")?.relationship(named: "post"))
            #expect(post.isOptional)

            for version in versions.versions {
                #expect(try ManagedObjectModel(xml: version.xmlData(), name: version.name) == version)
            }
        }
    }
}
