/// The steps that take a store from its version to the target, and how each runs.
///
/// ```swift
/// let plan = try await migrator.plan(forStoreAt: url)
/// for step in plan.steps { print(step) } // "BookStore 3 → BookStore 4 (streamed: Model3To4)"
/// ```
public struct MigrationPlan: Sendable, CustomStringConvertible {
    /// How a step runs.
    public enum Strategy: String, Sendable, Hashable {
        /// SQL inside the store: ALTER TABLE, renames, rebuilds only where needed.
        case inPlace = "in place"
        /// `INSERT … SELECT` into a new store.
        case setBased = "set-based"
        /// Row batches through the migration manager and its policies, into a new store.
        case streamed
    }

    /// How one entity mapping of a streamed step runs.
    public struct EntityMappingPlan: Sendable, Hashable, CustomStringConvertible {
        /// How one stage of it runs.
        public enum Stage: Sendable, Hashable, CustomStringConvertible {
            /// As SQL: instances by `INSERT … SELECT`, relationships by key arithmetic.
            case sql
            /// As SQL, with the `values` the hooks of the classes `by` declare
            /// (``DeclaredValues``) worked out in Swift: only those pass through Swift.
            case sqlWithDeclaredValues(_ values: [String], by: [String])
            /// A hook call per instance, because of `reason`.
            case perInstance(reason: String)

            /// The stage as the plan prints it: `as SQL`, `as SQL, firstName, lastName set in
            /// Swift by …`, or `one by one, because …`.
            public var description: String {
                switch self {
                case .sql: "as SQL"
                case .sqlWithDeclaredValues(let values, let by):
                    "as SQL, \(values.joined(separator: ", ")) set in Swift by \(by.joined(separator: " and "))"
                case .perInstance(let reason): "one by one, because \(reason)"
                }
            }
        }

        /// The entity mapping's name.
        public let name: String
        /// How its destination instances are created.
        public let instances: Stage
        /// How its relationships are set.
        public let relationships: Stage

        /// The mapping and how its two stages run, as `migrate --plan` prints it.
        public var description: String { "\(name): instances \(instances); relationships \(relationships)" }
    }

    /// What a step runs: one case per strategy, carrying its work, so the two cannot disagree.
    enum Work: Sendable {
        case inPlace(InPlaceMigration)
        case setBased(SetBasedMigration)
        /// Through the migration manager, because of `reason`; per mapping model, how each
        /// of its entity mappings runs.
        case streamed(reason: String, passes: [[EntityMappingPlan]])
    }

    /// One step between two model versions.
    public struct Step: Sendable, CustomStringConvertible {
        /// The model version the step reads.
        public let source: ManagedObjectModel
        /// The model version the step writes.
        public let destination: ManagedObjectModel
        /// The mapping models, run one after the other (usually one).
        public let mappingModels: [MappingModel]
        let managerType: MigrationManager.Type
        var work: Work
        /// What the step drops or refuses, found before it runs; see
        /// ``MigrationPlan/countingAffectedRows(in:logger:)`` for the rows concerned.
        public internal(set) var dataLossWarnings: [DataLossWarning] = []
        /// Whether the step runs in one pass with the next one, and if not, why; `nil` for
        /// the last step.
        public internal(set) var fusionWithNext: Fusion?
        /// For a streamed step: what the next run does with its output when it was killed
        /// halfway; `nil` for the others, which write nothing a next run could continue.
        public internal(set) var resumption: Resumption?
        /// Whether the step takes the store back to an older version: by a mapping model
        /// from the newer version to the older, or by the inverse of the step forward, which
        /// drops what that step added (see ``ProgressiveMigrator/migrateStore(at:to:storeVersion:acceptingDataLoss:progress:)``).
        public internal(set) var isStepBack = false

        /// How the step runs: in place, set-based or streamed.
        public var strategy: Strategy {
            switch work {
            case .inPlace: .inPlace
            case .setBased: .setBased
            case .streamed: .streamed
            }
        }

        /// Why a streamed step streams; `nil` for the others.
        public var streamingReason: String? {
            if case .streamed(let reason, _) = work { reason } else { nil }
        }

        /// Whether the step, in place, leaves the store's entities their numbers (`Z_ENT`) where
        /// a new store of its destination numbers them otherwise: a streamed step after it
        /// writes every row anew, numbered as a new store, so the step rewrites none of them
        /// for a renumbering. The store between the two is whole, and read by its own
        /// `Z_PRIMARYKEY`.
        ///
        /// ```swift
        /// let plan = try await migrator.plan(forStoreAt: url) // a BookStore 2 store
        /// plan.steps[0].keepsEntityNumbers // true: BookStore 3 → 4 writes every row
        /// ```
        public var keepsEntityNumbers: Bool {
            if case .inPlace(let inPlace) = work { inPlace.keepsEntityNumbers } else { false }
        }

        /// How each entity mapping of a streamed step runs, mapping model after mapping model.
        public var entityMappingPlans: [EntityMappingPlan] {
            if case .streamed(_, let passes) = work { passes.flatMap { $0 } } else { [] }
        }

        /// One line: the two versions, the strategy, the mappings and any policy or custom manager.
        public var description: String {
            let mappings = mappingModels.map { $0.isInferred ? "inferred mapping" : "mapping \($0.name)" }.joined(separator: ", ")
            var extras: [String] = []
            let policies = mappingModels.flatMap(\.policyNames)
            if !policies.isEmpty { extras.append("policy \(policies.joined(separator: ", "))") }
            if managerType != MigrationManager.self { extras.append("manager \(String(describing: managerType))") }
            if case .inPlace(let inPlace) = work, let external = inPlace.externallyStoredValues {
                extras.append("Core Data's externally stored values of \(external.attributes.joined(separator: ", ")) moved into their cells")
            }
            let detail = ([mappings] + extras).joined(separator: ", ")
            return "\(source.name) → \(destination.name) (\(isStepBack ? "back, " : "")\(strategy.rawValue): \(detail))"
        }
    }

    /// How the steps were found.
    public enum Route: Sendable, Hashable, CustomStringConvertible {
        /// Through the versions the app's chain names, each to the one it names next.
        case chain
        /// In one step from the store's version to the target, as Core Data migrates: by
        /// the mapping models that map the two, or inferred.
        case straight
        /// Through the versions the mapping models lead through, none of them mapping the
        /// store's version to the target; a gap between them inferred.
        case mappingModels

        /// The route in words, for the plan's printout.
        public var description: String {
            switch self {
            case .chain: "through the versions the app's chain names, in its order"
            case .straight: "straight to the target in one step, as Core Data migrates (no order of versions)"
            case .mappingModels:
                "through the versions the mapping models lead through (none maps the store's version to the target), any gap inferred"
            }
        }
    }

    /// The store's model version.
    public let storeVersion: ManagedObjectModel
    /// The version the plan ends at.
    public let targetVersion: ManagedObjectModel
    /// How the steps were found.
    public let route: Route
    /// The steps, in the order they run; empty when the store is at the target already.
    public let steps: [Step]
    /// The version the store was taken back from (``StoreMetadata/migratedBackFrom``), as its
    /// metadata said when the plan was made for it; `nil` otherwise.
    public internal(set) var storeMigratedBackFrom: String?

    /// Whether the store is already at the target version.
    public var isEmpty: Bool { steps.isEmpty }

    /// The numbered steps, one a line, or `<version> is current` when there are none.
    public var description: String {
        guard !steps.isEmpty else { return "\(storeVersion.name) is current" }
        return steps.enumerated().map { "\($0.offset + 1). \($0.element)" }.joined(separator: "\n")
    }
}

extension StoreMetadata {
    /// The metadata of this store once migrated to `model`: the model's hashes, the same
    /// store identity, and the keys the store carried that are not Core Data's.
    ///
    /// A store written by Apple's Core Data also carries keys of Apple's that describe the
    /// writer (`NSPersistenceFrameworkVersion`, `_NSAutoVacuumLevel`, digests of its
    /// hashes); once we write the store they no longer hold, so for such a store every `NS…`
    /// and `_NS…` key other than the ones ``StoreMetadata/init(model:storeType:storeUUID:)``
    /// sets is dropped. A store of ours keeps every key an app set.
    /// Its store UUID, from the plist or `Z_UUID`, is kept.
    func migrated(to model: ManagedObjectModel, storeType: String) -> StoreMetadata {
        var metadata = StoreMetadata(model: model, storeType: storeType, storeUUID: storeUUID)
        for (key, value) in additional where metadata.additional[key] == nil && !(isForeign && (key.hasPrefix("NS") || key.hasPrefix("_NS"))) {
            metadata.additional[key] = value
        }
        return metadata
    }
}
