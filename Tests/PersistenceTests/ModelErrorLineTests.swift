import Foundation
import Testing

@testable import Persistence

/// Errors found once a model file is read name the line where the element at fault begins,
/// also when its start tag is written over several lines (`ModelFixtures.xml` puts the body
/// on line 3).
@Suite("Model error lines")
struct ModelErrorLineTests {
    @Test("a relationship to a missing entity names its file, the line of its <relationship> and says the entity does not exist")
    func missingDestination() throws {
        let error = try #require(
            ModelFixtures.error(
                """
                <entity name="Book">
                    <attribute name="title" optional="YES" attributeType="String"/>
                    <relationship name="author" optional="YES"
                        maxCount="1" deletionRule="Nullify"
                        destinationEntity="Writer"/>
                </entity>
                """
            )
        )
        #expect(error.code == .missingEntity)
        #expect(error.file == ModelFixtures.file)
        #expect(error.line == 5, "the line of <relationship")
        #expect(error.entity == "Book" && error.property == "author")
        #expect(error.message.contains("'Writer' does not exist"))
        #expect(error.description.hasPrefix("\(ModelFixtures.file):5, entity 'Book', property 'author': "))
    }

    @Test("a missing parent entity names the line of its <entity>")
    func missingParent() throws {
        let error = try #require(
            ModelFixtures.error(
                """
                <entity name="Page">
                    <attribute name="number" optional="YES" attributeType="Integer 16"/>
                </entity>
                <entity name="Book"
                    parentEntity="Volume"
                    representedClassName="Book">
                    <attribute name="title" optional="YES" attributeType="String"/>
                </entity>
                """
            )
        )
        #expect(error.code == .missingEntity)
        #expect(error.file == ModelFixtures.file)
        #expect(error.line == 6, "the line of <entity")
        #expect(error.entity == "Book")
        #expect(error.message.contains("'Volume' of 'Book' does not exist"))
    }

    @Test("an error the parser finds in an element names the line it begins on, whatever comes before it on the line")
    func parserErrorsNameTheStartLine() throws {
        let error = try #require(
            ModelFixtures.error(
                """
                <entity name="Bøøk"><attribute name="title" attributeType="String"/><attribute
                    name="cover"
                    attributeType="Composite"/>
                </entity>
                """
            )
        )
        #expect(error.code == .unknownAttributeType)
        #expect(error.line == 3)
        #expect(error.entity == "Bøøk" && error.property == "cover")
    }
}
