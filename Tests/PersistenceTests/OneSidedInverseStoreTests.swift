import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// How a store keeps a relationship whose inverse does not name it back, which Xcode warns
/// of and Core Data loads: by the inverse the relationship names itself.
@Suite("One-sided inverses in a store")
struct OneSidedInverseStoreTests {
    /// `Book.pages` names `Page.book` as its inverse; `Page.book` names none.
    static func pagesModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(
            name: "Pages",
            entities: [
                EntityDescription(
                    name: "Book",
                    attributes: [AttributeDescription(name: "title", type: .string)],
                    relationships: [
                        RelationshipDescription(name: "pages", destinationEntityName: "Page", inverseName: "book", isToMany: true)
                    ]
                ),
                EntityDescription(
                    name: "Page",
                    attributes: [AttributeDescription(name: "number", type: .integer32)],
                    relationships: [
                        RelationshipDescription(name: "book", destinationEntityName: "Book")
                    ]
                ),
            ]
        )
    }

    @Test("the to-many is kept in its named inverse's foreign key", arguments: TestBackend.allCases)
    func toManyThroughOneSidedToOne(backend: TestBackend) async throws {
        let model = try Self.pagesModel()
        #expect(model.warnings.count == 1)
        try await withContainer(backend, model: model) { container in
            let context = container.newContext()
            let book = try context.insertObject(entityName: "Book")
            book.setValue(.string("First"), forKey: "title")
            let page = try context.insertObject(entityName: "Page")
            page.setValue(.integer(1), forKey: "number")
            book.addDestination(page, forKey: "pages")
            // Adding to pages sets the inverse it names.
            #expect(page.destinationID(forKey: "book") == book.objectID)
            try await context.save()
            let fresh = container.newContext()
            let reread = try await fresh.existingObject(with: book.objectID)
            #expect(try await reread.destinations(forKey: "pages").map(\.objectID) == [page.objectID])
            #expect(try await fresh.existingObject(with: page.objectID).destinationID(forKey: "book") == book.objectID)
        }
    }

    /// A many-to-many whose one side names the other, which names none, with the naming side
    /// sorting first and last. The store's layout shares a join table only between two sides
    /// that name each other (where the naming side sorts last, it would have none): refused,
    /// saying what to change, rather than loaded into a store that cannot keep it.
    @Test("a one-sided many-to-many is refused", arguments: [("Author", "Book"), ("Writer", "Book")])
    func oneSidedManyToMany(named: String, other: String) throws {
        let error = try #require(
            ModelFixtures.error([
                EntityDescription(
                    name: named,
                    relationships: [
                        RelationshipDescription(name: "works", destinationEntityName: other, inverseName: "makers", isToMany: true)
                    ]
                ),
                EntityDescription(
                    name: other,
                    relationships: [
                        RelationshipDescription(name: "makers", destinationEntityName: named, isToMany: true)
                    ]
                ),
            ])
        )
        #expect(error.code == .inconsistentInverse && error.entity == named && error.property == "works")
        #expect(error.message.contains("many-to-many") && error.message.contains("'\(other).makers'"), "\(error.message)")
    }
}
