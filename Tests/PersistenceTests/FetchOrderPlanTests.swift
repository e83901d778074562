import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A window in the objects' own order (`SELF`, the primary key), as a keyset page reads it,
/// is read through the primary key's index on every engine: the plan sorts nothing.
@Suite("Fetch order plans")
struct FetchOrderPlanTests {
    @Test(arguments: TestEngine.allCases)
    func aWindowInKeyOrderReadsThePrimaryKeyIndexWithoutSorting(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let store = try await PersistentStore.open(url, model: try LibraryModel.make(), options: .createIfMissing, logger: testLogger)
            do {
                try await checkPlans(store, engine: engine)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    private func checkPlans(_ store: PersistentStore, engine: TestEngine) async throws {
        do {
            let context = ManagedObjectContext(store: store, logger: testLogger)
            for number in 1...20_000 {
                let book = try context.insertObject(entityName: "Book")
                book.setValue(.string("Book \(number)"), forKey: "title")
            }
            try await context.save()
            if engine == .postgres { _ = try await store.database.writeWithoutTransaction { try $0.execute("ANALYZE") } }
            let layout = try context.layout("Book")
            // `self` is the same key path as `SELF`.
            for (ascending, key) in [(true, "SELF"), (false, "SELF"), (true, "self")] {
                for after in [
                    nil, Predicate.comparison(Comparison(.evaluatedObject, ascending ? .greaterThan : .lessThan, .constant(.integer(10_000)))),
                ] {
                    let request = FetchRequest(
                        entityName: "Book",
                        predicate: after,
                        sortDescriptors: [FetchRequest.SortDescriptor(key: key, ascending: ascending)],
                        fetchLimit: 20
                    )
                    let (_, sql) = try context.storedRowsSQL(request, layout, after, limit: 20, offset: 0, selecting: .objects)
                    let explain: SQL = engine == .postgres ? "EXPLAIN \(sql)" : "EXPLAIN QUERY PLAN \(sql)"
                    let plan = try await store.database.read { try $0.rows(explain) }
                        .map { row in (0..<row.count).compactMap { row[$0].text }.joined(separator: " ") }.joined(separator: "\n")
                    let sorts = engine == .postgres ? plan.contains("Sort") : plan.contains("TEMP B-TREE")
                    #expect(!sorts, "ascending \(ascending), after \(after != nil): the plan sorts\n\(plan)")
                    // The window is the right one.
                    let keys = try await context.fetchObjectIDs(request).compactMap(\.primaryKey)
                    let expected: [Int64] =
                        switch (ascending, after != nil) {
                        case (true, false): Array(1...20)
                        case (true, true): Array(10_001...10_020)
                        case (false, false): Array((19_981...20_000).reversed())
                        case (false, true): Array((9_980...9_999).reversed())
                        }
                    #expect(keys == expected)
                }
            }
        }
    }
}
