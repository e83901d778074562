extension ProgressiveMigrator {
    /// The in-place steps that may keep entity numbers (``InPlaceMigration/keptNumbering``),
    /// and what else: those a streamed step follows, directly (which may keep the names of
    /// indexes, too) or through other such steps. The streamed step writes every row anew,
    /// numbered as a new store; renumbering them before would rewrite every row once more
    /// for nothing (BookStore 2 → 3 renumbers both tables).
    ///
    /// A step the planner made set-based only because renumbering every row costs more than
    /// a rebuild counts too: kept, it renumbers nothing. The caller plans them again to see
    /// whether they run in place so.
    func stepsLeavingRenumberingToRebuild(_ steps: [MigrationPlan.Step]) -> [Int: InPlaceMigration.Keeping] {
        guard forcedStrategy == nil else { return [:] }
        var keeping: [Int: InPlaceMigration.Keeping] = [:]
        var rebuiltLater = false
        for index in steps.indices.reversed() {
            let step = steps[index]
            switch step.strategy {
            case .streamed:
                rebuiltLater = true
            case .inPlace, .setBased:
                let inferred = step.mappingModels.count == 1 && step.mappingModels[0].isInferred && step.managerType == MigrationManager.self
                guard rebuiltLater, inferred else {
                    rebuiltLater = false
                    continue
                }
                keeping[index] = steps[index + 1].strategy == .streamed ? .entityNumbersAndIndexNames : .entityNumbers
            }
        }
        return keeping
    }
}

extension MigrationPlan.Step {
    /// How the store is laid out after this step where it keeps entity numbers; `nil` where
    /// the store is then laid out as a new store of the destination.
    var keptLayout: StoreLayout? {
        guard case .inPlace(let inPlace) = work, let numbering = inPlace.keptNumbering else { return nil }
        return StoreSchema(model: destination, dialect: inPlace.dialect, numbering: numbering).layout
    }
}
