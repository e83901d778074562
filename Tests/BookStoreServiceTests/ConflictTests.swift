import BookStoreTesting
import Foundation
import HTTPTypes
import PersistenceTesting
import Testing

@testable import BookStoreService
@testable import Persistence

/// Two writers of one publication: the one that read it before the other saved is refused
/// with a 409 problem, and the other's change stays.
@Suite("concurrent changes")
struct ConflictTests {
    @Test(arguments: TestEngine.allCases)
    func aWriteOverAChangeMadeSinceItWasReadIsA409AndChangesNothing(_ backend: TestEngine) async throws {
        try await backend.withStoreURL { url in
            try await seed(url)
            let container = try await PersistentContainer.open(model: try loadModels().current, store: url, logger: quietLogger)
            let first = container.newContext()
            let second = container.newContext()
            let id = try first.objectID(entityName: "Publication", primaryKey: 1)
            let stale = try await first.existingObject(with: id)
            let fresh = try await second.existingObject(with: id)

            fresh.setValue(.string("Changed first"), forKey: "title")
            try await second.save()
            stale.setValue(.string("Changed second"), forKey: "title")
            let error = await #expect(throws: StoreError.self) { try await first.save() }
            let problem = try #require(error.flatMap { Problem(domainError: $0) })
            #expect(problem.status == .conflict)
            #expect(problem.kind == .conflict)

            let reread = try await container.newContext().existingObject(with: id)
            #expect(reread.value(forKey: "title").stringValue == "Changed first")
            await container.store.close()
        }
    }

    /// A save that breaks a uniqueness constraint is a 409 whose detail names the values.
    @Test(arguments: TestEngine.allCases)
    func aUniquenessConstraintsClashIsA409NamingTheValues(_ backend: TestEngine) async throws {
        let model = try ManagedObjectModel(
            name: "Shelves",
            entities: [
                EntityDescription(name: "Shelf", attributes: [AttributeDescription(name: "code", type: .string)], uniquenessConstraints: [["code"]])
            ]
        )
        try await backend.withStoreURL { url in
            let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: quietLogger)
            let first = container.newContext()
            try first.insertObject(entityName: "Shelf").setValue("Ærø-7", forKey: "code")
            try await first.save()
            let second = container.newContext()
            try second.insertObject(entityName: "Shelf").setValue("Ærø-7", forKey: "code")
            let error = try #require(await #expect(throws: ConstraintConflictError.self) { try await second.save() })
            let problem = try #require(Problem(domainError: error), "\(error)")
            #expect(problem.status == .conflict && problem.kind == .conflict)
            #expect(problem.detail.contains("\"Ærø-7\""), "\(problem.detail)")
            #expect(try await container.newContext().count(for: FetchRequest(entityName: "Shelf")) == 1)
            await container.store.close()
        }
    }
}
