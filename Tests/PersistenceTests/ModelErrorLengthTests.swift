import Foundation
import Testing

@testable import Persistence

/// An error about a model stays a line long whatever the model holds: a name or value of
/// megabytes is quoted by its start and its length.
@Suite("Model error messages stay short")
struct ModelErrorLengthTests {
    static let huge = String(repeating: "q", count: 5_000_000)
    static let shortened = "'\(String(repeating: "q", count: 40))…' (5000000 bytes)"

    /// Expects `error` short, quoting the huge text shortened.
    static func expectShort(_ error: ModelError?, _ code: ModelError.Code, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let error = try #require(error, "the model was accepted", sourceLocation: sourceLocation)
        #expect(error.code == code, sourceLocation: sourceLocation)
        #expect(error.description.utf8.count < 1000, "\(error.description.utf8.count) bytes", sourceLocation: sourceLocation)
        #expect(error.description.contains(shortened), sourceLocation: sourceLocation)
    }

    @Test("model descriptions with a 5 MB name")
    func describedModels() throws {
        let twice = EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription(name: Self.huge, type: .string), AttributeDescription(name: Self.huge, type: .string),
            ]
        )
        try Self.expectShort(ModelFixtures.error([twice]), .duplicateName)
        let nowhere = EntityDescription(name: "Book", relationships: [RelationshipDescription(name: "shelf", destinationEntityName: Self.huge)])
        try Self.expectShort(ModelFixtures.error([nowhere]), .missingEntity)
        let orphan = EntityDescription(name: "Book", parentName: Self.huge)
        try Self.expectShort(ModelFixtures.error([orphan]), .missingEntity)
        let books = EntityDescription(
            name: Self.huge,
            relationships: [RelationshipDescription(name: "shelf", destinationEntityName: "Shelf", inverseName: "books")]
        )
        try Self.expectShort(ModelFixtures.error([books, EntityDescription(name: "Shelf")]), .missingInverse)
    }

    /// The huge value replaces `HUGE` in the test, so that the test's name, which names its
    /// arguments, stays short.
    @Test(
        "model files with a 5 MB value",
        arguments: [
            (#"<attribute name="title" attributeType="HUGE"/>"#, ModelError.Code.unknownAttributeType),
            (#"<attribute name="count" attributeType="Integer 32" defaultValueString="HUGE"/>"#, .invalidValue),
            (#"<relationship name="shelf" destinationEntity="Shelf" maxCount="HUGE"/>"#, .invalidValue),
            (#"<relationship name="shelf" destinationEntity="Shelf" deletionRule="HUGE"/>"#, .invalidValue),
        ]
    )
    func modelFiles(element: String, code: ModelError.Code) throws {
        let error = ModelFixtures.error(
            """
            <entity name="Book">
                \(element.replacingOccurrences(of: "HUGE", with: Self.huge))
            </entity>
            """
        )
        try Self.expectShort(error, code)
    }

    @Test("a message longer than the bound keeps its start and end")
    func boundedMessage() {
        let error = ModelError(.invalidValue, "start " + Self.huge + " end")
        #expect(error.message.utf8.count < ModelError.longestMessage + 100)
        #expect(error.message.hasPrefix("start qqq"))
        #expect(error.message.hasSuffix("qqq end"))
        #expect(error.message.contains("(5000010 bytes in all)"))
    }
}
