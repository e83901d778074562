import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A store the framework creates from an Apple model has the tables and columns Core Data gave
/// that model's store: read from the catalogue of each, Apple's store as Core Data wrote it.
/// Only what Core Data adds beside the model (its model cache, persistent history, CloudKit
/// mirroring) and the order of columns may differ.
@Suite("New stores: Core Data's tables and columns")
struct NewStoreLayoutTests {
    /// Every (table, column) of the store at `url`, in capitals, of the tables both write.
    static func columns(_ url: StoreURL) async throws -> Set<String> {
        let rows =
            url.testEngine == .postgres
            ? try await storeRows(
                url,
                """
                SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
                WHERE n.nspname = current_schema() AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
                """
            )
            : try await storeRows(url, "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'")
        return Set(
            rows.compactMap { row -> String? in
                guard let table = row[0].text?.uppercased(), let column = row[1].text?.uppercased() else { return nil }
                // Core Data's own beside the model: not the model's layout.
                guard table.hasPrefix("Z"), table != "Z_MODELCACHE", !table.hasPrefix("SQLITE_") else { return nil }
                return "\(table).\(column)"
            }
        )
    }

    @Test(arguments: AppleFixtures.all, TestEngine.allCases)
    func aNewStoreHasTheTablesAndColumnsCoreDataGaveTheModel(store: AppleFixtures.Store, engine: TestEngine) async throws {
        let apple = try await AppleFixtures.withCopy(of: store) { url in try await Self.columns(url) }
        #expect(apple.contains { $0.hasPrefix("Z_PRIMARYKEY.") }, "read Apple's catalogue")
        try await engine.withStoreURL { url in
            try await withOpenStore(url, model: try store.model(), options: .createIfMissing) { _ in }
            let ours = try await Self.columns(url)
            #expect(ours.subtracting(apple).sorted() == [], "ours, not Apple's")
            #expect(apple.subtracting(ours).sorted() == [], "Apple's, not ours")
        }
    }
}
