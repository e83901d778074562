extension VersionedModel {
    /// Why a store is not to be used with these versions, when a locked version changed
    /// (``lockChanges``): for a store a locked version wrote as it shipped, which version and
    /// what changed in its file since; for any other store, what changed. `nil` when no
    /// locked version changed.
    func lockRefusal(storeMetadata metadata: StoreMetadata) -> (writtenAsShipped: Bool, message: String, hint: String)? {
        guard let lock, !lockChanges.isEmpty else { return nil }
        let shippedVersions = lock.versions(matching: metadata)
        if let change = lockChanges.first(where: { shippedVersions.contains($0.version) }) {
            let shipped = change.version
            return (
                true,
                "the store was written by '\(shipped)' as it shipped; the model file for '\(shipped)' has changed since: \(change.differences.joined(separator: "; "))",
                "restore '\(shipped)' as it shipped (version control has it) and make the change in a new model version; the store was not changed"
            )
        }
        return (
            false,
            "the model's version lock says \(lockChanges.map(\.description).joined(separator: "; also "))",
            "restore the locked version as it shipped (version control has it) and make the change in a new model version; lock that when it ships. The store was not changed"
        )
    }
}
