import Foundation
import Testing
@testable import Persistence

/// Value expressions evaluated against real objects of a real store.
@Suite struct ValueExpressionEvaluationTests {
    /// Evaluates `format` with `$source` bound to the first book (two pages, price 12.5).
    func evaluate(_ format: String) async throws -> MigrationValue {
        try await withContainer(.sqlite, model: try LibraryModel.make()) { container in
            let context = container.newContext()
            let book = try context.insertObject(entityName: "Book")
            book.setValue("The first book", forKey: "title")
            book.setValue(12.5, forKey: "price")
            for number in [1, 2] {
                let page = try context.insertObject(entityName: "Page")
                page.setValue(.integer(Int64(number)), forKey: "number")
                page.setDestination(book, forKey: "book")
            }
            try await context.save()
            let model = try LibraryModel.make()
            let manager = MigrationManager(configuration: .init(
                sourceModel: model, destinationModel: model,
                mappingModel: try MappingModel.inferred(from: model, to: model), logger: testLogger))
            let evaluator = ValueExpressionEvaluator(variables: ["source": .object(book), "manager": .manager(manager)], manager: manager)
            return try await evaluator.evaluate(try Expression(format: format))
        }
    }

    func value(_ format: String) async throws -> AttributeValue? {
        try await evaluate(format).attributeValue
    }

    @Test func keyPathsAndArithmetic() async throws {
        #expect(try await value("$source.title") == "The first book")
        #expect(try await value("$source.price * 2") == 25.0)
        #expect(try await value("$source.price + 1") == 13.5)
        #expect(try await value("$source.isbn") == .null)
        #expect(try await value("$source.isbn * 2") == .null, "nil propagates through arithmetic")
        #expect(try await value("$source.pages.@count") == 2)
        #expect(try await value("$source.shelf.label") == .null, "a missing to-one gives nil")
    }

    @Test func functionsAndStringSelectors() async throws {
        #expect(try await value("uppercase:($source.title)") == "THE FIRST BOOK")
        #expect(try await value("length:($source.title)") == 14)
        #expect(try await value(#"FUNCTION($source.title, "substringToIndex:", 4)"#) == "The ")
        #expect(try await value(#"FUNCTION(FUNCTION($source.title, "substringToIndex:", 4), "stringByAppendingString:", "...")"#) == "The ...")
        #expect(try await value(#"FUNCTION($source.title, "stringByReplacingOccurrencesOfString:withString:", "first", "1st")"#) == "The 1st book")
        #expect(try await value("sum:($source.pages.number)") == 3.0)
        #expect(try await value("max:($source.pages.number)") == 2.0)
        if case .list(let parts) = try await evaluate(#"FUNCTION($source.title, "componentsSeparatedByString:", " ")"#) {
            #expect(parts.compactMap(\.attributeValue) == ["The", "first", "book"])
        } else {
            Issue.record("componentsSeparatedByString: gives a list")
        }
    }

    @Test func objectsComeBackAsObjects() async throws {
        guard case .objects(let pages) = try await evaluate("$source.pages") else {
            Issue.record("a to-many key path gives objects")
            return
        }
        #expect(pages.count == 2)
    }

    @Test func dataErrorsAreEvaluationFailures() async throws {
        let error = await #expect(throws: MigrationError.self) { try await evaluate("$source.price / 0") }
        #expect(error?.code == .evaluationFailed)
        let unknown = await #expect(throws: MigrationError.self) { try await evaluate(#"FUNCTION($source.title, "reverse", 1)"#) }
        #expect(unknown?.message.contains("reverse") == true)
    }
}
