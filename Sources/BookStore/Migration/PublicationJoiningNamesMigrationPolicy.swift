import Persistence

/// `BookStore 4` → `BookStore 3`, the way back over the author split: `firstName` and
/// `lastName` are joined into `author` again (``BookStoreVersionShape/joinName(first:last:)``),
/// so a publication that came from version 3 gets back the author it had there.
///
/// The mapping model `Model4To3` copies title, price and pages with value expressions; this
/// policy lets that happen (`super`), then joins the names of the new publication.
public class PublicationJoiningNamesMigrationPolicy: EntityMigrationPolicy, @unchecked Sendable {
    // Unchecked like its superclass: it keeps no state of its own.

    /// Relationships keep the default hook, so the engine sets them as SQL.
    public override class var overriddenHooks: Hooks { [.createDestinationInstances] }

    /// It reads its source and the destination it has just made, nothing stored.
    public override class var fetchesFromStores: Bool { false }

    /// The hook reads the two names and sets the author, nothing else: the step makes the
    /// publications as SQL and passes only those values through Swift.
    public override class var declaredValues: DeclaredValues? {
        DeclaredValues(reads: ["firstName", "lastName"], sets: ["author"])
    }

    /// Each publication is joined on its own: an interrupted step continues from its last batch.
    public override class var resumesAfterInterruption: Bool { true }

    /// Makes the publication, setting `author` from the source's `firstName` and `lastName`.
    public override func createDestinationInstances(
        forSource source: ManagedObject,
        in mapping: EntityMapping,
        manager: MigrationManager
    ) async throws {
        try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
        let destinations = try await manager.destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [source])
        func string(_ key: String) -> String? {
            if case .string(let value) = source.value(forKey: key) { value } else { nil }
        }
        let author = BookStoreVersionShape.joinName(first: string("firstName"), last: string("lastName"))
        for destination in destinations {
            destination.setValue(author.map(AttributeValue.string) ?? .null, forKey: "author")
        }
    }
}
