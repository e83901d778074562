import Foundation
import Testing

@testable import Persistence

/// Core Data's lightweight rules, as `MappingModel.inferred(from:to:)` applies them.
@Suite struct MappingInferenceTests {
    func bookStore() throws -> VersionedModel { try VersionedModel(contentsOf: ModelFixtures.bookStore) }

    @Test func addingAnOptionalAttributeMapsEveryOtherPropertyFromTheSource() throws {
        let models = try bookStore()
        let mapping = try MappingModel.inferred(from: models.version(named: "BookStore")!, to: models.version(named: "BookStore 2")!)
        #expect(mapping.isInferred)
        #expect(mapping.entityMappings.map(\.name) == ["BookToBook", "PageToPage"])
        let book = try #require(mapping.entityMapping(named: "BookToBook"))
        #expect(book.type == .transform)
        #expect(book.propertyMapping(named: "title")?.valueExpression == .variable("source", keyPath: ["title"]))
        #expect(book.propertyMapping(named: "author")?.valueExpression == nil)
        #expect(
            book.propertyMapping(named: "pages")?.valueExpression
                == .destinationInstances(forEntityMappingNamed: "PageToPage", sourceInstances: .variable("source", keyPath: ["pages"]))
        )
        #expect(mapping.entityMapping(named: "PageToPage")?.type == .copy)
    }

    @Test func renamesFollowRenamingIdentifiersAcrossSeveralVersions() throws {
        let models = try bookStore()
        for source in ["BookStore", "BookStore 2"] {
            let mapping = try MappingModel.inferred(from: models.version(named: source)!, to: models.version(named: "BookStore 3")!)
            let publication = try #require(mapping.entityMapping(named: "BookToPublication"), "from \(source)")
            #expect(publication.sourceEntityName == "Book")
            #expect(publication.destinationEntityName == "Publication")
            let page = try #require(mapping.entityMapping(named: "PageToPage"))
            #expect(page.type == .transform)
            #expect(
                page.propertyMapping(named: "publication")?.valueExpression
                    == .destinationInstances(forEntityMappingNamed: "BookToPublication", sourceInstances: .variable("source", keyPath: ["book"]))
            )
            #expect(!mapping.entityMappings.contains { $0.type == .remove || $0.type == .add })
        }
    }

    func pair(_ source: String, _ destination: String) throws -> (ManagedObjectModel, ManagedObjectModel) {
        (try ShopModels.model("A", "1", source), try ShopModels.model("B", "2", destination))
    }

    @Test func addedAndRemovedEntitiesGetAddAndRemoveMappings() throws {
        let (a, b) = try pair(
            #"<entity name="Old"><attribute name="x" optional="YES" attributeType="String"/></entity><entity name="Kept"><attribute name="y" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="New"><attribute name="z" optional="YES" attributeType="String"/></entity><entity name="Kept"><attribute name="y" optional="YES" attributeType="String"/></entity>"#
        )
        let mapping = try MappingModel.inferred(from: a, to: b)
        #expect(mapping.entityMappings.map { "\($0.name):\($0.type)" }.sorted() == ["KeptToKept:copy", "NothingToNew:add", "OldToNothing:remove"])
    }

    @Test func numericTypeChangesAreInferredOthersAreNot() throws {
        let (a, b) = try pair(
            #"<entity name="E"><attribute name="n" optional="YES" attributeType="Integer 16"/></entity>"#,
            #"<entity name="E"><attribute name="n" optional="YES" attributeType="Double"/></entity>"#
        )
        #expect(try MappingModel.inferred(from: a, to: b).entityMappings[0].type == .transform)
        let (c, d) = try pair(
            #"<entity name="E"><attribute name="n" optional="YES" attributeType="Integer 16"/></entity>"#,
            #"<entity name="E"><attribute name="n" optional="YES" attributeType="String"/></entity>"#
        )
        let error = #expect(throws: MigrationError.self) { try MappingModel.inferred(from: c, to: d) }
        #expect(error?.code == .cannotInferMapping)
        #expect(error?.entityMapping == "E")
        #expect(error?.property == "n")
        #expect(error?.message.contains("Integer 16 to String") == true)
    }

    /// Core Data infers an attribute that becomes required with or without a default; the
    /// rows without a value get the default, or fail the step (`InferenceRulesTests`). A
    /// new required attribute with no default has nothing to come from.
    @Test func becomingRequiredIsInferredANewRequiredAttributeNeedsADefault() throws {
        let (a, b) = try pair(
            #"<entity name="E"><attribute name="n" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="E"><attribute name="n" attributeType="String" defaultValueString="none"/></entity>"#
        )
        #expect(
            try MappingModel.inferred(from: a, to: b).entityMappings[0].propertyMapping(named: "n")?.valueExpression
                == .variable("source", keyPath: ["n"])
        )
        let (c, d) = try pair(
            #"<entity name="E"><attribute name="n" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="E"><attribute name="n" attributeType="String"/></entity>"#
        )
        #expect(
            try MappingModel.inferred(from: c, to: d).entityMappings[0].propertyMapping(named: "n")?.valueExpression
                == .variable("source", keyPath: ["n"])
        )
        let (e, f) = try pair(
            #"<entity name="E"><attribute name="n" optional="YES" attributeType="String"/></entity>"#,
            #"<entity name="E"><attribute name="n" optional="YES" attributeType="String"/><attribute name="m" attributeType="String"/></entity>"#
        )
        let error = #expect(throws: MigrationError.self) { try MappingModel.inferred(from: e, to: f) }
        #expect(error?.property == "m")
        #expect(error?.message.contains("the new attribute 'm' is required and has no default value") == true, "\(String(describing: error))")
    }

    @Test func toOneMayBecomeToManyThroughARenamingIdentifier() throws {
        let (a, b) = try pair(
            #"<entity name="Recipe"><relationship name="type" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Kind" inverseName="recipes" inverseEntity="Kind"/></entity><entity name="Kind"><relationship name="recipes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Recipe" inverseName="type" inverseEntity="Recipe"/></entity>"#,
            #"<entity name="Recipe"><relationship name="types" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Kind" inverseName="recipes" inverseEntity="Kind" elementID="type"/></entity><entity name="Kind"><relationship name="recipes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Recipe" inverseName="types" inverseEntity="Recipe"/></entity>"#
        )
        let mapping = try MappingModel.inferred(from: a, to: b)
        #expect(
            mapping.entityMapping(named: "RecipeToRecipe")?.propertyMapping(named: "types")?.valueExpression
                == .destinationInstances(forEntityMappingNamed: "KindToKind", sourceInstances: .variable("source", keyPath: ["type"]))
        )
    }

    @Test func aRelationshipToAnEntityThatWentElsewhereCannotBeInferred() throws {
        let (a, b) = try pair(
            #"<entity name="A"><relationship name="b" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="B"/></entity><entity name="B"/><entity name="C"/>"#,
            #"<entity name="A"><relationship name="b" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="C"/></entity><entity name="B"/><entity name="C"/>"#
        )
        let error = #expect(throws: MigrationError.self) { try MappingModel.inferred(from: a, to: b) }
        #expect(error?.property == "b")
        #expect(error?.description.contains("mapping model") == true)
    }
}
