import Foundation

/// What a migration benchmark measured on one backend, printed as a table and as one JSON
/// line (`"benchmark": "migrate"`).
struct MigrationBenchmarkResult: Encodable {
    struct Step: Encodable {
        var name: String
        /// How the framework ran it (`in place`, `set-based`, `streamed`; `chain` for the whole).
        var strategy: String
        /// Rows in the store (books and pages).
        var rows: Int
        var seconds: Double
        var inPlaceSQLSeconds: Double
        var rebuildSQLSeconds: Double
        var rowsPerSecond: Double
        /// The framework's time over the hand-written SQL's.
        var ratioToInPlaceSQL: Double
        var ratioToRebuildSQL: Double
        /// For the whole chain: one hand-written rebuild of each table for all its steps at
        /// once, and the framework's time over it.
        var onePassSQLSeconds: Double?
        var ratioToOnePassSQL: Double?

        init(
            name: String,
            strategy: String,
            rows: Int,
            seconds: Double,
            inPlaceSQLSeconds: Double,
            rebuildSQLSeconds: Double,
            onePassSQLSeconds: Double? = nil
        ) {
            self.name = name
            self.strategy = strategy
            self.rows = rows
            self.seconds = seconds.rounded(places: 3)
            self.inPlaceSQLSeconds = inPlaceSQLSeconds.rounded(places: 3)
            self.rebuildSQLSeconds = rebuildSQLSeconds.rounded(places: 3)
            rowsPerSecond = (Double(rows) / max(seconds, 1e-9)).rounded()
            ratioToInPlaceSQL = (seconds / max(inPlaceSQLSeconds, 1e-9)).rounded(places: 2)
            ratioToRebuildSQL = (seconds / max(rebuildSQLSeconds, 1e-9)).rounded(places: 2)
            self.onePassSQLSeconds = onePassSQLSeconds.map { $0.rounded(places: 3) }
            ratioToOnePassSQL = onePassSQLSeconds.map { (seconds / max($0, 1e-9)).rounded(places: 2) }
        }
    }

    var benchmark = "migrate"
    var backend: String
    var books: Int
    var pages: Int
    var steps: [Step]
    var chain: Step
    /// The peak resident memory of the process while the framework migrated, and its
    /// resident memory just before.
    var peakResidentBytes: Int
    var residentBytesBefore: Int
    /// Whether the framework's store holds the same rows as the hand-written rebuild's, step
    /// by step and in one pass.
    var sameRowsAsRebuild: Bool
    var sameRowsAsOnePass: Bool
    var difference: String?
    var opening: OpeningBenchmark.Result
    /// Each mapping's instance stage run in Swift, with where its time went.
    var stages: [StagePartsRecorder.Stage]

    func printReport() {
        func seconds(_ value: Double) -> String { String(format: "%8.3f s", value) }
        func ratio(_ value: Double) -> String { String(format: "%7.2f×", value) }
        print("\nBookStore 2 → 5 on \(backend): \(books) books, \(pages) pages")
        print("step                          strategy     framework     rows/s   in-place SQL  ratio   rebuild SQL  ratio")
        for step in steps + [chain] {
            let name = step.name.padding(toLength: 30, withPad: " ", startingAt: 0)
            let strategy = step.strategy.padding(toLength: 10, withPad: " ", startingAt: 0)
            print(
                "\(name)\(strategy) \(seconds(step.seconds)) \(String(format: "%10.0f", step.rowsPerSecond)) \(seconds(step.inPlaceSQLSeconds)) \(ratio(step.ratioToInPlaceSQL)) \(seconds(step.rebuildSQLSeconds)) \(ratio(step.ratioToRebuildSQL))"
            )
        }
        if let onePass = chain.onePassSQLSeconds, let ratio = chain.ratioToOnePassSQL {
            print("\(chain.name) against one hand-written pass for the whole chain: \(seconds(onePass)), ratio \(String(format: "%.2f×", ratio))")
        }
        print(
            String(
                format: "peak resident memory while migrating: %.1f MB (%.1f MB before)",
                Double(peakResidentBytes) / 1_048_576,
                Double(residentBytesBefore) / 1_048_576
            )
        )
        print("same rows as the hand-written rebuild: \(sameRowsAsRebuild ? "yes" : "NO — \(difference ?? "")")")
        print("same rows as the hand-written one pass: \(sameRowsAsOnePass ? "yes" : "NO — \(difference ?? "")")")
        print(
            String(
                format: "opening the current store: %.2f ms; the bare database: %.2f ms; overhead %.2f ms",
                opening.storeMilliseconds,
                opening.databaseMilliseconds,
                opening.overheadMilliseconds
            )
        )
        printStageParts()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(self), let line = String(data: data, encoding: .utf8) { print(line) }
    }
}

extension MigrationBenchmarkResult {
    /// Where each instance stage run in Swift spent its time, in microseconds per row it
    /// made: reading the source (or waiting for the step before), the policy's and
    /// manager's hooks, preparing each batch (keys, associations), its save (plan, write,
    /// commit). Pipelined stages write one batch while making the next, so their parts add
    /// up to more than the stage; a mapping copied in SQL shows only its closing save.
    func printStageParts() {
        guard !stages.isEmpty else { return }
        print("where each instance stage run in Swift spent its time, µs per row (the framework's own timing):")
        print("step                                    mapping                       rows    stage    read   hooks prepare   write")
        for stage in stages {
            func perRow(_ milliseconds: Double) -> String { String(format: "%7.2f", milliseconds * 1000 / Double(max(stage.rows, 1))) }
            let step = stage.step.padding(toLength: 40, withPad: " ", startingAt: 0)
            let mapping = stage.mapping.padding(toLength: 26, withPad: " ", startingAt: 0)
            print(
                "\(step)\(mapping) \(String(format: "%8d", stage.rows)) \(perRow(stage.milliseconds)) \(perRow(stage.readMilliseconds)) \(perRow(stage.hooksMilliseconds)) \(perRow(stage.prepareMilliseconds)) \(perRow(stage.writeMilliseconds))"
            )
        }
    }
}

extension Double {
    func rounded(places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (self * scale).rounded() / scale
    }
}
