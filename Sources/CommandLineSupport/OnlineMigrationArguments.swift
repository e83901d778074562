import ArgumentParser
import Persistence

/// `--online` and its settings, shared by the `migrate` commands.
///
/// ```swift
/// @OptionGroup var online: OnlineMigrationArguments
/// let options = online.options()   // nil without --online
/// ```
public struct OnlineMigrationArguments: ParsableArguments {
    /// `--online`: migrate a PostgreSQL store while its users keep reading and writing it.
    @Flag(
        name: .long,
        help:
            "Migrate while other processes keep reading and writing the store at its version; they are held off only for the cut-over (PostgreSQL only)."
    )
    public var online = false

    /// `--cut-over-lock-timeout`: the cut-over's lock wait in milliseconds; `nil` keeps the default.
    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --online: how long the cut-over waits for other sessions' write transactions before it lets go and tries again (at most 80 % of the server's deadlock_timeout).",
            valueName: "ms"
        )
    )
    public var cutOverLockTimeout: Int?

    /// `--max-rows-per-second`: the online migration's pace; `nil` goes as fast as it can.
    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --online: at most this many rows a second copied, migrated and caught up, to leave the server room.",
            valueName: "count"
        )
    )
    public var maxRowsPerSecond: Int?

    /// The arguments before parsing: offline, default settings.
    public init() {}

    /// Refuses the settings without `--online`, and values out of range, with what to pass instead.
    public func validate() throws {
        if !online, cutOverLockTimeout != nil {
            throw ValidationError("--cut-over-lock-timeout applies to an online migration only: add --online, or leave the option out")
        }
        if !online, maxRowsPerSecond != nil {
            throw ValidationError("--max-rows-per-second applies to an online migration only: add --online, or leave the option out")
        }
        if let rows = maxRowsPerSecond, rows < 1 {
            throw ValidationError("--max-rows-per-second must be at least 1, not \(rows)")
        }
        if let milliseconds = cutOverLockTimeout, !(1...60_000).contains(milliseconds) {
            throw ValidationError(
                "--cut-over-lock-timeout must be between 1 and 60000 milliseconds, not \(milliseconds): pass the longest wait a writer may bear, such as 500"
            )
        }
    }

    /// The online migration's options, or `nil` for an offline migration.
    public func options() -> OnlineMigrationOptions? {
        guard online else { return nil }
        var options = OnlineMigrationOptions()
        if let milliseconds = cutOverLockTimeout { options.cutOverLockTimeout = .milliseconds(milliseconds) }
        options.maximumRowsPerSecond = maxRowsPerSecond
        return options
    }
}
