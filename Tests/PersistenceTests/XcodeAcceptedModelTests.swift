import Foundation
import Testing

@testable import Persistence

/// Models that Xcode saves and Apple's Core Data loads, although a strict reader of the file
/// format would refuse them: each loads here as Core Data loads it.
@Suite("Models Xcode accepts")
struct XcodeAcceptedModelTests {
    static let fixtures = ModelFixtures.repositoryRoot.appendingPathComponent("Tests/Fixtures/CoreData")

    // MARK: A Boolean word as an integer's default

    /// Every version of Feedback's model writes `defaultValueString="YES"` on the Integer 32
    /// `ATMessage.pendingState`. The model Core Data compiled from version 6, cached in the v6
    /// store's `Z_MODELCACHE`, holds 0 as that default (NSString's `intValue` of "YES"), not 1.
    @Test("Feedback's model, whose Integer 32 default is YES, loads with Core Data's default 0")
    func feedbackModelLoads() throws {
        let versions = try VersionedModel(contentsOf: Self.fixtures.appendingPathComponent("Feedback/ATDataModel.xcdatamodeld"))
        #expect(versions.versions.count == 6)
        #expect(versions.current.name == "ATDataModel 6")
        for version in versions.versions {
            // ATAbstractMessage's before version 5, ATMessage's after; ATSurveyResponse's says 0.
            let pendingStates = version.entities.compactMap { $0.attribute(named: "pendingState") }
            #expect(!pendingStates.isEmpty, "\(version.name)")
            for pendingState in pendingStates {
                #expect(pendingState.type == .integer32)
                #expect(pendingState.defaultValue == .integer(0), "\(version.name)")
            }
        }
        // Warned of where it is: version 6 says it on line 24.
        let v6 = try #require(versions.version(named: "ATDataModel 6"))
        let warning = try #require(v6.warnings.first { $0.property == "pendingState" })
        #expect(warning.entity == "ATMessage" && warning.line == 24)
        #expect(warning.file?.hasSuffix("ATDataModel.xcdatamodeld/ATDataModel 6.xcdatamodel/contents") == true)
        #expect(versions.warnings.count(where: { $0.property == "pendingState" }) == 6)
    }

    @Test("persistence validate prints a model's warnings with file and line")
    func validatePrintsWarnings() async throws {
        let folder = Self.fixtures.appendingPathComponent("Feedback/ATDataModel.xcdatamodeld")
        let output = try await persistenceCommand.run(["validate", "--models", folder.path])
        let line = "warning: \(folder.path)/ATDataModel 6.xcdatamodel/contents:24, entity 'ATMessage', property 'pendingState': "
        #expect(output.stdout.contains(line), "\(output.stdout)\(output.stderr)")
    }

    @Test(
        "a Boolean word as an integer's default reads as Core Data reads it, 0",
        arguments: [
            ("Integer 16", "YES"), ("Integer 32", "NO"), ("Integer 64", "yes"), ("Integer 32", "true"), ("Integer 16", "FALSE"),
        ]
    )
    func booleanWordAsIntegerDefault(type: String, text: String) throws {
        let model = try ModelFixtures.model(
            """
            <entity name="Message">
                <attribute name="state" attributeType="\(type)" defaultValueString="\(text)"/>
            </entity>
            """
        )
        let state = try #require(model.entity(named: "Message")?.attribute(named: "state"))
        #expect(state.defaultValue == .integer(0))
        let warning = try #require(model.warnings.first)
        #expect(model.warnings.count == 1)
        #expect(warning.file == ModelFixtures.file && warning.line == 4 && warning.entity == "Message" && warning.property == "state")
        #expect(warning.message.contains("'\(text)'") && warning.message.contains("as 0"), "\(warning.message)")
    }

    @Test("text that is neither a whole number nor a Boolean word stays an error", arguments: ["maybe", "1.5", "0x10", "Y", ""])
    func garbageIntegerDefault(text: String) throws {
        let error = try #require(
            ModelFixtures.error(
                """
                <entity name="Message">
                    <attribute name="state" attributeType="Integer 32" defaultValueString="\(text)"/>
                </entity>
                """
            )
        )
        #expect(error.code == .invalidValue)
        #expect(error.line == 4 && error.entity == "Message" && error.property == "state")
        #expect(error.message.contains("whole number"), "\(error.message)")
    }

    // MARK: One version without .xccurrentversion

    @Test(
        "a model folder with one version and no .xccurrentversion loads, that version current",
        arguments: [
            ("Cart/CartStorage.xcdatamodeld", "CartStorage"), ("Contentful/Test.xcdatamodeld", "Test"),
        ]
    )
    func singleVersionWithoutCurrentVersionFile(path: String, version: String) throws {
        let folder = Self.fixtures.appendingPathComponent(path)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(".xccurrentversion").path))
        let versions = try VersionedModel(contentsOf: folder)
        #expect(versions.versions.map(\.name) == [version])
        #expect(versions.current.name == version)
    }

    @Test("several versions and no .xccurrentversion: an error naming the file, the versions and what to do")
    func severalVersionsWithoutCurrentVersionFile() throws {
        let folder = try ModelFixtures.temporaryFolder().appendingPathComponent("Shop.xcdatamodeld")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        for name in ["Shop", "Shop 2"] {
            let version = folder.appendingPathComponent(name + ".xcdatamodel")
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            try ModelFixtures.xml(#"<entity name="Order"/>"#).write(to: version.appendingPathComponent("contents"))
        }
        let error = try #require(ModelFixtures.versionedModelError(at: folder))
        #expect(error.code == .missingFile)
        #expect(error.file?.hasSuffix("Shop.xcdatamodeld/.xccurrentversion") == true)
        #expect(error.message.contains("'Shop'") && error.message.contains("'Shop 2'"), "\(error.message)")
        #expect(error.message.contains("Model Version"), "says how to set one: \(error.message)")
    }

    // MARK: A model folder of Xcode 3

    @Test("a model folder of Xcode 3 (an 'elements' archive, no 'contents') is refused, saying how to convert it")
    func xcode3ModelFolder() throws {
        let folder = try ModelFixtures.temporaryFolder().appendingPathComponent("Old.xcdatamodeld")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let version = folder.appendingPathComponent("Old.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        // A binary property list's header, as an archive starts.
        try Data("bplist00".utf8).write(to: version.appendingPathComponent("elements"))
        try Data("bplist00".utf8).write(to: version.appendingPathComponent("layout"))
        let error = try #require(ModelFixtures.versionedModelError(at: folder))
        #expect(error.code == .missingFile)
        #expect(error.file?.hasSuffix("Old.xcdatamodel") == true, "\(error.file ?? "")")
        #expect(error.message.contains("Xcode 3") && error.message.contains("'elements'") && error.message.contains("save it"), "\(error.message)")
    }

    // MARK: A transient without a type

    @Test("a transient saved without attributeType (Xcode's Undefined) loads, and is never stored")
    func untypedTransient() throws {
        let model = try ModelFixtures.model(
            """
            <entity name="Book">
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="scratch" optional="YES" transient="YES"/>
            </entity>
            """
        )
        let scratch = try #require(model.entity(named: "Book")?.attribute(named: "scratch"))
        #expect(scratch.isTransient && scratch.isOptional)
        #expect(scratch.type == .undefined)
        #expect(model.warnings.isEmpty)
        // Written back as Xcode writes it, without a type, and read back the same.
        let xml = String(decoding: model.xmlData(), as: UTF8.self)
        let line = try #require(xml.split(separator: "\n").first { $0.contains(#"name="scratch""#) })
        #expect(!line.contains("attributeType"), "\(line)")
        #expect(try ManagedObjectModel(xml: model.xmlData(), name: "Test") == model)
    }

    @Test("an Undefined attribute that is not transient is refused, from a file or from descriptions")
    func undefinedStoredAttribute() throws {
        let error = try #require(
            ModelFixtures.error(
                """
                <entity name="Book">
                    <attribute name="scratch" optional="YES" attributeType="Undefined"/>
                </entity>
                """
            )
        )
        #expect(error.code == .unknownAttributeType && error.line == 4 && error.property == "scratch")
        #expect(error.message.contains("transient"), "\(error.message)")
        let described = try #require(
            ModelFixtures.error([
                EntityDescription(name: "Book", attributes: [AttributeDescription(name: "scratch", type: .undefined)])
            ])
        )
        #expect(described.code == .unknownAttributeType && described.property == "scratch")
    }

    @Test("a stored attribute without attributeType stays an error")
    func untypedStoredAttribute() throws {
        let error = try #require(
            ModelFixtures.error(
                """
                <entity name="Book">
                    <attribute name="title" optional="YES"/>
                </entity>
                """
            )
        )
        #expect(error.code == .missingAttribute)
        #expect(error.line == 4 && error.property == "title")
        #expect(error.message.contains("attributeType"))
    }

    // MARK: An inverse that does not point back

    static let oneSided = """
        <entity name="Book">
            <relationship name="pages" optional="YES" toMany="YES" destinationEntity="Page" inverseName="book"/>
        </entity>
        <entity name="Page">
            <relationship name="book" optional="YES" maxCount="1" destinationEntity="Book"/>
        </entity>
        """

    @Test("a relationship whose inverse names no inverse back loads; each side keeps its own inverse")
    func oneSidedInverse() throws {
        let model = try ModelFixtures.model(Self.oneSided)
        let pages = try #require(model.entity(named: "Book")?.relationship(named: "pages"))
        let book = try #require(model.entity(named: "Page")?.relationship(named: "book"))
        #expect(model.inverse(of: pages) == book)
        #expect(model.inverse(of: book) == nil)
        let warning = try #require(model.warnings.first)
        #expect(model.warnings.count == 1)
        #expect(warning.file == ModelFixtures.file && warning.line == 4 && warning.entity == "Book" && warning.property == "pages")
    }

    @Test("two relationships naming the same inverse load; the inverse names one of them")
    func inverseNamedTwice() throws {
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
        let entity = try #require(model.entity(named: "Book"))
        let book = try #require(model.entity(named: "Page")?.relationship(named: "book"))
        #expect(model.inverse(of: try #require(entity.relationship(named: "cover"))) == book)
        #expect(model.inverse(of: book) == entity.relationship(named: "pages"))
    }
}
