import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Uniqueness constraints and fetch indexes in the store: created as Core Data creates them,
/// and enforced by saves with an error that names the entity, the properties and the values.
@Suite("Uniqueness constraints and fetch indexes in stores")
struct UniquenessConstraintTests {
    /// `Car` (unique numberPlate, a fetch index on maker and numberPlate) with the
    /// sub-entity `SportCar` (unique racingNumber among sport cars only); `Person` unique by
    /// first and last name; `Garage` unique by its to-one `owner`.
    static func model() throws -> ManagedObjectModel {
        try ModelFixtures.model(
            """
            <entity name="Car">
                <attribute name="maker" optional="YES" attributeType="String"/>
                <attribute name="numberPlate" optional="YES" attributeType="String"/>
                <attribute name="racingNumber" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
                <fetchIndex name="byMakerAndNumberPlate">
                    <fetchIndexElement property="maker" type="Binary" order="ascending"/>
                    <fetchIndexElement property="numberPlate" type="Binary" order="descending"/>
                </fetchIndex>
                <uniquenessConstraints><uniquenessConstraint><constraint value="numberPlate"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
            <entity name="SportCar" parentEntity="Car">
                <uniquenessConstraints><uniquenessConstraint><constraint value="racingNumber"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
            <entity name="Person">
                <attribute name="firstName" optional="YES" attributeType="String"/>
                <attribute name="lastName" optional="YES" attributeType="String"/>
                <relationship name="garage" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Garage" inverseName="owner" inverseEntity="Garage"/>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="firstName"/><constraint value="lastName"/></uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Garage">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="garage" inverseEntity="Person"/>
                <uniquenessConstraints><uniquenessConstraint><constraint value="owner"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
            """
        )
    }

    @discardableResult
    static func insertCar(
        _ context: ManagedObjectContext,
        _ entity: String = "Car",
        plate: String?,
        maker: String = "Škoda",
        racing: Int64? = nil
    ) throws -> ManagedObject {
        let car = try context.insertObject(entityName: entity)
        car.setValue(plate.map(AttributeValue.string) ?? .null, forKey: "numberPlate")
        car.setValue(.string(maker), forKey: "maker")
        car.setValue(racing.map(AttributeValue.integer) ?? .null, forKey: "racingNumber")
        return car
    }

    @Test(arguments: TestBackend.allCases)
    func aStoreHasTheConstraintAndFetchIndexesByCoreDataNames(backend: TestBackend) async throws {
        try await withContainer(backend, model: try Self.model()) { container in
            let names = try await indexNames(container)
            #expect(
                names.isSuperset(of: [
                    "z_car_unique_numberplate", "z_car_bymakerandnumberplate", "z_sportcar_unique_racingnumber",
                    "z_person_unique_firstname_lastname", "z_garage_unique_owner",
                ]),
                "\(names.sorted())"
            )
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aSecondObjectWithAStoredObjectsValuesIsRefusedNamingEntityAndValues(backend: TestBackend) async throws {
        try await withContainer(backend, model: try Self.model()) { container in
            let first = container.newContext()
            let stored = try Self.insertCar(first, plate: "B-ÄÖ 123")
            try await first.save()

            let second = container.newContext()
            let clash = try Self.insertCar(second, plate: "B-ÄÖ 123", maker: "Tatra")
            let other = try Self.insertCar(second, plate: "B-ÄÖ 124")
            let error = try await #require(throws: ConstraintConflictError.self) { try await second.save() }
            #expect(error.conflicts.count == 1)
            let conflict = try #require(error.conflicts.first)
            #expect(conflict.entity == "Car" && conflict.properties == ["numberPlate"])
            #expect(conflict.values == [.attribute(.string("B-ÄÖ 123"))])
            #expect(conflict.objectID == clash.objectID && conflict.conflictingObjectID == stored.objectID && conflict.isInStore)
            #expect(
                error.description.contains("Car's uniqueness constraint on numberPlate") && error.description.contains("\"B-ÄÖ 123\""),
                "\(error)"
            )
            #expect(error.description.contains("nothing was saved"), "\(error)")

            // Nothing of the save is in the store; with the value changed, all of it is.
            #expect(try await container.newContext().count(for: FetchRequest(entityName: "Car")) == 1)
            clash.setValue("B-ÄÖ 125", forKey: "numberPlate")
            try await second.save()
            #expect(try await container.newContext().count(for: FetchRequest(entityName: "Car")) == 3)
            #expect(!other.objectID.isTemporaryID)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func twoNewObjectsWithTheSameValuesAreRefusedAndNilNeverClashes(backend: TestBackend) async throws {
        try await withContainer(backend, model: try Self.model()) { container in
            let context = container.newContext()
            // Two persons named alike, and two without a last name (nil is no value).
            for (first, last) in [("Zoë", "Ørsted"), ("Zoë", "Ørsted"), ("Ana", nil), ("Ana", nil)] as [(String, String?)] {
                let person = try context.insertObject(entityName: "Person")
                person.setValue(.string(first), forKey: "firstName")
                person.setValue(last.map(AttributeValue.string) ?? .null, forKey: "lastName")
            }
            let error = try await #require(throws: ConstraintConflictError.self) { try await context.save() }
            #expect(error.conflicts.map(\.entity) == ["Person"])
            #expect(error.conflicts.first?.values == [.attribute(.string("Zoë")), .attribute(.string("Ørsted"))])
            #expect(error.conflicts.first?.isInStore == false)
            #expect(try await container.newContext().count(for: FetchRequest(entityName: "Person")) == 0)

            let twin = try #require(context.registeredObjects.first { $0.value(forKey: "lastName") == "Ørsted" })
            context.delete(twin)
            try await context.save()
            #expect(try await container.newContext().count(for: FetchRequest(entityName: "Person")) == 3)
        }
    }

    /// A sub-entity's constraint holds among its own instances: a car and a sport car may
    /// share a racing number, two sport cars may not. The root's holds across the hierarchy.
    @Test(arguments: TestBackend.allCases)
    func aSubEntitysConstraintHoldsAmongItsInstancesAndTheRootsAcrossAll(backend: TestBackend) async throws {
        try await withContainer(backend, model: try Self.model()) { container in
            let context = container.newContext()
            try Self.insertCar(context, plate: "A 1", racing: 7)
            try Self.insertCar(context, "SportCar", plate: "A 2", racing: 7)
            try await context.save()

            let again = container.newContext()
            try Self.insertCar(again, "SportCar", plate: "A 3", racing: 7)
            let error = try await #require(throws: ConstraintConflictError.self) { try await again.save() }
            #expect(error.conflicts.map(\.entity) == ["SportCar"] && error.conflicts.first?.properties == ["racingNumber"], "\(error)")
            #expect(error.conflicts.first?.conflictingObjectID.entityName == "SportCar")

            let plate = container.newContext()
            try Self.insertCar(plate, "SportCar", plate: "A 1", racing: 8)
            let clash = try await #require(throws: ConstraintConflictError.self) { try await plate.save() }
            #expect(clash.conflicts.map(\.entity) == ["Car"] && clash.conflicts.first?.conflictingObjectID.entityName == "Car", "\(clash)")
        }
    }

    /// A constraint on a to-one relationship compares the objects pointed at.
    @Test(arguments: TestBackend.allCases)
    func aConstraintOnAToOneComparesTheDestinations(backend: TestBackend) async throws {
        try await withContainer(backend, model: try Self.model()) { container in
            let context = container.newContext()
            let owner = try context.insertObject(entityName: "Person")
            owner.setValue("Ida", forKey: "firstName")
            let garage = try context.insertObject(entityName: "Garage")
            garage.setDestination(owner, forKey: "owner")
            try await context.save()

            let other = container.newContext()
            let second = try other.insertObject(entityName: "Garage")
            second.setDestination(try await other.existingObject(with: owner.objectID), forKey: "owner")
            let error = try await #require(throws: ConstraintConflictError.self) { try await other.save() }
            #expect(
                error.conflicts.first?.values == [.object(owner.objectID)] && error.conflicts.first?.conflictingObjectID == garage.objectID,
                "\(error)"
            )
        }
    }

    /// Apple's Core Data writes a constraint's index so; a store made here says the same.
    @Test func theSQLiteIndexesReadAsAppleWritesThem() async throws {
        let model = try #require(try CarsFixtures.versionedModel().version(named: "SampleModel2"))
        let apple = try await storeRows(
            .sqlite(CarsFixtures.version2.url.path),
            "SELECT name, sql FROM sqlite_master WHERE name LIKE 'Z\\_%' ESCAPE '\\' AND type = 'index' ORDER BY name"
        )
        #expect(apple.count == 3, "\(apple)")
        try await TestEngine.sqlite.withStoreURL { url in
            try createStore(at: url, model: model, numbering: .coreData(model))
            let ours = try await storeRows(
                url,
                "SELECT name, sql FROM sqlite_master WHERE name LIKE 'Z\\_%' ESCAPE '\\' AND type = 'index' ORDER BY name"
            )
            #expect(ours == apple)
        }
    }

    /// PostgreSQL keeps 63 bytes of a name: a longer index name keeps its start and ends in
    /// a hash of the whole, so two long names stay two.
    @Test func aLongIndexNameIsShortenedApartOnPostgreSQL() throws {
        let long = String(repeating: "Z", count: 50)
        let model = try ModelFixtures.model(
            """
            <entity name="Car">
                <attribute name="\(long)One" optional="YES" attributeType="String"/>
                <attribute name="\(long)Two" optional="YES" attributeType="String"/>
                <uniquenessConstraints>
                    <uniquenessConstraint><constraint value="\(long)One"/></uniquenessConstraint>
                    <uniquenessConstraint><constraint value="\(long)Two"/></uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            """
        )
        let postgres = StoreSchema(model: model, dialect: .postgres)
        let names = postgres.modelIndexes(of: try #require(postgres.table(for: "Car"))).map(\.name)
        #expect(names.count == 2 && Set(names).count == 2 && names.allSatisfy { $0.utf8.count == 63 }, "\(names)")
        #expect(names.allSatisfy { $0.hasPrefix("z_car_unique_zzzz") })
        let sqlite = StoreSchema(model: model, dialect: .sqlite)
        #expect(
            sqlite.modelIndexes(of: try #require(sqlite.table(for: "Car"))).map(\.name) == ["Z_Car_UNIQUE_\(long)One", "Z_Car_UNIQUE_\(long)Two"]
        )
    }

    private func indexNames(_ container: PersistentContainer) async throws -> Set<String> {
        let sql =
            container.store.schema.dialect is PostgresDialect
            ? "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
            : "SELECT name FROM sqlite_master WHERE type = 'index'"
        return Set(try await container.sql(sql).compactMap { $0[0].text?.lowercased() })
    }

    /// A version that adds a constraint the rows already break: the migration fails naming
    /// the constraint, the values and the index, and the store stays as it was.
    /// `Shelves 1` (a code) and `Shelves 2`, whose codes are unique.
    static func shelfVersions() throws -> VersionedModel {
        let v1 = try ManagedObjectModel(
            xml: ModelFixtures.xml(
                """
                <entity name="Shelf"><attribute name="code" optional="YES" attributeType="String"/></entity>
                """
            ),
            name: "Shelves 1"
        )
        let v2 = try ManagedObjectModel(
            xml: ModelFixtures.xml(
                """
                <entity name="Shelf">
                    <attribute name="code" optional="YES" attributeType="String"/>
                    <attribute name="note" optional="YES" attributeType="String"/>
                    <uniquenessConstraints><uniquenessConstraint><constraint value="code"/></uniquenessConstraint></uniquenessConstraints>
                </entity>
                """
            ),
            name: "Shelves 2"
        )
        return try VersionedModel(name: "Shelves", versions: [v1, v2], currentVersionName: v2.name)
    }

    static func shelfStore(at url: StoreURL, codes: [String], versions: VersionedModel) async throws {
        try await withOpenStore(url, model: versions.versions[0], options: .createIfMissing) { container in
            let context = container.newContext()
            for code in codes { try context.insertObject(entityName: "Shelf").setValue(.string(code), forKey: "code") }
            try await context.save()
        }
    }

    /// A set-based step (codes rewritten in SQL) builds the new constraint's index, and
    /// refuses, naming them, rows that come out alike.
    @Test(arguments: TestEngine.allCases)
    func aSetBasedStepBuildsTheConstraintsIndexAndRefusesRowsItMakesAlike(engine: TestEngine) async throws {
        let versions = try Self.shelfVersions()
        let mapping = MappingModel(
            name: "Shelves1To2",
            source: versions.versions[0],
            destination: versions.versions[1],
            entityMappings: [
                EntityMapping(
                    name: "ShelfToShelf",
                    type: .transform,
                    sourceEntityName: "Shelf",
                    destinationEntityName: "Shelf",
                    attributeMappings: [
                        PropertyMapping(
                            name: "code",
                            valueExpression: try Expression(format: #"FUNCTION($source.code, "stringByAppendingString:", " (ø)")"#)
                        )
                    ]
                )
            ]
        )
        let migrator = ProgressiveMigrator(chain: MigrationChain(models: versions, mappingModels: [mapping]), logger: testLogger)
        try await engine.withStoreURL { url in
            try await Self.shelfStore(at: url, codes: ["ø-1", "Ø-2"], versions: versions)
            #expect(try await migrator.plan(forStoreAt: url).steps.map(\.strategy) == [.setBased])
            _ = try await migrator.migrateStore(at: url)
            try await expectEveryIndex(url, of: versions.versions[1])
            #expect(try await storeIndexNames(url).contains("z_shelf_unique_code"))
        }
        try await engine.withStoreURL { url in
            try await Self.shelfStore(at: url, codes: ["Ø-1", "Ø-2", "Ø-1"], versions: versions)
            let error = await #expect(throws: (any Error).self) { _ = try await migrator.migrateStore(at: url) }
            #expect(String(describing: error).contains("allows one Shelf with code \"Ø-1 (ø)\""), "\(String(describing: error))")
            #expect(try await storeRows(url, "SELECT ZCODE FROM ZSHELF ORDER BY Z_PK") == [[.text("Ø-1")], [.text("Ø-2")], [.text("Ø-1")]])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aMigrationToAConstraintTheRowsBreakFailsNamingThemAndChangesNothing(engine: TestEngine) async throws {
        let versions = try Self.shelfVersions()
        let v1 = versions.versions[0]
        try await engine.withStoreURL { url in
            try await Self.shelfStore(at: url, codes: ["Ö-1", "Ö-2", "Ö-1"], versions: versions)
            let error = await #expect(throws: (any Error).self) {
                _ = try await ProgressiveMigrator(chain: MigrationChain(models: versions, mappingModels: []), logger: testLogger).migrateStore(
                    at: url
                )
            }
            let text = String(describing: error)
            #expect(text.contains("Shelf's uniqueness constraint on code allows one Shelf with code \"Ö-1\""), "\(text)")
            #expect(text.contains("Z_Shelf_UNIQUE_code") || text.contains("z_shelf_unique_code"), "\(text)")
            #expect(try await storeRows(url, "SELECT COUNT(*) FROM ZSHELF") == [[.integer(3)]])
            // Still version 1: it opens with that version, unmigrated.
            let count = try await withOpenStore(url, model: v1) { container in
                try await container.newContext().count(for: FetchRequest(entityName: "Shelf"))
            }
            #expect(count == 3)
        }
    }

    /// Two writers on their own connections save a thousand objects each at once, one value
    /// shared: the constraint lets exactly one save in whole, and the other is refused naming
    /// the shared value and the row the first one stored. A round counts only when the two
    /// saves were under way at once; otherwise it runs again on a fresh store.
    @Test(arguments: TestEngine.allCases)
    func twoWritersAtOnceSharingOneValueLandOneWholeSaveAndNameTheClash(engine: TestEngine) async throws {
        let model = try Self.shelfVersions().versions[1]
        try await raceUntilOverlapping("two saves sharing a value") { _, overlap in
            try await engine.withStoreURL { url in
                try await withOpenStore(url, model: model, options: .createIfMissing) { _ in }
                let first = try await PersistentContainer.open(model: model, store: url, logger: testLogger)
                let second = try await PersistentContainer.open(model: model, store: url, logger: testLogger)
                @Sendable func write(_ container: PersistentContainer, codes: Range<Int>) async -> (any Error)? {
                    do {
                        let context = container.newContext()
                        for code in codes { try context.insertObject(entityName: "Shelf").setValue(.string("Ø-\(code)"), forKey: "code") }
                        try await overlap.inside { try await context.save() }
                        return nil
                    } catch {
                        return error
                    }
                }
                async let a = write(first, codes: 0..<1_000)
                async let b = write(second, codes: 999..<1_999)
                let errors = await [a, b].compactMap { $0 }
                await first.store.close()
                await second.store.close()
                #expect(errors.count == 1, "\(errors)")
                let conflict = try #require((errors.first as? ConstraintConflictError)?.conflicts.first, "\(errors)")
                #expect(conflict.values == [.attribute(.string("Ø-999"))] && conflict.isInStore)
                #expect(try await storeRows(url, "SELECT COUNT(*) FROM ZSHELF") == [[.integer(1_000)]])
                let stored = try await storeRows(url, "SELECT Z_PK FROM ZSHELF WHERE ZCODE = 'Ø-999'")
                #expect(stored == [[.integer(try #require(conflict.conflictingObjectID.primaryKey))]])
            }
        }
    }
}
