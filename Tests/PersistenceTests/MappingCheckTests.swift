import Foundation
import Testing

@testable import Persistence

@Suite("Mapping checks")
struct MappingCheckTests {
    static let destinationInstances = MigrationManager.destinationInstancesSelector

    /// A 3 → 4 transform of Publication with these attribute (and relationship) values.
    static func transform(attributes: String, relationships: String = "{}") -> String {
        MappingFixtures.publicationMapping(
            #"""
            "type": "transform", "source": "Publication", "destination": "Publication",
            "attributes": \#(attributes), "relationships": \#(relationships)
            """#
        )
    }

    /// The error of a 3 → 4 transform of Publication whose attribute `property` is `expression`.
    static func attributeError(_ property: String, _ expression: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> MigrationError {
        let value = String(data: try JSONEncoder().encode(expression), encoding: .utf8)!
        return try MappingFixtures.error(transform(attributes: "{ \"\(property)\": \(value) }"), sourceLocation: sourceLocation)
    }

    static func relationshipError(
        _ property: String,
        _ expression: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> MigrationError {
        let value = String(data: try JSONEncoder().encode(expression), encoding: .utf8)!
        return try MappingFixtures.error(
            transform(attributes: "{}", relationships: "{ \"\(property)\": \(value) }"),
            sourceLocation: sourceLocation
        )
    }

    /// Asserts where an error is and that its description says what to do.
    static func expectError(
        _ error: MigrationError,
        _ code: MigrationError.Code,
        entityMapping: String? = "PublicationToPublication",
        property: String?,
        message: String,
        hint: String,
        file: String? = "Mappings/Bad.json",
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(error.code == code, sourceLocation: sourceLocation)
        #expect(error.file == file, sourceLocation: sourceLocation)
        #expect(error.entityMapping == entityMapping, sourceLocation: sourceLocation)
        #expect(error.property == property, sourceLocation: sourceLocation)
        #expect(error.message.contains(message), "\(error.message)", sourceLocation: sourceLocation)
        #expect(error.hint != nil, sourceLocation: sourceLocation)
        #expect(error.description.contains(hint), "\(error)", sourceLocation: sourceLocation)
    }

    /// A hand-built 3 → 4 mapping, as if loaded from `Mappings/Hand.json`.
    static func handMapping(
        _ entityMappings: [EntityMapping],
        from source: String = "BookStore 3",
        to destination: String = "BookStore 4"
    ) throws
        -> (MappingModel, ManagedObjectModel, ManagedObjectModel)
    {
        let v1 = try MappingFixtures.version(source)
        let v2 = try MappingFixtures.version(destination)
        return (MappingModel(name: "Hand", source: v1, destination: v2, entityMappings: entityMappings, file: "Mappings/Hand.json"), v1, v2)
    }

    static func checkError(_ entityMappings: [EntityMapping], sourceLocation: SourceLocation = #_sourceLocation) throws -> MigrationError {
        let (mapping, v3, v4) = try handMapping(entityMappings)
        return try #require(throws: MigrationError.self, sourceLocation: sourceLocation) {
            try mapping.check(source: v3, destination: v4)
        }
    }

    static let pageCopy = EntityMapping(name: "PageToPage", type: .copy, sourceEntityName: "Page", destinationEntityName: "Page")

    // MARK: Sound mappings

    @Test(
        "every inferred BookStore mapping passes",
        arguments: [
            ("BookStore", "BookStore 2"), ("BookStore 2", "BookStore 3"), ("BookStore", "BookStore 3"),
            ("BookStore 3", "BookStore 4"), ("BookStore 4", "BookStore 5"), ("BookStore", "BookStore 5"),
        ]
    )
    func inferredMappingsPass(source: String, destination: String) throws {
        let v1 = try MappingFixtures.version(source)
        let v2 = try MappingFixtures.version(destination)
        let mapping = try MappingModel.inferred(from: v1, to: v2)
        #expect(mapping.problems(source: v1, destination: v2).isEmpty)
        try mapping.check(source: v1, destination: v2)
    }

    @Test("the checked expressions of a sound mapping pass")
    func soundExpressions() throws {
        let mapping = try MappingFixtures.load(
            Self.transform(
                attributes: #"""
                    {
                      "title": "FUNCTION(uppercase:($source.title), \"stringByAppendingString:\", \" (2nd ed.)\")",
                      "firstName": "FUNCTION($source.author, \"substringToIndex:\", 4)",
                      "lastName": "nil",
                      "price": "$source.pages.@count * 0.5 + $source.price"
                    }
                    """#,
                relationships:
                    #"{ "pages": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PageToPage\", $source.pages)" }"#
            )
        )
        #expect(mapping.entityMappings[0].attributeMappings.count == 4)
    }

    @Test("the models must be the ones the mapping was made for")
    func otherModels() throws {
        let mapping = try MappingFixtures.load(MappingFixtures.model3To4)
        let v4 = try MappingFixtures.version("BookStore 4")
        let v5 = try MappingFixtures.version("BookStore 5")
        let error = try #require(throws: MigrationError.self) { try mapping.check(source: v4, destination: v5) }
        Self.expectError(
            error,
            .invalidMappingModel,
            entityMapping: nil,
            property: nil,
            message: "the mapping was made for BookStore 3 → BookStore 4",
            hint: "Check it against the models it names",
            file: "Mappings/Model3To4.json"
        )
    }

    // MARK: Key paths

    @Test("an unknown key path on $source")
    func unknownSourceKeyPath() throws {
        let error = try Self.attributeError("title", "$source.titel")
        Self.expectError(
            error,
            .unknownKeyPath,
            property: "title",
            message: "$source is a Publication object of the source model (BookStore 3), which has no attribute or relationship 'titel'",
            hint: "Publication has author, price, title, pages"
        )
    }

    @Test("key paths go through to-one and to-many relationships; @count only after a to-many")
    func keyPathsThroughRelationships() throws {
        _ = try MappingFixtures.load(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Page", "destination": "Page",
                "attributes": { "text": "$source.publication.title", "number": "$source.publication.pages.@count" }
                """#,
                name: "PageToPage2"
            )
        )

        let toOne = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Page", "destination": "Page", "attributes": { "number": "$source.publication.@count" }
                """#,
                name: "PageToPage2"
            )
        )
        Self.expectError(
            toOne,
            .unknownKeyPath,
            entityMapping: "PageToPage2",
            property: "number",
            message: "@count needs a to-many relationship, but $source.publication is a Publication object",
            hint: "Put @count right after a to-many relationship"
        )

        let pastAttribute = try Self.attributeError("firstName", "$source.author.first")
        Self.expectError(
            pastAttribute,
            .unknownKeyPath,
            property: "firstName",
            message: "$source.author is a String; it has no key 'first'",
            hint: "End the key path at $source.author"
        )
    }

    @Test("a renamed property: the hint names the source model's name")
    func renamedKeyPath() throws {
        let error = try MappingFixtures.error(
            #"""
            {
              "source": "BookStore 2", "destination": "BookStore 3",
              "entityMappings": [
                { "name": "BookToPublication", "type": "transform", "source": "Book", "destination": "Publication" },
                { "name": "PageToPage", "type": "transform", "source": "Page", "destination": "Page",
                  "relationships": { "publication": "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"BookToPublication\", $source.publication)" } }
              ]
            }
            """#
        )
        Self.expectError(
            error,
            .unknownKeyPath,
            entityMapping: "PageToPage",
            property: "publication",
            message: "has no attribute or relationship 'publication'",
            hint: "'publication' is the destination's name; in the source model it is 'book'"
        )
    }

    @Test("an unknown key path on $destination")
    func unknownDestinationKeyPath() throws {
        let error = try Self.attributeError("title", "$destination.author")
        Self.expectError(
            error,
            .unknownKeyPath,
            property: "title",
            message: "$destination is a Publication object of the destination model (BookStore 4), which has no attribute or relationship 'author'",
            hint: "Publication has firstName, lastName, price, title, pages"
        )
    }

    @Test("a bare key path has no object to start from")
    func bareKeyPath() throws {
        let error = try Self.attributeError("title", "title")
        Self.expectError(
            error,
            .unknownKeyPath,
            property: "title",
            message: "the key path 'title' has no object to start from",
            hint: "Write $source.title"
        )
    }

    @Test("an unknown variable")
    func unknownVariable() throws {
        let error = try Self.attributeError("title", "$sourc.title")
        Self.expectError(
            error,
            .unknownKeyPath,
            property: "title",
            message: "unknown variable $sourc",
            hint: "Did you mean $source? A value expression may use $source, $destination, $manager, $entityMapping, $propertyMapping, $entityPolicy"
        )
    }

    @Test("what follows $manager, $entityMapping, $propertyMapping and $entityPolicy is not checked")
    func uncheckedVariables() throws {
        _ = try MappingFixtures.load(
            Self.transform(
                attributes: #"""
                    {
                      "title": "$manager.sourceModel.name",
                      "firstName": "FUNCTION($entityPolicy, \"firstNameOf:\", $source.author)",
                      "lastName": "$propertyMapping.userInfo.fallback",
                      "price": "$entityMapping.userInfo.price"
                    }
                    """#
            )
        )
    }

    @Test("a key in a source filter")
    func sourceFilterKeyPath() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "transform", "source": "Publication", "destination": "Publication", "sourceFilter": "prize >= 0"
                """#
            )
        )
        Self.expectError(
            error,
            .unknownKeyPath,
            property: nil,
            message:
                "in the source filter 'prize >= 0': SELF is a Publication object of the source model (BookStore 3), which has no attribute or relationship 'prize'",
            hint: "Publication has author, price, title, pages"
        )
    }

    // MARK: Destination properties and types

    @Test("a destination property that the destination entity does not have")
    func unknownDestinationProperty() throws {
        var mapping = EntityMapping(
            name: "PublicationToPublication",
            type: .transform,
            sourceEntityName: "Publication",
            destinationEntityName: "Publication"
        )
        mapping.attributeMappings = [PropertyMapping(name: "author", valueExpression: .variable("source", keyPath: ["author"]))]
        mapping.relationshipMappings = [PropertyMapping(name: "title")]
        let error = try Self.checkError([mapping, Self.pageCopy])
        Self.expectError(
            error,
            .invalidMappingModel,
            property: "author",
            message: "2 problems",
            hint: "or add 'author' to the model",
            file: "Mappings/Hand.json"
        )
        #expect(error.description.contains("has no attribute 'author'"))
        #expect(error.description.contains("'title' is an attribute of Publication, not a relationship. Map it under \"attributes\""))
        let (model, v3, v4) = try Self.handMapping([mapping, Self.pageCopy])
        #expect(model.problems(source: v3, destination: v4).map(\.property) == ["author", "title"])
    }

    @Test("a value whose type does not fit the attribute")
    func typeMismatch() throws {
        let string = try Self.attributeError("title", "$source.price")
        Self.expectError(
            string,
            .typeMismatch,
            property: "title",
            message: "'title' is a String attribute, but $source.price is a Float",
            hint: #"Change the expression so that it gives a String, e.g. CAST($source.price, "NSString")"#
        )

        let number = try Self.attributeError("price", "uppercase:($source.title)")
        Self.expectError(
            number,
            .typeMismatch,
            property: "price",
            message: "'price' is a Float attribute, but uppercase:($source.title) is a String",
            hint: #"CAST(uppercase:($source.title), "NSNumber")"#
        )

        let collection = try Self.attributeError("firstName", "$source.pages.text")
        Self.expectError(
            collection,
            .typeMismatch,
            property: "firstName",
            message: "but $source.pages.text is a collection of String values",
            hint: "with @count or sum:(…)"
        )

        let date = try Self.attributeError("title", "now()")
        Self.expectError(date, .typeMismatch, property: "title", message: "but now() is a Date", hint: "gives a String")
    }

    @Test("numbers fit every numeric type; nil fits optional attributes only")
    func numericAndNil() throws {
        _ = try MappingFixtures.load(
            Self.transform(
                attributes: #"""
                    { "price": "$source.pages.@sum.number / length:($source.title)", "firstName": "nil", "lastName": null }
                    """#
            )
        )
        let error = try Self.attributeError("title", "nil")
        Self.expectError(
            error,
            .typeMismatch,
            property: "title",
            message: "nil cannot fill 'title', which is required",
            hint: "Give 'title' a String value, or make it optional in the model"
        )
    }

    @Test("a relationship's value must be destination instances of its destination entity")
    func relationshipValue() throws {
        let wrongEntity = try Self.relationshipError(
            "pages",
            #"FUNCTION($manager, "\#(Self.destinationInstances)", "PublicationToPublication", $source)"#
        )
        Self.expectError(
            wrongEntity,
            .typeMismatch,
            property: "pages",
            message:
                "'pages' leads to Page, but FUNCTION($manager, \"\(Self.destinationInstances)\", \"PublicationToPublication\", $source) is a Publication object of the destination model",
            hint: "Look up the destination instances of a mapping whose destination entity is Page (PageToPage)"
        )

        let sourceInstances = try Self.relationshipError("pages", "$source.pages")
        Self.expectError(
            sourceInstances,
            .typeMismatch,
            property: "pages",
            message: "'pages' needs destination instances, but $source.pages is Page objects of the source model (to-many)",
            hint:
                #"Turn the source instances into their migrated instances: FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PageToPage", $source.pages)"#
        )

        let text = try Self.relationshipError("pages", "$source.title")
        Self.expectError(
            text,
            .typeMismatch,
            property: "pages",
            message: "'pages' leads to Page objects, but $source.title is a String",
            hint: "Map a relationship with FUNCTION($manager"
        )
    }

    @Test("destinationInstances… naming a mapping that does not exist")
    func unknownMappingName() throws {
        let error = try Self.relationshipError("pages", #"FUNCTION($manager, "\#(Self.destinationInstances)", "PagesToPages", $source.pages)"#)
        Self.expectError(
            error,
            .invalidMappingModel,
            property: "pages",
            message: "names the entity mapping 'PagesToPages', which this mapping model does not have",
            hint: "Name one of PublicationToPublication, PageToPage; the mapping of Page instances is PageToPage"
        )
    }

    @Test("destinationInstances… naming a mapping of another entity than the instances'")
    func mappingOfAnotherEntity() throws {
        let error = try Self.relationshipError(
            "pages",
            #"FUNCTION($manager, "\#(Self.destinationInstances)", "PublicationToPublication", $source.pages)"#
        )
        Self.expectError(
            error,
            .typeMismatch,
            property: "pages",
            message: "'PublicationToPublication' maps Publication instances, but $source.pages is Page objects of the source model (to-many)",
            hint: "Name the mapping whose source entity is Page; the mapping of Page instances is PageToPage, or pass Publication instances"
        )
    }

    @Test("an attribute cannot look up the instances of a mapping that has not run yet")
    func lookupOrder() throws {
        let error = try MappingFixtures.error(
            #"""
            {
              "source": "BookStore 3", "destination": "BookStore 4",
              "entityMappings": [
                { "name": "PublicationToPublication", "type": "transform", "source": "Publication", "destination": "Publication",
                  "attributes": { "price": "count:(FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PageToPage\", $source.pages))" } },
                { "name": "PageToPage", "type": "copy", "source": "Page", "destination": "Page" }
              ]
            }
            """#
        )
        Self.expectError(
            error,
            .invalidMappingModel,
            property: "price",
            message: "looks up the instances of 'PageToPage', which runs after this one",
            hint: "Move 'PageToPage' before 'PublicationToPublication' in entityMappings"
        )
    }

    // MARK: Functions and selectors

    @Test("an unsupported selector lists the supported ones")
    func unknownSelector() throws {
        let error = try Self.attributeError("title", #"FUNCTION($source.title, "capitalizedString")"#)
        Self.expectError(
            error,
            .invalidMappingModel,
            property: "title",
            message: "the selector capitalizedString is not supported",
            hint: "Use one of the supported selectors: on $manager: destinationInstancesForEntityMappingNamed:sourceInstances:"
        )
        #expect(error.description.contains("stringByReplacingOccurrencesOfString:withString:"))
    }

    @Test("a selector's arguments: their number and types")
    func selectorArguments() throws {
        let count = try Self.attributeError("title", #"FUNCTION($source.title, "stringByAppendingString:")"#)
        Self.expectError(
            count,
            .invalidMappingModel,
            property: "title",
            message: "the selector stringByAppendingString: takes 1 argument, but FUNCTION passes 0",
            hint: "Pass one argument after the selector for each ':' in it"
        )

        let index = try Self.attributeError("title", #"FUNCTION($source.title, "substringToIndex:", "4")"#)
        Self.expectError(
            index,
            .typeMismatch,
            property: "title",
            message: "substringToIndex: needs an integer, but \"4\" is a String",
            hint: "Pass an integer to substringToIndex:"
        )

        let target = try Self.attributeError("title", #"FUNCTION($source.price, "uppercaseString")"#)
        Self.expectError(
            target,
            .typeMismatch,
            property: "title",
            message: "uppercaseString needs a String target, but $source.price is a Float",
            hint: "Call uppercaseString on a String"
        )
    }

    @Test("a function's arguments and an unsupported CAST")
    func functionArguments() throws {
        let error = try Self.attributeError("title", "uppercase:($source.price)")
        Self.expectError(
            error,
            .typeMismatch,
            property: "title",
            message: "uppercase needs a String, but $source.price is a Float",
            hint: "Pass a String to uppercase"
        )

        let arithmetic = try Self.attributeError("price", "$source.title * 2")
        Self.expectError(
            arithmetic,
            .typeMismatch,
            property: "price",
            message: "'*' needs numbers, but $source.title is a String",
            hint: "Use numbers on both sides of '*'"
        )

        let cast = try Self.attributeError("title", #"CAST($source.price, "NSValue")"#)
        Self.expectError(
            cast,
            .invalidMappingModel,
            property: "title",
            message: #"CAST to "NSValue" is not supported"#,
            hint: #"Cast to one of "NSString", "NSNumber""#
        )
    }

    // MARK: Entity mappings

    @Test("entity mappings whose entities are not in their models")
    func unknownEntities() throws {
        let error = try Self.checkError([
            EntityMapping(name: "BookToPublication", type: .transform, sourceEntityName: "Book", destinationEntityName: "Publication"),
            EntityMapping(name: "PageToLeaf", type: .transform, sourceEntityName: "Page", destinationEntityName: "Leaf"),
        ])
        Self.expectError(
            error,
            .invalidMappingModel,
            entityMapping: "BookToPublication",
            property: nil,
            message: "2 problems",
            hint: "Book is called Publication in BookStore 3",
            file: "Mappings/Hand.json"
        )
        #expect(
            error.description.contains(
                "PageToLeaf: the destination entity 'Leaf' is not in BookStore 4. Use one of BookStore 4's entities: Page, Publication"
            )
        )
    }

    @Test("duplicate entity mapping names")
    func duplicateNames() throws {
        let error = try MappingFixtures.error(
            #"""
            {
              "source": "BookStore 3", "destination": "BookStore 4",
              "entityMappings": [
                { "name": "PageToPage", "type": "copy", "source": "Page", "destination": "Page" },
                { "name": "PageToPage", "type": "transform", "source": "Publication", "destination": "Publication" }
              ]
            }
            """#
        )
        Self.expectError(
            error,
            .invalidMappingModel,
            entityMapping: "PageToPage",
            property: nil,
            message: "entity mappings 1 and 2 are both named 'PageToPage'",
            hint: "Rename one of them"
        )
    }

    @Test("a copy mapping between entities that differ")
    func copyOfChangedEntity() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "copy", "source": "Publication", "destination": "Publication"
                """#
            )
        )
        Self.expectError(
            error,
            .invalidMappingModel,
            property: nil,
            message: "a copy mapping needs identical entities, but 'author' is removed; 'firstName' is added; 'lastName' is added",
            hint: "Use type transform with property mappings for the changes"
        )
    }

    @Test("a custom mapping without a policy")
    func customWithoutPolicy() throws {
        let error = try MappingFixtures.error(
            MappingFixtures.publicationMapping(
                #"""
                "type": "custom", "source": "Publication", "destination": "Publication", "attributes": { "title": "$source.title" }
                """#
            )
        )
        Self.expectError(
            error,
            .invalidMappingModel,
            property: nil,
            message: "a custom mapping needs the name of its entity migration policy",
            hint: "Set its policy to the name an EntityMigrationPolicy is registered under (such as PublicationToPublicationMigrationPolicy)"
        )
    }

    @Test("add and remove mappings: entities and property mappings that do not fit")
    func addAndRemove() throws {
        var add = EntityMapping(name: "NothingToPublication", type: .add, sourceEntityName: nil, destinationEntityName: "Publication")
        add.attributeMappings = [PropertyMapping(name: "title", valueExpression: .variable("source", keyPath: ["title"]))]
        var remove = EntityMapping(name: "PageToNothing", type: .remove, sourceEntityName: "Page", destinationEntityName: "Page")
        remove.attributeMappings = [PropertyMapping(name: "number")]
        let (mapping, v3, v4) = try Self.handMapping([add, remove])
        let problems = mapping.problems(source: v3, destination: v4)
        #expect(
            problems.map(\.message) == [
                "$source has no instance: this add mapping has no source entity",
                "a remove mapping has no destination entity, but this one names Page",
                "a remove mapping creates no instances, so it cannot have property mappings",
            ]
        )
        #expect(problems.map(\.entityMapping) == ["NothingToPublication", "PageToNothing", "PageToNothing"])
        #expect(problems[0].property == "title" && problems[0].file == "Mappings/Hand.json")
    }

    // MARK: The type checker

    struct TypeCase: Sendable, CustomTestStringConvertible {
        var format: String
        var type: ValueExpressionType
        var testDescription: String { format }
        init(_ format: String, _ type: ValueExpressionType) {
            self.format = format
            self.type = type
        }
    }

    static let typeCases: [TypeCase] = [
        TypeCase("$source", .objects(.source, entity: "Publication", toMany: false)),
        TypeCase("$source.title", .value(.string)),
        TypeCase("$source.price", .value(.float)),
        TypeCase("$source.pages", .objects(.source, entity: "Page", toMany: true)),
        TypeCase("$source.pages.number", .collection(.value(.integer16))),
        TypeCase("$source.pages.@count", .value(.integer64)),
        TypeCase("$source.pages.text.@count", .value(.integer64)),
        TypeCase("$source.pages.@sum.number", .number),
        TypeCase("$source.pages.@avg.number", .number),
        TypeCase("$source.pages.@max.number", .value(.integer16)),
        TypeCase("$source.pages.publication.title", .collection(.value(.string))),
        TypeCase("$destination.firstName", .value(.string)),
        TypeCase("$destination.pages", .objects(.destination, entity: "Page", toMany: true)),
        TypeCase("uppercase:($source.title)", .value(.string)),
        TypeCase("lowercase:($source.author)", .value(.string)),
        TypeCase("length:($source.title)", .value(.integer64)),
        TypeCase("$source.price * 1.04", .number),
        TypeCase("-$source.price", .number),
        TypeCase("add:to:($source.price, 1)", .number),
        TypeCase("from:subtract:($source.price, 1)", .number),
        TypeCase("multiply:by:($source.price, 2)", .number),
        TypeCase("divide:by:($source.price, 2)", .number),
        TypeCase("modulus:by:($source.price, 2)", .number),
        TypeCase("abs:($source.price)", .number),
        TypeCase("floor:($source.price)", .number),
        TypeCase("ceiling:($source.price)", .number),
        TypeCase("trunc:($source.price)", .number),
        TypeCase("sqrt:($source.price)", .number),
        TypeCase("now()", .value(.date)),
        TypeCase("sum:($source.pages.number)", .number),
        TypeCase("average:($source.pages.number)", .number),
        TypeCase("count:($source.pages)", .value(.integer64)),
        TypeCase("max:($source.pages.number)", .value(.integer16)),
        TypeCase("min:(1, 2.5)", .number),
        TypeCase(#"CAST($source.price, "NSString")"#, .value(.string)),
        TypeCase(#"CAST($source.title, "NSNumber")"#, .number),
        TypeCase(#"CAST($source.title, "NSDate")"#, .value(.date)),
        TypeCase(#"CAST($source.title, "NSDecimalNumber")"#, .value(.decimal)),
        TypeCase(#"CAST("1.5", "NSDecimalNumber")"#, .value(.decimal)),
        TypeCase(#"FUNCTION($source.title, "stringByAppendingString:", "!")"#, .value(.string)),
        TypeCase(#"FUNCTION($source.title, "substringToIndex:", 3)"#, .value(.string)),
        TypeCase(#"FUNCTION($source.title, "substringFromIndex:", $source.pages.@count)"#, .value(.string)),
        TypeCase(#"FUNCTION($source.title, "uppercaseString")"#, .value(.string)),
        TypeCase(#"FUNCTION($source.title, "lowercaseString")"#, .value(.string)),
        TypeCase(#"FUNCTION($source.title, "stringByReplacingOccurrencesOfString:withString:", "a", "b")"#, .value(.string)),
        TypeCase(#"FUNCTION($source.author, "componentsSeparatedByString:", " ")"#, .collection(.value(.string))),
        TypeCase(#"FUNCTION("x", "stringByAppendingString:", $source.title)"#, .value(.string)),
        TypeCase(
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PageToPage", $source.pages)"#,
            .objects(.destination, entity: "Page", toMany: true)
        ),
        TypeCase(
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PublicationToPublication", $source)"#,
            .objects(.destination, entity: "Publication", toMany: false)
        ),
        TypeCase(
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PublicationToPublication", $source).title"#,
            .value(.string)
        ),
        TypeCase(
            #"FUNCTION($manager, "sourceInstancesForEntityMappingNamed:destinationInstances:", "PageToPage", $destination.pages)"#,
            .objects(.source, entity: "Page", toMany: true)
        ),
        TypeCase("$manager.sourceModel", .unknown),
        TypeCase("$entityMapping.name", .unknown),
        TypeCase("$propertyMapping", .unknown),
        TypeCase(#"FUNCTION($entityPolicy, "anything:", 1)"#, .unknown),
        TypeCase("nil", .null),
        TypeCase("{1, 2.5}", .collection(.number)),
        TypeCase(#""text""#, .value(.string)),
        TypeCase("YES", .value(.boolean)),
        TypeCase(#"CAST(722000000, "NSDate")"#, .value(.date)),
    ]

    @Test("the static type of an expression", arguments: typeCases)
    func staticType(_ testCase: TypeCase) throws {
        let mapping = try MappingFixtures.load(MappingFixtures.model3To4)
        let checker = ValueExpressionTypeChecker(
            mappingModel: mapping,
            source: try MappingFixtures.version("BookStore 3"),
            destination: try MappingFixtures.version("BookStore 4"),
            position: 0
        )
        #expect(try checker.type(of: Expression(format: testCase.format)) == testCase.type)
    }
}
