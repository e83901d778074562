extension ProgressiveMigrator {
    /// Says how a plan's `steps` run together: which run in one pass with the next
    /// (``MigrationPlan/Step/fusionWithNext``, where ``fusesSteps`` allows), and what the
    /// next run does with each streamed step's output, alone or in its pass, when it was
    /// killed halfway (``MigrationPlan/Step/resumption``). `storeLayout`: how the store,
    /// which the first step reads, is laid out.
    func planPasses(of steps: inout [MigrationPlan.Step], dialect: (any SQLDialect)?, storeLayout: StoreLayout?) {
        for index in steps.indices.dropLast() {
            steps[index].fusionWithNext =
                fusesSteps
                ? StepFusion(
                    upstream: steps[index],
                    downstream: steps[index + 1],
                    policies: chain.policies,
                    dialect: dialect,
                    sourceLayout: index == 0 ? storeLayout : nil,
                    logger: logger
                ).fusion()
                : .notFused(reason: "fusing steps is turned off")
        }
        for index in steps.indices where steps[index].strategy == .streamed {
            let pass = steps.fusedPass(containing: index)
            steps[index].resumption =
                if pass.count > 1 {
                    MigrationPlan.whyNotResumable(fusedPass: Array(steps[pass]), policies: chain.policies).map {
                        .startsAgain(reason: "it runs in one pass with its neighbour, and \($0)")
                    } ?? .fromLastBatch
                } else if let why = steps[index].whyNotResumable(policies: chain.policies) {
                    .startsAgain(reason: why)
                } else {
                    .fromLastBatch
                }
        }
    }
}
