/// Another process committed to a SQLite store in the instant the migration let the
/// writers' lock go to copy the migrated store in (SQLite's backup API must take that lock
/// itself). The copy was not made: the store is unchanged and holds that write, and the
/// migrated file lacks it. ``ProgressiveMigrator`` migrates again, from the store as it is
/// now, a few times; then it reports ``MigrationError/Code/storeBusy`` (``error``).
struct StoreWrittenDuringReplacement: Error, Sendable {
    let store: StoreURL

    /// How many times a migration runs before this is reported.
    static let attempts = 3

    var error: MigrationError {
        MigrationError(
            .storeBusy,
            "another process wrote to the store in the instant the migration let its lock go to write the migrated store in, \(Self.attempts) times",
            hint: "the store was not changed and holds those writes; migrate again, when fewer writes arrive",
            store: store.description
        )
    }
}
