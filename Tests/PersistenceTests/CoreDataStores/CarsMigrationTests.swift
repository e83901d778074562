import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// The cars project's own facts (its README), on Apple's stores copied to each engine:
/// `SampleModel` → `SampleModel2` inferred, `SampleModel2` → `SampleModel3` with Xcode's
/// mapping model and a port of its maker policy, and the whole chain, at batch sizes 1 and
/// 1 000.
@Suite("Core Data stores: cars, migrated")
struct CarsMigrationTests {
    /// Runs `body` on a copy of `store` on `engine`: the file itself on SQLite, a copy made
    /// with `persistence copy`'s machinery on PostgreSQL.
    static func withStore<T>(_ store: CarsFixtures.Store, on engine: TestEngine, _ body: (StoreURL) async throws -> T) async throws -> T {
        try await CarsFixtures.withCopy(of: store) { file in
            guard engine == .postgres else { return try await body(file) }
            return try await engine.withStoreURL { url in
                _ = try await StoreCopy.copy(from: file, to: url, versions: try CarsFixtures.versionedModel(), logger: testLogger)
                return try await body(url)
            }
        }
    }

    static func migrate(_ url: StoreURL, to target: String, batchSize: Int, policy: V2to3MakerPolicy.Type = V2to3MakerPolicy.self) async throws {
        var policies = MigrationPolicies()
        policies.register(policy, as: "V2to3MakerPolicy")
        let models = try CarsFixtures.versionedModel()
        let chain = MigrationChain(
            models: models,
            mappingModels: try MappingModel.load(directory: CarsFixtures.mappings, versions: models),
            policies: policies
        )
        _ = try await ProgressiveMigrator(chain: chain, batchSize: batchSize, logger: testLogger).migrateStore(at: url, to: target)
    }

    /// Each car's number plate → its maker's name, as the store says before the migration.
    static func makers(in url: StoreURL) async throws -> [String: String] {
        let rows = try await storeRows(url, "SELECT ZNUMBERPLATE, ZMAKER FROM ZCAR")
        return Dictionary(uniqueKeysWithValues: rows.compactMap { row in row[0].text.flatMap { plate in row[1].text.map { (plate, $0) } } })
    }

    /// Three car mappings name one policy: it is one policy to register, and named once.
    @Test func theMappingModelNamesItsPolicyOnce() throws {
        let models = try CarsFixtures.versionedModel()
        let mapping = try #require(try MappingModel.load(directory: CarsFixtures.mappings, versions: models).first)
        #expect(mapping.entityMappings.filter { $0.policyName != nil }.count == 3)
        #expect(mapping.policyNames == ["REPLACE_AT_RUNTIME.V2to3MakerPolicy"])
    }

    @Test(arguments: TestEngine.allCases)
    func theFirstToTheSecondIsInferredAndGivesTheCompoundIndex(engine: TestEngine) async throws {
        try await Self.withStore(CarsFixtures.version1, on: engine) { url in
            try await Self.migrate(url, to: "SampleModel2", batchSize: 1_000)
            let model = try #require(try CarsFixtures.versionedModel().version(named: "SampleModel2"))
            try await withOpenStore(url, model: model) { container in
                let context = container.newContext()
                let luxury = try await context.fetch(FetchRequest(entityName: "LuxuryCar"))
                #expect(luxury.count == 5 && luxury.allSatisfy { $0.entity.name == "LuxuryCar" })
                #expect(try await context.count(for: FetchRequest(entityName: "Car")) == 125)
                #expect(try await context.count(for: FetchRequest(entityName: "Person")) == 20)
            }
            let indexes = try await storeIndexNames(url)
            #expect(
                indexes.isSuperset(of: ["z_car_bymakerandnumberplate", "z_car_unique_numberplate", "z_person_unique_firstname_lastname"]),
                "\(indexes.sorted())"
            )
            if engine == .sqlite {
                // As Apple's Core Data made it in its own second store.
                let sql = "SELECT sql FROM sqlite_master WHERE name = 'Z_Car_byMakerAndNumberPlate'"
                let apple = try await storeRows(.sqlite(CarsFixtures.version2.url.path), sql)
                #expect(try await storeRows(url, sql) == apple && apple.count == 1)
            }
        }
    }

    @Test(arguments: TestEngine.allCases, [1, 1_000])
    func theSecondToTheThirdWithXcodesMappingAndThePortedPolicy(engine: TestEngine, batchSize: Int) async throws {
        try await migratesToTheThird(from: CarsFixtures.version2, on: engine, batchSize: batchSize)
    }

    @Test(arguments: TestEngine.allCases, [1, 1_000])
    func theFirstToTheThirdInOneChain(engine: TestEngine, batchSize: Int) async throws {
        try await migratesToTheThird(from: CarsFixtures.version1, on: engine, batchSize: batchSize)
    }

    /// The guide's other way, a look-up through the store, holds nothing and finds every maker.
    @Test(arguments: TestEngine.allCases)
    func aPolicyThatLooksMakersUpInTheStoreFindsThemAtBatchSizeOne(engine: TestEngine) async throws {
        try await migratesToTheThird(from: CarsFixtures.version2, on: engine, batchSize: 1, policy: FetchingMakerPolicy.self)
    }

    /// Without the guide's step, a maker made in an earlier batch is gone from the context
    /// and made again; `Maker`'s uniqueness constraint refuses the second, naming it, and
    /// the store stays as it was.
    @Test(arguments: TestEngine.allCases)
    func aPolicyThatHoldsNoMakerMakesASecondOneWhichTheConstraintRefuses(engine: TestEngine) async throws {
        try await Self.withStore(CarsFixtures.version2, on: engine) { url in
            let before = try await storeRows(url, "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT")
            let error = await #expect(throws: (any Error).self) {
                try await Self.migrate(url, to: "SampleModel3", batchSize: 1, policy: ForgetfulMakerPolicy.self)
            }
            let text = "\(String(describing: error))"
            #expect(text.contains("Maker's uniqueness constraint on name"), "\(text)")
            #expect(try await storeRows(url, "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT") == before)
            #expect(try await storeRows(url, "SELECT COUNT(*) FROM ZCAR") == [[.integer(125)]])
        }
    }

    /// Migrates a copy of `store` to `SampleModel3` with `policy` and expects the facts.
    private func migratesToTheThird(
        from store: CarsFixtures.Store,
        on engine: TestEngine,
        batchSize: Int,
        policy: V2to3MakerPolicy.Type = V2to3MakerPolicy.self
    ) async throws {
        try await Self.withStore(store, on: engine) { url in
            let makers = try await Self.makers(in: url)
            try await Self.migrate(url, to: "SampleModel3", batchSize: batchSize, policy: policy)
            try await expectTheThirdVersionsFacts(url, makers: makers)
        }
    }

    /// 10 makers, 125 cars, each car made by the maker its source named; an owned car has
    /// its owner in `previousOwners` and is in the owner's `previousCars`; an unowned one
    /// has no `previousOwners`.
    private func expectTheThirdVersionsFacts(
        _ url: StoreURL,
        makers: [String: String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(makers.count == 125 && Set(makers.values).count == 10, sourceLocation: sourceLocation)
        let model = try #require(try CarsFixtures.versionedModel().version(named: "SampleModel3"))
        // The streamed step built every index, Maker's unique one among them.
        try await expectEveryIndex(url, of: model, sourceLocation: sourceLocation)
        try await withOpenStore(url, model: model) { container in
            let context = container.newContext()
            let madeMakers = try await context.fetch(FetchRequest(entityName: "Maker"))
            #expect(madeMakers.count == 10, sourceLocation: sourceLocation)
            #expect(Set(madeMakers.compactMap { $0.value(forKey: "name").stringValue }) == Set(makers.values), sourceLocation: sourceLocation)
            let cars = try await context.fetch(FetchRequest(entityName: "Car"))
            #expect(cars.count == 125 && cars.filter { $0.entity.name == "LuxuryCar" }.count == 5, sourceLocation: sourceLocation)
            var wrongMaker: [String] = []
            var owned = 0
            var ownedKept = 0
            var unownedWithPrevious = 0
            for car in cars {
                let plate = car.value(forKey: "numberPlate").stringValue ?? "?"
                let maker = try await car.destination(forKey: "createdBy")
                if maker?.value(forKey: "name").stringValue != makers[plate] { wrongMaker.append(plate) }
                let previous = try await car.destinations(forKey: "previousOwners").map(\.objectID)
                if let owner = try await car.destination(forKey: "owner") {
                    owned += 1
                    let previousCars = try await owner.destinations(forKey: "previousCars").map(\.objectID)
                    if previous == [owner.objectID] && previousCars.contains(car.objectID) { ownedKept += 1 }
                } else if !previous.isEmpty {
                    unownedWithPrevious += 1
                }
            }
            #expect(wrongMaker.isEmpty, "cars without their maker: \(wrongMaker.sorted())", sourceLocation: sourceLocation)
            #expect(
                owned == 118 && ownedKept == owned && unownedWithPrevious == 0,
                "\(owned) owned, \(ownedKept) kept, \(unownedWithPrevious)",
                sourceLocation: sourceLocation
            )
        }
    }
}
