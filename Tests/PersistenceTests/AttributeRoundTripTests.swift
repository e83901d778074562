import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Every attribute type through a save and a fetch in a fresh context.
@Suite("Attribute round trips")
struct AttributeRoundTripTests {
    enum Sample {
        static let i16 = Attribute<Int16>("i16")
        static let i32 = Attribute<Int32>("i32")
        static let i64 = Attribute<Int64>("i64")
        static let double = Attribute<Double>("double")
        static let float = Attribute<Float>("float")
        static let decimal = Attribute<Decimal>("decimal")
        static let string = Attribute<String>("string")
        static let flag = Attribute<Bool>("flag")
        static let date = Attribute<Date>("date")
        static let data = Attribute<Data>("data")
        static let uuid = Attribute<UUID>("uuid")
        static let uri = Attribute<URL>("uri")
    }

    static let keys = ["i16", "i32", "i64", "double", "float", "decimal", "string", "flag", "date", "data", "uuid", "uri"]

    /// Saves `fill`'s sample, then fetches it back in a new context.
    func roundTrip(_ container: PersistentContainer, _ fill: (ManagedObject) -> Void) async throws -> (saved: ManagedObject, fetched: ManagedObject) {
        let context = container.newContext()
        let sample = try context.insertObject(entityName: "Sample")
        fill(sample)
        try await context.save()
        let pk = try #require(sample.objectID.primaryKey)
        let fresh = container.newContext()
        let fetched = try await fresh.existingObject(with: try fresh.objectID(entityName: "Sample", primaryKey: pk))
        #expect(fetched !== sample)
        return (sample, fetched)
    }

    static let megabyte: Data = {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<1_048_576).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }()

    @Test(arguments: TestBackend.allCases)
    func maximumValues(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let decimal = try #require(Decimal(string: "12345678901234567890.1234567891", locale: Locale(identifier: "en_US_POSIX")))
            let date = Date(timeIntervalSinceReferenceDate: 734_567_890.123_456)
            let uuid = UUID()
            let url = try #require(URL(string: "https://example.com/books?id=1&q=caf%C3%A9#frag"))
            let string = "Ünïcödé — 日本語 — Ελληνικά — 👩🏽‍💻 — e\u{301}"
            let (_, fetched) = try await roundTrip(container) { s in
                s[Sample.i16] = Int16.max
                s[Sample.i32] = Int32.max
                s[Sample.i64] = Int64.max
                s[Sample.double] = Double.pi
                s[Sample.float] = Float.greatestFiniteMagnitude
                s[Sample.decimal] = decimal
                s[Sample.string] = string
                s[Sample.flag] = true
                s[Sample.date] = date
                s[Sample.data] = Self.megabyte
                s[Sample.uuid] = uuid
                s[Sample.uri] = url
            }
            #expect(fetched[Sample.i16] == Int16.max)
            #expect(fetched[Sample.i32] == Int32.max)
            #expect(fetched[Sample.i64] == Int64.max)
            #expect(fetched[Sample.double] == Double.pi)
            #expect(fetched[Sample.float] == Float.greatestFiniteMagnitude)
            #expect(fetched[Sample.decimal] == decimal)
            #expect(fetched[Sample.decimal].map { "\($0)" } == "12345678901234567890.1234567891", "all 30 significant digits kept")
            #expect(fetched[Sample.string] == string)
            #expect(fetched[Sample.flag] == true)
            #expect(fetched[Sample.date] == date)
            #expect(fetched[Sample.data] == Self.megabyte)
            #expect(fetched[Sample.uuid] == uuid)
            #expect(fetched[Sample.uri] == url)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func minimumValues(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let decimal = try #require(Decimal(string: "-0.000000000000000000000000000001", locale: Locale(identifier: "en_US_POSIX")))
            let date = Date(timeIntervalSinceReferenceDate: -978_307_200.5)  // before 1970
            let (_, fetched) = try await roundTrip(container) { s in
                s[Sample.i16] = Int16.min
                s[Sample.i32] = Int32.min
                s[Sample.i64] = Int64.min
                s[Sample.double] = -Double.leastNonzeroMagnitude
                s[Sample.float] = Float.leastNormalMagnitude
                s[Sample.decimal] = decimal
                s[Sample.string] = ""
                s[Sample.flag] = false
                s[Sample.date] = date
                s[Sample.data] = Data()
                s[Sample.uuid] = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
                s[Sample.uri] = URL(string: "file:///")
            }
            #expect(fetched[Sample.i16] == Int16.min)
            #expect(fetched[Sample.i32] == Int32.min)
            #expect(fetched[Sample.i64] == Int64.min)
            #expect(fetched[Sample.double] == -Double.leastNonzeroMagnitude)
            #expect(fetched[Sample.float] == Float.leastNormalMagnitude)
            #expect(fetched[Sample.decimal] == decimal)
            #expect(fetched.value(forKey: "string") == .string(""), "an empty string is not nil")
            #expect(fetched.value(forKey: "flag") == .bool(false), "false is not nil")
            #expect(fetched[Sample.date] == date)
            #expect(fetched.value(forKey: "data") == .binary(Data()), "empty data is not nil")
            #expect(fetched[Sample.uuid] == UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
            #expect(fetched[Sample.uri] == URL(string: "file:///"))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func everyAttributeNil(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let (saved, fetched) = try await roundTrip(container) { s in
                // Set then clear, so nil is written as a change and not just left as the default.
                s[Sample.string] = "x"
                for key in Self.keys { s.setValue(.null, forKey: key) }
            }
            for key in Self.keys {
                #expect(fetched.value(forKey: key) == .null, "\(key) comes back nil")
            }
            let pk = try #require(saved.objectID.primaryKey)
            let row = try #require(
                try await container.sql(
                    "SELECT ZI16, ZI32, ZI64, ZDOUBLE, ZFLOAT, ZDECIMAL, ZSTRING, ZFLAG, ZDATE, ZDATA, ZUUID, ZURI FROM ZSAMPLE WHERE Z_PK = ?",
                    [.integer(pk)]
                ).first
            )
            let allNull = row.values.allSatisfy { $0.isNull }
            #expect(allNull, "every column is SQL NULL: \(row.values)")
        }
    }

    @Test(arguments: TestBackend.allCases)
    func storedForms(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let date = Date(timeIntervalSinceReferenceDate: 12_345.678_9)
            let uuid = try #require(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF"))
            let decimal = try #require(Decimal(string: "3.14159265358979323846264338327", locale: Locale(identifier: "en_US_POSIX")))
            let (saved, _) = try await roundTrip(container) { s in
                s[Sample.date] = date
                s[Sample.uuid] = uuid
                s[Sample.flag] = true
                s[Sample.decimal] = decimal
                s[Sample.uri] = URL(string: "https://example.com/a")
                s[Sample.i16] = -7
            }
            let pk = try #require(saved.objectID.primaryKey)
            if backend == .postgres {
                // The columns' own types: a timestamp, a uuid, a boolean, an exact numeric.
                let row = try #require(
                    try await container.sql(
                        "SELECT ZDATE, ZDATE::text, ZUUID::text, ZFLAG::text, ZDECIMAL::text, pg_typeof(ZDECIMAL)::text, ZURI, ZI16 FROM ZSAMPLE WHERE Z_PK = ?",
                        [.integer(pk)]
                    ).first
                )
                #expect(row[0] == .double(date.timeIntervalSinceReferenceDate), "read back as seconds since 2001-01-01")
                #expect(row[1] == .text("2001-01-01 03:25:45.6789+00"))
                #expect(row[2] == .text("00112233-4455-6677-8899-aabbccddeeff"))
                #expect(row[3] == .text("true"))
                #expect(row[4] == .text("3.14159265358979323846264338327"))
                #expect(row[5] == .text("numeric"))
                #expect(row[6] == .text("https://example.com/a"))
                #expect(row[7] == .integer(-7))
                return
            }
            let row = try #require(
                try await container.sql(
                    "SELECT ZDATE, typeof(ZDATE), ZUUID, ZFLAG, ZDECIMAL, typeof(ZDECIMAL), ZURI, ZI16 FROM ZSAMPLE WHERE Z_PK = ?",
                    [.integer(pk)]
                ).first
            )
            // Core Data's conventions: seconds since 2001-01-01, sub-second precision kept.
            #expect(row[0] == .double(date.timeIntervalSinceReferenceDate))
            #expect(row[1] == .text("real"))
            #expect(row[2] == .blob(Data([0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])))
            #expect(row[3] == .integer(1))
            #expect(row[4] == .text("3.14159265358979323846264338327"))
            #expect(row[5] == .text("text"))
            #expect(row[6] == .text("https://example.com/a"))
            #expect(row[7] == .integer(-7))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func updatesRoundTrip(backend: TestBackend) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let sample = try context.insertObject(entityName: "Sample")
            sample[Sample.string] = "before"
            sample[Sample.i64] = 1
            try await context.save()
            sample[Sample.string] = nil
            sample[Sample.i64] = Int64.min
            sample[Sample.data] = Data([0, 1, 2])
            try await context.save()
            let fresh = container.newContext()
            let fetched = try #require(try await fresh.fetch(FetchRequest(entityName: "Sample")).first)
            #expect(fetched.value(forKey: "string") == .null)
            #expect(fetched[Sample.i64] == Int64.min)
            #expect(fetched[Sample.data] == Data([0, 1, 2]))
        }
    }
}
