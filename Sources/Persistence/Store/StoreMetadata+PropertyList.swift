import Foundation

extension StoreMetadata {
    /// The metadata as Core Data writes `Z_METADATA.Z_PLIST`: a binary property list.
    public func propertyListData() throws -> Data {
        var dictionary: [String: Any] = additional.mapValues(\.foundationValue)
        dictionary[Self.versionHashesKey] = versionHashes
        dictionary[Self.versionIdentifiersKey] = versionIdentifiers
        dictionary[Self.storeUUIDKey] = storeUUID
        dictionary[Self.storeTypeKey] = storeType
        if let modelVersionName { dictionary[Self.modelVersionNameKey] = modelVersionName }
        return try PropertyListSerialization.data(fromPropertyList: dictionary, format: .binary, options: 0)
    }

    /// Reads `Z_METADATA.Z_PLIST`; `uuid` is the `Z_UUID` column, used when the plist has none.
    public init(propertyListData data: Data, uuid: String?) throws(StoreError) {
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw StoreError(
                .missingMetadata,
                "the store's metadata (Z_METADATA.Z_PLIST) is not a property list",
                hint: "the store is damaged; restore it from a backup"
            )
        }
        guard let dictionary = PropertyListValue(foundation: object), case .dictionary(var values) = dictionary else {
            throw StoreError(
                .missingMetadata,
                "the store's metadata (Z_METADATA.Z_PLIST) is not a dictionary",
                hint: "the store is damaged; restore it from a backup"
            )
        }
        var hashes: [String: Data] = [:]
        if case .dictionary(let entries)? = values.removeValue(forKey: Self.versionHashesKey) {
            for (entity, value) in entries {
                if case .data(let hash) = value { hashes[entity] = hash }
            }
        }
        var identifiers: [String] = []
        if case .array(let entries)? = values.removeValue(forKey: Self.versionIdentifiersKey) {
            identifiers = entries.compactMap { if case .string(let s) = $0 { s } else { nil } }
        }
        var storeUUID = uuid ?? ""
        if case .string(let value)? = values.removeValue(forKey: Self.storeUUIDKey) { storeUUID = value }
        var storeType = "SQLite"
        if case .string(let value)? = values.removeValue(forKey: Self.storeTypeKey) { storeType = value }
        var versionName: String?
        if case .string(let value)? = values.removeValue(forKey: Self.modelVersionNameKey) { versionName = value }
        self.init(
            versionHashes: hashes,
            versionIdentifiers: identifiers,
            storeUUID: storeUUID,
            storeType: storeType,
            modelVersionName: versionName,
            additional: values
        )
    }
}
