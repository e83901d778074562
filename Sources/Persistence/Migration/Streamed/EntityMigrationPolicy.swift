import Synchronization

/// The hooks of one entity mapping's migration: Core Data's `NSEntityMigrationPolicy`.
///
/// Subclass it (restating `@unchecked Sendable`, as Swift asks of subclasses), override the
/// hooks you need, and call `super` where the default behaviour
/// should still happen. Register the subclass under the name the mapping model uses:
///
/// ```swift
/// final class PublicationToPublicationMigrationPolicy: EntityMigrationPolicy, @unchecked Sendable {
///     override func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping,
///                                              manager: MigrationManager) async throws {
///         let destination = try manager.destinationContext.insertObject(entityName: "Publication")
///         destination.setValue(source.value(forKey: "title"), forKey: "title")
///         manager.associate(sourceInstance: source, withDestinationInstance: destination, for: mapping)
///     }
/// }
/// var policies = MigrationPolicies()
/// policies.register(PublicationToPublicationMigrationPolicy.self)
/// ```
///
/// A new policy is made for each entity mapping of each migration, and the manager calls
/// its hooks one at a time, in Core Data's order:
/// 1. ``begin(_:with:)``, ``createDestinationInstances(forSource:in:manager:)`` for each
///    source instance, ``endInstanceCreation(forMapping:manager:)``;
/// 2. ``createRelationships(forDestination:in:manager:)`` for each destination instance,
///    ``endRelationshipCreation(forMapping:manager:)``;
/// 3. ``performCustomValidation(forMapping:manager:)``, ``end(_:manager:)``.
///
/// Instances come in batches and the contexts are reset between batches, so memory stays
/// flat however large the store: keep ``ObjectID``s, not objects, in
/// ``MigrationManager/userInfo`` when they must outlive a batch.
open class EntityMigrationPolicy: @unchecked Sendable {
    // Unchecked: the manager calls a policy's hooks strictly one after another; its one
    // state here, the attribute copies, is locked all the same (a subclass may call the
    // default from tasks of its own), and subclasses keep that rule for their own state.

    /// A policy with no state; the manager makes one per entity mapping per migration.
    public required init() {}

    /// How the default ``createDestinationInstances(forSource:in:manager:)`` sets each
    /// attribute, made for the first instance and kept while the mapping and layouts are
    /// the same (a mapping whose expressions never compare equal, a NaN constant, makes it
    /// again per instance: slower, never wrong).
    private let copies = Mutex<AttributeCopies?>(nil)

    private func attributeCopies(_ mapping: EntityMapping, source: EntityLayout, destination: EntityLayout) -> AttributeCopies {
        copies.withLock { copies in
            if let copies, copies.fits(mapping, source: source, destination: destination) { return copies }
            let made = AttributeCopies(mapping, source: source, destination: destination)
            copies = made
            return made
        }
    }

    /// The hooks a policy class can override that run once per instance, and so decide
    /// whether its entity mapping's instances and relationships can be migrated as SQL.
    public struct Hooks: OptionSet, Sendable, Hashable {
        /// The hooks' bits.
        public let rawValue: Int
        /// The hooks whose bits `rawValue` has.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// ``EntityMigrationPolicy/createDestinationInstances(forSource:in:manager:)``
        public static let createDestinationInstances = Hooks(rawValue: 1 << 0)
        /// ``EntityMigrationPolicy/createRelationships(forDestination:in:manager:)``
        public static let createRelationships = Hooks(rawValue: 1 << 1)
        /// Both per-instance hooks: what a subclass is taken to override unless it says otherwise.
        public static let all: Hooks = [.createDestinationInstances, .createRelationships]
    }

    /// The per-instance hooks this class overrides. Swift cannot tell which methods a
    /// subclass overrides, so a subclass is taken to override both unless it says otherwise;
    /// a hook it does not override runs as SQL where the mapping allows (relationships that
    /// are plain look-ups become key arithmetic instead of a call per instance):
    ///
    /// ```swift
    /// final class AuthorSplitPolicy: EntityMigrationPolicy, @unchecked Sendable {
    ///     override class var overriddenHooks: Hooks { [.createDestinationInstances] }
    ///     override func createDestinationInstances(…) async throws { … }
    /// }
    /// ```
    ///
    /// Saying a hook is not overridden when it is skips the override for some instances:
    /// declare every per-instance hook the class (or a superclass of it) overrides.
    open class var overriddenHooks: Hooks { self == EntityMigrationPolicy.self ? [] : .all }

    /// Whether this class's hooks may read the stores beyond the instances they are given:
    /// fetch through ``MigrationManager/sourceContext`` or ``MigrationManager/destinationContext``,
    /// or look up instances an earlier batch made (``MigrationManager/destinationInstances(forEntityMappingNamed:sourceInstances:)``
    /// of a source outside the batch), or read a to-many relationship of an object an
    /// earlier batch made (its other ends are in the store). A step whose policy does is
    /// not fused with the next one (see ``MigrationPlan/Fusion``): in a fused pass the
    /// intermediate version's objects are handed from one step to the next in memory and
    /// never stored, so such a read would not find them. Nor does its mapping make a batch
    /// while the one before is written, which a read of the destination would miss. Swift
    /// cannot tell what a subclass reads, so a subclass is taken to read the stores unless
    /// it says otherwise:
    ///
    /// ```swift
    /// final class AuthorSplitPolicy: EntityMigrationPolicy, @unchecked Sendable {
    ///     // Reads only its source instance and the destination it has just made.
    ///     override class var fetchesFromStores: Bool { false }
    /// }
    /// ```
    open class var fetchesFromStores: Bool { self != EntityMigrationPolicy.self }

    /// Whether this class's hooks may run again on instances an interrupted run already
    /// migrated, and keep no state from one batch to the next that a new run would not
    /// have (a look-up of what earlier batches made, a count): then a ``ProgressiveMigrator``
    /// continues an interrupted step from its last batch, calling ``begin(_:with:)`` again,
    /// rather than from its first row. A subclass is taken not to unless it says so:
    ///
    /// ```swift
    /// final class AuthorSplitPolicy: EntityMigrationPolicy, @unchecked Sendable {
    ///     // Each source instance is migrated on its own, whatever came before it.
    ///     override class var resumesAfterInterruption: Bool { true }
    /// }
    /// ```
    open class var resumesAfterInterruption: Bool { self == EntityMigrationPolicy.self }

    /// What ``createDestinationInstances(forSource:in:manager:)`` reads of its source and
    /// sets on its destination, when the class declares it (``DeclaredValues``): then the
    /// step makes the destinations as SQL and passes only those values through the hook. `nil`
    /// (the default): the hook is given whole objects, one by one.
    ///
    /// ```swift
    /// override class var declaredValues: DeclaredValues? {
    ///     DeclaredValues(reads: ["author"], sets: ["firstName", "lastName"])
    /// }
    /// ```
    open class var declaredValues: DeclaredValues? { nil }

    /// Called before the first instance of the mapping is created.
    open func begin(_ mapping: EntityMapping, with manager: MigrationManager) async throws {}

    /// Creates the destination instances of one source instance. The default inserts one
    /// instance of the destination entity, sets its attributes from the attribute
    /// mappings' value expressions and associates the two.
    open func createDestinationInstances(forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        guard let entityName = mapping.destinationEntityName else { return }
        // With declared values the step's SQL sets what the expressions make.
        if let declared = source.layout.declared {
            if let destination = declared.makeDestination(for: source) {
                manager.associate(sourceInstance: source, withDestinationInstance: destination, for: mapping)
            }
            return
        }
        let destination = try manager.destinationContext.insertObject(entityName: entityName)
        let copies = attributeCopies(mapping, source: source.layout, destination: destination.layout)
        for step in copies.steps {
            switch step {
            case .copy(let from, let to, let attribute, let key):
                // `$source.<attribute>`, by far the most common value, needs no evaluator.
                let value = source.value(atSlot: from)
                if MigrationManager.keepsDefault(attribute, over: value) { continue }
                destination.setValue(MigrationManager.boolean(value, for: attribute), forKey: key, slot: to)
            case .evaluate(let attributeMapping, let expression):
                let value = try await manager.evaluate(
                    expression,
                    source: source,
                    destination: destination,
                    entityMapping: mapping,
                    propertyMapping: attributeMapping,
                    policy: self
                )
                try manager.assignAttribute(value, to: destination, key: attributeMapping.name, mapping: mapping)
            }
        }
        manager.associate(sourceInstance: source, withDestinationInstance: destination, for: mapping)
    }

    /// Called when every source instance of the mapping has its destination instances.
    open func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) async throws {}

    /// Sets the relationships of one destination instance. The default evaluates the
    /// relationship mappings' value expressions, typically
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", …)`.
    open func createRelationships(forDestination destination: ManagedObject, in mapping: EntityMapping, manager: MigrationManager) async throws {
        guard let source = try await manager.sourceInstances(forEntityMappingNamed: mapping.name, destinationInstances: [destination]).first else {
            return
        }
        for relationshipMapping in mapping.relationshipMappings {
            guard let expression = relationshipMapping.valueExpression else { continue }
            let value = try await manager.evaluate(
                expression,
                source: source,
                destination: destination,
                entityMapping: mapping,
                propertyMapping: relationshipMapping,
                policy: self
            )
            try manager.assignRelationship(value, to: destination, key: relationshipMapping.name, mapping: mapping)
        }
    }

    /// Called when every destination instance of the mapping has its relationships.
    open func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) async throws {}

    /// Checks the migrated data beyond the model's rules; throw to stop the migration.
    open func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) async throws {}

    /// Called last for the mapping.
    open func end(_ mapping: EntityMapping, manager: MigrationManager) async throws {}
}

/// The entity migration policies a migration may run, by the names mapping models use.
///
/// ```swift
/// var policies = MigrationPolicies()
/// policies.register(PublicationToPublicationMigrationPolicy.self)        // by class name
/// policies.register(AuthorPolicy.self, as: "BookStore.AuthorPolicy")    // by another name
/// ```
public struct MigrationPolicies: Sendable {
    private var factories: [String: @Sendable () -> EntityMigrationPolicy] = [:]

    /// No policies; register each one the mapping models name.
    public init() {}

    /// Registers a policy under `name`, or under its type name.
    ///
    /// The policy is made from `type` itself, so a subclass passed as a value of a
    /// superclass's metatype (`let type: EntityMigrationPolicy.Type = …`) is that subclass.
    public mutating func register<Policy: EntityMigrationPolicy>(_ type: Policy.Type, as name: String? = nil) {
        factories[name ?? String(describing: type)] = { type.init() }
    }

    /// The registered names.
    public var names: [String] { factories.keys.sorted() }

    /// A new policy for `name`; `Module.Name` also finds one registered as `Name`, as
    /// Core Data mapping models name classes with their module.
    public func makePolicy(named name: String) -> EntityMigrationPolicy? {
        if let factory = factories[name] { return factory() }
        if let dot = name.lastIndex(of: "."), let factory = factories[String(name[name.index(after: dot)...])] { return factory() }
        return nil
    }
}
