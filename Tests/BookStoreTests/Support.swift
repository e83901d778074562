import BookStoreTesting
import Foundation
import Logging
import PersistenceTesting
import Testing

@testable import BookStore
@testable import Persistence

/// A SQLite store's URL in `directory`.
func sqliteStoreURL(in directory: URL) -> StoreURL {
    .sqlite(directory.appendingPathComponent("bookstore.sqlite").path)
}
