/// Placeholder until the manager lands; holds the selector names value expressions use.
open class MigrationManager: @unchecked Sendable {
    /// `destinationInstancesForEntityMappingNamed:sourceInstances:`
    public static let destinationInstancesSelector = "destinationInstancesForEntityMappingNamed:sourceInstances:"
    /// `sourceInstancesForEntityMappingNamed:destinationInstances:`
    public static let sourceInstancesSelector = "sourceInstancesForEntityMappingNamed:destinationInstances:"
}
