import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

// Recipes, Apple's Core Data sample: version "1.1" has a recipe's `type` as a to-one;
// version "2.0" makes it the to-many `types` (renaming identifier `type`, so each recipe
// keeps its type) and adds `Chef` with a one-to-many `recipes` ↔ `chef`. A lightweight
// migration: no mapping model.

enum RecipesVersion: String, MigrationVersion, CaseIterable {
    case v1 = "Recipes"
    case v2 = "Recipes 2"

    var modelName: String { rawValue }

    func nextVersion() -> RecipesVersion? {
        switch self {
        case .v1: .v2
        case .v2: nil
        }
    }
}

enum Recipes {
    static func models() throws -> VersionedModel { try Scenario.models("Recipes", "Recipes") }

    static func chain() throws -> MigrationChain {
        try MigrationChain(RecipesVersion.self, models: try models())
    }

    static let types = ["Appetizer", "Breakfast", "Dessert", "Drink", "Main Course"]
    /// Name, type (none for the last), prep time, ingredients with amounts.
    static let recipes: [(name: String, type: String?, prepTime: String, ingredients: [(String, String)])] = [
        ("Chocolate Cake", "Dessert", "1 hour", [("Flour", "2 cups"), ("Sugar", "1 cup"), ("Cocoa", "3/4 cup"), ("Eggs", "2")]),
        ("Crêpes Suzette", "Dessert", "40 minutes", [("Flour", "1 cup"), ("Milk", "1 1/2 cups"), ("Orange", "1")]),
        ("Ginger Snaps", "Dessert", "30 minutes", [("Ginger", "1 tbsp"), ("Molasses", "1/4 cup")]),
        ("Pizza Margherita", "Main Course", "2 hours", [("Dough", "1 ball"), ("Tomatoes", "400 g"), ("Mozzarella", "200 g")]),
        ("Beef Stroganoff", "Main Course", "45 minutes", [("Beef", "500 g"), ("Mushrooms", "250 g")]),
        ("Bruschetta", "Appetizer", "15 minutes", [("Bread", "1 loaf"), ("Tomatoes", "3")]),
        ("Pancakes", "Breakfast", "20 minutes", [("Flour", "1 cup"), ("Milk", "1 cup"), ("Eggs", "1")]),
        ("Lemonade", "Drink", "10 minutes", [("Lemons", "4"), ("Sugar", "1/2 cup")]),
        ("Mystery Stew", nil, "3 hours", [("Whatever is left", "all of it")]),
    ]

    static func recipes(ofType type: String) -> [String] {
        recipes.filter { $0.type == type }.map(\.name).sorted()
    }

    static func seed(at url: StoreURL) async throws {
        let v1 = try Scenario.version("Recipes", of: try models())
        try await Scenario.seed(v1, at: url) { context in
            var typeObjects: [String: ManagedObject] = [:]
            for name in types {
                let type = try context.insertObject(entityName: "RecipeType")
                type.setValue(.string(name), forKey: "name")
                typeObjects[name] = type
            }
            for recipe in recipes {
                let object = try context.insertObject(entityName: "Recipe")
                object.setValue(.string(recipe.name), forKey: "name")
                object.setValue(.string(recipe.prepTime), forKey: "prepTime")
                object.setValue(.string("How to make \(recipe.name)."), forKey: "instructions")
                if let type = recipe.type { object.setDestination(typeObjects[type], forKey: "type") }
                for (order, (name, amount)) in recipe.ingredients.enumerated() {
                    let ingredient = try context.insertObject(entityName: "Ingredient")
                    ingredient.setValue(.string(name), forKey: "name")
                    ingredient.setValue(.string(amount), forKey: "amount")
                    ingredient.setValue(.integer(Int64(order)), forKey: "displayOrder")
                    ingredient.setDestination(object, forKey: "recipe")
                }
            }
        }
    }
}

@Suite struct RecipesScenarioTests {
    @Test(arguments: TestEngine.allCases)
    func version1_1MigratesTo2_0KeepingEachRecipesType(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await Recipes.seed(at: url)
            #expect(try await PersistentStore.metadata(at: url).versionIdentifiers == ["1.1"])
            let chain = try Recipes.chain()

            let (plan, progress) = try await Scenario.migrate(chain, store: url)
            #expect(plan.storeVersion.versionIdentifier == "1.1")
            #expect(plan.steps.map { "\($0.source.versionIdentifier) → \($0.destination.versionIdentifier)" } == ["1.1 → 2.0"])
            #expect(plan.steps[0].mappingModels.map(\.isInferred) == [true])
            Scenario.checkProgress(progress, steps: 1)
            try await expectNoLeftovers(url)

            let metadata = try await PersistentStore.metadata(at: url)
            #expect(metadata.versionIdentifiers == ["2.0"])
            let v2 = try Scenario.version("Recipes 2", of: chain.models)
            #expect(v2.isCompatible(with: metadata))
            let context = try await Scenario.open(v2, at: url)
            #expect(try await Scenario.count("Recipe", in: context) == Recipes.recipes.count)
            #expect(try await Scenario.count("RecipeType", in: context) == Recipes.types.count)
            #expect(try await Scenario.count("Ingredient", in: context) == Recipes.recipes.map(\.ingredients.count).reduce(0, +))
            #expect(try await Scenario.count("Chef", in: context) == 0)

            // Every recipe has its old type, and only it, in the to-many; the type has it back.
            for recipe in Recipes.recipes {
                let object = try await Scenario.one("Recipe", "name", recipe.name, in: context)
                #expect(object.value(forKey: "prepTime") == .string(recipe.prepTime))
                let types = try await object.destinations(forKey: "types")
                #expect(Scenario.strings(types, "name") == (recipe.type.map { [$0] } ?? []), "\(recipe.name)")
                for type in types {
                    #expect(try await type.destinations(forKey: "recipes").contains(object), "\(recipe.name) is among its type's recipes")
                }
                #expect(try await object.destination(forKey: "chef") == nil)
                let ingredients = try await object.destinations(forKey: "ingredients")
                    .sorted { ($0.value(forKey: "displayOrder").integerValue ?? 0) < ($1.value(forKey: "displayOrder").integerValue ?? 0) }
                #expect(ingredients.map { $0.value(forKey: "name") } == recipe.ingredients.map { .string($0.0) })
                #expect(ingredients.map { $0.value(forKey: "amount") } == recipe.ingredients.map { .string($0.1) })
                for ingredient in ingredients { #expect(try await ingredient.destination(forKey: "recipe") == object) }
            }
            for type in Recipes.types {
                let object = try await Scenario.one("RecipeType", "name", type, in: context)
                #expect(Scenario.strings(try await object.destinations(forKey: "recipes"), "name") == Recipes.recipes(ofType: type), "\(type)")
            }
            #expect(try await Scenario.count("Recipe", in: context, where: "types.@count == 1") == Recipes.recipes.count - 1)
            #expect(try await Scenario.count("Recipe", in: context, where: "ANY types.name == %@", .value("Dessert")) == 3)

            // A recipe can now have several types, and a chef with the inverse kept.
            let pancakes = try await Scenario.one("Recipe", "name", "Pancakes", in: context)
            pancakes.addDestination(try await Scenario.one("RecipeType", "name", "Dessert", in: context), forKey: "types")
            let chef = try context.insertObject(entityName: "Chef")
            chef.setValue("Julia", forKey: "firstName")
            chef.setValue("Child", forKey: "lastName")
            chef.addDestination(pancakes, forKey: "recipes")
            chef.addDestination(try await Scenario.one("Recipe", "name", "Crêpes Suzette", in: context), forKey: "recipes")
            try await context.save()

            let reopened = try await Scenario.open(v2, at: url)
            let julia = try await Scenario.one("Chef", "lastName", "Child", in: reopened)
            #expect(Scenario.strings(try await julia.destinations(forKey: "recipes"), "name") == ["Crêpes Suzette", "Pancakes"])
            let crepes = try await Scenario.one("Recipe", "name", "Crêpes Suzette", in: reopened)
            #expect(try await crepes.destination(forKey: "chef") == julia)
            let pancakesAgain = try await Scenario.one("Recipe", "name", "Pancakes", in: reopened)
            #expect(Scenario.strings(try await pancakesAgain.destinations(forKey: "types"), "name") == ["Breakfast", "Dessert"])
            #expect(try await Scenario.count("Recipe", in: reopened, where: "ANY types.name == %@", .value("Dessert")) == 4)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aStoreOfANewerVersionIsRefusedAndLeftAlone(engine: TestEngine) async throws {
        // Version "3.0" of the app gave chefs an e-mail address; this app knows 1.1 and 2.0.
        let v2File = Scenario.fixtures.appendingPathComponent("Recipes/Recipes.xcdatamodeld/Recipes 2.xcdatamodel/contents")
        let xml = try String(contentsOf: v2File, encoding: .utf8)
            .replacingOccurrences(of: #"userDefinedModelVersionIdentifier="2.0""#, with: #"userDefinedModelVersionIdentifier="3.0""#)
            .replacingOccurrences(
                of: #"<attribute name="firstName""#,
                with: #"<attribute name="email" optional="YES" attributeType="String" syncable="YES"/><attribute name="firstName""#
            )
        let v3 = try ManagedObjectModel(xml: Data(xml.utf8), name: "Recipes 3")
        try await engine.withStoreURL { url in
            try await Scenario.seed(v3, at: url) { context in
                let chef = try context.insertObject(entityName: "Chef")
                chef.setValue("Child", forKey: "lastName")
                chef.setValue("julia@example.com", forKey: "email")
            }
            let before = try await StoreSnapshot(url)

            let error = await #expect(throws: MigrationError.self) {
                _ = try await Scenario.migrate(try Recipes.chain(), store: url)
            }
            #expect(error?.code == .newerStore)
            try await expectUnchanged(url, since: before)
        }
    }
}
