/// A complete output of a set-based or streamed step that a killed run left in its workspace: what the
/// step with ``fingerprint`` wrote from a source marked ``sourceMark``, indexes and
/// metadata included. A next run of the same step on the same, unchanged source takes it
/// as it is, and a step after it that was killed halfway continues what it wrote.
struct FinishedOutput: Sendable, Hashable {
    /// Where the output is.
    var output: StoreURL
    /// The step that wrote it (``MigrationPlan/Step/resumptionFingerprint``).
    var fingerprint: String
    /// Its source as the step found it (``MigrationWorkspace/sourceMark(of:)``).
    var sourceMark: String
    /// Tells this output from any other the same step wrote: the mark the output itself
    /// carries names it, so a later step continues only what it read.
    var identity: String

    /// The mark a step reading this output records: its source's mark, then the step
    /// that wrote it and the output's identity, one to a line.
    var mark: String { [sourceMark, fingerprint, identity].joined(separator: "\n") }

    /// A mark's lines: the store's part, then a step's fingerprint and its output's identity
    /// for each output made from the one before.
    static func lines(of mark: String) -> [String] {
        mark.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The store's own part of a mark: its first line.
    static func storePart(of mark: String) -> String { lines(of: mark)[0] }

    /// The outputs a mark names after the store's part: the lines after the first, none for
    /// a mark of the store itself.
    static func lineage(of mark: String) -> ArraySlice<String> { lines(of: mark).dropFirst() }
}
