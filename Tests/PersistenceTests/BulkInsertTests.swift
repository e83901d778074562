import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A migration's batch of thousands of rows goes to the store in bulk (on PostgreSQL as one
/// `COPY`); every value must come back exactly as it was set, whatever characters the
/// text format gives a meaning to.
@Suite("Bulk inserts")
struct BulkInsertTests {
    typealias Sample = AttributeRoundTripTests.Sample

    /// Values that the COPY text format escapes or spells in its own way.
    static let strings = ["", "tab\there", "line\nbreak", "carriage\rreturn", #"back\slash"#, #"\N"#, #"\\N"#, "\\", "Ünïcödé 日本語 👩🏽‍💻", "end\\"]
    static let blobs = [Data(), Data([0x5C, 0x4E]), Data([0x00, 0x09, 0x0A, 0x0D, 0xFF]), Data("\\x41".utf8)]
    /// Doubles that read back exactly from their shortest text into either numeric column.
    static let doubles: [Double] = [0, -0.0, 1.5, -3.25, Double(Float.pi), Double(Float.greatestFiniteMagnitude), .infinity, -.infinity]

    static func fill(_ sample: ManagedObject, _ index: Int) {
        sample[Sample.i16] = Int16(truncatingIfNeeded: index * 7919)
        sample[Sample.i32] = Int32(index) * -3
        sample[Sample.i64] = index % 11 == 0 ? nil : Int64(index) * 1_000_000_007
        sample[Sample.double] = doubles[index % doubles.count]
        sample[Sample.float] = Float(index) / 4
        sample[Sample.decimal] = Decimal(index) / 8
        sample[Sample.string] = index % 13 == 0 ? nil : strings[index % strings.count] + String(index)
        sample[Sample.flag] = index % 3 == 0
        sample[Sample.date] = Date(timeIntervalSinceReferenceDate: Double(index) * 86_400.5)
        sample[Sample.data] = index % 5 == 0 ? nil : blobs[index % blobs.count]
        sample[Sample.uuid] = UUID(uuid: (UInt8(index & 0xFF), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, UInt8(index >> 8 & 0xFF)))
        sample[Sample.uri] = URL(string: "https://example.com/\(index)?q=a%09b")
    }

    /// Thousands of rows written with `insertRows` (as a migration's batch saves write
    /// them), then read back in a new context, in the order `fill` was called.
    func insertAndFetch(_ container: PersistentContainer, count: Int, fill: (ManagedObject, Int) -> Void) async throws -> [ManagedObject] {
        let schema = container.store.schema
        let table = try #require(schema.table(for: "Sample"))
        let entity = try #require(container.store.model.entity(named: "Sample"))
        let attributes = container.store.model.attributes(of: entity)
        let columns = ["Z_PK", "Z_ENT", "Z_OPT"].map(schema.dialect.name) + attributes.compactMap { table.column(for: $0.name)?.name }
        let context = container.newContext()
        var rows: [[DatabaseValue]] = []
        for index in 0..<count {
            let sample = try context.insertObject(entityName: "Sample")
            fill(sample, index)
            rows.append(
                [.integer(Int64(index + 1)), .integer(Int64(table.entityNumber)), .integer(1)]
                    + attributes.map { schema.dialect.databaseValue(sample.value(forKey: $0.name), type: $0.type) }
            )
        }
        try await container.store.database.write { [rows] in try $0.insertRows(into: table.name, columns: columns, rows: rows) }
        let fresh = container.newContext()
        return try await fresh.fetch(FetchRequest(entityName: "Sample", sortDescriptors: [.init(key: "i32", ascending: false)]))
    }

    @Test(arguments: TestBackend.allCases)
    func everyValueComesBackFromABulkInsert(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let count = 3_000
            let fetched = try await insertAndFetch(container, count: count, fill: Self.fill)
            #expect(fetched.count == count)
            let context = container.newContext()
            for (index, object) in fetched.enumerated() {
                let expected = try context.insertObject(entityName: "Sample")
                Self.fill(expected, index)
                for key in AttributeRoundTripTests.keys where object.value(forKey: key) != expected.value(forKey: key) {
                    Issue.record("\(key) of sample \(index): \(object.value(forKey: key)) instead of \(expected.value(forKey: key))")
                }
            }
        }
    }

    /// Doubles between two floats take the bound-parameter path on PostgreSQL; a bulk
    /// insert holding them keeps every value as well.
    @Test(arguments: TestBackend.allCases)
    func doublesOfEveryPrecisionComeBackFromABulkInsert(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let fetched = try await insertAndFetch(container, count: 2_500) { sample, index in
                sample[Sample.i32] = Int32(index)
                sample[Sample.double] = 0.1 * Double(index) + 1e-300
                sample[Sample.float] = Float(index) * 0.1
            }
            #expect(fetched.count == 2_500)
            for object in fetched {
                let index = try #require(object[Sample.i32])
                #expect(object[Sample.double] == 0.1 * Double(index) + 1e-300)
                #expect(object[Sample.float] == Float(index) * 0.1)
            }
        }
    }

    @Test func copyTextEscapesWhatTheFormatGivesAMeaningTo() {
        var text = PostgresCopyText()
        text.append(row: [.integer(-7), .text("a\tb\nc\rd\\e"), .null, .double(1.5), .blob(Data([0x5C, 0xAB]))])
        text.append(row: [.double(.infinity), .double(-.infinity), .double(.nan), .text(#"\N"#)])
        #expect(String(decoding: text.bytes, as: UTF8.self) == "-7\ta\\tb\\nc\\rd\\\\e\t\\N\t1.5\t\\\\x5cab\nInfinity\t-Infinity\tNaN\t\\\\N\n")
    }

    @Test func copyTextTakesOnlyValuesThatReadBackExactly() {
        let real = PostgresType.float4
        let double = PostgresType.float8
        #expect(PostgresCopyText.canEncode(.double(0.5), into: real))
        #expect(PostgresCopyText.canEncode(.double(Double(Float(0.1))), into: real))
        #expect(!PostgresCopyText.canEncode(.double(0.1), into: real), "0.1 lies between two floats: a real column could round its text differently")
        // A double precision column reads any double's shortest text as the double.
        #expect(PostgresCopyText.canEncode(.double(0.1), into: double))
        #expect(PostgresCopyText.canEncode(.double(19.99), into: double))
        #expect(PostgresCopyText.canEncode(.double(.leastNonzeroMagnitude), into: double))
        // Other types read a double's text their own way: the bound argument decides.
        #expect(!PostgresCopyText.canEncode(.double(0.5), into: PostgresType.numeric))
        #expect(!PostgresCopyText.canEncode(.double(0.5), into: 0))
        #expect(!PostgresCopyText.canEncode(.text("a\u{0}b"), into: PostgresType.text))
        #expect(PostgresCopyText.canEncode(.blob(Data([0])), into: PostgresType.bytea))
        #expect(PostgresCopyText.canEncode(row: [.integer(1), .double(0.1)], columnTypes: [PostgresType.int8, double]))
        #expect(!PostgresCopyText.canEncode(row: [.integer(1), .double(0.1)], columnTypes: [PostgresType.int8, real]))
    }
}
