/// Why fused steps must run one after the other after all, found while they ran: the
/// fused run's output is discarded and the steps run on their own (see ``MigrationPlan/Fusion``).
struct StepsNotFusable: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
