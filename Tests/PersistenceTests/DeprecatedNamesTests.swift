import Persistence
import Testing

/// Code written against the previous release still compiles and means what it meant: each
/// deprecated name leads to its replacement.
@Suite("deprecated names")
struct DeprecatedNamesTests {
    @available(*, deprecated)
    @Test func theOldSortDescriptorIsTheFetchRequests() {
        let old: SortDescriptor = SortDescriptor(key: "title", ascending: false)
        let request = FetchRequest(entityName: "Book", sortDescriptors: [old])
        #expect(request.sortDescriptors == [FetchRequest.SortDescriptor(key: "title", ascending: false)])
    }

    @available(*, deprecated)
    @Test func stringUserInfoBecomesStringValues() {
        let strings: [String: String] = ["format": "short", "limit": "3"]
        let entity = EntityMapping(name: "BookToBook", type: .copy, sourceEntityName: "Book", destinationEntityName: "Book", userInfo: strings)
        #expect(entity.userInfo == ["format": .string("short"), "limit": .string("3")])
        let property = PropertyMapping(name: "title", userInfo: strings)
        #expect(property.userInfo["format"]?.stringValue == "short")
    }

    @Test func literalUserInfoStillCompilesAsValues() {
        let entity = EntityMapping(
            name: "BookToBook",
            type: .copy,
            sourceEntityName: "Book",
            destinationEntityName: "Book",
            userInfo: ["format": "short"]
        )
        #expect(entity.userInfo["format"] == .string("short"))
        #expect(EntityMapping(name: "BookToBook", type: .copy, sourceEntityName: "Book", destinationEntityName: "Book").userInfo.isEmpty)
    }

    @available(*, deprecated)
    @Test func valueCodingAsksTheDialect() {
        #expect(
            ValueCoding.databaseValue(.bool(true), type: .boolean, dialect: .postgres) == PostgresDialect().databaseValue(.bool(true), type: .boolean)
        )
        #expect(ValueCoding.postgresValue(.bool(true), type: .boolean) == .text("true"))
        #expect(ValueCoding.databaseValue(.bool(true), type: .boolean, dialect: .sqlite) == .integer(1))
    }
}
