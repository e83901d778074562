import Testing

@testable import Persistence

final class RegisteredMarkerPolicy: EntityMigrationPolicy, @unchecked Sendable {}

@Suite struct MigrationPoliciesTests {
    @Test func aPolicyTypeGivenAsAValueMakesThatType() {
        // A policy chosen at run time, e.g. a failing variant for a test, comes as a
        // value of the base class's metatype; the factory must still make the subclass.
        let type: EntityMigrationPolicy.Type = RegisteredMarkerPolicy.self
        var policies = MigrationPolicies()
        policies.register(type, as: "MarkerPolicy")
        policies.register(type)
        #expect(policies.names == ["MarkerPolicy", "RegisteredMarkerPolicy"])
        #expect(policies.makePolicy(named: "MarkerPolicy") is RegisteredMarkerPolicy)
        #expect(policies.makePolicy(named: "RegisteredMarkerPolicy") is RegisteredMarkerPolicy)
        #expect(policies.makePolicy(named: "Module.RegisteredMarkerPolicy") is RegisteredMarkerPolicy)
    }

    @Test func aPolicyTypeGivenStaticallyMakesThatType() {
        var policies = MigrationPolicies()
        policies.register(RegisteredMarkerPolicy.self)
        #expect(policies.makePolicy(named: "RegisteredMarkerPolicy") is RegisteredMarkerPolicy)
        #expect(policies.makePolicy(named: "Unknown") == nil)
    }
}
