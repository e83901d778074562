import Testing

@testable import Persistence

/// The names of a migration's schemas beside a PostgreSQL store fit PostgreSQL's 63 bytes,
/// so that it never cuts them to one another's or to the store's own.
@Suite("PostgreSQL shadow schema names")
struct PostgresShadowNameTests {
    @Test func everyNameFitsIsApartFromTheStoresAndKeepsItsPrefix() {
        #expect(PostgresShadowName.prefix(of: "public", kind: .migrating) == "public_migrating_")
        #expect(PostgresShadowName.prefix(of: "public", kind: .replaced) == "public_replaced_")
        let schemas = [
            "public", String(repeating: "a", count: 44), String(repeating: "a", count: 45), String(repeating: "a", count: 63),
            String(repeating: "ß", count: 31) + "x", String(repeating: "书", count: 21), String(repeating: "a", count: 62) + "b",
        ]
        for schema in schemas {
            for kind in PostgresShadowName.Kind.allCases {
                let prefix = PostgresShadowName.prefix(of: schema, kind: kind)
                let names = (0..<3).map { _ in PostgresShadowName.new(beside: schema, kind: kind) }
                #expect(names.allSatisfy { $0.utf8.count <= 63 && $0.hasPrefix(prefix) && $0 != schema }, "\(schema): \(names)")
                #expect(Set(names).count == 3)
                // The same on every run: an abandoned shadow is found by it.
                #expect(PostgresShadowName.prefix(of: schema, kind: kind) == prefix)
            }
        }
        // Two long names that begin alike keep prefixes apart.
        let a = String(repeating: "a", count: 62) + "b"
        let b = String(repeating: "a", count: 62) + "c"
        #expect(PostgresShadowName.prefix(of: a, kind: .migrating) != PostgresShadowName.prefix(of: b, kind: .migrating))
    }

    /// A migration's own output, copy or round store is told from a store (which it
    /// does not ready to serve): short and digested names, not the user's schemas that
    /// only look alike, nor the other kinds.
    @Test func aMigrationsWorkspaceIsToldFromAStore() {
        for schema in ["public", "shop", String(repeating: "ß", count: 31) + "x"] {
            #expect(PostgresShadowName.isMigrationWorkspace(PostgresShadowName.new(beside: schema, kind: .migrating)), "\(schema)")
            let copy = PostgresShadowName.new(beside: schema, kind: .migrating)
            #expect(PostgresShadowName.isMigrationWorkspace(PostgresShadowName.new(beside: copy, kind: .migrating)), "a shadow of \(copy)")
            #expect(!PostgresShadowName.isMigrationWorkspace(schema))
            #expect(!PostgresShadowName.isMigrationWorkspace(PostgresShadowName.new(beside: schema, kind: .replaced)))
            #expect(!PostgresShadowName.isMigrationWorkspace(PostgresShadowName.new(beside: schema, kind: .capturing)))
        }
        for schema in ["shop_migrating_ABCDEF12", "shop_migrating_abcdef1", "shop_migrating_abcdefgh", "_migrating_", "migrating_abcdef12"] {
            #expect(!PostgresShadowName.isMigrationWorkspace(schema), "\(schema)")
        }
    }
}
