import Foundation
import Testing

@testable import Persistence

/// The engines' codes for faults around a store map to what the user is told, wherever in
/// an error's chain they are; a cancellation and the framework's own errors are no such
/// fault. (The faults themselves, for real, are in `StorageFaultTests` and `FullDiskTests`.)
@Suite("storage faults from the engines' codes")
struct StorageFaultClassificationTests {
    @Test(arguments: [
        (Int32(13), StorageFault.diskFull), (8, .notWritable), (8 | (3 << 8), .notWritable), (11, .damaged), (26, .damaged),
        (10, .inputOutput), (10 | (4 << 8), .inputOutput), (14, .cannotOpen), (4874, .diskFull),
    ])
    func sqliteResultCodes(code: Int32, fault: StorageFault) {
        #expect(StorageFault(DatabaseError(resultCode: code, message: "m")) == fault)
    }

    /// A disk full while SQLite grows its shared-memory file was said as "disk I/O error".
    @Test func anIOErrorIsWhatItsErrnoSays() {
        #expect(StorageFault(DatabaseError(resultCode: 10 | (3 << 8), message: "disk I/O error", systemErrorCode: ENOSPC)) == .diskFull)
        #expect(StorageFault(DatabaseError(resultCode: 10 | (3 << 8), message: "disk I/O error", systemErrorCode: EIO)) == .inputOutput)
    }

    @Test(arguments: [
        ("53100", StorageFault.diskFull), ("53200", .serverResources), ("53300", .serverResources), ("57P01", .serverUnavailable),
        ("57P02", .serverUnavailable), ("57P03", .serverUnavailable), ("58030", .inputOutput), ("58P01", .inputOutput), ("XX001", .damaged),
    ])
    func postgresStates(state: String, fault: StorageFault) {
        #expect(StorageFault(DatabaseError(resultCode: 0, message: "m", sqlState: state)) == fault)
    }

    @Test func aCancellationAConstraintAndASyntaxErrorAreNoFault() {
        #expect(StorageFault(DatabaseError(resultCode: 0, message: "canceling statement", sqlState: "57014")) == nil)
        #expect(StorageFault(DatabaseError(resultCode: 9, message: "interrupted")) == nil)
        #expect(StorageFault(DatabaseError(resultCode: 19, message: "constraint")) == nil)
        #expect(StorageFault(DatabaseError(resultCode: 0, message: "syntax", sqlState: "42601")) == nil)
        #expect(StorageFault(MigrationError(.cannotInferMapping, "no")) == nil)
    }

    @Test func foundItsWayThroughTheErrorsAroundIt() {
        let engine = DatabaseError(resultCode: 13, message: "database or disk is full", sql: "COMMIT")
        let store = StoreError(.database, "the save failed and was rolled back", underlying: engine)
        let migration = MigrationError(.store, "writing migrated objects failed", underlying: store)
        #expect(StorageFault(MigrationError(.store, "step failed", underlying: migration)) == .diskFull)
        #expect(StorageFault(SystemCallError("mkdir", code: ENOSPC)) == .diskFull)
        #expect(StorageFault(SystemCallError("open", code: EROFS)) == .notWritable)
        #expect(StorageFault(NSError(domain: NSCocoaErrorDomain, code: NSFileWriteOutOfSpaceError)) == .diskFull)
        #expect(StorageFault(StoreError(.notWritable, "the store file cannot be written")) == .notWritable)
    }

    @Test func theMigrationsErrorSaysWhatWhereAndWhatToDoWithoutRawText() throws {
        let engine = DatabaseError(resultCode: 13, message: "database or disk is full", sql: "COMMIT")
        let wrapped = MigrationError(
            .store,
            "PublicationToPublication: writing migrated objects failed",
            underlying: StoreError(.database, "the save failed", underlying: engine)
        )
        let error = try #require(
            MigrationError.storage(
                wrapped,
                doing: "step BookStore 3 → BookStore 4 failed",
                store: .sqlite("/stores/bookstore.sqlite"),
                afterwards: "the store was not changed"
            )
        )
        #expect(error.code == .storage)
        #expect(
            error.description
                == "sqlite:///stores/bookstore.sqlite: the disk is full: step BookStore 3 → BookStore 4 failed (database error 13: database or disk is full — while executing `COMMIT`). Free space on the disk that holds the store (a migration writes the new store beside the old one) and try again; the store was not changed"
        )
        let cocoa = NSError(domain: NSCocoaErrorDomain, code: NSFileWriteOutOfSpaceError)
        let fromCocoa = try #require(MigrationError.storage(cocoa, doing: nil, store: .sqlite("/s.sqlite"), afterwards: "the store was not changed"))
        #expect(!fromCocoa.description.contains("NSCocoaErrorDomain"), "\(fromCocoa)")
        #expect(!fromCocoa.description.contains("Code="), "\(fromCocoa)")
    }
}
