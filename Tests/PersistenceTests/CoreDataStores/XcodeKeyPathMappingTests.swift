import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A mapping model as Xcode's editor saves one filled from key paths: relationship mappings
/// with a `sourcekeypath` and a `sourcemappingname` (and no value expression), collection
/// operators in those key paths, and an orphaned relationship mapping left behind.
///
/// `Library 1`: libraries with shelves, each shelf's books (a book may stand on several
/// shelves). `Library 2`: shelves are gone; a library has its books directly, how many
/// shelves it had and their widths summed, averaged and the widest.
@Suite("Xcode mapping models: key paths and collection operators")
struct XcodeKeyPathMappingTests {
    static let version1 = """
        <entity name="Library">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="shelves" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Shelf" inverseName="library" inverseEntity="Shelf"/>
        </entity>
        <entity name="Shelf">
            <attribute name="code" optional="YES" attributeType="String"/>
            <attribute name="width" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
            <relationship name="library" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Library" inverseName="shelves" inverseEntity="Library"/>
            <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="shelves" inverseEntity="Book"/>
        </entity>
        <entity name="Book">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="price" optional="YES" attributeType="Decimal"/>
            <relationship name="shelves" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/>
        </entity>
        """
    static let version2 = """
        <entity name="Library">
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="shelfCount" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
            <attribute name="totalWidth" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
            <attribute name="averageWidth" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
            <attribute name="widest" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
            <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="libraries" inverseEntity="Book"/>
        </entity>
        <entity name="Book">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="price" optional="YES" attributeType="Decimal"/>
            <relationship name="libraries" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Library" inverseName="books" inverseEntity="Library"/>
        </entity>
        """

    /// `xcmapping.xml` in the form Xcode saves it.
    static let xcmapping = """
        <?xml version="1.0" standalone="yes"?>
        <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

        <database>
            <databaseInfo>
                <version>134481920</version>
                <UUID>0C1A7E7B-5B36-4F0B-9F0A-3D1A8E9C2B11</UUID>
                <nextObjectID>140</nextObjectID>
            </databaseInfo>
            <object type="XDDEVENTITYMAPPING" id="z102">
                <attribute name="sourcename" type="string">Book</attribute>
                <attribute name="mappingtypename" type="string">Undefined</attribute>
                <attribute name="mappingnumber" type="int16">1</attribute>
                <attribute name="destinationname" type="string">Book</attribute>
                <attribute name="autogenerateexpression" type="bool">1</attribute>
                <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z101"></relationship>
                <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z104 z105"></relationship>
                <relationship name="relationshipmappings" type="0/0" destination="XDDEVRELATIONSHIPMAPPING" idrefs="z106"></relationship>
            </object>
            <object type="XDDEVENTITYMAPPING" id="z103">
                <attribute name="sourcename" type="string">Library</attribute>
                <attribute name="mappingtypename" type="string">Undefined</attribute>
                <attribute name="mappingnumber" type="int16">2</attribute>
                <attribute name="destinationname" type="string">Library</attribute>
                <attribute name="autogenerateexpression" type="bool">1</attribute>
                <relationship name="mappingmodel" type="1/1" destination="XDDEVMAPPINGMODEL" idrefs="z101"></relationship>
                <relationship name="attributemappings" type="0/0" destination="XDDEVATTRIBUTEMAPPING" idrefs="z107 z108 z109 z110 z111"></relationship>
                <relationship name="relationshipmappings" type="0/0" destination="XDDEVRELATIONSHIPMAPPING" idrefs="z112"></relationship>
            </object>
            <object type="XDDEVATTRIBUTEMAPPING" id="z104">
                <attribute name="name" type="string">title</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z102"></relationship>
            </object>
            <object type="XDDEVATTRIBUTEMAPPING" id="z105">
                <attribute name="name" type="string">price</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z102"></relationship>
            </object>
            <object type="XDDEVRELATIONSHIPMAPPING" id="z106">
                <attribute name="sourcekeypath" type="string">$source.shelves.@distinctUnionOfObjects.library</attribute>
                <attribute name="sourcemappingname" type="string">LibraryToLibrary</attribute>
                <attribute name="autogenerateexpression" type="bool">1</attribute>
                <attribute name="name" type="string">libraries</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z102"></relationship>
            </object>
            <object type="XDDEVATTRIBUTEMAPPING" id="z107">
                <attribute name="name" type="string">name</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z103"></relationship>
            </object>
            <object type="XDDEVATTRIBUTEMAPPING" id="z108">
                <attribute name="sourcekeypath" type="string">$source.shelves.@count</attribute>
                <attribute name="autogenerateexpression" type="bool">1</attribute>
                <attribute name="name" type="string">shelfCount</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z103"></relationship>
            </object>
            <object type="XDDEVATTRIBUTEMAPPING" id="z109">
                <attribute name="sourcekeypath" type="string">$source.shelves.@sum.width</attribute>
                <attribute name="autogenerateexpression" type="bool">1</attribute>
                <attribute name="name" type="string">totalWidth</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z103"></relationship>
            </object>
            <object type="XDDEVATTRIBUTEMAPPING" id="z110">
                <attribute name="sourcekeypath" type="string">$source.shelves.@avg.width</attribute>
                <attribute name="autogenerateexpression" type="bool">1</attribute>
                <attribute name="name" type="string">averageWidth</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z103"></relationship>
            </object>
            <object type="XDDEVATTRIBUTEMAPPING" id="z111">
                <attribute name="sourcekeypath" type="string">$source.shelves.@max.width</attribute>
                <attribute name="autogenerateexpression" type="bool">1</attribute>
                <attribute name="name" type="string">widest</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z103"></relationship>
            </object>
            <object type="XDDEVRELATIONSHIPMAPPING" id="z112">
                <attribute name="sourcekeypath" type="string">$source.shelves.@distinctUnionOfSets.books</attribute>
                <attribute name="sourcemappingname" type="string">BookToBook</attribute>
                <attribute name="autogenerateexpression" type="bool">1</attribute>
                <attribute name="name" type="string">books</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING" idrefs="z103"></relationship>
            </object>
            <object type="XDDEVRELATIONSHIPMAPPING" id="z113">
                <attribute name="autogenerateexpression" type="bool">1</attribute>
                <attribute name="name" type="string">shelves</attribute>
                <relationship name="entitymapping" type="1/1" destination="XDDEVENTITYMAPPING"></relationship>
            </object>
            <object type="XDDEVMAPPINGMODEL" id="z101">
                <attribute name="sourcemodelpath" type="string">Shelves/Library.xcdatamodeld/Library 1.xcdatamodel</attribute>
                <attribute name="destinationmodelpath" type="string">Shelves/Library.xcdatamodeld/Library 2.xcdatamodel</attribute>
                <relationship name="entitymappings" type="0/0" destination="XDDEVENTITYMAPPING" idrefs="z102 z103"></relationship>
            </object>
        </database>
        """

    static func versions() throws -> VersionedModel {
        let v1 = try ManagedObjectModel(xml: ModelFixtures.xml(version1), name: "Library 1")
        let v2 = try ManagedObjectModel(xml: ModelFixtures.xml(version2), name: "Library 2")
        return try VersionedModel(name: "Library", versions: [v1, v2], currentVersionName: v2.name)
    }

    /// A folder of mapping models holding this one, as `Library1to2.xcmappingmodel`.
    static func withMappings<T>(_ body: (URL) async throws -> T) async throws -> T {
        let folder = try ScenarioFolder()
        let model = folder.url.appendingPathComponent("Library1to2.xcmappingmodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        try Data(xcmapping.utf8).write(to: model.appendingPathComponent("xcmapping.xml"))
        return try await body(folder.url)
    }

    @Test func theKeyPathsBecomeCoreDatasExpressionsAndTheOrphanANote() async throws {
        try await Self.withMappings { folder in
            let mapping = try #require(try MappingModel.load(directory: folder, versions: Self.versions()).first)
            let library = try #require(mapping.entityMapping(named: "LibraryToLibrary"))
            let books = try #require(library.relationshipMappings.first { $0.name == "books" }?.valueExpression)
            #expect(
                books.format
                    == #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "BookToBook", $source.shelves.@distinctUnionOfSets.books)"#
            )
            #expect(library.attributeMappings.first { $0.name == "shelfCount" }?.valueExpression?.format == "$source.shelves.@count")
            #expect(mapping.notes.count == 1)
            #expect(mapping.notes.first?.contains("a relationship mapping 'shelves' (z113) belongs to no entity mapping") == true, "\(mapping.notes)")
        }
    }

    @Test(arguments: TestEngine.allCases, [1, 1_000])
    func itMigratesWithKeyValueCodingsSemantics(engine: TestEngine, batchSize: Int) async throws {
        let versions = try Self.versions()
        try await Self.withMappings { folder in
            try await engine.withStoreURL { url in
                try await withOpenStore(url, model: versions.versions[0], options: .createIfMissing) { container in
                    let context = container.newContext()
                    func insert(_ entity: String, _ values: [String: AttributeValue]) throws -> ManagedObject {
                        let object = try context.insertObject(entityName: entity)
                        for (key, value) in values { object.setValue(value, forKey: key) }
                        return object
                    }
                    let central = try insert("Library", ["name": "Zentralbibliothek"])
                    let branch = try insert("Library", ["name": "Filiale Süd"])
                    _ = try insert("Library", ["name": "Leer"])
                    let books = try ["Die Blechtrommel", "Ærø og øen", "Les Misérables", "Ohne Regal"].enumerated().map { index, title in
                        try insert("Book", ["title": .string(title), "price": .decimal(Decimal(string: "1\(index).99")!)])
                    }
                    for (code, library, width, shelved) in [
                        ("A-1", central, 1.25, [0, 1]), ("A-2", central, 0.75, [1, 2]), ("B-1", branch, 2.5, [2]),
                    ] {
                        let shelf = try insert("Shelf", ["code": .string(code), "width": .double(width)])
                        shelf.setDestination(library, forKey: "library")
                        for index in shelved { shelf.addDestination(books[index], forKey: "books") }
                    }
                    try await context.save()
                }
                let chain = MigrationChain(models: versions, mappingModels: try MappingModel.load(directory: folder, versions: versions))
                _ = try await ProgressiveMigrator(chain: chain, batchSize: batchSize, logger: testLogger).migrateStore(at: url)

                try await withOpenStore(url, model: versions.versions[1]) { container in
                    let context = container.newContext()
                    var libraries: [String: [String]] = [:]
                    var figures: [String: [AttributeValue]] = [:]
                    for library in try await context.fetch(FetchRequest(entityName: "Library")) {
                        let name = library.value(forKey: "name").stringValue ?? "?"
                        libraries[name] = try await library.destinations(forKey: "books").compactMap { $0.value(forKey: "title").stringValue }
                            .sorted()
                        figures[name] = ["shelfCount", "totalWidth", "averageWidth", "widest"].map { library.value(forKey: $0) }
                    }
                    #expect(
                        libraries == [
                            "Zentralbibliothek": ["Die Blechtrommel", "Les Misérables", "Ærø og øen"], "Filiale Süd": ["Les Misérables"], "Leer": [],
                        ]
                    )
                    #expect(figures["Zentralbibliothek"] == [.integer(2), .double(2.0), .double(1.0), .double(1.25)])
                    #expect(figures["Filiale Süd"] == [.integer(1), .double(2.5), .double(2.5), .double(2.5)])
                    // Of no shelves: a count of 0, a sum of 0, no average and no widest.
                    #expect(figures["Leer"] == [.integer(0), .double(0), .null, .null])
                    var shelvedIn: [String: Int] = [:]
                    for book in try await context.fetch(FetchRequest(entityName: "Book")) {
                        shelvedIn[book.value(forKey: "title").stringValue ?? "?"] = try await book.destinations(forKey: "libraries").count
                    }
                    #expect(shelvedIn == ["Die Blechtrommel": 1, "Ærø og øen": 1, "Les Misérables": 2, "Ohne Regal": 0])
                }
            }
        }
    }
}
