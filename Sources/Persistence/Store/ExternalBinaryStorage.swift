import Foundation

/// Binary attributes that Core Data may keep outside a SQLite store ("Allows External
/// Storage"), as a store of Apple's holds them: each cell starts with a byte saying where the
/// bytes are — `1`: in the rest of the cell; `2`: in a file beside the store, named by the
/// UUID in the rest of the cell, in `.<store file name>_SUPPORT/_EXTERNAL_DATA/`.
///
/// A store of Apple's is read so, and written so (a value goes into its cell behind a `1`,
/// as Core Data writes a small one), so the app that wrote it reads it back. Stores of this
/// framework keep every value in its cell as it is.
///
/// ```swift
/// let storage = ExternalBinaryStorage(storePath: "/data/Photos.sqlite")
/// storage.folder.path // "/data/.Photos_SUPPORT/_EXTERNAL_DATA"
/// ```
public struct ExternalBinaryStorage: Sendable, Hashable {
    /// Where the files are.
    public let folder: URL

    /// The storage beside the SQLite store at `storePath`.
    public init(storePath: String) {
        let store = URL(fileURLWithPath: storePath)
        let name = store.deletingPathExtension().lastPathComponent
        folder = store.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT").appendingPathComponent("_EXTERNAL_DATA")
    }

    /// The bytes a cell holds or names.
    ///
    /// - Throws: ``StoreError/Code/objectNotFound`` naming the file a cell names when it is not
    ///   there (or cannot be read); ``StoreError/Code/database`` for a cell in neither form.
    public func value(of cell: DatabaseValue, store: StoreURL) throws(StoreError) -> AttributeValue {
        guard case .blob(let data) = cell, let marker = data.first else { return ValueCoding.attributeValue(cell, type: .binary) }
        let rest = data.dropFirst()
        switch marker {
        case 1:
            return .binary(Data(rest))
        case 2:
            // The UUID's text, NUL-terminated.
            let name = String(decoding: rest.prefix { $0 != 0 }, as: UTF8.self)
            let file = folder.appendingPathComponent(name)
            guard UUID(uuidString: name) != nil else {
                throw StoreError(
                    .database,
                    "a cell of an externally stored attribute names '\(name)', which is not a file name Core Data gives",
                    hint: "the store is damaged",
                    store: store.description
                )
            }
            guard let bytes = FileManager.default.contents(atPath: file.path) else {
                throw StoreError(
                    .objectNotFound,
                    "the file \(file.path), which holds an externally stored value of the store, is missing or cannot be read",
                    hint:
                        "copy the store with its \(folder.deletingLastPathComponent().lastPathComponent) folder, which Core Data keeps beside it; nothing was changed",
                    store: store.description
                )
            }
            return .binary(bytes)
        default:
            throw StoreError(
                .database,
                "a cell of an externally stored attribute starts with the byte \(marker), neither 1 (the bytes follow) nor 2 (a file beside the store)",
                hint: "the store is damaged",
                store: store.description
            )
        }
    }

    /// The cell Core Data reads `value` from: its bytes behind a `1`.
    public func cell(for value: DatabaseValue) -> DatabaseValue {
        guard case .blob(let data) = value else { return value }
        return .blob(Data([1]) + data)
    }
}
