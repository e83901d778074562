/// What a migration hook reads of its source instance and sets on its destination instance.
///
/// A policy (``EntityMigrationPolicy/declaredValues``) or a migration manager
/// (``MigrationManager/declaredAssociationValues(for:)``) that declares them lets the step run
/// everything else as SQL: the destination rows are made by one `INSERT … SELECT` per chunk of
/// source rows, and only the source's key and the declared values pass through Swift, the
/// hook's results going back to the store in bulk. The hook is called as Core Data calls it,
/// with objects that answer `value(forKey:)` and `setValue(_:forKey:)` for the declared keys:
///
/// ```swift
/// final class AuthorSplitPolicy: EntityMigrationPolicy, @unchecked Sendable {
///     override class var overriddenHooks: Hooks { [.createDestinationInstances] }
///     override class var declaredValues: DeclaredValues? {
///         DeclaredValues(reads: ["author"], sets: ["firstName", "lastName"])
///     }
///     override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping,
///                                              manager: MigrationManager) async throws {
///         try await super.createDestinationInstances(forSource: source, in: mapping, manager: manager)
///         let destination = try await manager.destinationInstances(forEntityMappingNamed: mapping.name,
///                                                                  sourceInstances: [source])[0]
///         destination.setValue(…, forKey: "firstName")
///     }
/// }
/// ```
///
/// The rules that make this exact:
/// - `super.createDestinationInstances` makes the destination (the mapping's value
///   expressions are the SQL's); a destination keeps every value the hook does not set,
///   and reading a declared set key before setting it gives what the mapping's expression made;
/// - each source instance gets at most one destination, through `super`;
/// - reading or setting any other key — another attribute, any relationship — stops the
///   migration with ``MigrationError/Code/evaluationFailed`` naming the key, before anything
///   of that chunk is written.
///
/// Declare only attributes: `reads` of the source entity, `sets` of the destination entity,
/// stored (not transient). A declaration naming anything else is not used, and the plan
/// (`migrate --plan`) says why the mapping runs one instance at a time.
public struct DeclaredValues: Sendable, Hashable {
    /// The source instance's attributes the hook reads.
    public var reads: Set<String>
    /// The destination instance's attributes the hook sets (and may read back).
    public var sets: Set<String>

    /// A declaration of the attributes a hook reads of its source and sets on its destination.
    public init(reads: Set<String>, sets: Set<String>) {
        self.reads = reads
        self.sets = sets
    }

    /// Both declarations' keys: what the hooks of one entity mapping touch together.
    func union(_ other: DeclaredValues) -> DeclaredValues {
        DeclaredValues(reads: reads.union(other.reads), sets: sets.union(other.sets))
    }
}
