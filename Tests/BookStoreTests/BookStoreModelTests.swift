import BookStoreTesting
import Foundation
import Testing

@testable import BookStore
@testable import Persistence

@Suite("BookStore model versions")
struct BookStoreModelTests {
    @Test func fiveVersionsWithTheFifthCurrent() throws {
        let models = try loadModels()
        #expect(models.versions.versions.map(\.name) == ["BookStore", "BookStore 2", "BookStore 3", "BookStore 4", "BookStore 5"])
        #expect(models.current.name == "BookStore 5")
        #expect(try models.model(version: 3).entity(named: "Publication") != nil)
        #expect(throws: BookStoreError.self) { try models.model(version: 6) }
    }

    @Test func eachVersionHasTheShapeTheBookGivesIt() throws {
        let models = try loadModels()
        let v1 = try models.model(version: 1)
        let book = try #require(v1.entity(named: "Book"))
        #expect(v1.attribute(named: "title", of: book)?.isOptional == false)
        #expect(v1.attribute(named: "price", of: book)?.type == .float)
        #expect(v1.attribute(named: "price", of: book)?.minValue?.doubleValue == 0)
        #expect(v1.attribute(named: "price", of: book)?.maxValue?.doubleValue == 1000)
        #expect(v1.relationship(named: "pages", of: book)?.deleteRule == .cascade)
        #expect(v1.attribute(named: "author", of: book) == nil)

        let v2 = try models.model(version: 2)
        #expect(v2.entity(named: "Book")?.attribute(named: "author")?.isOptional == true)

        let v3 = try models.model(version: 3)
        #expect(v3.entity(named: "Book") == nil)
        #expect(v3.entity(named: "Publication")?.renamingIdentifier == "Book")
        #expect(v3.entity(named: "Page")?.relationship(named: "publication")?.renamingIdentifier == "book")

        let v4 = try models.model(version: 4)
        let publication4 = try #require(v4.entity(named: "Publication"))
        #expect(publication4.attribute(named: "author") == nil)
        #expect(publication4.attribute(named: "firstName") != nil)
        #expect(publication4.attribute(named: "lastName") != nil)

        let v5 = try models.model(version: 5)
        #expect(v5.entity(named: "Publication")?.attribute(named: "synopsis")?.type == .string)
    }

    @Test func versionHashesTellEveryVersionApart() throws {
        let models = try loadModels()
        let hashes = models.versions.versions.map(\.entityVersionHashes)
        #expect(Set(hashes).count == 5)
    }
}
