extension MigrationManager {
    /// Before a batch of the relationship stage: loads what the default
    /// `createRelationships` will ask for one row at a time — the objects the sources'
    /// relationships point at (to-many ones kept as a foreign key), and those objects'
    /// destinations in the association —
    /// with a few queries for the whole batch. The lookups then find them in memory instead
    /// of asking the store once per row, which on a database server is a round trip each.
    ///
    /// Only a cache: what it did not load is still looked up as before, and it is dropped
    /// with the batch (``flushBatch()``).
    func prefetchRelationships(of sources: [ManagedObject], entity: EntityDescription) async throws {
        var related: [String: Set<Int64>] = [:]
        for relationship in sourceModel.relationships(of: entity) {
            let ids =
                relationship.isToMany
                ? try await sourceContext.prefetchDestinations(of: sources, key: relationship.name).map(\.objectID)
                : sources.compactMap { $0.destinationID(forKey: relationship.name) }
            for id in ids {
                if let key = id.primaryKey { related[id.rootEntityName, default: []].insert(key) }
            }
        }
        guard !related.isEmpty, let associations = withRun(\.associations) else { return }
        var cache: [String: [Int64: [ManagedObject]]] = [:]
        for (root, keys) in related {
            let keys = Array(keys)
            _ = try await sourceContext.objects(rootEntityName: root, primaryKeys: keys)
            // The entity mappings that made destinations from these objects, the step's earlier passes' too.
            for mapping in mappingModel.entityMappings + (configuration.stepAssociations?.entityMappings ?? []) {
                guard let sourceName = mapping.sourceEntityName, let sourceEntity = sourceModel.entity(named: sourceName),
                    sourceModel.rootEntity(of: sourceEntity).name == root,
                    let destinationName = mapping.destinationEntityName, let destinationEntity = destinationModel.entity(named: destinationName)
                else { continue }
                let pairs = try await associations.destinations(mapping: mapping.name, sources: keys)
                let objects = try await destinationContext.objects(
                    rootEntityName: destinationModel.rootEntity(of: destinationEntity).name,
                    primaryKeys: Array(Set(pairs.values.joined()))
                )
                var found: [Int64: [ManagedObject]] = [:]
                for key in keys { found[key] = (pairs[key] ?? []).compactMap { objects[$0] } }
                cache[mapping.name, default: [:]].merge(found) { $1 }
            }
        }
        updateRun { $0.batch.prefetchedDestinations = cache }
    }
}
