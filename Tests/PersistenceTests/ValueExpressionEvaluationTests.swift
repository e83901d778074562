import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Value expressions evaluated against real objects of a real store, on every backend.
@Suite struct ValueExpressionEvaluationTests {
    /// Evaluates value expressions with `$source` bound to a saved book (two pages, price 12.5).
    struct Evaluator {
        /// The context the book was read in: its objects need it alive.
        let context: ManagedObjectContext
        let evaluator: ValueExpressionEvaluator

        func evaluate(_ format: String) async throws -> MigrationValue {
            try await evaluator.evaluate(try Expression(format: format))
        }

        func value(_ format: String) async throws -> AttributeValue? {
            try await evaluate(format).attributeValue
        }
    }

    /// Runs `body` with an evaluator over the first book of a new store of `backend`.
    func withFirstBook(_ backend: TestBackend, _ body: (Evaluator) async throws -> Void) async throws {
        try await withContainer(backend, model: try LibraryModel.make()) { container in
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
            // A fresh context, so relationships are read from the store, not from memory.
            let reader = container.newContext()
            let source = try await reader.existingObject(with: book.objectID)
            let model = try LibraryModel.make()
            let manager = MigrationManager(
                configuration: .init(
                    sourceModel: model,
                    destinationModel: model,
                    mappingModel: try MappingModel.inferred(from: model, to: model),
                    logger: testLogger
                )
            )
            let evaluator = ValueExpressionEvaluator(variables: ["source": .object(source), "manager": .manager(manager)], manager: manager)
            try await body(Evaluator(context: reader, evaluator: evaluator))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func keyPathsAndArithmetic(backend: TestBackend) async throws {
        try await withFirstBook(backend) { (book: Evaluator) async throws in
            #expect(try await book.value("$source.title") == "The first book")
            #expect(try await book.value("$source.price * 2") == 25.0)
            #expect(try await book.value("$source.price + 1") == 13.5)
            #expect(try await book.value("$source.isbn") == .null)
            #expect(try await book.value("$source.isbn * 2") == .null, "nil propagates through arithmetic")
            #expect(try await book.value("$source.pages.@count") == 2)
            #expect(try await book.value("$source.shelf.label") == .null, "a missing to-one gives nil")
        }
    }

    @Test(arguments: TestBackend.allCases)
    func functionsAndStringSelectors(backend: TestBackend) async throws {
        try await withFirstBook(backend) { (book: Evaluator) async throws in
            #expect(try await book.value("uppercase:($source.title)") == "THE FIRST BOOK")
            #expect(try await book.value("length:($source.title)") == 14)
            #expect(try await book.value(#"FUNCTION($source.title, "substringToIndex:", 4)"#) == "The ")
            #expect(
                try await book.value(#"FUNCTION(FUNCTION($source.title, "substringToIndex:", 4), "stringByAppendingString:", "...")"#) == "The ..."
            )
            #expect(
                try await book.value(#"FUNCTION($source.title, "stringByReplacingOccurrencesOfString:withString:", "first", "1st")"#)
                    == "The 1st book"
            )
            #expect(try await book.value("sum:($source.pages.number)") == 3.0)
            #expect(try await book.value("max:($source.pages.number)") == 2.0)
            if case .list(let parts) = try await book.evaluate(#"FUNCTION($source.title, "componentsSeparatedByString:", " ")"#) {
                #expect(parts.compactMap(\.attributeValue) == ["The", "first", "book"])
            } else {
                Issue.record("componentsSeparatedByString: gives a list")
            }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func objectsComeBackAsObjects(backend: TestBackend) async throws {
        try await withFirstBook(backend) { (book: Evaluator) async throws in
            guard case .objects(let pages) = try await book.evaluate("$source.pages") else {
                Issue.record("a to-many key path gives objects")
                return
            }
            #expect(pages.count == 2)
            #expect(Set(pages.map { $0.value(forKey: "number") }) == [1, 2])
        }
    }

    @Test(arguments: TestBackend.allCases)
    func dataErrorsAreEvaluationFailures(backend: TestBackend) async throws {
        try await withFirstBook(backend) { (book: Evaluator) async throws in
            let error = await #expect(throws: MigrationError.self) { try await book.evaluate("$source.price / 0") }
            #expect(error?.code == .evaluationFailed)
            let unknown = await #expect(throws: MigrationError.self) { try await book.evaluate(#"FUNCTION($source.title, "reverse", 1)"#) }
            #expect(unknown?.message.contains("reverse") == true)
        }
    }
}
