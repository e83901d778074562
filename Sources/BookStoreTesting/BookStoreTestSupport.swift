import BookStore
import Foundation
import Logging
import PersistenceTesting

/// What the BookStore test targets share: where the package is, its models and seed
/// catalogue, temporary folders, and the built `bookstore` executable.
///
/// ```swift
/// let models = try BookStoreTestSupport.loadModels()
/// let (folder, cleanUp) = BookStoreTestSupport.temporaryDirectory()
/// defer { cleanUp() }
/// ```
public enum BookStoreTestSupport {
    /// The package root: Sources/BookStoreTesting/BookStoreTestSupport.swift → three levels up.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A logger that drops everything, for code under test that wants one.
    public static let quietLogger = Logger(label: "bookstore-tests") { _ in SwiftLogNoOpLogHandler() }

    /// BookStore's model versions and mappings from the package's `Migrations` folder.
    public static func loadModels() throws -> BookStoreModels {
        try BookStoreModels.load(from: packageRoot.appendingPathComponent("Migrations"))
    }

    /// The seed catalogue from the package's `Seeds` folder.
    public static func loadCatalogue() throws -> Catalogue {
        try Catalogue.load(from: packageRoot.appendingPathComponent("Seeds"))
    }

    /// A new temporary folder, and the clean-up that removes it.
    public static func temporaryDirectory() -> (URL, @Sendable () -> Void) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bookstore-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (directory, { try? FileManager.default.removeItem(at: directory) })
    }

    /// The built `bookstore` executable: beside the test bundle in the build products
    /// folder, or in `.build/debug`.
    public static func executable() throws -> URL {
        try BuiltCommand("bookstore").executable()
    }
}

// The names the tests use.

/// ``BookStoreTestSupport/quietLogger``.
public let quietLogger = BookStoreTestSupport.quietLogger
/// ``BookStoreTestSupport/packageRoot``.
public let packageRoot = BookStoreTestSupport.packageRoot

/// ``BookStoreTestSupport/loadModels()``.
public func loadModels() throws -> BookStoreModels { try BookStoreTestSupport.loadModels() }
/// ``BookStoreTestSupport/loadCatalogue()``.
public func loadCatalogue() throws -> Catalogue { try BookStoreTestSupport.loadCatalogue() }
/// ``BookStoreTestSupport/temporaryDirectory()``.
public func temporaryDirectory() -> (URL, @Sendable () -> Void) { BookStoreTestSupport.temporaryDirectory() }
