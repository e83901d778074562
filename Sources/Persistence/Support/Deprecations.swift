/// Public names that moved, kept for one release so that code written against the previous
/// one compiles with a warning naming the new spelling (see CHANGELOG.md).

/// The sort descriptor of a fetch request.
@available(*, deprecated, renamed: "FetchRequest.SortDescriptor", message: "FetchRequest.SortDescriptor keeps clear of Foundation's SortDescriptor")
public typealias SortDescriptor = FetchRequest.SortDescriptor

extension EntityMapping {
    /// An entity mapping whose user info holds strings only, as before user info kept
    /// numbers and Booleans.
    /// (Disfavoured: a literal dictionary takes the current initialiser.)
    @available(*, deprecated, message: "pass userInfo as [String: AttributeValue]; a string literal is an AttributeValue")
    @_disfavoredOverload
    public init(
        name: String,
        type: MappingType,
        sourceEntityName: String?,
        destinationEntityName: String?,
        sourceFilter: Predicate? = nil,
        attributeMappings: [PropertyMapping] = [],
        relationshipMappings: [PropertyMapping] = [],
        policyName: String? = nil,
        userInfo: [String: String]
    ) {
        self.init(
            name: name,
            type: type,
            sourceEntityName: sourceEntityName,
            destinationEntityName: destinationEntityName,
            sourceFilter: sourceFilter,
            attributeMappings: attributeMappings,
            relationshipMappings: relationshipMappings,
            policyName: policyName,
            userInfo: userInfo.mapValues(AttributeValue.string)
        )
    }
}

extension PropertyMapping {
    /// A property mapping whose user info holds strings only.
    /// (Disfavoured: a literal dictionary takes the current initialiser.)
    @available(*, deprecated, message: "pass userInfo as [String: AttributeValue]; a string literal is an AttributeValue")
    @_disfavoredOverload
    public init(name: String, valueExpression: Expression? = nil, userInfo: [String: String]) {
        self.init(name: name, valueExpression: valueExpression, userInfo: userInfo.mapValues(AttributeValue.string))
    }
}
