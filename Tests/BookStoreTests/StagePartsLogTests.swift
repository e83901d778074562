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
                .seed(url, version: 3, count: 3, catalogue: try loadCatalogue())
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
            for part in parts {
                let value = try #require(Self.value(of: part, in: split), "\(part) in \(split)")
                #expect(value >= 0)
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
