/// Data a migration step will drop or refuse, found from its models and mapping models
/// before it runs: what `migrate --plan` and `persistence validate` warn about.
///
/// ```swift
/// for warning in plan.steps[0].dataLossWarnings { print(warning) }
/// // Book.author is not carried: no property mapping of BookToBook reads it — 1234 rows have a value
/// ```
public struct DataLossWarning: Sendable, Hashable, CustomStringConvertible {
    /// What is lost, with where.
    public enum Kind: Sendable, Hashable {
        /// No entity mapping of the step migrates the rows of exactly this entity (a mapping
        /// of its parent does not take them), or a `remove` mapping drops them.
        case entityRemoved(entity: String)
        /// No property mapping of the entity's mappings reads the attribute.
        case attributeNotCarried(entity: String, attribute: String, entityMapping: String)
        /// Neither side's mapping reads the relationship or its inverse (`Entity.name`): their links are dropped.
        case relationshipNotCarried(entity: String, relationship: String, entityMapping: String, inverse: String?)
        /// A to-many relationship fills a to-one: objects with several keep one.
        case toManyNarrowed(entity: String, relationship: String, entityMapping: String, into: String)
        /// Some values of the source attribute do not fit the destination attribute, `because`;
        /// the step's validation refuses them and the step fails, leaving the store as it was.
        case valueMayNotFit(entity: String, attribute: String, entityMapping: String, into: String, because: String)
        /// The entity mapping's source filter leaves out the rows it does not match.
        case sourceFiltered(entity: String, entityMapping: String, filter: String)
    }

    /// What is dropped or refused, and where.
    public let kind: Kind
    /// What may carry the data in a way the check cannot see — the entity mapping's policy
    /// (Swift code), or another entity mapping that takes the rows a source filter leaves
    /// out: then the warning is a note.
    public let mayBeCarriedBy: String?
    /// The source rows concerned, when the plan was counted on a store (see
    /// ``MigrationPlan/countingAffectedRows(in:logger:)``); `nil` when not counted.
    public internal(set) var affectedRows: Int?
    /// How the rows concerned are counted on a store at the step's source version.
    let counting: RowCount

    init(_ kind: Kind, mayBeCarriedBy carrier: String? = nil, counting: RowCount) {
        self.kind = kind
        self.mayBeCarriedBy = carrier
        self.counting = counting
    }

    /// Whether the data is certainly lost (or refused): nothing else could carry it.
    public var isCertain: Bool { mayBeCarriedBy == nil }

    /// Whether the step drops the data rather than refusing it: a value that does not fit
    /// fails the step (nothing is lost); everything else is left behind.
    public var drops: Bool {
        if case .valueMayNotFit = kind { false } else { true }
    }

    /// Whether the data is dropped for certain: what a migration back runs only when told
    /// to accept it.
    public var dropsForCertain: Bool { isCertain && drops }

    /// The warning in a sentence, with the carrier that may take it and the counted rows when known.
    public var description: String {
        var text: String
        var rows: String
        switch kind {
        case .entityRemoved(let entity):
            text = "the entity \(entity) is removed: no entity mapping of the step migrates its rows"
            rows = "rows"
        case .attributeNotCarried(let entity, let attribute, let mapping):
            text = "\(entity).\(attribute) is not carried: no property mapping of \(mapping) reads it"
            rows = "rows have a value"
        case .relationshipNotCarried(let entity, let relationship, let mapping, let inverse?):
            text =
                "\(entity).\(relationship) and its inverse \(inverse) are not carried: no relationship mapping of \(mapping) or of the inverse's entity reads either"
            rows = "links"
        case .relationshipNotCarried(let entity, let relationship, let mapping, nil):
            text = "\(entity).\(relationship) is not carried: no relationship mapping of \(mapping) reads it"
            rows = "links"
        case .toManyNarrowed(let entity, let relationship, let mapping, let into):
            text = "\(entity).\(relationship) is to-many but fills the to-one \(into) in \(mapping): objects with several keep one"
            rows = "rows have more than one"
        case .valueMayNotFit(let entity, let attribute, let mapping, let into, let because):
            text =
                "\(entity).\(attribute) fills \(into) in \(mapping), but \(because): validation refuses such rows and the step fails, leaving the store as it was"
            rows = "rows do not fit"
        case .sourceFiltered(let entity, let mapping, let filter):
            text = "\(mapping) migrates only the \(entity) rows matching its source filter '\(filter)'; the others are dropped"
            rows = "rows do not match"
        }
        if let mayBeCarriedBy { text += " (unless \(mayBeCarriedBy) carries it)" }
        if let affectedRows { text += " — \(affectedRows) \(rows)" }
        return text
    }
}
