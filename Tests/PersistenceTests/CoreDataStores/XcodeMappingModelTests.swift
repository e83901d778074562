import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// The example project's own mapping models, `.xcmappingmodel` folders as Xcode saved them,
/// read as they are and run on Apple's stores.
@Suite struct XcodeMappingModelTests {
    private func load(_ name: String) throws -> MappingModel {
        try MappingModel(contentsOf: CoreDataFixtures.xcodeMappings.appendingPathComponent(name), versions: CoreDataFixtures.models())
    }

    @Test func oneToTwoReadsItsArchivedAndGeneratedExpressions() throws {
        let models = try CoreDataFixtures.models()
        let mapping = try load("Migration1to2.xcmappingmodel")
        #expect(mapping.name == "Migration1to2")
        #expect(mapping.file == "XcodeMappings/Migration1to2.xcmappingmodel")
        #expect(
            mapping.maps(
                from: try #require(models.version(named: "CoreDataMigration_Example")),
                to: try #require(models.version(named: "CoreDataMigration_Example 2"))
            )
        )
        #expect(mapping.entityMappings.map(\.name) == ["PostToPost"])
        let post = try #require(mapping.entityMapping(named: "PostToPost"))
        #expect(post.type == .transform && post.sourceEntityName == "Post" && post.destinationEntityName == "Post" && post.policyName == nil)
        let expressions = Dictionary(uniqueKeysWithValues: post.attributeMappings.map { ($0.name, $0.valueExpression?.format) })
        // hexColor is archived in the file; date and postID are what Xcode generates.
        #expect(expressions == ["date": "$source.date", "hexColor": "$source.color", "postID": "$source.postID"])
    }

    @Test func twoToThreeKeepsItsMappingOrderAndNamesItsPolicy() throws {
        let mapping = try load("Migration2to3.xcmappingmodel")
        #expect(mapping.entityMappings.map(\.name) == ["Color", "PostToPost"], "mappingnumber order")
        let color = try #require(mapping.entityMapping(named: "Color"))
        #expect(color.type == .add && color.sourceEntityName == nil && color.destinationEntityName == "Color")
        #expect(color.attributeMappings.allSatisfy { $0.valueExpression == nil }, "nothing to generate from without a source")
        let post = try #require(mapping.entityMapping(named: "PostToPost"))
        #expect(post.type == .custom)
        #expect(post.policyName == "CoreDataMigration_Example.Post2ToPost3MigrationPolicy")
        #expect(post.attributeMappings.map { $0.valueExpression?.format } == ["$source.date", "$source.postID"])
        #expect(post.relationshipMappings.map(\.name) == ["color"])
        #expect(post.relationshipMappings.first?.valueExpression == nil, "version 2's Post has no color relationship to generate from")

        var policies = MigrationPolicies()
        policies.register(ColorFromPostMigrationPolicy.self, as: "Post2ToPost3MigrationPolicy")
        #expect(policies.makePolicy(named: try #require(post.policyName)) != nil, "a module-qualified name finds the policy by its last component")
    }

    @Test func aFolderOfXcodeMappingModelsLoadsAndValidates() async throws {
        let models = try CoreDataFixtures.models()
        let mappings = try MappingModel.load(directory: CoreDataFixtures.xcodeMappings, versions: models)
        #expect(mappings.map(\.name) == ["Migration1to2", "Migration2to3"])
        let output = try await persistenceCommand.run([
            "validate", "--models", ModelFixtures.colourPosts.path, "--mappings", CoreDataFixtures.xcodeMappings.path,
        ])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.stdout.contains("Checked 4 model versions, 2 mapping files: no problems."), "\(output.stdout)")
        #expect(
            output.stdout.contains(
                "XcodeMappings/Migration2to3.xcmappingmodel names the policy 'CoreDataMigration_Example.Post2ToPost3MigrationPolicy'"
            )
        )
    }

    /// Stores 1 and 2 migrate to version 4 through the Xcode mapping models and the ported
    /// policy, and hold the rows the JSON mappings give, but for the colours' new UUIDs.
    @Test(arguments: TestEngine.allCases, [CoreDataFixtures.stores[0], CoreDataFixtures.stores[1]])
    func xcodeMappingModelsGiveTheRowsOfTheJSONOnes(engine: TestEngine, store: CoreDataFixtures.Store) async throws {
        let json = try await migratedRows(store, engine: engine, chain: CoreDataFixtures.chain())
        let xcode = try await migratedRows(store, engine: engine, chain: CoreDataFixtures.chain(mappings: CoreDataFixtures.xcodeMappings))
        #expect(json.posts.count == store.posts && json.colours.count == store.posts)
        #expect(xcode.posts == json.posts)
        #expect(xcode.colours == json.colours)
    }

    private func migratedRows(
        _ store: CoreDataFixtures.Store,
        engine: TestEngine,
        chain: MigrationChain
    ) async throws -> (posts: [[DatabaseValue]], colours: [[DatabaseValue]]) {
        try await CoreDataFixtures.withCopy(of: store) { copy in
            try await engine.withStoreURL { url in
                switch engine {
                case .sqlite:
                    try FileManager.default.copyItem(atPath: try #require(copy.filePath), toPath: try #require(url.filePath))
                case .postgres:
                    _ = try await StoreCopy.copy(from: copy, to: url, versions: chain.models, logger: testLogger)
                }
                let (plan, _) = try await Scenario.migrate(chain, store: url)
                #expect(plan.steps.last?.destination.name == "CoreDataMigration_Example 4")
                let posts = try await storeRows(url, "SELECT Z_PK, Z_ENT, ZPOSTID, ZDATE, ZHIDE, ZCOLOR FROM ZPOST ORDER BY Z_PK")
                let colours = try await storeRows(url, "SELECT Z_PK, Z_ENT, ZHEX, ZPOST FROM ZCOLOR ORDER BY Z_PK")
                return (posts, colours)
            }
        }
    }

    // MARK: Files that cannot be used

    /// A copy of the 1 → 2 mapping model with its XML changed, in a folder of its own.
    private func withChangedCopy(_ change: (String) -> String, _ body: (URL) throws -> Void) throws {
        let folder = try ScenarioFolder()
        let model = folder.url.appendingPathComponent("Broken.xcmappingmodel")
        try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
        let original = try String(
            contentsOf: CoreDataFixtures.xcodeMappings.appendingPathComponent("Migration1to2.xcmappingmodel/xcmapping.xml"),
            encoding: .utf8
        )
        try Data(change(original).utf8).write(to: model.appendingPathComponent("xcmapping.xml"))
        try body(model)
    }

    private func problems(_ change: (String) -> String) throws -> [MigrationError] {
        var result: [MigrationError] = []
        try withChangedCopy(change) { url in
            result = MappingModel.problems(inFileAt: url, versions: try CoreDataFixtures.models())
            #expect(throws: MigrationError.self) { try MappingModel(contentsOf: url, versions: try CoreDataFixtures.models()) }
        }
        return result
    }

    @Test func userInfoKeepsNumbersAsNumbers() throws {
        var archive = KeyedArchiveBuilder()
        let date = archive.object(["NSDate"], ["NS.time": .real(100)])
        let dictionary = archive.dictionary([
            ("note", archive.string("from Xcode")), ("batch", archive.add(.integer(250))), ("ratio", archive.add(.real(0.5))),
            ("strict", archive.add(.bool(true))), ("since", date),
        ])
        let userInfo = archive.data(root: dictionary).base64EncodedString()
        try withChangedCopy({
            $0.replacingOccurrences(
                of: #"<attribute name="sourcename" type="string">Post</attribute>"#,
                with:
                    #"<attribute name="sourcename" type="string">Post</attribute><attribute name="userinfodata" type="binary">\#(userInfo)</attribute>"#
            )
            .replacingOccurrences(
                of: #"<attribute name="name" type="string">hexColor</attribute>"#,
                with:
                    #"<attribute name="name" type="string">hexColor</attribute><attribute name="userinfodata" type="binary">\#(userInfo)</attribute>"#
            )
        }) { url in
            let mapping = try MappingModel(contentsOf: url, versions: try CoreDataFixtures.models())
            let post = try #require(mapping.entityMapping(named: "PostToPost"))
            let expected: [String: AttributeValue] = [
                "note": "from Xcode", "batch": .integer(250), "ratio": .double(0.5), "strict": .bool(true),
                "since": .date(Date(timeIntervalSinceReferenceDate: 100)),
            ]
            #expect(post.userInfo == expected)
            #expect(post.propertyMapping(named: "hexColor")?.userInfo == expected)
        }
    }

    @Test func malformedXMLIsRefusedWithItsLine() throws {
        let found = try problems { $0.replacingOccurrences(of: "</object>", with: "</objekt>") }
        #expect(found.count == 1)
        #expect(found.first?.message.contains("not well-formed XML") == true, "\(found)")
        #expect(found.first?.file?.hasSuffix("Broken.xcmappingmodel") == true && found.first?.line != nil)
    }

    @Test func aCutOffFileSaysSoInWords() throws {
        let found = try problems { String($0.prefix($0.count / 2)) }
        #expect(found.count == 1)
        let message = found.first?.message ?? ""
        #expect(
            message.hasPrefix("the mapping model is not well-formed XML: it ends before its </database>, as a file that was cut off does"),
            "\(message)"
        )
        #expect(!message.contains("parser error"), "\(message)")
    }

    @Test func aMismatchedTagIsSaidInWords() throws {
        let found = try problems { $0.replacingOccurrences(of: "</object>", with: "</objekt>") }
        #expect(found.first?.message.contains("an end tag does not match its start tag") == true, "\(found)")
    }

    @Test func aModelPathOutsideTheVersionsIsNamed() throws {
        let found = try problems {
            $0.replacingOccurrences(of: "CoreDataMigration_Example 2.xcdatamodel", with: "CoreDataMigration_Example 9.xcdatamodel")
        }
        #expect(found.count == 1)
        let message = found.first?.description ?? ""
        #expect(message.contains("Broken.xcmappingmodel:"), "\(message)")
        #expect(message.contains("the destination model \"CoreDataMigration_Example 9\""), "\(message)")
        #expect(message.contains("\"CoreDataMigration_Example 2\""), "the hint lists the versions: \(message)")
    }

    @Test func anUnknownAttributeIsRefusedRatherThanIgnored() throws {
        let found = try problems {
            $0.replacingOccurrences(
                of: #"<attribute name="sourcename" type="string">Post</attribute>"#,
                with: #"<attribute name="sourcename" type="string">Post</attribute><attribute name="sourcefetchlimit" type="int16">3</attribute>"#
            )
        }
        #expect(found.count == 1)
        #expect(found.first?.entityMapping == "PostToPost")
        #expect(found.first?.message.contains("'sourcefetchlimit'") == true, "\(found)")
        #expect(found.first?.line != nil)
    }

    /// The 1 → 2 file's XML with the archive of hexColor's value expression replaced.
    static func replacingHexColorExpression(in xml: String, with base64: String) -> String {
        let start = xml.range(of: #"<attribute name="valueexpressiondata" type="binary">"#)!
        let end = xml.range(of: "</attribute>", range: start.upperBound..<xml.endIndex)!
        return xml.replacingCharacters(in: start.upperBound..<end.lowerBound, with: base64)
    }

    @Test func anExpressionOfAnUnsupportedKindNamesTheMappingAndProperty() throws {
        var archive = KeyedArchiveBuilder()
        let root = archive.object(["NSSubqueryExpression", "NSExpression"], ["NSExpressionType": .integer(13)])
        let subquery = archive.data(root: root).base64EncodedString()
        let found = try problems { Self.replacingHexColorExpression(in: $0, with: subquery) }
        #expect(found.count == 1)
        let error = try #require(found.first)
        #expect(error.entityMapping == "PostToPost" && error.property == "hexColor")
        #expect(error.file?.hasSuffix("Broken.xcmappingmodel") == true)
        #expect(error.message.contains("NSSubqueryExpression"), "\(error)")
        #expect(error.line == 47, "the line of the hexColor property mapping's <object>")
    }

    @Test func anExpressionOfTheWrongTypeIsCheckedAsAWrittenOneIs() throws {
        var archive = KeyedArchiveBuilder()
        let root = archive.keyPath(variable: "source", "colour")
        let misspelt = archive.data(root: root).base64EncodedString()
        let found = try problems { Self.replacingHexColorExpression(in: $0, with: misspelt) }
        #expect(found.count == 1)
        #expect(found.first?.property == "hexColor")
        #expect(found.first?.message.contains("colour") == true, "\(found)")
        #expect(found.first?.line == 47)
    }
}
