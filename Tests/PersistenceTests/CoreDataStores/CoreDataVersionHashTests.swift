import Foundation
import Testing

@testable import Persistence

/// Core Data's own entity version hashes, computed from the model files: every store Apple
/// wrote carries, byte for byte, those of the version that wrote it.
@Suite("Core Data's entity version hashes")
struct CoreDataVersionHashTests {
    @Test(arguments: AppleFixtures.all)
    func everyAppleStoreCarriesItsVersionsHashes(store: AppleFixtures.Store) async throws {
        try await AppleFixtures.withCopy(of: store) { url in
            let stored = try await PersistentStore.metadata(at: url).versionHashes
            let computed = try store.model().coreDataEntityVersionHashes
            #expect(stored.count == computed.count)
            for (entity, hash) in stored.sorted(by: { $0.key < $1.key }) {
                #expect(computed[entity] == hash, "\(entity)")
            }
        }
    }

    /// Each version's hashes are its own: no two versions of a fixture model share them all.
    @Test(arguments: [AppleFixtures.cars[0], AppleFixtures.colourPosts[0], AppleFixtures.bookmarks[0], AppleFixtures.feedback[0]])
    func versionsOfOneModelHaveDifferentHashes(store: AppleFixtures.Store) throws {
        let hashes = try store.versionedModel().versions.map(\.coreDataEntityVersionHashes)
        #expect(Set(hashes).count == hashes.count)
    }

    /// What counts and what does not, on a model of our own: a default value or a renaming
    /// identifier leaves the hash as it was; optionality, an order, a count do not.
    @Test func onlyWhatStorageDependsOnChangesTheHash() throws {
        func hash(_ attributes: String, _ relationship: String = "") throws -> Data {
            let model = try ModelFixtures.model(
                """
                <entity name="Book" representedClassName="Book">\(attributes)\(relationship)</entity>
                <entity name="Page" representedClassName="Page"/>
                """
            )
            return try #require(model.coreDataEntityVersionHashes["Book"])
        }
        let title = #"<attribute name="title" attributeType="String"/>"#
        let base = try hash(title)
        #expect(try hash(#"<attribute name="title" attributeType="String" defaultValueString="x" elementID="name"/>"#) == base)
        #expect(try hash(#"<attribute name="title" optional="YES" attributeType="String"/>"#) != base)
        #expect(try hash(#"<attribute name="title" attributeType="String" versionHashModifier="2"/>"#) != base)
        let pages = #"<relationship name="pages" toMany="YES" destinationEntity="Page"/>"#
        #expect(try hash(title, pages) != base)
        #expect(try hash(title, #"<relationship name="pages" toMany="YES" ordered="YES" destinationEntity="Page"/>"#) != hash(title, pages))
        #expect(try hash(title, #"<relationship name="pages" toMany="YES" maxCount="5" destinationEntity="Page"/>"#) != hash(title, pages))
        #expect(try hash(title, #"<relationship name="pages" toMany="YES" deletionRule="Cascade" destinationEntity="Page"/>"#) == hash(title, pages))
    }
}
