/// The swift-log metadata keys the framework uses, in one place.
public enum LoggingKeys {
    /// The store a message is about, as its URL.
    public static let store = "persistence.store"
    /// The name of the model version a message is about.
    public static let modelVersion = "persistence.model_version"
    /// The entity a message is about.
    public static let entity = "persistence.entity"
    /// How many rows were read, written or checked.
    public static let rows = "persistence.rows"
    /// Rows a validation loaded into Swift because SQL could not rule them out.
    public static let rowsCheckedInSwift = "persistence.rows_checked_in_swift"
    /// How long the work took, in milliseconds.
    public static let durationMilliseconds = "persistence.duration_ms"
    /// Of a migration's instance stage: milliseconds spent reading source batches (or
    /// waiting for the step before in a fused pass to hand them over).
    public static let readMilliseconds = "persistence.migration.read_ms"
    /// Of a migration's instance stage: milliseconds in the Swift of the policy's and the
    /// manager's hooks (objects made, values set, associations).
    public static let hooksMilliseconds = "persistence.migration.hooks_ms"
    /// Of a migration's instance stage: milliseconds working out each batch's save.
    public static let prepareMilliseconds = "persistence.migration.prepare_ms"
    /// Of a migration's instance stage: milliseconds writing and committing the batches
    /// (overlapping the next batch's read and hooks where batches are pipelined).
    public static let writeMilliseconds = "persistence.migration.write_ms"
    /// The text of a SQL statement, never its bound values.
    public static let sql = "persistence.sql"
    /// A migration's step, as `2/3 BookStore 2 → BookStore 3`.
    public static let migrationStep = "persistence.migration.step"
    /// The stage of a migration step (`create instances`, …), as ``MigrationProgress`` names it.
    public static let migrationStage = "persistence.migration.stage"
    /// The entity mapping being run, e.g. `BookToBook`.
    public static let entityMapping = "persistence.migration.entity_mapping"
    /// How far a migration has come, in percent.
    public static let progress = "persistence.migration.progress"
    /// The steps a fused pass ran as one (`3+4`).
    public static let fusedSteps = "persistence.migration.fused_steps"
    /// Why fused steps ran one after the other after all.
    public static let reason = "persistence.migration.reason"
    /// An online migration's phase: `capture`, `copy`, `bulk`, `catch-up`, `cut-over`.
    public static let onlinePhase = "persistence.migration.online_phase"
    /// Changes of other processes an online migration's catch-up took, or left waiting.
    public static let changes = "persistence.migration.changes"
}
