import Foundation
import Persistence

/// BookStore's model versions and mapping models, loaded from
/// `Migrations/BookStore.xcdatamodeld` and `Migrations/Mappings`.
///
/// ```swift
/// let models = try BookStoreModels.load()
/// models.current.name          // "BookStore 5"
/// try models.model(version: 1) // BookStore
/// ```
public struct BookStoreModels: Sendable {
    /// The five versions of `Migrations/BookStore.xcdatamodeld`, oldest first.
    public let versions: VersionedModel
    /// The mapping models of `Migrations/Mappings`.
    public let mappingModels: [MappingModel]

    /// Models already read (``load(from:)`` reads them from the `Migrations` folder).
    public init(versions: VersionedModel, mappingModels: [MappingModel] = []) {
        self.versions = versions
        self.mappingModels = mappingModels
    }

    /// Loads the models from `directory` (the `Migrations` folder), or finds it with
    /// ``ResourceLocator``.
    public static func load(from directory: URL? = nil) throws -> BookStoreModels {
        let migrations = try directory ?? ResourceLocator.directory(named: "Migrations", containing: "BookStore.xcdatamodeld")
        let versions = try VersionedModel(contentsOf: migrations.appendingPathComponent("BookStore.xcdatamodeld"))
        let mappings = try MappingModel.load(directory: migrations.appendingPathComponent("Mappings"), versions: versions)
        return BookStoreModels(versions: versions, mappingModels: mappings)
    }

    /// The version the app writes: `BookStore 5`.
    public var current: ManagedObjectModel { versions.current }

    /// The model of version `number` (1 is `BookStore`, 2 is `BookStore 2`, …).
    public func model(version number: Int) throws -> ManagedObjectModel {
        let name = number == 1 ? "BookStore" : "BookStore \(number)"
        guard let model = versions.version(named: name) else {
            throw BookStoreError(
                "there is no model version \(number)",
                hint: "known versions: \(versions.versions.map(\.name).joined(separator: ", "))"
            )
        }
        return model
    }

    /// The version number of a model of this chain (`BookStore 3` → 3).
    public func versionNumber(of model: ManagedObjectModel) -> Int? {
        versions.versions.firstIndex { $0.name == model.name }.map { $0 + 1 }
    }
}

/// An error of the BookStore domain, with what to do about it.
public struct BookStoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, naming the store, file or version.
    public var message: String
    /// What to do about it.
    public var hint: String?

    /// An error saying `message`, and `hint` what to do.
    public init(_ message: String, hint: String? = nil) {
        self.message = message
        self.hint = hint
    }

    /// The message and the hint, as one line for a terminal.
    public var description: String {
        hint.map { "\(message). " + $0.prefix(1).uppercased() + $0.dropFirst() } ?? message
    }
}
