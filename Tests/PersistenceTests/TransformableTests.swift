import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A transformer of the kind apps register: tags as JSON.
struct TagsTransformer: AttributeValueTransformer {
    func value(from data: Data) throws -> [String] { try JSONDecoder().decode([String].self, from: data) }
    func data(from value: [String]) throws -> Data { try JSONEncoder().encode(value) }
}

enum VaultVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Vault"
    case v2 = "Vault 2"
    var modelName: String { rawValue }
    func nextVersion() -> VaultVersion? { self == .v1 ? .v2 : nil }
}

enum StreamedVaultVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Vault"
    case v2 = "Vault 2"
    var modelName: String { rawValue }
    func nextVersion() -> StreamedVaultVersion? { self == .v1 ? .v2 : nil }
    var migrationManagerType: MigrationManager.Type { self == .v2 ? StreamingManager.self : MigrationManager.self }
}

/// Transformable attributes: read from the model file, stored as Core Data stores them (a
/// BLOB), copied byte for byte by every kind of step and across engines, and read through
/// value transformers.
@Suite struct TransformableTests {
    static func model(_ name: String, note: Bool) throws -> ManagedObjectModel {
        try ManagedObjectModel(
            xml: Data(
                """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="">
                    <entity name="Item" representedClassName="Item" syncable="YES">
                        <attribute name="name" optional="YES" attributeType="String"/>
                        \(note ? #"<attribute name="note" optional="YES" attributeType="String"/>"# : "")
                        <attribute name="settings" optional="YES" attributeType="Transformable" customClassName="NSDictionary"/>
                        <attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="TagsTransformer" customClassName="[String]"/>
                    </entity>
                </model>
                """.utf8
            ),
            name: name
        )
    }

    static func versions() throws -> VersionedModel {
        try VersionedModel(name: "Vault", versions: [model("Vault", note: false), model("Vault 2", note: true)], currentVersionName: "Vault 2")
    }

    static var transformers: ValueTransformers {
        var transformers = ValueTransformers()
        transformers.register(TagsTransformer(), as: "TagsTransformer")
        return transformers
    }

    /// What Core Data on an Apple platform archives for `["theme": "dark", "size": 12, "on": true, …]`:
    /// property-list values inline, an `NSDictionary` with `NS.keys`/`NS.objects`.
    static let appleSettings: Data = {
        var archive = KeyedArchiveBuilder()
        let date = archive.object(["NSDate"], ["NS.time": .real(700_000_000)])
        let list = archive.array([archive.string("a"), archive.add(.integer(2))])
        let root = archive.dictionary([
            ("theme", archive.string("dark")), ("size", archive.add(.integer(12))), ("ratio", archive.add(.real(0.75))),
            ("on", archive.add(.bool(true))), ("since", date), ("list", list), ("blob", archive.add(.data(Data([9, 8])))),
        ])
        return archive.data(root: root)
    }()

    static let expectedSettings: PropertyListValue = .dictionary([
        "theme": .string("dark"), "size": .integer(12), "ratio": .real(0.75), "on": .bool(true),
        "since": .date(Date(timeIntervalSinceReferenceDate: 700_000_000)), "list": .array([.string("a"), .integer(2)]), "blob": .data(Data([9, 8])),
    ])

    @Test func theModelFileKeepsTheTransformerAndClassNames() throws {
        let model = try Self.model("Vault", note: false)
        let item = try #require(model.entity(named: "Item"))
        let tags = try #require(model.attribute(named: "tags", of: item))
        #expect(tags.type == .transformable && tags.valueTransformerName == "TagsTransformer" && tags.customClassName == "[String]")
        let settings = try #require(model.attribute(named: "settings", of: item))
        #expect(settings.type == .transformable && settings.valueTransformerName == nil && settings.customClassName == "NSDictionary")
        let written = try ManagedObjectModel(xml: model.xmlData(), name: "Vault")
        #expect(written == model)
        #expect(StoreSchema(model: model, dialect: .sqlite).createStatements().map(\.description).joined().contains("ZTAGS BLOB"))
        #expect(StoreSchema(model: model, dialect: .postgres).createStatements().map(\.description).joined().contains("ztags bytea"))
    }

    @Test(arguments: TestBackend.allCases)
    func valuesGoThroughTheirTransformersAndComeBackAsTheirBytes(backend: TestBackend) async throws {
        try await withContainer(backend, model: try Self.model("Vault", note: false)) { container in
            let context = container.newContext()
            let item = try context.insertObject(entityName: "Item")
            try item.setTransformedValue(["fiction", "Grüße"], forKey: "tags", in: Self.transformers)
            item.setValue(.binary(Self.appleSettings), forKey: "settings")
            try await context.save()

            let fresh = container.newContext()
            let fetched = try #require(try await fresh.fetch(FetchRequest(entityName: "Item")).first)
            #expect(fetched.value(forKey: "tags") == .binary(try TagsTransformer().data(from: ["fiction", "Grüße"])), "Data by default")
            #expect(try fetched.transformedValue(forKey: "tags", as: [String].self, in: Self.transformers) == ["fiction", "Grüße"])
            #expect(fetched.value(forKey: "settings") == .binary(Self.appleSettings), "byte for byte")
            #expect(try fetched.transformedValue(forKey: "settings", as: PropertyListValue.self, in: Self.transformers) == Self.expectedSettings)

            // The built-in transformer writes what it reads.
            try fetched.setTransformedValue(
                PropertyListValue.array([.string("x"), .null, .url(URL(string: "https://example.com")!)]),
                forKey: "settings",
                using: SecureUnarchiveFromDataTransformer()
            )
            try await fresh.save()
            let again = try #require(try await container.newContext().fetch(FetchRequest(entityName: "Item")).first)
            #expect(
                try again.transformedValue(forKey: "settings", using: SecureUnarchiveFromDataTransformer())
                    == .array([.string("x"), .null, .url(URL(string: "https://example.com")!)])
            )
        }
    }

    /// Misuses of an object that is never saved: no engine is reached, SQLite stands for all.
    @Test func misusesSayWhatAndWhere() async throws {
        try await withContainer(.sqlite, model: try Self.model("Vault", note: false)) { container in
            let item = try container.newContext().insertObject(entityName: "Item")
            item.setValue(.binary(Data("not an archive".utf8)), forKey: "settings")
            item.setValue(.binary(Data("[1]".utf8)), forKey: "tags")
            #expect(throws: ContextError.self) { try item.transformedValue(forKey: "tags", as: [String].self, in: ValueTransformers()) }
            do throws(ContextError) {
                _ = try item.transformedValue(forKey: "tags", as: [String].self, in: ValueTransformers())
                Issue.record("an unregistered transformer was found")
            } catch {
                #expect(error.message.contains("Item.tags names the value transformer TagsTransformer, which is not registered"), "\(error)")
            }
            do throws(ContextError) {
                _ = try item.transformedValue(forKey: "settings", as: PropertyListValue.self, in: Self.transformers)
                Issue.record("bytes that are no archive were read")
            } catch {
                #expect(
                    error.message.contains("Item.settings: the value transformer NSSecureUnarchiveFromData cannot read the 14 stored bytes"),
                    "\(error)"
                )
            }
            do throws(ContextError) {
                _ = try item.transformedValue(forKey: "name", using: TagsTransformer())
                Issue.record("a String attribute was transformed")
            } catch {
                #expect(error.message.contains("Item.name is a String attribute, not a Transformable one"), "\(error)")
            }
            do throws(ContextError) {
                try item.setTransformedValue(42, forKey: "tags", in: Self.transformers)
                Issue.record("a number was stored through a transformer of [String]")
            } catch {
                #expect(error.message.contains("stores Array<String>, not Int"), "\(error)")
            }
        }
    }

    /// One row of random bytes (not valid for any transformer: the bytes are only carried)
    /// and one Apple archive, through an in-place, a set-based and a streamed step.
    @Test(arguments: TestEngine.allCases)
    func everyKindOfStepCopiesTheBytesAsTheyAre(engine: TestEngine) async throws {
        let random = Data((0..<4096).map { _ in UInt8.random(in: 0...255) })
        let models = try Self.versions()
        let v1 = try #require(models.version(named: "Vault"))
        let v2 = try #require(models.version(named: "Vault 2"))
        var explicit = try MappingModel.inferred(from: v1, to: v2)
        explicit.isInferred = false
        explicit.name = "Vault1To2"
        explicit.entityMappings[0].type = .transform
        explicit.entityMappings[0].attributeMappings = [
            PropertyMapping(name: "name", valueExpression: try Expression(format: #"FUNCTION($source.name, "stringByAppendingString:", "!")"#)),
            PropertyMapping(name: "note"),
            PropertyMapping(name: "settings", valueExpression: try Expression(format: "$source.settings")),
            PropertyMapping(name: "tags", valueExpression: try Expression(format: "$source.tags")),
        ]
        let chains: [(MigrationChain, MigrationPlan.Strategy)] = [
            (MigrationChain(models: models), .inPlace),
            (try MigrationChain(VaultVersion.self, models: models, mappingModels: [explicit]), .setBased),
            (try MigrationChain(StreamedVaultVersion.self, models: models, mappingModels: [explicit]), .streamed),
        ]
        for (chain, strategy) in chains {
            try await engine.withStoreURL { url in
                try await makeClosedStore(at: url, model: v1) { container in
                    let context = container.newContext()
                    for (name, settings) in [("random", random), ("apple", Self.appleSettings)] {
                        let item = try context.insertObject(entityName: "Item")
                        item.setValue(.string(name), forKey: "name")
                        item.setValue(.binary(settings), forKey: "settings")
                        item.setValue(.binary(try TagsTransformer().data(from: [name])), forKey: "tags")
                    }
                    try await context.save()
                }
                let result = try await ProgressiveMigrator(chain: chain, logger: testLogger).migrateStore(at: url)
                #expect(result.steps.map(\.strategy) == [strategy])
                let rows = try await storeRows(url, "SELECT ZNAME, ZSETTINGS, ZTAGS FROM ZITEM ORDER BY Z_PK")
                #expect(rows.map { $0[1].blob } == [random, Self.appleSettings], "\(strategy): the bytes changed")
                try await withOpenStore(url, model: v2) { container in
                    let items = try await container.newContext().fetch(
                        FetchRequest(entityName: "Item", sortDescriptors: [FetchRequest.SortDescriptor(key: "settings", ascending: true)])
                    )
                    let apple = try #require(items.first { $0.value(forKey: "settings") == .binary(Self.appleSettings) })
                    #expect(
                        try apple.transformedValue(forKey: "settings", as: PropertyListValue.self, in: Self.transformers) == Self.expectedSettings
                    )
                    #expect(try apple.transformedValue(forKey: "tags", as: [String].self, in: Self.transformers) == ["apple"])
                }
            }
        }
    }

    @Test func aCopyToPostgreSQLKeepsTheBytes() async throws {
        let random = Data((0..<4096).map { _ in UInt8.random(in: 0...255) })
        let models = try Self.versions()
        let v1 = try #require(models.version(named: "Vault"))
        try await TestEngine.sqlite.withStoreURL { source in
            try await makeClosedStore(at: source, model: v1) { container in
                let context = container.newContext()
                let item = try context.insertObject(entityName: "Item")
                item.setValue(.binary(random), forKey: "settings")
                item.setValue(.binary(Self.appleSettings), forKey: "tags")
                try await context.save()
            }
            try await TestEngine.postgres.withStoreURL { destination in
                _ = try await StoreCopy.copy(from: source, to: destination, versions: models, logger: testLogger)
                let rows = try await storeRows(destination, "SELECT ZSETTINGS, ZTAGS FROM ZITEM")
                #expect(rows.map { $0[0].blob } == [random] && rows.map { $0[1].blob } == [Self.appleSettings])
            }
        }
    }
}
