/// Where a set-based or streamed step writes, as
/// ``MigrationRun/outputAndCheckpointing(forStep:from:in:)`` decides.
struct StepOutput {
    /// What the output is recorded as once complete (``MigrationWorkspace/recordFinished(_:fingerprint:sourceMark:)``).
    struct Record {
        /// The step (``MigrationPlan/Step/resumptionFingerprint``).
        var fingerprint: String
        /// Its source as the step found it.
        var sourceMark: String
    }

    /// The output.
    var url: StoreURL
    /// How the step records its progress, when it can be continued after a kill.
    var checkpointing: StepCheckpointing?
    /// What the output is recorded as once complete; none when its source has no mark.
    var record: Record?
}
