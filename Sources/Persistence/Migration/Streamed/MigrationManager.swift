import Foundation
import Logging
import Synchronization

/// Runs one mapping model from a source store into a destination store in Core Data's
/// three stages: create destination instances, create relationships, validate and save.
/// Core Data's `NSMigrationManager`.
///
/// Usually a ``ProgressiveMigrator`` makes and runs managers. Subclass one to hook into a
/// step, the way the Core Data book overrides `associateSourceInstance`:
///
/// ```swift
/// final class SynopsisMigrationManager: MigrationManager, @unchecked Sendable {
///     override func associate(sourceInstance: ManagedObject, withDestinationInstance destination: ManagedObject,
///                             for mapping: EntityMapping) {
///         super.associate(sourceInstance: sourceInstance, withDestinationInstance: destination, for: mapping)
///         if mapping.destinationEntityName == "Publication" {
///             destination.setValue(sourceInstance.value(forKey: "title"), forKey: "synopsis")
///         }
///     }
/// }
/// ```
///
/// Source instances are read in batches of ``Configuration/batchSize`` in primary-key
/// order; after each batch the destination is saved (without validation, which is stage 3)
/// and both contexts are reset. The association of source to destination rows lives in a
/// table of the destination store, so memory does not grow with the number of rows.
open class MigrationManager: @unchecked Sendable {
    // Unchecked: the mutable run state is behind `state`, a Mutex; the rest is immutable.

    /// `destinationInstancesForEntityMappingNamed:sourceInstances:`
    public static let destinationInstancesSelector = "destinationInstancesForEntityMappingNamed:sourceInstances:"
    /// `destinationInstancesForSourceRelationshipNamed:sourceInstances:`, which Xcode writes
    /// for a relationship mapping: the destination instances of the given source instances,
    /// each through the entity mapping that migrates its own entity (a sub-entity's mapping
    /// for a sub-entity's instance).
    public static let destinationInstancesForRelationshipSelector = "destinationInstancesForSourceRelationshipNamed:sourceInstances:"
    /// `sourceInstancesForEntityMappingNamed:destinationInstances:`
    public static let sourceInstancesSelector = "sourceInstancesForEntityMappingNamed:destinationInstances:"

    /// What a manager migrates, and how.
    public struct Configuration: Sendable {
        /// The model version the source store is at.
        public var sourceModel: ManagedObjectModel
        /// The model version the destination store is made for.
        public var destinationModel: ManagedObjectModel
        /// The mapping model the manager runs.
        public var mappingModel: MappingModel
        /// The policies the mapping model's entity mappings name, by their registered names.
        public var policies: MigrationPolicies
        /// Source instances per batch: the unit of memory and of progress reports.
        public var batchSize: Int
        /// How the destination store is opened: created if missing and written durably by
        /// default; ``PersistentStore/Options/workspace`` when it is thrown away if the
        /// migration fails, as a ``ProgressiveMigrator``'s work files and shadow schemas are.
        public var destinationOptions: PersistentStore.Options
        /// Where the manager logs its stages and batches.
        public var logger: Logger
        /// Set when a ``ProgressiveMigrator`` runs the manager for one mapping model of a
        /// streamed step: what the step's earlier mapping models made (nothing for its
        /// first), which look-ups may name. The association table then outlives the mapping
        /// model, for the later ones; the migrator drops it with the step. `nil` for a
        /// manager run on its own, whose table is dropped when its mapping model is done.
        var stepAssociations: StepAssociations?
        /// Set by a ``ProgressiveMigrator`` with a fault injection: called at the manager's
        /// checkpoints, which name the step as `stepNumber`.
        var faultInjection: MigrationFaultInjection?
        var stepNumber = 0
        /// Set by a ``ProgressiveMigrator`` for a step it can continue after an interruption:
        /// the output records where the step is with every batch, and the step continues
        /// from what an interrupted run left when there is that.
        var checkpointing: StepCheckpointing?
        /// Set by a ``ProgressiveMigrator`` that paces its writes: called after each batch
        /// and SQL chunk committed.
        var throttle: MigrationThrottle?

        /// A configuration in batches of 1 000, no policies and a destination created when missing.
        public init(
            sourceModel: ManagedObjectModel,
            destinationModel: ManagedObjectModel,
            mappingModel: MappingModel,
            policies: MigrationPolicies = MigrationPolicies(),
            batchSize: Int = 1_000,
            destinationOptions: PersistentStore.Options = .createIfMissing,
            logger: Logger
        ) {
            self.sourceModel = sourceModel
            self.destinationModel = destinationModel
            self.mappingModel = mappingModel
            self.policies = policies
            self.batchSize = batchSize
            self.destinationOptions = destinationOptions
            self.logger = logger
        }
    }

    struct Pending {
        let mapping: String
        let source: ManagedObject
        let destination: ManagedObject
    }

    /// What the manager migrates, and how; fixed for its life.
    public let configuration: Configuration
    /// Values shared by the step's policies.
    public let userInfo = MigrationUserInfo()
    let state = Mutex(State())
    /// Where the current instance stage spends its time (logged with its line).
    let partClock = StagePartClock()

    /// The model version the source store is at (the configuration's).
    public var sourceModel: ManagedObjectModel { configuration.sourceModel }
    /// The model version the destination store is made for (the configuration's).
    public var destinationModel: ManagedObjectModel { configuration.destinationModel }
    /// The mapping model the manager runs (the configuration's).
    public var mappingModel: MappingModel { configuration.mappingModel }
    var logger: Logger { configuration.logger }

    /// A manager for `configuration`; run it with ``migrateStore(from:to:)``.
    /// A ``ProgressiveMigrator`` makes a version's custom manager (``MigrationVersion/migrationManagerType``)
    /// through this initializer.
    ///
    /// ```swift
    /// let manager = MigrationManager(configuration: .init(sourceModel: v3, destinationModel: v4,
    ///                                                     mappingModel: model3To4, logger: logger))
    /// try await manager.migrateStore(from: .sqlite("v3.sqlite"), to: .sqlite("v4.sqlite"))
    /// ```
    public required init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The context over the source store; available while ``migrateStore(from:to:)`` runs.
    public var sourceContext: ManagedObjectContext {
        guard let context = withRun(\.sourceContext) else {
            preconditionFailure("sourceContext is only available while migrateStore(from:to:) runs")
        }
        return context
    }

    /// The context over the destination store; available while ``migrateStore(from:to:)`` runs.
    public var destinationContext: ManagedObjectContext {
        guard let context = withRun(\.destinationContext) else {
            preconditionFailure("destinationContext is only available while migrateStore(from:to:) runs")
        }
        return context
    }

    /// The entity mapping being run.
    public var currentEntityMapping: EntityMapping? { withRun(\.currentEntityMapping) ?? nil }

    /// The step's fraction done, 0…1: Core Data's `migrationProgress`.
    public var migrationProgress: Double { state.withLock { $0.progress } }

    /// Called with every progress report. Override to show progress (call `super`).
    open func progressDidChange(_ progress: MigrationProgress) {
        state.withLock { $0.progressHandler }?(progress)
    }

    func setProgressHandler(_ handler: (@Sendable (MigrationProgress) -> Void)?) {
        state.withLock { $0.progressHandler = handler }
    }

    // MARK: Associations

    /// Whether ``associate(sourceInstance:withDestinationInstance:for:)`` must be called
    /// for each instance `mapping` creates. Swift cannot tell whether a subclass overrides
    /// it, so a subclass is taken to need every call; one whose override acts on some
    /// entity mappings only says which, and the others may run as SQL:
    ///
    /// ```swift
    /// override func needsAssociationCalls(for mapping: EntityMapping) -> Bool {
    ///     mapping.destinationEntityName == "Publication"
    /// }
    /// ```
    open func needsAssociationCalls(for mapping: EntityMapping) -> Bool {
        type(of: self) != MigrationManager.self
    }

    /// Whether this class's overrides may read the stores beyond the instances they are
    /// given (a fetch through ``sourceContext`` or ``destinationContext``); as
    /// ``EntityMigrationPolicy/fetchesFromStores`` says for a policy, a step whose manager
    /// does is not fused with its neighbours, and makes each batch only once the one before
    /// is written. A subclass is taken to read them unless it says otherwise:
    ///
    /// ```swift
    /// override class var fetchesFromStores: Bool { false }  // the associate hook reads its pair only
    /// ```
    open class var fetchesFromStores: Bool { self != MigrationManager.self }

    /// What ``associate(sourceInstance:withDestinationInstance:for:)`` reads of the source and
    /// sets on the destination of `mapping`'s pairs, when the class declares it
    /// (``DeclaredValues``): then, with the policy's own declaration where it has hooks,
    /// the mapping's destinations are made as SQL and only those values pass through Swift.
    /// `nil` (the default): the hook is given whole objects.
    ///
    /// ```swift
    /// override func declaredAssociationValues(for mapping: EntityMapping) -> DeclaredValues? {
    ///     mapping.destinationEntityName == "Publication" ? DeclaredValues(reads: ["title"], sets: ["synopsis"]) : nil
    /// }
    /// ```
    open func declaredAssociationValues(for mapping: EntityMapping) -> DeclaredValues? { nil }

    /// Whether this class's overrides may run again on instances an interrupted run already
    /// migrated, and keep no state from one batch to the next that a new run would not
    /// have: then a ``ProgressiveMigrator`` continues an interrupted step from its last
    /// batch, calling ``EntityMigrationPolicy/begin(_:with:)`` again, rather than from its
    /// first row. A subclass is taken not to unless it says so:
    ///
    /// ```swift
    /// override class var resumesAfterInterruption: Bool { true }  // each pair is migrated on its own
    /// ```
    open class var resumesAfterInterruption: Bool { self == MigrationManager.self }

    /// Records that `destination` was made from `source` by `mapping`. Override to act on
    /// each pair (call `super`); relationship lookups find the pair from then on.
    open func associate(sourceInstance: ManagedObject, withDestinationInstance destination: ManagedObject, for mapping: EntityMapping) {
        // A pair of a hook with declared values is kept by its batch (``DeclaredAccess``).
        if let declared = sourceInstance.layout.declared {
            declared.associate(sourceInstance, destination, mapping: mapping.name)
            return
        }
        updateRun { $0.batch.associate(Pending(mapping: mapping.name, source: sourceInstance, destination: destination)) }
    }

    /// The entity mapping named `name`, of this mapping model or of an earlier one of the step.
    private func entityMappingOfStep(named name: String) -> EntityMapping? {
        mappingModel.entityMapping(named: name) ?? configuration.stepAssociations?.entityMapping(named: name)
    }

    /// The destination instances the named entity mapping made from `sourceInstances`, in
    /// their order: of this mapping model or of an earlier one of the step.
    ///
    /// In an inferred mapping model, a relationship's look-up names the mapping of the
    /// relationship's destination entity; its instances of sub-entities were made by their
    /// own entity's mapping, and are found there, as Core Data's inferred mapping finds
    /// them by the source relationship.
    public func destinationInstances(forEntityMappingNamed name: String, sourceInstances: [ManagedObject]) async throws -> [ManagedObject] {
        if let declared = sourceInstances.first?.layout.declared, declared.mapping == name,
            let destinations = declared.destinations(of: sourceInstances)
        {
            return destinations
        }
        guard let mapping = entityMappingOfStep(named: name), mapping.destinationEntityName != nil else {
            throw MigrationError(.invalidMappingModel, "there is no entity mapping named '\(name)' with a destination", entityMapping: name)
        }
        guard mappingModel.isInferred, let sourceName = mapping.sourceEntityName,
            sourceInstances.contains(where: { $0.objectID.entityName != sourceName })
        else {
            return try await destinations(of: mapping, for: sourceInstances).flatMap { $0 }
        }
        // Each source entity's own mapping, the first that has a destination.
        var ownMapping: [String: String] = [:]
        for entityMapping in mappingModel.entityMappings where entityMapping.destinationEntityName != nil {
            if let source = entityMapping.sourceEntityName, ownMapping[source] == nil { ownMapping[source] = entityMapping.name }
        }
        var byMapping: [String: [ManagedObject]] = [:]
        for source in sourceInstances {
            byMapping[ownMapping[source.objectID.entityName] ?? name, default: []].append(source)
        }
        var found: [ObjectID: [ManagedObject]] = [:]
        for (mappingName, sources) in byMapping {
            guard let own = entityMappingOfStep(named: mappingName) else { continue }
            for (source, destinations) in zip(sources, try await destinations(of: own, for: sources)) { found[source.objectID] = destinations }
        }
        return sourceInstances.flatMap { found[$0.objectID] ?? [] }
    }

    /// The destination instances `mapping` made from each of `sourceInstances`.
    private func destinations(of mapping: EntityMapping, for sourceInstances: [ManagedObject]) async throws -> [[ManagedObject]] {
        let name = mapping.name
        guard let destinationName = mapping.destinationEntityName, let destinationEntity = destinationModel.entity(named: destinationName) else {
            return []
        }
        let (pending, prefetched, associations) = state.withLock { state in
            (state.run?.batch.pendingBySource[name] ?? [:], state.run?.batch.prefetchedDestinations[name] ?? [:], state.run?.associations)
        }
        var stored: [Int64: [ManagedObject]] = [:]
        let keys = sourceInstances.compactMap { source -> Int64? in
            guard pending[source.objectID] == nil, let key = source.objectID.primaryKey else { return nil }
            if let known = prefetched[key] {
                stored[key] = known
                return nil
            }
            return key
        }
        if !keys.isEmpty, let associations {
            let pairs = try await associations.destinations(mapping: name, sources: keys)
            let root = destinationModel.rootEntity(of: destinationEntity).name
            let objects = try await destinationContext.objects(rootEntityName: root, primaryKeys: Array(Set(pairs.values.joined())))
            for (source, destinations) in pairs { stored[source] = destinations.compactMap { objects[$0] } }
        }
        return sourceInstances.map { source in
            pending[source.objectID] ?? source.objectID.primaryKey.flatMap { stored[$0] } ?? []
        }
    }

    /// The source instances the named entity mapping made `destinationInstances` from.
    public func sourceInstances(forEntityMappingNamed name: String, destinationInstances: [ManagedObject]) async throws -> [ManagedObject] {
        guard let mapping = entityMappingOfStep(named: name), let sourceName = mapping.sourceEntityName,
            let sourceEntity = sourceModel.entity(named: sourceName)
        else { return [] }
        let (batch, pending, associations) = state.withLock { state in
            (state.run?.batch.sources ?? [:], state.run?.batch.pendingByDestination[name] ?? [:], state.run?.associations)
        }
        var known = pending
        for destination in destinationInstances where known[destination.objectID] == nil {
            if let source = batch[destination.objectID] { known[destination.objectID] = [source] }
        }
        let keys = destinationInstances.compactMap { known[$0.objectID] == nil ? $0.objectID.primaryKey : nil }
        var stored: [Int64: [ManagedObject]] = [:]
        if !keys.isEmpty, let associations {
            let pairs = try await associations.sources(mapping: name, destinations: keys)
            let root = sourceModel.rootEntity(of: sourceEntity).name
            let objects = try await sourceContext.objects(rootEntityName: root, primaryKeys: Array(Set(pairs.values.joined())))
            for (destination, sources) in pairs { stored[destination] = sources.compactMap { objects[$0] } }
        }
        return destinationInstances.flatMap { destination in
            known[destination.objectID] ?? destination.objectID.primaryKey.flatMap { stored[$0] } ?? []
        }
    }

    // MARK: Value expressions

    /// Evaluates a value expression with Core Data's variables bound.
    public func evaluate(
        _ expression: Expression,
        source: ManagedObject?,
        destination: ManagedObject?,
        entityMapping: EntityMapping,
        propertyMapping: PropertyMapping?,
        policy: EntityMigrationPolicy?
    ) async throws -> MigrationValue {
        var variables: [String: MigrationValue] = ["manager": .manager(self), "entityMapping": .entityMapping(entityMapping)]
        if let source { variables["source"] = .object(source) }
        if let destination { variables["destination"] = .object(destination) }
        if let propertyMapping { variables["propertyMapping"] = .propertyMapping(propertyMapping) }
        if let policy { variables["entityPolicy"] = .policy(policy) }
        do {
            return try await ValueExpressionEvaluator(variables: variables, manager: self).evaluate(expression)
        } catch var error as MigrationError {
            error.entityMapping = error.entityMapping ?? entityMapping.name
            error.property = error.property ?? propertyMapping?.name
            error.file = error.file ?? mappingModel.file
            throw error
        }
    }

    /// A `FUNCTION($manager, "selector", …)` call.
    func call(_ selector: String, arguments: [MigrationValue]) async throws -> MigrationValue {
        switch selector {
        case Self.destinationInstancesSelector, Self.sourceInstancesSelector:
            guard arguments.count == 2, case .value(.string(let name)) = arguments[0] else {
                throw MigrationError(.evaluationFailed, "\(selector) takes an entity mapping name and instances")
            }
            guard let instances = arguments[1].managedObjects else {
                throw MigrationError(.evaluationFailed, "\(selector) needs instances, got \(arguments[1].kindName)")
            }
            let result =
                selector == Self.destinationInstancesSelector
                ? try await destinationInstances(forEntityMappingNamed: name, sourceInstances: instances)
                : try await sourceInstances(forEntityMappingNamed: name, destinationInstances: instances)
            // A single instance in gives a single instance out, as Core Data does for to-one sources.
            if case .object = arguments[1] { return result.first.map(MigrationValue.object) ?? .null }
            return .objects(result)
        case Self.destinationInstancesForRelationshipSelector:
            guard arguments.count == 2, case .value(.string) = arguments[0], let instances = arguments[1].managedObjects else {
                throw MigrationError(.evaluationFailed, "\(selector) takes a relationship name and instances")
            }
            var result: [ManagedObject] = []
            for instance in instances {
                guard let mapping = entityMapping(migrating: instance.entity) else { continue }
                result += try await destinationInstances(forEntityMappingNamed: mapping.name, sourceInstances: [instance])
            }
            if case .object = arguments[1] { return result.first.map(MigrationValue.object) ?? .null }
            return .objects(result)
        default:
            throw MigrationError(.evaluationFailed, "the migration manager has no method \(selector)")
        }
    }

    /// The entity mapping that migrates instances of `entity`: the one whose source entity
    /// it is, else its nearest ancestor's.
    func entityMapping(migrating entity: EntityDescription) -> EntityMapping? {
        for candidate in [entity] + sourceModel.ancestors(of: entity) {
            if let mapping = mappingModel.entityMappings.first(where: { $0.sourceEntityName == candidate.name && $0.destinationEntityName != nil }) {
                return mapping
            }
        }
        return nil
    }

    /// `$manager.<key>`.
    func value(forKey key: String) throws -> MigrationValue {
        switch key {
        case "migrationProgress": return .value(.double(migrationProgress))
        case "sourceModel": return .value(.string(sourceModel.name))
        case "destinationModel": return .value(.string(destinationModel.name))
        case "currentEntityMapping": return currentEntityMapping.map(MigrationValue.entityMapping) ?? .null
        default:
            if let value = userInfo[key] as? AttributeValue { return .value(value) }
            if let value = userInfo[key] as? String { return .value(.string(value)) }
            throw MigrationError(.evaluationFailed, "the migration manager has no '\(key)'")
        }
    }

    /// Sets an attribute from an evaluated value; `nil` into a required attribute keeps its default.
    public func assignAttribute(_ value: MigrationValue, to destination: ManagedObject, key: String, mapping: EntityMapping) throws {
        guard let attribute = destination.layout.attributes[key] else {
            throw MigrationError(
                .evaluationFailed,
                "\(destination.entity.name) has no attribute '\(key)'",
                entityMapping: mapping.name,
                property: key
            )
        }
        guard let attributeValue = value.attributeValue else {
            throw MigrationError(
                .typeMismatch,
                "the value for '\(key)' is \(value.kindName), not \(attribute.type.rawValue)",
                file: mappingModel.file,
                entityMapping: mapping.name,
                property: key
            )
        }
        if Self.keepsDefault(attribute, over: attributeValue) { return }
        destination.setValue(Self.boolean(attributeValue, for: attribute), forKey: key)
    }

    /// A number for a Boolean attribute as Core Data stores it (NSNumber's `boolValue`): 0
    /// is false, any other number true. Xcode's mapping models give `0` and `1` for Booleans;
    /// the type checker lets numbers fill them, and the SQL path says `<> 0` alike.
    static func boolean(_ value: AttributeValue, for attribute: AttributeDescription) -> AttributeValue {
        guard attribute.type == .boolean else { return value }
        switch value {
        case .integer(let number): return .bool(number != 0)
        case .double(let number): return .bool(number != 0)
        case .decimal(let number): return .bool(!number.isZero)
        default: return value
        }
    }

    /// Whether `attribute` keeps its default rather than take `value`: a required attribute
    /// with a default is not set to null (the inferred mapping of an optional attribute made
    /// required fills it so, as the in-place and SQL paths do).
    static func keepsDefault(_ attribute: AttributeDescription, over value: AttributeValue) -> Bool {
        value.isNull && !attribute.isOptional && attribute.defaultValue != nil
    }

    /// Sets a relationship from an evaluated value: one object for a to-one, the objects for
    /// a to-many. An ordered to-many takes the objects' order, also where they are there
    /// already: the other side of an ordered many-to-many adds its pairs before this side is
    /// visited, in that side's order.
    public func assignRelationship(_ value: MigrationValue, to destination: ManagedObject, key: String, mapping: EntityMapping) throws {
        guard let relationship = destinationModel.relationship(named: key, of: destination.entity) else {
            throw MigrationError(
                .evaluationFailed,
                "\(destination.entity.name) has no relationship '\(key)'",
                entityMapping: mapping.name,
                property: key
            )
        }
        guard let objects = value.managedObjects else {
            throw MigrationError(
                .typeMismatch,
                "the value for '\(key)' is \(value.kindName), not \(relationship.destinationEntityName) objects",
                file: mappingModel.file,
                entityMapping: mapping.name,
                property: key
            )
        }
        if relationship.isToMany {
            // Nothing leaves: the destination instance was made by this migration and holds
            // what this migration gave it.
            destination.managedObjectContext?.setToMany(destination, key: key, to: objects, replacing: nil)
        } else {
            // A to-many that became a to-one keeps its first destination.
            destination.setDestination(objects.first, forKey: key)
        }
    }
}
