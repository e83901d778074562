import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A store whose metadata is damaged is refused with an error that names the store, on
/// SQLite as on PostgreSQL, whether the metadata is read on its own or the store is opened.
@Suite("Damaged store metadata")
struct MetadataDamageTests {
    enum Damage: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// `Z_PLIST` overwritten with bytes that are no property list.
        case garbage
        /// `Z_PLIST` a property list, but not a dictionary.
        case notADictionary
        /// The `Z_METADATA` row deleted.
        case deletedRow

        var testDescription: String { rawValue }

        var code: StoreError.Code { .missingMetadata }

        var message: String {
            switch self {
            case .garbage: "is not a property list"
            case .notADictionary: "is not a dictionary"
            case .deletedRow: "Z_METADATA table is empty"
            }
        }
    }

    /// Runs `sql` (SQLite's spelling, `?` placeholders) on the store at `url`, writing.
    static func write(_ url: StoreURL, _ sql: String, _ arguments: [DatabaseValue] = []) async throws {
        try await writeRawSQL(url, sql, arguments)
    }

    static func damage(_ url: StoreURL, _ damage: Damage) async throws {
        switch damage {
        case .garbage:
            try await write(url, "UPDATE Z_METADATA SET Z_PLIST = ?", [.blob(Data("bplist00 but not really \u{1}\u{2}\u{3}".utf8))])
        case .notADictionary:
            let array = try PropertyListSerialization.data(fromPropertyList: ["a", "b"], format: .binary, options: 0)
            try await write(url, "UPDATE Z_METADATA SET Z_PLIST = ?", [.blob(array)])
        case .deletedRow:
            try await write(url, "DELETE FROM Z_METADATA")
        }
    }

    /// Expects `error` to be the damage's, naming the store.
    static func expect(_ error: StoreError?, _ damage: Damage, store url: StoreURL, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.code == damage.code, sourceLocation: sourceLocation)
        #expect(error?.message.contains(damage.message) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.store == url.description, "\(String(describing: error))", sourceLocation: sourceLocation)
        #expect(error?.description.hasPrefix("\(url.description): ") == true, sourceLocation: sourceLocation)
    }

    @Test("damaged metadata is refused naming the store", arguments: TestEngine.allCases, Damage.allCases)
    func damagedMetadata(engine: TestEngine, damage: Damage) async throws {
        let model = try LibraryModel.make()
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: model)
            try await Self.damage(url, damage)

            let read = await #expect(throws: StoreError.self) { try await PersistentStore.metadata(at: url) }
            Self.expect(read, damage, store: url)
            let opened = await #expect(throws: StoreError.self) {
                _ = try await PersistentContainer.open(model: model, store: url, logger: testLogger)
            }
            Self.expect(opened, damage, store: url)
        }
    }
}
