import BookStoreTesting
import Foundation
import PersistenceTesting
import Testing

@testable import BookStore
@testable import Persistence

@Suite("Where an instance stage's time goes, in its log line")
struct StagePartsLogTests {
    @Test(arguments: TestEngine.allCases)
    func aStageRunInSwiftSaysItsReadHooksPrepareAndWriteTimes(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let seeded = try await StoreAdministration(models: try loadModels(), logger: quietLogger)
                .seed(url, version: 3, count: 300, catalogue: try loadCatalogue())
            let log = LogRecorder()
            _ = try await StoreAdministration(models: try loadModels(), logger: log.logger).migrate(url)
            let instanceStages = log.all.filter { $0.contains("migration stage") && $0.contains("persistence.migration.stage=create instances") }
            let parts = ["read_ms", "hooks_ms", "prepare_ms", "write_ms"].map { "persistence.migration.\($0)=" }
            // The author split runs its policy in Swift, publication by publication.
            let split = try #require(
                instanceStages.first { $0.contains("entity_mapping=PublicationToPublication") && $0.contains("BookStore 3 → BookStore 4") },
                "\(instanceStages)"
            )
            #expect(split.contains("persistence.rows=\(seeded.books)"), "\(split)")
            let times = try parts.map { part in try #require(Self.value(of: part, in: split), "\(part) in \(split)") }
            #expect(times[1] > 0, "300 publications through the policy take time in its hooks: \(split)")
            // The fused pass saves batch by batch, not pipelined: its parts fit in its stage
            // (which is logged to the whole millisecond).
            for line in instanceStages where line.contains(parts[0]) {
                let stage = try #require(Self.value(of: "persistence.duration_ms=", in: line))
                let sum = parts.compactMap { Self.value(of: $0, in: line) }.reduce(0, +)
                #expect(sum <= stage + 1, "\(line)")
            }
            // Pages are copied in SQL: nothing read into Swift, no hook run; only the
            // stage's closing save is timed.
            let pages = try #require(instanceStages.first { $0.contains("entity_mapping=PageToPage") && $0.contains("BookStore 3 → BookStore 4") })
            #expect(Self.value(of: parts[0], in: pages) == 0, "\(pages)")
            #expect(Self.value(of: parts[1], in: pages) == 0, "\(pages)")
        }
    }

    private static func value(of key: String, in line: String) -> Double? {
        guard let range = line.range(of: key) else { return nil }
        return Double(line[range.upperBound...].prefix { $0 != " " })
    }
}
