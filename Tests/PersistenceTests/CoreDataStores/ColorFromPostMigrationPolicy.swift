import Foundation

@testable import Persistence

/// The example project's 2 → 3 policy, which `Mappings/Example2To3.json` names: the post
/// keeps its ID and date (the mapping's attribute mappings, run by `super`) and gets a new
/// `Color` of its own, `colorID` a new UUID string and `hex` its old `hexColor`.
///
/// Value expressions cannot make a new UUID, so this step needs Swift.
final class ColorFromPostMigrationPolicy: EntityMigrationPolicy, @unchecked Sendable {
    override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let posts = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])
        guard let post = posts.first else { throw ScenarioPolicyError("the post \(source.objectID) has no destination") }
        let color = try manager.destinationContext.insertObject(entityName: "Color")
        color.setValue(.string(UUID().uuidString), forKey: "colorID")
        color.setValue(source.value(forKey: "hexColor"), forKey: "hex")
        // Both sides are to-one: setting one keeps the other in step.
        post.setDestination(color, forKey: "color")
    }
}
