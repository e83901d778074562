import Foundation

@testable import Persistence

/// The cars project's `V2to3MakerPolicy`, ported as the README's guide says: the car as the
/// mapping makes it, then the maker named by the source car's `maker` — found among the
/// destination context's registered objects, or made — gets the car. Each maker it makes
/// is kept in the manager's `userInfo`, so it stays registered (and found) after its batch
/// is saved, whatever the batch size.
class V2to3MakerPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        guard case .string(let name) = source.value(forKey: "maker") else { return }
        guard let car = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source]).first else {
            throw ScenarioPolicyError("the car \(source.objectID) has no destination")
        }
        let context = manager.destinationContext
        let maker =
            try await findMaker(named: name, in: context)
            ?? {
                let made = try context.insertObject(entityName: "Maker")
                made.setValue(.string(name), forKey: "name")
                return made
            }()
        keep(maker, named: name, manager: manager)
        maker.addDestination(car, forKey: "cars")
    }

    /// Among the objects the destination context holds, as the original looks.
    func findMaker(named name: String, in context: ManagedObjectContext) async throws -> ManagedObject? {
        context.registeredObjects.first { $0.entity.name == "Maker" && $0.value(forKey: "name") == .string(name) }
    }

    /// Holds the maker so that it stays registered once its batch is saved.
    func keep(_ maker: ManagedObject, named name: String, manager: MigrationManager) {
        manager.userInfo["maker:\(name)"] = maker
    }
}

/// The port without the guide's step: a maker is looked up among the registered objects but
/// held by nobody, so once its batch is saved the context lets it go and the next car of
/// that maker makes a second one, which `Maker`'s uniqueness constraint refuses.
final class ForgetfulMakerPolicy: V2to3MakerPolicy, @unchecked Sendable {
    override func keep(_ maker: ManagedObject, named name: String, manager: MigrationManager) {}
}

/// The guide's other way: the look-up goes through the store, with a fetch that also sees
/// the batch's unsaved objects (`includesPendingChanges`), and holds nothing.
final class FetchingMakerPolicy: V2to3MakerPolicy, @unchecked Sendable {
    override func findMaker(named name: String, in context: ManagedObjectContext) async throws -> ManagedObject? {
        try await context.fetch(
            FetchRequest(entityName: "Maker", predicate: try Predicate(format: "name == %@", .value(.string(name))), fetchLimit: 1)
        ).first
    }

    override func keep(_ maker: ManagedObject, named name: String, manager: MigrationManager) {}
}
