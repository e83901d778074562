// Imports Foundation and Persistence as an app does (not @testable): a name both modules
// declared at the top level would not compile here.
import Foundation
import Persistence
import PersistenceTesting
import Testing

@Suite struct FoundationNamesTests {
    @Test(arguments: TestEngine.allCases)
    func fetchSortDescriptorsAndFoundationsOwnLiveSideBySide(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            let container = try await PersistentContainer.open(model: try ShopModels.v1(), store: url, options: .createIfMissing, logger: testLogger)
            let context = container.newContext()
            for (name, price) in [("b", 2.0), ("A", 3.0), ("c", 1.0)] {
                let item = try context.insertObject(entityName: "Item")
                item.setValue(.string(name), forKey: "name")
                item.setValue(.double(price), forKey: "price")
            }
            try await context.save()
            let byName = try await context.fetch(FetchRequest(entityName: "Item", sortDescriptors: [.init(key: "name", caseInsensitive: true)]))
            #expect(byName.map { $0.value(forKey: "name") } == ["A", "b", "c"])
            let byPrice = try await context.fetch(
                FetchRequest(entityName: "Item", sortDescriptors: [FetchRequest.SortDescriptor(key: "price", ascending: false)])
            )
            #expect(byPrice.map { $0.value(forKey: "name") } == ["A", "b", "c"])
            await container.store.close()
            // Foundation's SortDescriptor, in the same file.
            let prices = [2.0, 3.0, 1.0].sorted(using: SortDescriptor(\Double.self, order: .reverse))
            #expect(prices == [3.0, 2.0, 1.0])
        }
    }
}
