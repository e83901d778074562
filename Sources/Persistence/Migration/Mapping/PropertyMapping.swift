/// How one destination property gets its value: Core Data's `NSPropertyMapping`.
///
/// The value expression is evaluated for each source instance with `$source`,
/// `$destination`, `$manager`, `$entityMapping`, `$propertyMapping` and `$entityPolicy`
/// bound. A mapping without an expression leaves the property at its default.
///
/// ```swift
/// PropertyMapping(name: "price", valueExpression: try Expression(format: "$source.price * 1.04"))
/// PropertyMapping(name: "pages", valueExpression: try Expression(format:
///     #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PageToPage", $source.pages)"#))
/// ```
public struct PropertyMapping: Sendable, Hashable {
    /// The destination property's name.
    public var name: String
    /// The expression that computes the value; `nil` leaves the property at its default.
    public var valueExpression: Expression?
    /// The property mapping's user info, as the mapping file carries it, for a policy to read.
    public var userInfo: [String: AttributeValue]

    /// A mapping for the destination property `name`, computed by `valueExpression`.
    public init(name: String, valueExpression: Expression? = nil, userInfo: [String: AttributeValue] = [:]) {
        self.name = name
        self.valueExpression = valueExpression
        self.userInfo = userInfo
    }
}

extension Expression {
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", mapping, sources)`,
    /// the expression Core Data writes for a relationship mapping.
    public static func destinationInstances(forEntityMappingNamed mapping: String, sourceInstances: Expression) -> Expression {
        .functionCall(
            target: .variable("manager", keyPath: []),
            selector: MigrationManager.destinationInstancesSelector,
            arguments: [.constant(.string(mapping)), sourceInstances]
        )
    }

    /// The mapping name and source expression when this is a `destinationInstances…` call.
    var destinationInstancesCall: (mapping: String, sources: Expression)? {
        guard case .functionCall(.variable("manager", []), MigrationManager.destinationInstancesSelector, let arguments) = self,
            arguments.count == 2, case .constant(.string(let mapping)) = arguments[0]
        else { return nil }
        return (mapping, arguments[1])
    }

    /// The source key path when this is a plain `$source.<path>`.
    var sourceKeyPath: [String]? {
        guard case .variable("source", let path) = self, !path.isEmpty else { return nil }
        return path
    }
}
