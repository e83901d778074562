import Foundation
import Testing

@testable import Persistence

/// Paths and helpers shared by the model tests.
enum ModelFixtures {
    /// The package root: this file is `<root>/Tests/PersistenceTests/ModelTestSupport.swift`.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let bookStore = repositoryRoot.appendingPathComponent("Migrations/BookStore.xcdatamodeld")

    /// Real Xcode-written models, with the stores Core Data wrote for them (`Tests/Fixtures/CoreData/ColourPosts`).
    static let colourPosts =
        repositoryRoot
        .appendingPathComponent("Tests/Fixtures/CoreData/ColourPosts/models/CoreDataMigration_Example.xcdatamodeld")

    static let file = "Test.xcdatamodel/contents"

    /// A `contents` document around `body`. The header takes lines 1–2, so the first
    /// line of `body` is line 3 of the document.
    static func xml(_ body: String, identifier: String = "") -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="\(identifier)">
            \(body)
            </model>
            """.utf8
        )
    }

    static func model(_ body: String, identifier: String = "") throws -> ManagedObjectModel {
        try ManagedObjectModel(xml: xml(body, identifier: identifier), name: "Test", file: file)
    }

    /// The error parsing `body` throws, or `nil` if it parses.
    static func error(_ body: String) -> ModelError? {
        do throws(ModelError) {
            _ = try ManagedObjectModel(xml: xml(body), name: "Test", file: file)
            return nil
        } catch {
            return error
        }
    }

    /// The error building a model from descriptions throws, or `nil` if it is valid.
    static func error(_ entities: [EntityDescription]) -> ModelError? {
        do throws(ModelError) {
            _ = try ManagedObjectModel(name: "Test", entities: entities)
            return nil
        } catch {
            return error
        }
    }

    static func versionedModelError(at url: URL) -> ModelError? {
        do throws(ModelError) {
            _ = try VersionedModel(contentsOf: url)
            return nil
        } catch {
            return error
        }
    }

    /// A fresh empty folder under the temporary directory, inside one root per test process
    /// that goes when the process exits: a test that does not remove its folder leaves
    /// nothing behind.
    static func temporaryFolder() throws -> URL {
        let url = temporaryRoot.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static let temporaryRoot: URL = {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ModelTests-\(UUID().uuidString)")
        atexit { try? FileManager.default.removeItem(at: ModelFixtures.temporaryRoot) }
        return root
    }()
}
