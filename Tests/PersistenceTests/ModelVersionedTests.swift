import Foundation
import Testing

@testable import Persistence

extension ModelTests {
    /// Loading an `.xcdatamodeld` bundle: every version, in natural order, and the current one.
    @Suite("Versioned models")
    struct Versioned {
        @Test("BookStore's five versions load in order with BookStore 5 current")
        func bookStore() throws {
            let versions = try VersionedModel(contentsOf: ModelFixtures.bookStore)
            #expect(versions.name == "BookStore")
            #expect(versions.versions.map(\.name) == ["BookStore", "BookStore 2", "BookStore 3", "BookStore 4", "BookStore 5"])
            #expect(versions.versions.map(\.versionIdentifier) == ["1", "2", "3", "4", "5"])
            #expect(versions.current.name == "BookStore 5")
            #expect(versions.current == versions.versions.last)
        }

        @Test("BookStore's versions follow the design")
        func bookStoreContents() throws {
            let versions = try VersionedModel(contentsOf: ModelFixtures.bookStore)
            let v1 = try #require(versions.version(named: "BookStore"))
            let book = try #require(v1.entity(named: "Book"))
            #expect(book.representedClassName == "Book")
            let title = try #require(book.attribute(named: "title"))
            #expect(title.type == .string && !title.isOptional)
            let price = try #require(book.attribute(named: "price"))
            #expect(price.type == .float && !price.isOptional)
            #expect(price.defaultValue == .double(0) && price.minValue == .double(0) && price.maxValue == .double(1000))
            let pages = try #require(book.relationship(named: "pages"))
            #expect(pages.isToMany && pages.destinationEntityName == "Page" && pages.inverseName == "book" && pages.deleteRule == .cascade)
            let page = try #require(v1.entity(named: "Page"))
            let number = try #require(page.attribute(named: "number"))
            #expect(number.type == .integer16 && !number.isOptional && number.defaultValue == .integer(0))
            #expect(page.attribute(named: "text")?.isOptional == true)
            let back = try #require(page.relationship(named: "book"))
            #expect(!back.isToMany && back.isOptional && back.deleteRule == .nullify && back.inverseName == "pages")

            let v2 = try #require(versions.version(named: "BookStore 2")?.entity(named: "Book"))
            #expect(v2.attributes.map(\.name).sorted() == ["author", "price", "title"])
            #expect(v2.attribute(named: "author")?.isOptional == true)

            let v3 = try #require(versions.version(named: "BookStore 3"))
            #expect(v3.entity(named: "Book") == nil)
            let publication = try #require(v3.entity(named: "Publication"))
            #expect(publication.renamingIdentifier == "Book")
            #expect(publication.attributes.map(\.name).sorted() == ["author", "price", "title"])
            #expect(publication.relationship(named: "pages")?.inverseName == "publication")
            let link = try #require(v3.entity(named: "Page")?.relationship(named: "publication"))
            #expect(link.renamingIdentifier == "book" && link.destinationEntityName == "Publication")

            let v4 = try #require(versions.version(named: "BookStore 4")?.entity(named: "Publication"))
            #expect(v4.attributes.map(\.name).sorted() == ["firstName", "lastName", "price", "title"])
            let v5 = try #require(versions.version(named: "BookStore 5")?.entity(named: "Publication"))
            #expect(v5.attributes.map(\.name).sorted() == ["firstName", "lastName", "price", "synopsis", "title"])
            #expect(v5.attribute(named: "synopsis")?.type == .string)
        }

        @Test("versions sort naturally: 10 after 9, the unnumbered first")
        func naturalOrder() throws {
            let folder = try ModelFixtures.temporaryFolder().appendingPathComponent("Shop.xcdatamodeld")
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let names = ["Shop"] + (2...11).map { "Shop \($0)" }
            let models = try names.shuffled().map { name in
                try ManagedObjectModel(name: name, versionIdentifier: name, entities: [EntityDescription(name: "Order")])
            }
            try VersionedModel(name: "Shop", versions: models, currentVersionName: "Shop 10").write(to: folder)

            let loaded = try VersionedModel(contentsOf: folder)
            #expect(loaded.versions.map(\.name) == names)
            #expect(loaded.current.name == "Shop 10")
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("Shop 11.xcdatamodel/contents").path))
        }

        @Test(
            "natural comparison",
            arguments: [
                ("BookStore", "BookStore 2", true), ("BookStore 2", "BookStore 10", true),
                ("BookStore 10", "BookStore 9", false), ("A 1 b", "A 1 c", true), ("Model", "Model", false),
            ]
        )
        func naturallyPrecedes(lhs: String, rhs: String, expected: Bool) {
            #expect(VersionedModel.naturallyPrecedes(lhs, rhs) == expected)
        }

        @Test("writing the BookStore bundle elsewhere and loading it gives the same versions")
        func writeBundle() throws {
            let versions = try VersionedModel(contentsOf: ModelFixtures.bookStore)
            let folder = try ModelFixtures.temporaryFolder().appendingPathComponent("BookStore.xcdatamodeld")
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            try versions.write(to: folder)
            #expect(try VersionedModel(contentsOf: folder) == versions)
        }

        // MARK: Errors

        /// A bundle with one valid version and, unless `current` is nil, an `.xccurrentversion` with this text.
        static func bundle(current: String?) throws -> URL {
            let folder = try ModelFixtures.temporaryFolder().appendingPathComponent("Shop.xcdatamodeld")
            let version = folder.appendingPathComponent("Shop.xcdatamodel")
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            try ModelFixtures.xml(#"<entity name="Order"/>"#).write(to: version.appendingPathComponent("contents"))
            if let current {
                try Data(current.utf8).write(to: folder.appendingPathComponent(".xccurrentversion"))
            }
            return folder
        }

        static func plist(_ body: String) -> String {
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            \(body)
            </plist>
            """
        }

        @Test("a valid hand-made bundle loads")
        func validBundle() throws {
            let folder = try Self.bundle(current: Self.plist("<dict><key>_XCCurrentVersionName</key><string>Shop.xcdatamodel</string></dict>"))
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            #expect(try VersionedModel(contentsOf: folder).current.name == "Shop")
        }

        @Test("a missing folder")
        func missingFolder() throws {
            let url = ModelFixtures.repositoryRoot.appendingPathComponent("Migrations/Nothing.xcdatamodeld")
            let error = try #require(ModelFixtures.versionedModelError(at: url))
            #expect(error.code == .missingFile)
            #expect(error.file == url.path)
        }

        @Test("a folder without versions")
        func noVersions() throws {
            let folder = try ModelFixtures.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let error = try #require(ModelFixtures.versionedModelError(at: folder))
            #expect(error.code == .missingFile)
            #expect(error.message.contains(".xcdatamodel"))
        }

        // A missing one is no error for one version (XcodeAcceptedModelTests).
        @Test(
            "a broken or incomplete .xccurrentversion",
            arguments: [
                ("this is not a plist <<<", ModelError.Code.malformedXML),
                (ModelTests.Versioned.plist("<dict><key>Other</key><string>Shop.xcdatamodel</string></dict>"), .missingAttribute),
                (ModelTests.Versioned.plist("<array/>"), .missingAttribute),
            ]
        )
        func brokenCurrentVersion(text: String, code: ModelError.Code) throws {
            let folder = try Self.bundle(current: text)
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let error = try #require(ModelFixtures.versionedModelError(at: folder))
            #expect(error.code == code)
            #expect(error.file?.hasSuffix("Shop.xcdatamodeld/.xccurrentversion") == true)
        }

        @Test("a current version that does not exist")
        func unknownCurrent() throws {
            let folder = try Self.bundle(current: Self.plist("<dict><key>_XCCurrentVersionName</key><string>Shop 7.xcdatamodel</string></dict>"))
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let error = try #require(ModelFixtures.versionedModelError(at: folder))
            #expect(error.code == .unknownVersion)
            #expect(error.message.contains("'Shop 7'") && error.message.contains("'Shop'"))
            #expect(error.file?.hasSuffix(".xccurrentversion") == true)
        }

        @Test("an error in one version's file names that file")
        func brokenVersion() throws {
            let folder = try Self.bundle(current: Self.plist("<dict><key>_XCCurrentVersionName</key><string>Shop.xcdatamodel</string></dict>"))
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let broken = folder.appendingPathComponent("Shop 2.xcdatamodel")
            try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
            try ModelFixtures.xml(#"<entity name="Order" parentEntity="Nope"/>"#).write(to: broken.appendingPathComponent("contents"))
            let error = try #require(ModelFixtures.versionedModelError(at: folder))
            #expect(error.code == .missingEntity)
            #expect(error.file?.hasSuffix("Shop 2.xcdatamodel/contents") == true)
            #expect(error.line == 3)
            #expect(error.entity == "Order")
        }
    }
}
