import Foundation
import Testing

@testable import Persistence

/// Mapping files written into a temporary `Mappings` folder and loaded against BookStore's
/// real versions.
enum MappingFixtures {
    private static let loaded = Result { () throws(ModelError) in try VersionedModel(contentsOf: ModelFixtures.bookStore) }

    static func versions() throws -> VersionedModel { try loaded.get() }

    static func version(_ name: String) throws -> ManagedObjectModel {
        try #require(try versions().version(named: name))
    }

    /// A fresh, empty `…/Mappings` folder.
    static func folder() throws -> URL {
        let url = try ModelFixtures.temporaryFolder().appendingPathComponent("Mappings")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @discardableResult
    static func write(_ json: String, named name: String, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent(name + ".json")
        try Data(json.utf8).write(to: url)
        return url
    }

    static func load(_ json: String, named name: String = "Model3To4") throws -> MappingModel {
        try MappingModel(contentsOf: write(json, named: name, in: folder()), versions: versions())
    }

    /// The error loading `json` from `Mappings/<name>.json` throws; fails the test if it loads.
    static func error(_ json: String, named name: String = "Bad", sourceLocation: SourceLocation = #_sourceLocation) throws -> MigrationError {
        let url = try write(json, named: name, in: folder())
        let versions = try versions()
        return try #require(throws: MigrationError.self, sourceLocation: sourceLocation) {
            try MappingModel(contentsOf: url, versions: versions)
        }
    }

    /// The mapping the Core Data book's chapter needs for BookStore 3 → 4.
    static let model3To4 = #"""
        {
          "source": "BookStore 3",
          "destination": "BookStore 4",
          "entityMappings": [
            { "name": "PublicationToPublication", "type": "custom",
              "source": "Publication", "destination": "Publication",
              "policy": "PublicationToPublicationMigrationPolicy",
              "sourceFilter": "price >= 0",
              "attributes": { "title": "$source.title", "price": "$source.price" },
              "relationships": { "pages": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PageToPage\", $source.pages)" },
              "userInfo": { "note": "splits the author into first and last name" } },
            { "name": "PageToPage", "type": "copy", "source": "Page", "destination": "Page" }
          ]
        }
        """#

    /// A 3 → 4 file with one entity mapping for Publication whose body is `entry` (JSON
    /// members after `"name"`, without braces), and a copy mapping for pages.
    static func publicationMapping(_ entry: String, name: String = "PublicationToPublication") -> String {
        """
        {
          "source": "BookStore 3",
          "destination": "BookStore 4",
          "entityMappings": [
            { "name": "\(name)", \(entry) },
            { "name": "PageToPage", "type": "copy", "source": "Page", "destination": "Page" }
          ]
        }
        """
    }
}

@Suite("Mapping files")
struct MappingFileTests {
    // MARK: Loading

    @Test("the Core Data book's 3 → 4 mapping loads against BookStore's versions")
    func loadsModel3To4() throws {
        let mapping = try MappingFixtures.load(MappingFixtures.model3To4)
        let v3 = try MappingFixtures.version("BookStore 3")
        let v4 = try MappingFixtures.version("BookStore 4")
        #expect(mapping.name == "Model3To4")
        #expect(mapping.file == "Mappings/Model3To4.json")
        #expect(mapping.sourceModelName == "BookStore 3" && mapping.destinationModelName == "BookStore 4")
        #expect(mapping.sourceEntityVersionHashes == v3.entityVersionHashes)
        #expect(mapping.destinationEntityVersionHashes == v4.entityVersionHashes)
        #expect(mapping.maps(from: v3, to: v4))
        #expect(!mapping.maps(from: v3, to: try MappingFixtures.version("BookStore 5")))
        #expect(!mapping.isInferred)
        #expect(mapping.entityMappings.map(\.name) == ["PublicationToPublication", "PageToPage"])
        #expect(mapping.policyNames == ["PublicationToPublicationMigrationPolicy"])

        let publication = try #require(mapping.entityMapping(named: "PublicationToPublication"))
        #expect(publication.type == .custom)
        #expect(publication.sourceEntityName == "Publication" && publication.destinationEntityName == "Publication")
        #expect(publication.sourceFilter == (try Predicate(format: "price >= 0")))
        #expect(publication.userInfo == ["note": "splits the author into first and last name"])
        // The destination entity's order (firstName, lastName, price, title), not the file's.
        #expect(publication.attributeMappings.map(\.name) == ["price", "title"])
        #expect(publication.propertyMapping(named: "title")?.valueExpression == .variable("source", keyPath: ["title"]))
        #expect(
            publication.propertyMapping(named: "pages")?.valueExpression
                == .destinationInstances(forEntityMappingNamed: "PageToPage", sourceInstances: .variable("source", keyPath: ["pages"]))
        )

        let page = try #require(mapping.entityMapping(named: "PageToPage"))
        #expect(page.type == .copy && page.attributeMappings.isEmpty && page.relationshipMappings.isEmpty)
        #expect(page.policyName == nil && page.sourceFilter == nil && page.userInfo.isEmpty)
    }

    @Test("a property is an expression string, null, or an object with value and userInfo")
    func propertyForms() throws {
        let mapping = try MappingFixtures.load(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Publication", "destination": "Publication",
                "attributes": {
                  "title": { "value": "uppercase:($source.title)", "userInfo": { "why": "shouting" } },
                  "firstName": null,
                  "lastName": { "userInfo": { "set": "by the policy" } },
                  "price": "$source.price * 1.04"
                }
                """#
            )
        )
        let entity = try #require(mapping.entityMappings.first)
        #expect(entity.attributeMappings.map(\.name) == ["firstName", "lastName", "price", "title"])
        #expect(entity.attributeMappings[0] == PropertyMapping(name: "firstName"))
        #expect(entity.attributeMappings[1] == PropertyMapping(name: "lastName", userInfo: ["set": "by the policy"]))
        #expect(entity.attributeMappings[2].valueExpression == (try Expression(format: "$source.price * 1.04")))
        #expect(
            entity.attributeMappings[3]
                == PropertyMapping(
                    name: "title",
                    valueExpression: .function("uppercase", [.variable("source", keyPath: ["title"])]),
                    userInfo: ["why": "shouting"]
                )
        )
    }

    @Test("every key survives writing and loading again")
    func roundTrip() throws {
        let folder = try MappingFixtures.folder()
        let json = MappingFixtures.publicationMapping(
            #"""
            "type": "custom", "source": "Publication", "destination": "Publication",
            "policy": "PublicationToPublicationMigrationPolicy",
            "sourceFilter": "price >= 0 AND title != nil",
            "attributes": {
              "title": { "value": "$source.title", "userInfo": { "a": "1" } },
              "price": "$source.price * 1.04",
              "firstName": "FUNCTION($source.author, \"substringToIndex:\", 4)",
              "lastName": null
            },
            "relationships": { "pages": { "value": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PageToPage\", $source.pages)", "userInfo": { "b": "2" } } },
            "userInfo": { "note": "all \"keys\"\n\ttabs, é, \u0001", "z": "", "a": "first", "batch": 250, "ratio": 0.25, "strict": true }
            """#
        )
        let original = try MappingModel(contentsOf: MappingFixtures.write(json, named: "Original", in: folder), versions: MappingFixtures.versions())
        #expect(
            original.entityMappings[0].userInfo == [
                "note": "all \"keys\"\n\ttabs, é, \u{1}", "z": "", "a": "first", "batch": .integer(250), "ratio": .double(0.25),
                "strict": .bool(true),
            ],
            "numbers and Booleans stay what they are"
        )
        let copyURL = folder.appendingPathComponent("Copy.json")
        try original.write(to: copyURL)
        let copy = try MappingModel(contentsOf: copyURL, versions: MappingFixtures.versions())
        #expect(copy.name == "Copy" && copy.file == "Mappings/Copy.json")
        #expect(copy.entityMappings == original.entityMappings)
        #expect(copy.sourceEntityVersionHashes == original.sourceEntityVersionHashes)
        #expect(copy.destinationEntityVersionHashes == original.destinationEntityVersionHashes)
        #expect(copy.sourceModelName == original.sourceModelName && copy.destinationModelName == original.destinationModelName)

        // Every key of the format is written, and nothing else.
        let written = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: copyURL)) as? [String: Any])
        #expect(Set(written.keys) == ["source", "destination", "entityMappings"])
        let entries = try #require(written["entityMappings"] as? [[String: Any]])
        #expect(
            Set(entries[0].keys) == ["name", "type", "source", "destination", "policy", "sourceFilter", "attributes", "relationships", "userInfo"]
        )
        #expect(Set(entries[1].keys) == ["name", "type", "source", "destination"])
        let attributes = try #require(entries[0]["attributes"] as? [String: Any])
        #expect(attributes["price"] as? String == "$source.price * 1.04")
        #expect(attributes["lastName"] is NSNull)
        #expect((attributes["title"] as? [String: Any])?["userInfo"] as? [String: String] == ["a": "1"])
        let text = try String(contentsOf: copyURL, encoding: .utf8)
        #expect(!text.contains("\\/"))
        #expect(text.contains(#""batch": 250,"#) && text.contains(#""ratio": 0.25,"#) && text.contains(#""strict": true"#), "\(text)")
    }

    @Test("a written file keeps the documented key order and the destination's property order")
    func writtenLayout() throws {
        let mapping = try MappingFixtures.load(MappingFixtures.model3To4)
        let text = String(decoding: mapping.fileData(), as: UTF8.self)
        #expect(
            text.hasPrefix(
                "{\n  \"source\": \"BookStore 3\",\n  \"destination\": \"BookStore 4\",\n  \"entityMappings\": [\n    {\n      \"name\": \"PublicationToPublication\",\n      \"type\": \"custom\",\n"
            )
        )
        let keys = [
            "\"source\": \"Publication\"", "\"destination\": \"Publication\"", "\"policy\"", "\"sourceFilter\"", "\"attributes\"",
            "\"price\": \"$source.price\"", "\"title\": \"$source.title\"", "\"relationships\"", "\"userInfo\"", "\"name\": \"PageToPage\"",
        ]
        let positions = keys.map { text.range(of: $0)?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil })
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
        #expect(text.hasSuffix("}\n"))
    }

    @Test("the example in Migrations/Mappings/README.md loads")
    func readmeExample() throws {
        let readme = try String(contentsOf: ModelFixtures.repositoryRoot.appendingPathComponent("Migrations/Mappings/README.md"), encoding: .utf8)
        let example = try #require(readme.range(of: "## Example"))
        let start = try #require(readme.range(of: "```json\n", range: example.upperBound..<readme.endIndex))
        let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        let mapping = try MappingFixtures.load(String(readme[start.upperBound..<end.lowerBound]))
        #expect(mapping.entityMappings.map(\.name) == ["PublicationToPublication", "PageToPage"])
        #expect(mapping.policyNames == ["PublicationToPublicationMigrationPolicy"])
    }

    @Test(
        "inferred mappings written as files load back to the same entity mappings",
        arguments: [
            ("BookStore", "BookStore 2"), ("BookStore 2", "BookStore 3"), ("BookStore", "BookStore 3"),
            ("BookStore 3", "BookStore 4"), ("BookStore 4", "BookStore 5"),
        ]
    )
    func inferredRoundTrip(source: String, destination: String) throws {
        let inferred = try MappingModel.inferred(from: MappingFixtures.version(source), to: MappingFixtures.version(destination))
        let url = try MappingFixtures.folder().appendingPathComponent("Inferred.json")
        try inferred.write(to: url)
        let loaded = try MappingModel(contentsOf: url, versions: MappingFixtures.versions())
        #expect(loaded.entityMappings == inferred.entityMappings)
        #expect(loaded.sourceEntityVersionHashes == inferred.sourceEntityVersionHashes)
        #expect(loaded.destinationEntityVersionHashes == inferred.destinationEntityVersionHashes)
    }

    @Test("a folder loads every *.json file sorted by name; a missing folder is empty")
    func loadDirectory() throws {
        let folder = try MappingFixtures.folder()
        let twoToThree = #"{ "source": "BookStore 2", "destination": "BookStore 3", "entityMappings": [] }"#
        try MappingFixtures.write(MappingFixtures.model3To4, named: "Model3To4", in: folder)
        try MappingFixtures.write(twoToThree, named: "Model2To3", in: folder)
        try Data("# notes".utf8).write(to: folder.appendingPathComponent("README.md"))
        let versions = try MappingFixtures.versions()
        let mappings = try MappingModel.load(directory: folder, versions: versions)
        #expect(mappings.map(\.name) == ["Model2To3", "Model3To4"])
        #expect(mappings.map(\.file) == ["Mappings/Model2To3.json", "Mappings/Model3To4.json"])

        let missing = folder.appendingPathComponent("Nothing here")
        #expect(try MappingModel.load(directory: missing, versions: versions).isEmpty)
    }

    @Test("two files for the same pair of versions both load, in name order, if their entity mappings have names of their own")
    func sameStepTwice() throws {
        let folder = try MappingFixtures.folder()
        // B's entity mappings renamed, its look-up too: a step's entity mapping names are unique across its files.
        let renamed = MappingFixtures.model3To4.replacingOccurrences(of: "PublicationToPublication", with: "PublicationToPublicationB")
            .replacingOccurrences(of: "PageToPage", with: "PageToPageB")
        try MappingFixtures.write(renamed, named: "B", in: folder)
        try MappingFixtures.write(MappingFixtures.model3To4, named: "A", in: folder)
        let versions = try MappingFixtures.versions()
        let mappings = try MappingModel.load(directory: folder, versions: versions)
        #expect(mappings.map(\.name) == ["A", "B"])
        #expect(mappings.allSatisfy { $0.maps(from: versions.version(named: "BookStore 3")!, to: versions.version(named: "BookStore 4")!) })

        // The same names in two files of the step are refused, in each file.
        try MappingFixtures.write(MappingFixtures.model3To4, named: "B", in: folder)
        let error = #expect(throws: MigrationError.self) { try MappingModel.load(directory: folder, versions: versions) }
        #expect(error?.file == "\(folder.lastPathComponent)/A.json" && error?.entityMapping == "PublicationToPublication")
        #expect(
            error?.description.contains(
                "the entity mapping 'PageToPage' has the name of one in \(folder.lastPathComponent)/B.json, another mapping model of the step"
            ) == true,
            "\(String(describing: error))"
        )
    }

    // MARK: Errors

    @Test("a file that does not exist")
    func missingFile() throws {
        let url = try MappingFixtures.folder().appendingPathComponent("Gone.json")
        let versions = try MappingFixtures.versions()
        let error = try #require(throws: MigrationError.self) { try MappingModel(contentsOf: url, versions: versions) }
        #expect(error.code == .invalidMappingModel)
        #expect(error.file == "Mappings/Gone.json")
        #expect(error.message == "cannot read the mapping model file (there is no such file)")
        #expect(error.description.contains("Check that the file exists"))
    }

    @Test("malformed JSON: the position of the mistake")
    func malformedJSON() throws {
        let error = try MappingFixtures.error(
            """
            {
              "source": "BookStore 3",
              "destination": "BookStore 4",
              "entityMappings": [ { "name": "PageToPage", "type": "copy" "source": "Page" } ]
            }
            """
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.file == "Mappings/Bad.json")
        #expect(error.entityMapping == nil && error.property == nil)
        #expect(error.message.contains("not valid JSON"))
        #expect(error.message.contains("at line 4, column 62, before '\"source\": \"Page\" } ]'"), "\(error)")
        #expect(error.description.contains("Fix the JSON at that position"))
    }

    /// A file cut short has no position of a mistake in JSON's own error: the message says
    /// where the file ends and what is still open, rather than pointing at no position.
    @Test("truncated JSON: where the file ends, and what is still open")
    func truncatedJSON() throws {
        let error = try MappingFixtures.error(
            """
            {
              "source": "BookStore 3",
              "destination": "BookStore 4",
              "entityMappings": [ { "name": "PageToPage", "type": "copy
            """
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.message.contains("not valid JSON"))
        #expect(error.message.contains("the file ends at line 4, column 60, inside a string, with '{', '[', '{' still open"), "\(error)")
        #expect(!error.description.contains("at that position"), "\(error)")
        #expect(error.description.contains("Close"), "\(error)")
    }

    @Test("a value of the wrong type: the key path")
    func wrongType() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Publication", "destination": "Publication", "attributes": { "title": 42 }
                """#
            )
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.file == "Mappings/Bad.json")
        #expect(error.entityMapping == "PublicationToPublication")
        #expect(error.property == "title")
        #expect(error.message.contains("entityMappings[0].attributes.title"))
        #expect(error.description.contains("Give it an expression string"))
    }

    @Test("a missing key: which one, and what it may be")
    func missingKey() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "source": "Publication", "destination": "Publication"
                """#
            )
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.file == "Mappings/Bad.json")
        #expect(error.entityMapping == "PublicationToPublication")
        #expect(error.property == nil)
        #expect(error.message.contains("entityMappings[0]") && error.message.contains("\"type\" is missing"))
        #expect(error.description.contains(#"Add "type": one of "add", "remove", "copy", "transform", "custom""#))
    }

    @Test("a misspelt key is not ignored")
    func unknownKey() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Publication", "destination": "Publication", "sourcefilter": "price > 0"
                """#
            )
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.entityMapping == "PublicationToPublication")
        #expect(error.message.contains("unknown key 'sourcefilter'") && error.message.contains("\"sourceFilter\""))
        #expect(error.description.contains("Remove or correct the key"))

        let topLevel = try MappingFixtures.error(#"{ "source": "BookStore 3", "destination": "BookStore 4", "entityMappings": [], "mappings": [] }"#)
        #expect(topLevel.message.contains("unknown key 'mappings'") && topLevel.entityMapping == nil)
    }

    @Test("an unknown version name lists the known ones")
    func unknownVersion() throws {
        let error = try MappingFixtures.error(#"{ "source": "BookStore 3", "destination": "BookStore 9", "entityMappings": [] }"#)
        #expect(error.code == .invalidMappingModel)
        #expect(error.file == "Mappings/Bad.json")
        #expect(error.entityMapping == nil && error.property == nil)
        #expect(error.message.contains(#"the destination version "BookStore 9""#))
        #expect(
            error.description.contains(
                #"Set "destination" to one of BookStore's versions: "BookStore", "BookStore 2", "BookStore 3", "BookStore 4", "BookStore 5""#
            )
        )

        let withExtension = try MappingFixtures.error(#"{ "source": "BookStore 3.xcdatamodel", "destination": "BookStore 4", "entityMappings": [] }"#)
        #expect(withExtension.description.contains(#"Did you mean "BookStore 3"?"#))
    }

    @Test("an unknown entity lists the model's entities")
    func unknownEntity() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Book", "destination": "Publication"
                """#,
                name: "BookToPublication"
            )
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.file == "Mappings/Bad.json")
        #expect(error.entityMapping == "BookToPublication")
        #expect(error.property == nil)
        #expect(error.message.contains("the source entity 'Book' is not in BookStore 3"))
        #expect(error.description.contains("Book is called Publication in BookStore 3"))
        #expect(error.description.contains(#"Set "source" to one of BookStore 3's entities: Page, Publication"#))
    }

    @Test("an unknown mapping type lists the types")
    func unknownType() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "Transform", "source": "Publication", "destination": "Publication"
                """#
            )
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.file == "Mappings/Bad.json")
        #expect(error.entityMapping == "PublicationToPublication")
        #expect(error.property == nil)
        #expect(error.message.contains(#"unknown mapping type "Transform""#))
        #expect(error.description.contains(#"Did you mean "transform"? Set "type" to one of "add", "remove", "copy", "transform", "custom""#))
    }

    @Test("an unknown destination property lists the entity's attributes")
    func unknownProperty() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Publication", "destination": "Publication",
                "attributes": { "author": "$source.author", "title": "$source.title" }
                """#
            )
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.file == "Mappings/Bad.json")
        #expect(error.entityMapping == "PublicationToPublication")
        #expect(error.property == "author")
        #expect(error.message.contains("the destination entity Publication (BookStore 4) has no attribute 'author'"))
        #expect(error.description.contains("Map one of Publication's attributes: firstName, lastName, price, title, or add 'author' to the model"))
    }

    @Test("a relationship listed under attributes")
    func propertyOfTheOtherKind() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Publication", "destination": "Publication",
                "attributes": { "pages": "$source.pages" }
                """#
            )
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.entityMapping == "PublicationToPublication" && error.property == "pages")
        #expect(error.message.contains("'pages' is a relationship of Publication, not an attribute"))
        #expect(error.description.contains(#"Map it under "relationships""#))
    }

    @Test("a value expression that does not parse: the column")
    func expressionSyntax() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Publication", "destination": "Publication",
                "attributes": { "price": "$source.price *" }
                """#
            )
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.file == "Mappings/Bad.json")
        #expect(error.entityMapping == "PublicationToPublication")
        #expect(error.property == "price")
        #expect(error.message.contains("the value expression of 'price' does not parse"))
        #expect(error.message.contains(#"at column 16 of "$source.price *""#))
        #expect(error.description.contains("Write it in NSExpression format"))
    }

    @Test("a source filter that does not parse: the column")
    func filterSyntax() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Publication", "destination": "Publication", "sourceFilter": "price >> 0"
                """#
            )
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.entityMapping == "PublicationToPublication" && error.property == nil)
        #expect(error.message.contains("the source filter does not parse") && error.message.contains("column"))
        #expect(error.description.contains("Write the filter in NSPredicate format"))
    }

    @Test("property mappings in a mapping without a destination entity")
    func propertiesWithoutDestination() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "remove", "source": "Publication", "attributes": { "title": null }
                """#,
                name: "PublicationToNothing"
            )
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.file == "Mappings/Bad.json")
        #expect(error.entityMapping == "PublicationToNothing" && error.property == nil)
        #expect(error.message.contains("the mapping has attributes but no destination entity"))
        #expect(error.description.contains(#"Set "destination", or remove "attributes""#))
    }

    @Test("several problems in a file are reported together")
    func severalProblems() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Publication", "destination": "Publication",
                "attributes": { "author": "$source.author", "price": "$source.price *" }
                """#
            )
        )
        #expect(error.code == .invalidMappingModel)
        #expect(error.entityMapping == "PublicationToPublication" && error.property == "author")
        #expect(error.message.hasPrefix("2 problems"))
        #expect(error.description.contains("no attribute 'author'") && error.description.contains("does not parse"))
        #expect(error.description.contains("Write it in NSExpression format"))
    }
}
