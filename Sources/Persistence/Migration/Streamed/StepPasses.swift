/// The other mapping models of a step, as far as a check of one of them knows them.
///
/// Core Data runs a step of several mapping models as passes into one destination store.
/// Here a later pass may look up what an earlier one made
/// (`FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "UserToUser", …)`
/// in `Part2` naming a mapping of `Part1`), so entity mapping names must be unique across
/// the step, and a check resolves a look-up in the model itself first, then in these.
enum StepPasses: Sendable {
    /// The mapping model is its step's only one: look-ups name its own entity mappings.
    case alone
    /// The step's other mapping models are not known yet: a file read in a folder before
    /// the others. A look-up naming none of the model's own entity mappings is left for the
    /// check that knows them.
    case unknown
    /// The step's other mapping models, in an order still to be chosen (the files of a
    /// folder that map the same versions, before a chain orders them).
    case among([MappingModel])
    /// The step's mapping models that run before this one, in order (none for its first).
    case after([MappingModel])

    /// The other mapping models known.
    var others: [MappingModel] {
        switch self {
        case .alone, .unknown: []
        case .among(let models), .after(let models): models
        }
    }

    /// The known entity mapping named `name`, and the mapping model it belongs to.
    func entityMapping(named name: String) -> (mapping: EntityMapping, model: MappingModel)? {
        for model in others {
            if let mapping = model.entityMapping(named: name) { return (mapping, model) }
        }
        return nil
    }

    /// How the step's mapping models are spoken of in messages.
    var othersDescription: String {
        switch self {
        case .alone, .unknown, .among: "another mapping model of the step"
        case .after: "an earlier mapping model of the step"
        }
    }
}
