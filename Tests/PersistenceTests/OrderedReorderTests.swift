import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// `setDestinations(_:forKey:)` gives an ordered to-many a whole new order, also when its
/// members stay the same, wherever the store keeps the order: on the destination's rows
/// (the inverse's key), in a join table (each side of a many-to-many its own column) and
/// beside a hidden key (a to-many without an inverse). The order reads back before the
/// save, after it in a new context, and the stored keys are spaced as Core Data spaces them.
@Suite("Reordering an ordered relationship")
struct OrderedReorderTests {
    static let model: ManagedObjectModel = {
        let body = """
            <entity name="Recipe" representedClassName="Recipe">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="steps" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Step" inverseName="recipe" inverseEntity="Step"/>
                <relationship name="tools" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Tool"/>
                <relationship name="cooks" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Cook" inverseName="recipes" inverseEntity="Cook"/>
            </entity>
            <entity name="Step" representedClassName="Step">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="recipe" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Recipe" inverseName="steps" inverseEntity="Recipe"/>
            </entity>
            <entity name="Tool" representedClassName="Tool">
                <attribute name="name" optional="YES" attributeType="String"/>
            </entity>
            <entity name="Cook" representedClassName="Cook">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="recipes" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Recipe" inverseName="cooks" inverseEntity="Recipe"/>
            </entity>
            """
        return try! ManagedObjectModel(xml: ModelFixtures.xml(body), name: "Kitchen", file: ModelFixtures.file)
    }()

    /// Each ordered relationship with the entity of its members.
    static let relationships: [(key: String, member: String)] = [("steps", "Step"), ("tools", "Tool"), ("cooks", "Cook")]
    static let names = ["Teig kneten", "Ruhen lassen ☾", "Backen", "Anrichten"]

    @Test(arguments: TestEngine.allCases)
    func sameMembersInANewOrder(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: Self.model, options: .createIfMissing) { container in
                let context = container.newContext()
                let recipe = try context.insertObject(entityName: "Recipe")
                recipe.setValue(.string("Brot"), forKey: "name")
                for (key, member) in Self.relationships {
                    for name in Self.names {
                        let object = try context.insertObject(entityName: member)
                        object.setValue(.string(name), forKey: "name")
                        recipe.addDestination(object, forKey: key)
                    }
                }
                try await context.save()

                // An order unlike both the order added and key order.
                let wanted = [2, 0, 3, 1].map { Self.names[$0] }
                for (key, _) in Self.relationships {
                    let members = try await recipe.destinations(forKey: key)
                    #expect(try Self.names(members) == Self.names, "\(key) as added")
                    let byName = Dictionary(uniqueKeysWithValues: try members.map { (try Self.name($0), $0) })
                    try await recipe.setDestinations(wanted.map { byName[$0]! }, forKey: key)
                    #expect(try Self.names(try await recipe.destinations(forKey: key)) == wanted, "\(key) before the save")
                }
                #expect(context.hasChanges)
                try await context.save()

                let fresh = container.newContext()
                let stored = try #require(try await fresh.fetch(FetchRequest(entityName: "Recipe")).first)
                for (key, _) in Self.relationships {
                    #expect(try Self.names(try await stored.destinations(forKey: key)) == wanted, "\(key) after the save")
                    #expect(try await Self.storedOrderKeys(container, key: key) == [2_048, 3_072, 4_096, 5_120], "\(key)'s keys")
                }
            }
        }
    }

    @Test(arguments: TestEngine.allCases)
    func membersLeaveAndJoinInTheirPlaces(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: Self.model, options: .createIfMissing) { container in
                let context = container.newContext()
                let recipe = try context.insertObject(entityName: "Recipe")
                var objects: [String: [ManagedObject]] = [:]
                for (key, member) in Self.relationships {
                    for name in Self.names {
                        let object = try context.insertObject(entityName: member)
                        object.setValue(.string(name), forKey: "name")
                        objects[key, default: []].append(object)
                    }
                    // The first three, in order; the fourth joins in the middle below.
                    for object in objects[key]!.prefix(3) { recipe.addDestination(object, forKey: key) }
                }
                try await context.save()

                for (key, _) in Self.relationships {
                    let all = objects[key]!
                    try await recipe.setDestinations([all[2], all[3], all[0]], forKey: key)
                }
                try await context.save()

                let fresh = container.newContext()
                let stored = try #require(try await fresh.fetch(FetchRequest(entityName: "Recipe")).first)
                for (key, _) in Self.relationships {
                    #expect(try Self.names(try await stored.destinations(forKey: key)) == [2, 3, 0].map { Self.names[$0] }, "\(key)")
                }
                // The member that left is still there, in nothing; a cook's own side is in step.
                let backstage = try await fresh.fetch(
                    FetchRequest(entityName: "Cook", predicate: try Predicate(format: "name == %@", .string(Self.names[1])))
                )
                #expect(try await backstage.first?.destinations(forKey: "recipes").count == 0)
                let step = try await fresh.fetch(
                    FetchRequest(entityName: "Step", predicate: try Predicate(format: "name == %@", .string(Self.names[1])))
                )
                #expect(step.first?.destinationID(forKey: "recipe") == nil)
            }
        }
    }

    /// Objects inserted in one order and added to an ordered relationship in another are
    /// saved in the order they were added, as Core Data's ordered set has them: on the
    /// destination's rows (an ordered one-to-many), in a join table and beside a hidden key.
    @Test(arguments: TestEngine.allCases)
    func insertedMembersKeepTheOrderTheyWereAdded(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: Self.model, options: .createIfMissing) { container in
                let context = container.newContext()
                let recipe = try context.insertObject(entityName: "Recipe")
                let added = [2, 0, 3, 1]
                for (key, member) in Self.relationships {
                    let objects = try Self.names.map { name in
                        let object = try context.insertObject(entityName: member)
                        object.setValue(.string(name), forKey: "name")
                        return object
                    }
                    for index in added { recipe.addDestination(objects[index], forKey: key) }
                }
                try await context.save()

                let fresh = container.newContext()
                let stored = try #require(try await fresh.fetch(FetchRequest(entityName: "Recipe")).first)
                for (key, _) in Self.relationships {
                    #expect(try Self.names(try await stored.destinations(forKey: key)) == added.map { Self.names[$0] }, "\(key)")
                }
            }
        }
    }

    /// The keys the store holds for the recipe's members of `key`, in its order.
    static func storedOrderKeys(_ container: PersistentContainer, key: String) async throws -> [Int64] {
        let schema = container.store.schema
        let recipe = try #require(schema.model.entity(named: "Recipe"))
        let relationship = try #require(schema.model.relationship(named: key, of: recipe))
        let (table, column): (String, String)
        switch try #require(schema.storage(of: relationship, in: recipe)) {
        case .inverseForeignKey(let destination, _), .hiddenForeignKey(let destination, _):
            (table, column) = (destination.name, try #require(schema.orderColumn(of: relationship, in: recipe)))
        case .joinTable(let join, let fromSource):
            (table, column) = (join.name, try #require(join.orderColumn(fromSource: fromSource)))
        case .foreignKey:
            Issue.record("\(key) is a to-one")
            return []
        }
        return try await container.sql("SELECT \(column) FROM \(table) WHERE \(column) IS NOT NULL ORDER BY \(column)").compactMap { $0[0].int64 }
    }

    static func name(_ object: ManagedObject) throws -> String { try #require(object.value(forKey: "name").stringValue) }
    static func names(_ objects: [ManagedObject]) throws -> [String] { try objects.map(name) }
}
