import BookStoreTesting
import PersistenceTesting
import Testing

@testable import BookStore
@testable import Persistence

/// What the plan fuses of BookStore's streamed steps 3 → 4 and 4 → 5, and what it keeps
/// apart, on each engine: variants of the steps that a fused pass would get wrong (it never
/// stores BookStore 4's publications) must run step by step, with the reason in the plan.
@Suite struct StepFusionTests {
    /// A change to one of the two steps, and what the plan must say of it: `nil` for
    /// fused, else a phrase of the reason.
    struct Variant: Sendable, CustomTestStringConvertible {
        let name: String
        let refusal: String?
        /// The engines that refuse it; the others fuse it.
        var engines: [TestEngine] = TestEngine.allCases
        let change: @Sendable (inout MappingModel, inout MappingModel, inout ManagedObjectModel) throws -> Void
        var testDescription: String { name }
    }

    static let variants: [Variant] = [
        Variant(name: "BookStore's own steps", refusal: nil) { _, _, _ in },
        Variant(name: "the synopsis from a function of the title", refusal: nil) { _, down, _ in
            try setAttribute("synopsis", of: "PublicationToPublication", in: &down, to: "uppercase:($source.title)")
        },
        Variant(name: "a page's text from its publication's title", refusal: "through Page's relationships") { _, down, _ in
            try setAttribute("text", of: "PageToPage", in: &down, to: "$source.publication.title")
        },
        Variant(name: "the synopsis from the publication's page count", refusal: "more of Publication than its stored attributes") { _, down, _ in
            try setAttribute("synopsis", of: "PublicationToPublication", in: &down, to: "$source.pages.@count")
        },
        Variant(name: "publications filtered in the first step", refusal: "filters its source") { up, _, _ in
            let index = try #require(up.entityMappings.firstIndex { $0.name == "PublicationToPublication" })
            up.entityMappings[index].sourceFilter = try Predicate(format: "price > 1")
        },
        Variant(name: "the price doubled in the second step", refusal: "PostgreSQL stores rounded", engines: [.postgres]) { _, down, _ in
            try setAttribute("price", of: "PublicationToPublication", in: &down, to: "$source.price * 2")
        },
        Variant(name: "titles unique in BookStore 4", refusal: "uniqueness constraints") { _, _, v4 in
            v4 = try ManagedObjectModel(
                name: v4.name,
                versionIdentifier: v4.versionIdentifier,
                entities: v4.entities.map { entity in
                    var entity = entity
                    if entity.name == "Publication" { entity.uniquenessConstraints = [["title"]] }
                    return entity
                }
            )
        },
    ]

    @Test(arguments: variants)
    func thePlanFusesOnlyWhatOnePassGetsRight(variant: Variant) throws {
        let models = try loadModels()
        // Fusion carries whole objects: the chain whose hooks do not declare their values.
        let migrator = try BookStoreMigration.migrator(models: models, hooks: .wholeObjects, logger: quietLogger)
        let (v3, v5) = (try models.model(version: 3), try models.model(version: 5))
        var v4 = try models.model(version: 4)
        for engine in TestEngine.allCases {
            let dialect: any SQLDialect = engine == .sqlite ? SQLiteDialect() : PostgresDialect()
            let upstream = try migrator.step(from: v3, to: v4, dialect: dialect)
            let downstream = try migrator.step(from: v4, to: v5, dialect: dialect)
            var (up, down) = (upstream.mappingModels[0], downstream.mappingModels[0])
            try variant.change(&up, &down, &v4)
            let fusion = StepFusion(
                upstream: .init(source: v3, destination: v4, mappingModels: [up], managerType: upstream.managerType, work: upstream.work),
                downstream: .init(source: v4, destination: v5, mappingModels: [down], managerType: downstream.managerType, work: downstream.work),
                policies: migrator.chain.policies,
                dialect: dialect,
                sourceLayout: nil,
                logger: quietLogger
            ).fusion()
            if let refusal = variant.refusal, variant.engines.contains(engine) {
                #expect(!fusion.isFused && fusion.description.contains(refusal), "\(dialect.engineName): \(fusion)")
            } else {
                #expect(
                    fusion
                        == .fused(carried: [
                            .init(upstream: "PublicationToPublication", downstream: "PublicationToPublication", entityName: "Publication")
                        ]),
                    "\(dialect.engineName): \(fusion)"
                )
            }
        }
    }

    static func setAttribute(_ name: String, of mapping: String, in model: inout MappingModel, to format: String) throws {
        let index = try #require(model.entityMappings.firstIndex { $0.name == mapping })
        let expression = try Expression(format: format)
        if let attribute = model.entityMappings[index].attributeMappings.firstIndex(where: { $0.name == name }) {
            model.entityMappings[index].attributeMappings[attribute] = PropertyMapping(name: name, valueExpression: expression)
        } else {
            model.entityMappings[index].attributeMappings.append(PropertyMapping(name: name, valueExpression: expression))
        }
    }
}
