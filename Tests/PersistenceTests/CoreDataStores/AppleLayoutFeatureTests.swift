import Foundation
import PersistenceTesting
import Testing

@_spi(Testing) @testable import Persistence

/// Layouts Core Data writes that no fixture store has, each in a store the test writes in
/// Apple's exact form (``AppleFormStore``): recognised by its tables, read and saved through
/// a context on SQLite and, copied there, on PostgreSQL.
@Suite("Core Data layouts: written in Apple's form")
struct AppleLayoutFeatureTests {
    /// Runs `body` with a store written by `statements` (and `files` beside it) on `engine`:
    /// the file on SQLite, a copy in a new database on PostgreSQL.
    private func withAppleStore(
        _ model: ManagedObjectModel,
        statements: [String],
        entities: [(number: Int, name: String, superNumber: Int, max: Int)],
        on engine: TestEngine,
        files: [String: Data] = [:],
        _ body: (StoreURL, RecognisedStoreVersion) async throws -> Void
    ) async throws {
        let folder = try ScenarioFolder()
        let path = folder.url.appendingPathComponent("Store.sqlite").path
        try AppleFormStore.write(at: path, statements: statements, entities: entities)
        for (name, data) in files {
            let file = folder.url.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: file)
        }
        let versions = try VersionedModel(name: model.name, versions: [model], currentVersionName: model.name)
        let recognised = try await versions.recogniseVersion(ofStoreAt: .sqlite(path))
        switch engine {
        case .sqlite:
            try await body(.sqlite(path), recognised)
        case .postgres:
            try await engine.withStoreURL { postgres in
                _ = try await StoreCopy.copy(from: .sqlite(path), to: postgres, versions: versions, logger: testLogger)
                try await body(postgres, recognised)
            }
        }
    }

    // MARK: Uniqueness constraints as older releases wrote them

    static let places = """
        <entity name="Place" representedClassName="Place">
            <attribute name="code" attributeType="String"/>
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="region" attributeType="String"/>
            <uniquenessConstraints><uniquenessConstraint><constraint value="code"/><constraint value="region"/></uniquenessConstraint></uniquenessConstraints>
        </entity>
        """

    /// A uniqueness constraint written as a table constraint inside `CREATE TABLE` is the
    /// model's constraint: no note, and a second row with the same values is refused.
    @Test(arguments: TestEngine.allCases)
    func aUniquenessConstraintAsATableConstraint(engine: TestEngine) async throws {
        let model = try ModelFixtures.model(Self.places)
        try await withAppleStore(
            model,
            statements: [
                "CREATE TABLE ZPLACE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE VARCHAR, ZNAME VARCHAR, ZREGION VARCHAR, CONSTRAINT ZCODE_ZREGION UNIQUE (ZCODE, ZREGION) )",
                "INSERT INTO ZPLACE VALUES (1, 1, 1, '75', 'Paris', 'FR'), (2, 1, 1, '75', 'Sankt Gallen', 'CH')",
            ],
            entities: [(1, "Place", 0, 2)],
            on: engine
        ) { url, recognised in
            #expect(recognised.method == .structure)
            #expect(recognised.notes.isEmpty, "\(recognised.notes)")
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                #expect(try await context.count(for: FetchRequest(entityName: "Place")) == 2)
                let twin = try context.insertObject(entityName: "Place")
                twin.setValue("75", forKey: "code")
                twin.setValue("FR", forKey: "region")
                twin.setValue("Île-de-France", forKey: "name")
                await #expect(throws: (any Error).self) { try await context.save() }
            }
            #expect(try await storeRows(url, "SELECT count(*) FROM ZPLACE") == [[.integer(2)]])
        }
    }

    /// A store whose uniqueness constraint is a table constraint migrates by every kind of
    /// step with its rows, and the migrated store still refuses a second row with the same
    /// values.
    @Test(arguments: TestEngine.allCases.flatMap { engine in [MigrationPlan.Strategy.inPlace, .setBased, .streamed].map { (engine, $0) } })
    func aTableConstraintStoreMigratesKeepingItsRule(engine: TestEngine, strategy: MigrationPlan.Strategy) async throws {
        let v1 = try ModelFixtures.model(Self.places)
        let v2 = try ManagedObjectModel(
            xml: ModelFixtures.xml(
                Self.places.replacingOccurrences(
                    of: #"<attribute name="region""#,
                    with: #"<attribute name="note" optional="YES" attributeType="String"/><attribute name="region""#
                )
            ),
            name: "Test 2",
            file: ModelFixtures.file
        )
        try await withAppleStore(
            v1,
            statements: [
                "CREATE TABLE ZPLACE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE VARCHAR, ZNAME VARCHAR, ZREGION VARCHAR, CONSTRAINT ZCODE_ZREGION UNIQUE (ZCODE, ZREGION) )",
                "INSERT INTO ZPLACE VALUES (1, 1, 1, '75', 'Paris', 'FR'), (2, 1, 1, '75', 'Sankt Gallen', 'CH')",
            ],
            entities: [(1, "Place", 0, 2)],
            on: engine
        ) { url, _ in
            let models = try VersionedModel(name: "Test", versions: [v1, v2], currentVersionName: "Test 2")
            let plan = try await ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger, forcing: strategy).migrateStore(
                at: url
            )
            #expect(plan.steps.map(\.strategy) == [strategy])
            try await withOpenStore(url, model: v2) { container in
                let context = container.newContext()
                let places = try await context.fetch(FetchRequest(entityName: "Place"))
                #expect(Set(places.compactMap { $0.value(forKey: "name").stringValue }) == ["Paris", "Sankt Gallen"])
                let twin = try context.insertObject(entityName: "Place")
                twin.setValue("75", forKey: "code")
                twin.setValue("CH", forKey: "region")
                await #expect(throws: (any Error).self) { try await context.save() }
            }
            #expect(try await storeRows(url, "SELECT count(*) FROM ZPLACE") == [[.integer(2)]])
            // In the form a new store of the destination has: a named unique index.
            #expect(try await Self.uniquenessForms(of: url, engine: engine) == .init(tableConstraints: 0, uniqueIndexes: 1))
        }
    }

    /// A table constraint the next version no longer has goes with the step, whichever kind:
    /// the migrated store takes a second row with the same values.
    @Test(arguments: TestEngine.allCases.flatMap { engine in [MigrationPlan.Strategy.inPlace, .setBased, .streamed].map { (engine, $0) } })
    func aTableConstraintTheNextVersionDropsNoLongerHolds(engine: TestEngine, strategy: MigrationPlan.Strategy) async throws {
        let v1 = try ModelFixtures.model(Self.places)
        let unconstrained = Self.places.replacingOccurrences(
            of:
                #"<uniquenessConstraints><uniquenessConstraint><constraint value="code"/><constraint value="region"/></uniquenessConstraint></uniquenessConstraints>"#,
            with: ""
        )
        let v2 = try ManagedObjectModel(xml: ModelFixtures.xml(unconstrained), name: "Test 2", file: ModelFixtures.file)
        try await withAppleStore(
            v1,
            statements: [
                "CREATE TABLE ZPLACE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE VARCHAR, ZNAME VARCHAR, ZREGION VARCHAR, CONSTRAINT ZCODE_ZREGION UNIQUE (ZCODE, ZREGION) )",
                "INSERT INTO ZPLACE VALUES (1, 1, 1, '75', 'Paris', 'FR'), (2, 1, 1, '75', 'Sankt Gallen', 'CH')",
            ],
            entities: [(1, "Place", 0, 2)],
            on: engine
        ) { url, _ in
            let models = try VersionedModel(name: "Test", versions: [v1, v2], currentVersionName: "Test 2")
            // Both versions fit the tables (a constraint more than the model has decides nothing).
            let plan = try await ProgressiveMigrator(chain: MigrationChain(models: models), logger: testLogger, forcing: strategy)
                .migrateStore(at: url, storeVersion: "Test")
            #expect(plan.steps.map(\.strategy) == [strategy])
            #expect(try await Self.uniquenessForms(of: url, engine: engine) == .init(tableConstraints: 0, uniqueIndexes: 0))
            try await withOpenStore(url, model: v2) { container in
                let context = container.newContext()
                let twin = try context.insertObject(entityName: "Place")
                twin.setValue("75", forKey: "code")
                twin.setValue("CH", forKey: "region")
                twin.setValue("Zürich, again", forKey: "name")
                try await context.save()
            }
            #expect(
                try await storeRows(url, "SELECT ZNAME FROM ZPLACE WHERE ZREGION = 'CH' ORDER BY Z_PK") == [
                    [.text("Sankt Gallen")], [.text("Zürich, again")],
                ]
            )
        }
    }

    struct UniquenessForms: Equatable {
        var tableConstraints: Int
        var uniqueIndexes: Int
    }

    /// How the store keeps uniqueness on `ZPLACE`: table constraints inside `CREATE TABLE`,
    /// and unique indexes other than the primary key's.
    private static func uniquenessForms(of url: StoreURL, engine: TestEngine) async throws -> UniquenessForms {
        switch engine {
        case .sqlite:
            let rows = try await storeRows(url, "SELECT i.origin FROM pragma_index_list('ZPLACE') i WHERE i.\"unique\" = 1")
            return UniquenessForms(
                tableConstraints: rows.filter { $0[0] == .text("u") }.count,
                uniqueIndexes: rows.filter { $0[0] == .text("c") }.count
            )
        case .postgres:
            let constraints = try await storeRows(
                url,
                "SELECT count(*) FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = current_schema() AND t.relname = 'zplace' AND c.contype = 'u'"
            )
            let indexes = try await storeRows(
                url,
                "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'zplace' AND indexdef LIKE 'CREATE UNIQUE INDEX%' AND indexname <> 'zplace_pkey'"
            )
            return UniquenessForms(tableConstraints: Int(constraints[0][0].int64 ?? -1), uniqueIndexes: Int(indexes[0][0].int64 ?? -1))
        }
    }

    // MARK: The entity of a to-one's destination

    static let pets = """
        <entity name="Employee" representedClassName="Employee" parentEntity="Person">
            <attribute name="company" optional="YES" attributeType="String"/>
        </entity>
        <entity name="Person" representedClassName="Person">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="pets" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Pet" inverseName="owner" inverseEntity="Pet"/>
        </entity>
        <entity name="Pet" representedClassName="Pet">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="pets" inverseEntity="Person"/>
        </entity>
        """

    /// A to-one whose destination has sub-entities keeps the destination's `Z_ENT` beside
    /// its key (`Z1_OWNER`); a save writes both.
    @Test(arguments: TestEngine.allCases)
    func aToOneKeepsItsDestinationsEntity(engine: TestEngine) async throws {
        let model = try ModelFixtures.model(Self.pets)
        try await withAppleStore(
            model,
            statements: [
                "CREATE TABLE ZPERSON ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCOMPANY VARCHAR, ZNAME VARCHAR )",
                "CREATE TABLE ZPET ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZOWNER INTEGER, Z1_OWNER INTEGER, ZNAME VARCHAR )",
                "CREATE INDEX ZPERSON_Z_ENT_INDEX ON ZPERSON (Z_ENT)",
                "CREATE INDEX ZPET_ZOWNER_INDEX ON ZPET (ZOWNER)",
                "INSERT INTO ZPERSON VALUES (1, 1, 1, NULL, 'Ada'), (2, 2, 1, 'Navy', 'Grace')",
                "INSERT INTO ZPET VALUES (1, 3, 1, 2, 2, 'Rex'), (2, 3, 1, 1, 1, 'Tom')",
            ],
            entities: [(1, "Person", 0, 2), (2, "Employee", 1, 0), (3, "Pet", 0, 2)],
            on: engine
        ) { url, recognised in
            #expect(recognised.method == .structure)
            #expect(recognised.notes.isEmpty, "\(recognised.notes)")
            let bella = try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let rex = try #require(
                    try await context.fetch(FetchRequest(entityName: "Pet", predicate: try Predicate(format: "name == 'Rex'"))).first
                )
                let grace = try #require(try await rex.destination(forKey: "owner"))
                #expect(grace.entity.name == "Employee")
                let ada = try #require(
                    try await context.fetch(FetchRequest(entityName: "Person", predicate: try Predicate(format: "name == 'Ada'"))).first
                )
                let bella = try context.insertObject(entityName: "Pet")
                bella.setValue("Bella", forKey: "name")
                bella.setDestination(grace, forKey: "owner")
                rex.setDestination(ada, forKey: "owner")
                try await context.save()
                return try #require(bella.objectID.primaryKey)
            }
            #expect(
                try await storeRows(url, "SELECT ZNAME, ZOWNER, Z1_OWNER FROM ZPET ORDER BY Z_PK")
                    == [
                        [.text("Rex"), .integer(1), .integer(1)], [.text("Tom"), .integer(1), .integer(1)],
                        [.text("Bella"), .integer(2), .integer(2)],
                    ]
            )
            #expect(bella == 3)
        }
    }

    // MARK: Join columns whose names would clash

    static let groups = """
        <entity name="Team" representedClassName="Team">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="members" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Team" inverseName="members" inverseEntity="Team"/>
        </entity>
        """

    /// A many-to-many that is its own inverse: both join columns would be `Z_1MEMBERS`, and
    /// Core Data numbers the second.
    @Test(arguments: TestEngine.allCases)
    func joinColumnsWhoseNamesWouldClashAreNumbered(engine: TestEngine) async throws {
        let model = try ModelFixtures.model(Self.groups)
        try await withAppleStore(
            model,
            statements: [
                "CREATE TABLE ZTEAM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
                "CREATE TABLE Z_1MEMBERS ( Z_1MEMBERS INTEGER, Z_1MEMBERS1 INTEGER, PRIMARY KEY (Z_1MEMBERS, Z_1MEMBERS1) )",
                "CREATE INDEX Z_1MEMBERS_Z_1MEMBERS1_INDEX ON Z_1MEMBERS (Z_1MEMBERS1, Z_1MEMBERS)",
                "INSERT INTO ZTEAM VALUES (1, 1, 1, 'Core'), (2, 1, 1, 'Ränder'), (3, 1, 1, '周边')",
                "INSERT INTO Z_1MEMBERS VALUES (1, 3), (1, 2)",
            ],
            entities: [(1, "Team", 0, 3)],
            on: engine
        ) { url, recognised in
            #expect(recognised.method == .structure)
            #expect(recognised.notes.isEmpty, "\(recognised.notes)")
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let core = try #require(
                    try await context.fetch(FetchRequest(entityName: "Team", predicate: try Predicate(format: "name == 'Core'"))).first
                )
                #expect(try await core.destinations(forKey: "members").compactMap(\.objectID.primaryKey) == [2, 3])
                let edge = try #require(
                    try await context.fetch(FetchRequest(entityName: "Team", predicate: try Predicate(format: "name == '周边'"))).first
                )
                let borders = try #require(
                    try await context.fetch(FetchRequest(entityName: "Team", predicate: try Predicate(format: "name == 'Ränder'"))).first
                )
                borders.addDestination(edge, forKey: "members")
                try await context.save()
            }
            #expect(
                try await storeRows(url, "SELECT Z_1MEMBERS, Z_1MEMBERS1 FROM Z_1MEMBERS ORDER BY Z_1MEMBERS, Z_1MEMBERS1")
                    == [[.integer(1), .integer(2)], [.integer(1), .integer(3)], [.integer(2), .integer(3)]]
            )
        }
    }

    // MARK: Tables Core Data keeps beside the model's

    /// Persistent history's and CloudKit's tables: noted, never a reason to refuse the store,
    /// and left as they are by a save.
    @Test(arguments: TestEngine.allCases)
    func historyAndCloudKitTablesAreKept(engine: TestEngine) async throws {
        let model = try ModelFixtures.model(Self.places)
        let extra = [
            "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZTIMESTAMP FLOAT )",
            "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER )",
            "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
            "CREATE TABLE ANSCKRECORDMETADATA ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZENTITYID INTEGER, ZENTITYPK INTEGER, ZCKRECORDID VARCHAR )",
        ]
        let rows = [
            "INSERT INTO ATRANSACTION VALUES (1, 16001, 1, 1, 786000000.5)",
            "INSERT INTO ACHANGE VALUES (1, 16002, 1, 0, 1, 1, 1)",
            "INSERT INTO ATRANSACTIONSTRING VALUES (1, 16003, 1, 'NSCoreDataCoreSpotlightExporter')",
            "INSERT INTO ANSCKRECORDMETADATA VALUES (1, 16004, 1, 1, 1, 'place-1')",
        ]
        let names = ["ACHANGE", "ANSCKRECORDMETADATA", "ATRANSACTION", "ATRANSACTIONSTRING"]
        try await withAppleStore(
            model,
            statements: [
                "CREATE TABLE ZPLACE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE VARCHAR, ZNAME VARCHAR, ZREGION VARCHAR )",
                "CREATE UNIQUE INDEX Z_Place_UNIQUE_code_region ON ZPLACE (ZCODE COLLATE BINARY ASC, ZREGION COLLATE BINARY ASC)",
                "INSERT INTO ZPLACE VALUES (1, 1, 1, '75', 'Paris', 'FR')",
            ] + extra + rows,
            entities: [(1, "Place", 0, 1)],
            on: engine
        ) { url, recognised in
            #expect(
                recognised.notes.count == 4 && zip(recognised.notes, names).allSatisfy { $0.contains("a table \($1) beside") },
                "\(recognised.notes)"
            )
            // A copy in PostgreSQL is the model's store; the tables are put beside it as an
            // app's own would be.
            if case .postgres(let configuration) = url.kind {
                let connection = try PostgresConnection(configuration: configuration)
                for statement in extra + rows {
                    try connection.execute(rawSQL: statement.replacingOccurrences(of: "FLOAT", with: "double precision"))
                }
                connection.close()
            }
            let before = try await names.asyncMap { try await storeRows(url, "SELECT * FROM \($0)") }
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let place = try context.insertObject(entityName: "Place")
                place.setValue("13", forKey: "code")
                place.setValue("FR", forKey: "region")
                try await context.save()
            }
            #expect(try await names.asyncMap { try await storeRows(url, "SELECT * FROM \($0)") } == before)
            #expect(try await storeRows(url, "SELECT count(*) FROM ZPLACE") == [[.integer(2)]])
        }
    }

    // MARK: External binary storage

    static let attachments = """
        <entity name="Attachment" representedClassName="Attachment">
            <attribute name="data" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
            <attribute name="title" optional="YES" attributeType="String"/>
        </entity>
        """

    /// Core Data's cells of an attribute that allows external storage: 1 and the bytes, or 2
    /// and the name of a file beside the store. Both read; a save writes the bytes behind a 1.
    @Test(arguments: TestEngine.allCases)
    func externallyStoredBinaryDataIsReadWhereCoreDataPutIt(engine: TestEngine) async throws {
        let model = try ModelFixtures.model(Self.attachments)
        let inline = Data("a small note, inline".utf8)
        let large = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let name = "0F6A2C3E-5B0E-4F3B-9C7E-2D6B1C5E8A90"
        try await withAppleStore(
            model,
            statements: [
                "CREATE TABLE ZATTACHMENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR, ZDATA BLOB )",
                "INSERT INTO ZATTACHMENT VALUES (1, 1, 1, 'inline', x'01\(inline.hex)'), (2, 1, 1, 'beside', x'02\(Data(name.utf8).hex)00'), (3, 1, 1, 'none', NULL)",
            ],
            entities: [(1, "Attachment", 0, 3)],
            on: engine,
            files: [".Store_SUPPORT/_EXTERNAL_DATA/\(name)": large]
        ) { url, _ in
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let all = try await context.fetch(FetchRequest(entityName: "Attachment", sortDescriptors: [.init(key: "title")]))
                #expect(all.map { $0.value(forKey: "data") } == [.binary(large), .binary(inline), .null])
                all[1].setValue(.binary(Data("rewritten".utf8)), forKey: "data")
                try await context.save()
            }
            let cell = try await storeRows(url, "SELECT ZDATA FROM ZATTACHMENT WHERE Z_PK = 1")
            // Apple's store keeps Core Data's form; its copy in PostgreSQL holds the bytes.
            #expect(cell == [[.blob((engine == .sqlite ? Data([1]) : Data()) + Data("rewritten".utf8))]])
        }
    }

    /// A cell naming a file that is not there is refused, naming the file, and nothing changes.
    @Test func aMissingExternalFileIsNamed() async throws {
        let model = try ModelFixtures.model(Self.attachments)
        let name = "7D1E9B40-1C2A-4E8B-A3F5-6B9C0D2E4F11"
        try await withAppleStore(
            model,
            statements: [
                "CREATE TABLE ZATTACHMENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR, ZDATA BLOB )",
                "INSERT INTO ZATTACHMENT VALUES (1, 1, 1, 'gone', x'02\(Data(name.utf8).hex)00')",
            ],
            entities: [(1, "Attachment", 0, 1)],
            on: .sqlite
        ) { url, _ in
            let before = try await storeRows(url, "SELECT * FROM ZATTACHMENT")
            let error = await #expect(throws: StoreError.self) {
                try await withOpenStore(url, model: model) { try await $0.newContext().fetch(FetchRequest(entityName: "Attachment")) }
            }
            #expect(error?.code == .objectNotFound)
            #expect(error?.message.contains(".Store_SUPPORT/_EXTERNAL_DATA/\(name)") == true, "\(String(describing: error))")
            #expect(error?.hint?.contains(".Store_SUPPORT") == true)
            #expect(try await storeRows(url, "SELECT * FROM ZATTACHMENT") == before)
            // The copy reads every value first: it fails the same way and leaves nothing.
            try await TestEngine.postgres.withStoreURL { postgres in
                let versions = try VersionedModel(name: model.name, versions: [model], currentVersionName: model.name)
                await #expect(throws: StoreError.self) { try await StoreCopy.copy(from: url, to: postgres, versions: versions, logger: testLogger) }
                #expect(try await storeRows(postgres, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()") == [[.integer(0)]])
            }
        }
    }

    /// A store of Apple's whose binary attribute allows external storage migrates by every
    /// kind of step with its values: the bytes behind a `1`, the bytes of the file a `2`
    /// names (one whose bytes start with a 1 themselves), an empty value and none. The
    /// migrated store keeps them in its cells; the files beside it are left as they were.
    /// (Apple's stores are SQLite files; their copies in PostgreSQL hold plain cells, see
    /// `externallyStoredBinaryDataIsReadWhereCoreDataPutIt`.)
    @Test(arguments: [MigrationPlan.Strategy.inPlace, .setBased, .streamed])
    func aStoreWithExternallyStoredCellsMigratesWithItsValues(strategy: MigrationPlan.Strategy) async throws {
        let versions = try Self.attachmentVersions()
        let inline = Data("a small note, inline — çà".utf8)
        let large = Data([1, 2]) + Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let name = "3B8E1D52-7A40-4C16-9E2F-5D0C8B7A6F31"
        let folder = try ScenarioFolder()
        let path = folder.url.appendingPathComponent("Store.sqlite").path
        try AppleFormStore.write(
            at: path,
            statements: [
                "CREATE TABLE ZATTACHMENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR, ZDATA BLOB )",
                "INSERT INTO ZATTACHMENT VALUES (1, 1, 1, 'inline', x'01\(inline.hex)'), (2, 1, 1, 'beside', x'02\(Data(name.utf8).hex)00'), (3, 1, 1, 'none', NULL), (4, 1, 1, 'empty', x'01')",
            ],
            entities: [(1, "Attachment", 0, 4)]
        )
        let file = folder.url.appendingPathComponent(".Store_SUPPORT/_EXTERNAL_DATA/\(name)")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try large.write(to: file)
        let migrator = ProgressiveMigrator(chain: MigrationChain(models: versions), logger: testLogger, forcing: strategy)
        let plan = try await migrator.migrateStore(at: .sqlite(path))
        // A first step not in place is preceded by one from the store's version to itself.
        #expect(plan.steps.map(\.strategy) == (strategy == .inPlace ? [.inPlace] : [.inPlace, strategy]), "\(plan)")
        #expect(plan.steps[0].description.contains("externally stored values of Attachment.data"), "\(plan)")
        #expect(plan.steps.last?.destination.name == "Attachments 2")
        try await withOpenStore(.sqlite(path), model: versions.current) { container in
            let context = container.newContext()
            let all = try await context.fetch(FetchRequest(entityName: "Attachment", sortDescriptors: [.init(key: "title")]))
            #expect(all.map { $0.value(forKey: "title").stringValue } == ["beside", "empty", "inline", "none"])
            #expect(all.map { $0.value(forKey: "data") } == [.binary(large), .binary(Data()), .binary(inline), .null])
        }
        #expect(try await storeRows(.sqlite(path), "SELECT ZDATA FROM ZATTACHMENT WHERE Z_PK = 2") == [[.blob(large)]])
        #expect(try Data(contentsOf: file) == large)
    }

    /// A cell naming a missing file stops the migration before it writes anything, naming
    /// the attribute, the row and the file.
    @Test func aMissingExternalFileStopsTheMigration() async throws {
        let versions = try Self.attachmentVersions()
        let name = "9C2A6E14-3F5B-4D70-8A1E-7B6C5D4E3F20"
        let folder = try ScenarioFolder()
        let path = folder.url.appendingPathComponent("Store.sqlite").path
        try AppleFormStore.write(
            at: path,
            statements: [
                "CREATE TABLE ZATTACHMENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR, ZDATA BLOB )",
                "INSERT INTO ZATTACHMENT VALUES (1, 1, 1, 'inline', x'0168692e'), (2, 1, 1, 'gone', x'02\(Data(name.utf8).hex)00')",
            ],
            entities: [(1, "Attachment", 0, 2)]
        )
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for strategy in [MigrationPlan.Strategy.inPlace, .setBased] {
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: versions), logger: testLogger, forcing: strategy)
            let error = await #expect(throws: MigrationError.self) { try await migrator.migrateStore(at: .sqlite(path)) }
            #expect(error?.message.contains("Attachment.data of row 2") == true, "\(String(describing: error))")
            #expect(error?.message.contains("_EXTERNAL_DATA/\(name)") == true, "\(String(describing: error))")
            #expect(error?.hint?.contains("the store was not changed") == true, "\(String(describing: error))")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        }
    }

    /// Versions "Attachments" and "Attachments 2" (a new optional attribute).
    private static func attachmentVersions() throws -> VersionedModel {
        let model = try ModelFixtures.model(Self.attachments)
        let next = try ModelFixtures.model(
            Self.attachments.replacingOccurrences(
                of: #"<attribute name="title""#,
                with: #"<attribute name="note" optional="YES" attributeType="String"/><attribute name="title""#
            )
        )
        let versions = try VersionedModel(
            name: "Attachments",
            versions: [model, ManagedObjectModel(xml: next.xmlData(), name: "Attachments 2", file: "Attachments 2")],
            currentVersionName: "Attachments 2"
        )
        return versions
    }

    // MARK: A look that only reads

    /// `persistence inspect` of a store with its `-wal` and `-shm` leaves all three files
    /// byte for byte as they were (it used to fold the log into the store and remove it).
    @Test func inspectLeavesAStoreAndItsLogUntouched() async throws {
        let store = AppleFixtures.feedback.first { $0.file.contains("v2WALDatabase") }!
        try await AppleFixtures.withCopy(of: store) { url in
            let path = try #require(url.filePath)
            let files = ["", "-wal", "-shm"].map { path + $0 }
            let before = try files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
            #expect(before[1].count > 100_000, "the log holds rows")
            for arguments in [
                ["inspect", "--store", "sqlite://\(path)", "--models", store.modelsURL.path], ["inspect", "--store", "sqlite://\(path)"],
            ] {
                let output = try await persistenceCommand.run(arguments)
                #expect(output.status == 0, "\(output.stderr)")
                #expect(try files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) } == before)
            }
        }
    }
}

extension Data {
    /// The bytes as hexadecimal digits, for a SQL blob literal.
    fileprivate var hex: String { map { String(format: "%02x", $0) }.joined() }
}
