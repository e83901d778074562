import Logging

/// A model and the store it is opened on, handing out contexts: Core Data's
/// `NSPersistentContainer`.
///
/// ```swift
/// let container = try await PersistentContainer.open(
///     model: versions.current, store: try StoreURL("sqlite://./bookstore.sqlite"),
///     options: .createIfMissing, logger: logger)
/// let context = container.newContext()
/// ```
public final class PersistentContainer: Sendable {
    /// The store the container's contexts fetch from and save to.
    public let store: PersistentStore
    let logger: Logger

    /// A container over a store already open; ``PersistentContainer/open(model:store:options:logger:)`` opens one too.
    public init(store: PersistentStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Opens (or creates) the store at `url` for `model`.
    ///
    /// - Throws: ``StoreError``; see ``PersistentStore/open(_:model:options:logger:)``.
    public static func open(
        model: ManagedObjectModel,
        store url: StoreURL,
        options: PersistentStore.Options = .existingOnly,
        logger: Logger
    ) async throws -> PersistentContainer {
        let store = try await PersistentStore.open(url, model: model, options: options, logger: logger)
        return PersistentContainer(store: store, logger: logger)
    }

    /// The model the store was opened with.
    public var model: ManagedObjectModel { store.model }

    /// A new, empty context over the store.
    public func newContext() -> ManagedObjectContext {
        ManagedObjectContext(store: store, logger: logger)
    }
}
