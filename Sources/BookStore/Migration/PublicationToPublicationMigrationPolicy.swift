import Persistence

/// `BookStore 3` → `BookStore 4`: the author's name becomes `firstName` and `lastName`,
/// split at the first space (no space: all of it is the first name).
///
/// The mapping model `Model3To4` copies title and price with value expressions; this
/// policy lets that happen (`super`), then splits the author of the new publication.
/// Pages come across in the default relationship stage.
public class PublicationToPublicationMigrationPolicy: EntityMigrationPolicy, @unchecked Sendable {
    // Unchecked like its superclass: it keeps no state of its own.

    /// Relationships keep the default hook, so the engine sets them as SQL.
    public override class var overriddenHooks: Hooks { [.createDestinationInstances] }

    /// It reads its source and the destination it has just made, nothing stored: the step
    /// may be fused with the next one.
    public override class var fetchesFromStores: Bool { false }

    /// The hook reads the author and sets the two names, nothing else: the step makes the
    /// publications as SQL and passes only those values through Swift.
    public override class var declaredValues: DeclaredValues? {
        DeclaredValues(reads: ["author"], sets: ["firstName", "lastName"])
    }

    /// Each publication is split on its own, whatever came before it: an interrupted step
    /// continues from its last batch.
    public override class var resumesAfterInterruption: Bool { true }

    /// Makes the publication, setting `firstName` and `lastName` from the source's `author`.
    public override func createDestinationInstances(
        forSource source: ManagedObject,
        in mapping: EntityMapping,
        manager: MigrationManager
    ) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let destinations = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])
        guard case .string(let author) = source.value(forKey: "author") else { return }
        let name = BookStoreVersionShape.splitName(author)
        for destination in destinations {
            destination.setValue(.string(name.first), forKey: "firstName")
            destination.setValue(name.last.map(AttributeValue.string) ?? .null, forKey: "lastName")
        }
    }
}
