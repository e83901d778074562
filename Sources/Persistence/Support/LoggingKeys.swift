/// The swift-log metadata keys the framework uses, in one place.
public enum LoggingKeys {
    public static let store = "persistence.store"
    public static let modelVersion = "persistence.model_version"
    public static let entity = "persistence.entity"
    public static let rows = "persistence.rows"
    /// Rows a validation loaded into Swift because SQL could not rule them out.
    public static let rowsCheckedInSwift = "persistence.rows_checked_in_swift"
    public static let durationMilliseconds = "persistence.duration_ms"
    public static let sql = "persistence.sql"
    public static let migrationStep = "persistence.migration.step"
    public static let migrationStage = "persistence.migration.stage"
    public static let entityMapping = "persistence.migration.entity_mapping"
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
