import Logging

/// How much work each step of a plan is, so that a migration's progress moves with the
/// work done rather than a step at a time, and how long the rest should take.
///
/// A step's weight is the rows it reads times the passes it makes over them: one for an
/// in-place step (its SQL runs over whole tables once), two for a set-based step (the
/// inserts, then the validation), three for a streamed step (Core Data's three stages,
/// each over every row). The rows of the first step are the store's; those of a later step
/// are carried along the entity mappings before it (`Book` rows become `Publication` rows).
///
/// ```swift
/// let workload = MigrationWorkload(plan: plan, sourceRows: ["Book": 300_000, "Page": 600_000])
/// // Two in-place steps and two streamed ones over the same rows weigh 1, 1, 3 and 3:
/// workload.fraction(step: 2, stepFraction: 0.5)   // 0.4375, where a quarter a step said 0.625
/// ```
struct MigrationWorkload: Sendable {
    /// Each step's share of the work, summing to 1.
    let shares: [Double]
    /// When the migration started: the clock of ``MigrationProgress/elapsed``.
    let started: ContinuousClock.Instant

    init(plan: MigrationPlan, sourceRows: [String: Int], started: ContinuousClock.Instant = .now) {
        var counts = sourceRows
        var weights: [Double] = []
        for step in plan.steps {
            let stepRows = counts.values.reduce(0, +)
            // An empty store still runs its steps: each counts as a row, so none is weightless.
            weights.append(Double(max(stepRows, 1)) * Double(Self.passes(step.strategy)))
            counts = Self.rows(after: step, from: counts)
        }
        let total = weights.reduce(0, +)
        shares = weights.map { total > 0 ? $0 / total : 0 }
        self.started = started
    }

    /// Passes a step of `strategy` makes over its rows.
    static func passes(_ strategy: MigrationPlan.Strategy) -> Int {
        switch strategy {
        case .inPlace: 1
        case .setBased: 2
        case .streamed: 3
        }
    }

    /// The rows of each destination entity once `step` has run: each entity mapping brings
    /// its source entity's rows (a step's mapping models name every entity it keeps; one
    /// without any mapping keeps the counts as they are).
    private static func rows(after step: MigrationPlan.Step, from counts: [String: Int]) -> [String: Int] {
        let mappings = step.mappingModels.flatMap(\.entityMappings)
        guard !mappings.isEmpty else { return counts }
        var next: [String: Int] = [:]
        for mapping in mappings where mapping.type != .remove && mapping.type != .add {
            guard let source = mapping.sourceEntityName, let destination = mapping.destinationEntityName else { continue }
            next[destination, default: 0] += counts[source] ?? 0
        }
        return next
    }

    /// The whole migration's fraction done when step `index` (from 0) is `stepFraction` done.
    func fraction(step index: Int, stepFraction: Double) -> Double {
        // The last step done is the whole done, whatever the shares' rounding makes their sum.
        guard shares.indices.contains(index), index < shares.count - 1 || stepFraction < 1 else { return 1 }
        let before = shares[..<index].reduce(0, +)
        return min(1, max(0, before + shares[index] * min(1, max(0, stepFraction))))
    }

    /// Where a step, or a group of in-place steps run as one, began: when, and the whole's
    /// fraction then.
    struct Start: Sendable {
        let instant: ContinuousClock.Instant
        let fraction: Double
    }

    /// The start of step `index` (from 0), now.
    func start(ofStep index: Int, at instant: ContinuousClock.Instant = .now) -> Start {
        Start(instant: instant, fraction: fraction(step: index, stepFraction: 0))
    }

    /// The time left at `now` when the whole is `fraction` done: the rest at the rate of the
    /// work done since `start` (the current step's, whose kind of work is the best guide to
    /// what follows), or since the migration began when nothing is done since `start` yet.
    /// `nil` before anything is done.
    func estimatedTimeRemaining(fraction: Double, since start: Start, now: ContinuousClock.Instant = .now) -> Duration? {
        guard fraction < 1 else { return .zero }
        let (done, spent) = fraction > start.fraction ? (fraction - start.fraction, now - start.instant) : (fraction, now - started)
        guard done > 0, spent > .zero else { return nil }
        return spent * ((1 - fraction) / done)
    }

    /// The rows of every entity of `plan`'s first step in the store at `url`, counted
    /// table by table, or none when the store cannot say (progress then weighs steps by
    /// their passes alone; the migration itself reports what is wrong with the store).
    static func measuring(_ plan: MigrationPlan, at url: StoreURL, logger: Logger) async -> MigrationWorkload {
        let started = ContinuousClock.now
        guard let first = plan.steps.first else { return MigrationWorkload(plan: plan, sourceRows: [:], started: started) }
        do {
            let store = try await PersistentStore.open(url, model: first.source, options: .readOnly, logger: logger)
            let schema = store.schema
            let roots = Set(schema.tables.values.map(\.rootEntityName)).compactMap { schema.table(for: $0) }
            // A table of one entity is counted whole (SQLite counts its B-tree without reading rows).
            let statements = roots.map { table -> SQL in
                table.entityNumbers.count == 1
                    ? "SELECT \(literal: table.entityNumber), count(*) FROM \(identifier: table.name)"
                    : "SELECT \(storeName: "Z_ENT"), count(*) FROM \(identifier: table.name) GROUP BY \(storeName: "Z_ENT")"
            }
            let counted = try? await store.database.read { connection in try statements.flatMap { try connection.rows($0) } }
            await store.close()
            var rows: [String: Int] = [:]
            for row in counted ?? [] {
                if let number = row[0].int64, let name = schema.entityNames[Int(number)], let count = row[1].int64 { rows[name] = Int(count) }
            }
            return MigrationWorkload(plan: plan, sourceRows: rows, started: started)
        } catch {
            logger.debug("rows not counted for progress", metadata: [LoggingKeys.store: "\(url)", "error": "\(error)"])
            return MigrationWorkload(plan: plan, sourceRows: [:], started: started)
        }
    }
}
