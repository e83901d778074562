/// What the earlier mapping models of a streamed step leave for its later ones: their
/// entity mappings and where the associations they made live, so that a later pass's
/// look-up (`destinationInstancesForEntityMappingNamed:` naming a mapping of an earlier
/// pass) finds the instances made before it.
///
/// The identity pairs are bits held here; the other pairs stay in the association table
/// of the step's output, which the run drops once the step is complete.
struct StepAssociations: Sendable {
    /// The entity mappings of the passes run so far, in order.
    var entityMappings: [EntityMapping] = []
    /// Their association keys, by entity mapping name (unique across the step).
    var keys: [String: AssociationIndex.MappingKeys] = [:]

    func entityMapping(named name: String) -> EntityMapping? {
        entityMappings.first { $0.name == name }
    }
}
