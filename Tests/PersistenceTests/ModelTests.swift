import Foundation
import Testing

@testable import Persistence

/// Reading Xcode's `contents` XML: every attribute type, optionality, relationships,
/// inheritance and the model's version identifier.
@Suite("Model XML parsing")
struct ModelTests {
    struct TypeCase: Sendable, CustomTestStringConvertible {
        var type: AttributeType
        var xml: String
        var defaultValue: AttributeValue?
        var minValue: AttributeValue?
        var maxValue: AttributeValue?
        var testDescription: String { type.rawValue }
    }

    static let typeCases: [TypeCase] = [
        TypeCase(
            type: .integer16,
            xml: #"minValueString="-5" maxValueString="300" defaultValueString="7""#,
            defaultValue: .integer(7),
            minValue: .integer(-5),
            maxValue: .integer(300)
        ),
        TypeCase(
            type: .integer32,
            xml: #"minValueString="0" maxValueString="100000" defaultValueString="70000""#,
            defaultValue: .integer(70000),
            minValue: .integer(0),
            maxValue: .integer(100000)
        ),
        TypeCase(
            type: .integer64,
            xml: #"minValueString="-9000000000" maxValueString="9000000000" defaultValueString="8000000000""#,
            defaultValue: .integer(8_000_000_000),
            minValue: .integer(-9_000_000_000),
            maxValue: .integer(9_000_000_000)
        ),
        TypeCase(
            type: .double,
            xml: #"minValueString="-1.5" maxValueString="1e10" defaultValueString="2.5""#,
            defaultValue: .double(2.5),
            minValue: .double(-1.5),
            maxValue: .double(1e10)
        ),
        TypeCase(
            type: .float,
            xml: #"minValueString="0" maxValueString="1000" defaultValueString="0.25""#,
            defaultValue: .double(0.25),
            minValue: .double(0),
            maxValue: .double(1000)
        ),
        TypeCase(
            type: .decimal,
            xml: #"minValueString="0" maxValueString="99999.99" defaultValueString="12.345678901234567890123""#,
            defaultValue: .decimal(Decimal(string: "12.345678901234567890123")!),
            minValue: .decimal(0),
            maxValue: .decimal(Decimal(string: "99999.99")!)
        ),
        TypeCase(
            type: .string,
            xml: #"minValueString="1" maxValueString="50" defaultValueString="Untitled &amp; &quot;new&quot;""#,
            defaultValue: .string("Untitled & \"new\""),
            minValue: .integer(1),
            maxValue: .integer(50)
        ),
        TypeCase(type: .boolean, xml: #"defaultValueString="YES""#, defaultValue: .bool(true)),
        TypeCase(
            type: .date,
            xml: #"minDateTimeInterval="-978307200" maxDateTimeInterval="1000000" defaultDateTimeInterval="0""#,
            defaultValue: .date(Date(timeIntervalSinceReferenceDate: 0)),
            minValue: .date(Date(timeIntervalSince1970: 0)),
            maxValue: .date(Date(timeIntervalSinceReferenceDate: 1_000_000))
        ),
        TypeCase(type: .binary, xml: #"minValueString="0" maxValueString="1024""#, minValue: .integer(0), maxValue: .integer(1024)),
        TypeCase(
            type: .uuid,
            xml: #"defaultValueString="123E4567-E89B-12D3-A456-426614174000""#,
            defaultValue: .uuid(UUID(uuidString: "123E4567-E89B-12D3-A456-426614174000")!)
        ),
        TypeCase(
            type: .uri,
            xml: #"defaultValueString="https://example.com/books?id=1""#,
            defaultValue: .uri(URL(string: "https://example.com/books?id=1")!)
        ),
        TypeCase(type: .transformable, xml: #"valueTransformerName="ColorTransformer" customClassName="UIColor""#),
    ]

    @Test("every attribute type with its default, minimum and maximum", arguments: typeCases)
    func attributeType(_ typeCase: TypeCase) throws {
        let model = try ModelFixtures.model(
            """
            <entity name="Thing" syncable="YES">
                <attribute name="value" attributeType="\(typeCase.type.rawValue)" \(typeCase.xml) usesScalarValueType="YES" syncable="YES"/>
            </entity>
            """
        )
        let attribute = try #require(model.entity(named: "Thing")?.attribute(named: "value"))
        #expect(attribute.type == typeCase.type)
        #expect(attribute.defaultValue == typeCase.defaultValue)
        #expect(attribute.minValue == typeCase.minValue)
        #expect(attribute.maxValue == typeCase.maxValue)
        #expect(attribute.isOptional == false)
    }

    // Undefined, a transient's only, is XcodeAcceptedModelTests'.
    @Test("the cases above cover every attribute type that is stored")
    func everyTypeCovered() {
        #expect(Set(Self.typeCases.map(\.type)) == Set(AttributeType.storedCases))
    }

    @Test("Boolean defaults read YES and NO")
    func booleanDefaults() throws {
        let model = try ModelFixtures.model(
            """
            <entity name="Flags">
                <attribute name="on" attributeType="Boolean" defaultValueString="YES"/>
                <attribute name="off" attributeType="Boolean" defaultValueString="NO"/>
            </entity>
            """
        )
        let flags = try #require(model.entity(named: "Flags"))
        #expect(flags.attribute(named: "on")?.defaultValue == .bool(true))
        #expect(flags.attribute(named: "off")?.defaultValue == .bool(false))
    }

    @Test("a Date default comes from defaultDateTimeInterval; Xcode's defaultValueString text beside it is ignored")
    func dateDefault() throws {
        let model = try ModelFixtures.model(
            """
            <entity name="Event">
                <attribute name="at" optional="YES" attributeType="Date" defaultDateTimeInterval="362848762.79173" defaultValueString="now" syncable="YES"/>
                <attribute name="optional" optional="NO" attributeType="Date"/>
            </entity>
            """
        )
        let event = try #require(model.entity(named: "Event"))
        #expect(event.attribute(named: "at")?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 362_848_762.79173)))
        #expect(event.attribute(named: "optional")?.defaultValue == nil)
        #expect(event.attribute(named: "optional")?.isOptional == false)
    }

    @Test("optional is YES only when written; transient; renaming ID, hash modifier and user info")
    func attributeFlags() throws {
        let model = try ModelFixtures.model(
            """
            <entity name="Book">
                <attribute name="title" attributeType="String"/>
                <attribute name="subtitle" optional="YES" attributeType="String" elementID="caption" versionHashModifier="2"/>
                <attribute name="cache" optional="YES" transient="YES" attributeType="String">
                    <userInfo>
                        <entry key="purpose" value="display only"/>
                        <entry key="owner" value="ui"/>
                    </userInfo>
                </attribute>
            </entity>
            """
        )
        let book = try #require(model.entity(named: "Book"))
        let title = try #require(book.attribute(named: "title"))
        #expect(!title.isOptional && !title.isTransient)
        #expect(title.renamingIdentifier == nil && title.versionHashModifier == nil && title.userInfo.isEmpty)
        let subtitle = try #require(book.attribute(named: "subtitle"))
        #expect(subtitle.isOptional && !subtitle.isTransient)
        #expect(subtitle.renamingIdentifier == "caption")
        #expect(subtitle.migrationIdentifier == "caption")
        #expect(subtitle.versionHashModifier == "2")
        let cache = try #require(book.attribute(named: "cache"))
        #expect(cache.isOptional && cache.isTransient)
        #expect(cache.userInfo == ["purpose": "display only", "owner": "ui"])
        #expect(book.userInfo.isEmpty)
        #expect(book.attributes.map(\.name) == ["title", "subtitle", "cache"])
    }

    @Test("a relationship with every field")
    func relationshipFields() throws {
        let model = try ModelFixtures.model(
            """
            <entity name="Shelf">
                <relationship name="books" optional="YES" toMany="YES" minCount="1" maxCount="20" deletionRule="Deny" ordered="YES" destinationEntity="Book" inverseName="shelf" inverseEntity="Book" elementID="items" versionHashModifier="v2">
                    <userInfo>
                        <entry key="sort" value="title"/>
                    </userInfo>
                </relationship>
            </entity>
            <entity name="Book">
                <relationship name="shelf" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/>
                <relationship name="notes" optional="YES" transient="YES" toMany="YES" deletionRule="No Action" destinationEntity="Book"/>
            </entity>
            """
        )
        let books = try #require(model.entity(named: "Shelf")?.relationship(named: "books"))
        #expect(books.destinationEntityName == "Book")
        #expect(books.inverseName == "shelf")
        #expect(books.isToMany && books.isOrdered && books.isOptional && !books.isTransient)
        #expect(books.minCount == 1 && books.maxCount == 20)
        #expect(books.deleteRule == .deny)
        #expect(books.renamingIdentifier == "items")
        #expect(books.versionHashModifier == "v2")
        #expect(books.userInfo == ["sort": "title"])

        let shelf = try #require(model.entity(named: "Book")?.relationship(named: "shelf"))
        #expect(!shelf.isToMany && !shelf.isOrdered && !shelf.isOptional)
        #expect(shelf.maxCount == 1 && shelf.minCount == 0)
        #expect(shelf.deleteRule == .nullify)
        #expect(model.inverse(of: shelf)?.name == "books")

        let notes = try #require(model.entity(named: "Book")?.relationship(named: "notes"))
        #expect(notes.isTransient && notes.isToMany && notes.inverseName == nil)
        #expect(notes.deleteRule == .noAction)
        #expect(notes.maxCount == 0)
    }

    @Test(
        "deletionRule spellings; absent means Nullify",
        arguments: [
            (#"deletionRule="Nullify""#, DeleteRule.nullify),
            (#"deletionRule="Cascade""#, .cascade),
            (#"deletionRule="Deny""#, .deny),
            (#"deletionRule="No Action""#, .noAction),
            ("", .nullify),
        ]
    )
    func deleteRule(xml: String, expected: DeleteRule) throws {
        let model = try ModelFixtures.model(
            """
            <entity name="Node">
                <relationship name="next" optional="YES" maxCount="1" \(xml) destinationEntity="Node"/>
            </entity>
            """
        )
        #expect(model.entity(named: "Node")?.relationship(named: "next")?.deleteRule == expected)
    }

    @Test("inheritance: an abstract parent and a sub-entity that inherits its properties")
    func inheritance() throws {
        let model = try ModelFixtures.model(
            """
            <entity name="Item" representedClassName="Item" isAbstract="YES" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Owner" inverseName="items" inverseEntity="Owner"/>
                <userInfo>
                    <entry key="table" value="items"/>
                </userInfo>
            </entity>
            <entity name="Book" representedClassName="BookMO" parentEntity="Item" elementID="Volume" versionHashModifier="b" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
            </entity>
            <entity name="Owner">
                <relationship name="items" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Item" inverseName="owner" inverseEntity="Item"/>
            </entity>
            """
        )
        let item = try #require(model.entity(named: "Item"))
        let book = try #require(model.entity(named: "Book"))
        #expect(item.isAbstract && item.parentName == nil)
        #expect(item.userInfo == ["table": "items"])
        #expect(!book.isAbstract && book.parentName == "Item")
        #expect(book.representedClassName == "BookMO")
        #expect(book.renamingIdentifier == "Volume" && book.versionHashModifier == "b")
        #expect(book.attributes.map(\.name) == ["title"])
        #expect(model.attributes(of: book).map(\.name) == ["name", "title"])
        #expect(model.relationships(of: book).map(\.name) == ["owner"])
        #expect(model.rootEntity(of: book).name == "Item")
        #expect(model.entities.map(\.name) == ["Book", "Item", "Owner"])
    }

    @Test("userDefinedModelVersionIdentifier becomes the version identifier", arguments: ["", "1", "2.0 beta"])
    func versionIdentifier(_ identifier: String) throws {
        let model = try ModelFixtures.model(#"<entity name="A"/>"#, identifier: identifier)
        #expect(model.versionIdentifier == identifier)
        #expect(model.name == "Test")
    }

    @Test("unknown XML attributes and elements are skipped, including user info inside them")
    func ignoresUnknown() throws {
        let model = try ModelFixtures.model(
            """
            <entity name="Post" representedClassName="Post" syncable="YES" codeGenerationType="class">
                <attribute name="date" optional="YES" attributeType="Date" usesScalarValueType="NO" customClassName="X" syncable="YES"/>
                <fetchedProperty name="recent" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Post" predicateString="date > $NOW"/>
                    <userInfo>
                        <entry key="not" value="mine"/>
                    </userInfo>
                </fetchedProperty>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="date"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <fetchRequest name="All" entity="Post"/>
            <configuration name="Cloud">
                <memberEntity name="Post"/>
            </configuration>
            <elements>
                <element name="Post" positionX="-63" positionY="-18" width="128" height="90"/>
            </elements>
            """
        )
        let post = try #require(model.entity(named: "Post"))
        #expect(post.attributes.map(\.name) == ["date"])
        #expect(post.relationships.isEmpty)
        #expect(post.userInfo.isEmpty)
        #expect(model.entities.count == 1)
    }

    @Test("a model loads from its .xcdatamodel folder or its contents file; the folder names the version")
    func loadsFromFolder() throws {
        let root = try ModelFixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("Shop 3.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try ModelFixtures.xml(#"<entity name="Order"/>"#, identifier: "3").write(to: folder.appendingPathComponent("contents"))

        let fromFolder = try ManagedObjectModel(contentsOf: folder)
        let fromFile = try ManagedObjectModel(contentsOf: folder.appendingPathComponent("contents"))
        #expect(fromFolder.name == "Shop 3")
        #expect(fromFolder.versionIdentifier == "3")
        #expect(fromFolder == fromFile)
        #expect(fromFolder.entity(named: "Order") != nil)
    }
}
