import Foundation
import Testing

@testable import Persistence

extension ModelTests {
    /// Entity version hashes change exactly when the stored shape of an entity changes.
    @Suite("Entity version hashes")
    struct VersionHashes {
        static let book = EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription(name: "title", type: .string, isOptional: false),
                AttributeDescription(name: "price", type: .float, isOptional: false, defaultValue: 0, minValue: 0.0, maxValue: 1000.0),
                AttributeDescription(name: "scratch", type: .string, isTransient: true),
            ],
            relationships: [
                RelationshipDescription(name: "pages", destinationEntityName: "Page", inverseName: "book", isToMany: true, deleteRule: .cascade)
            ]
        )
        static let page = EntityDescription(
            name: "Page",
            attributes: [AttributeDescription(name: "number", type: .integer16, isOptional: false)],
            relationships: [RelationshipDescription(name: "book", destinationEntityName: "Book", inverseName: "pages")]
        )

        static func hash(of book: EntityDescription, page: EntityDescription = page) throws -> Data {
            let model = try ManagedObjectModel(name: "M", entities: [book, page])
            return model.versionHash(of: try #require(model.entity(named: book.name)))
        }

        @Test("a hash is 32 bytes of SHA-256 and the same every time")
        func stable() throws {
            let first = try Self.hash(of: Self.book)
            #expect(first.count == 32)
            #expect(try Self.hash(of: Self.book) == first)
            let v1 = try ManagedObjectModel(contentsOf: ModelFixtures.bookStore.appendingPathComponent("BookStore.xcdatamodel"))
            let again = try ManagedObjectModel(contentsOf: ModelFixtures.bookStore.appendingPathComponent("BookStore.xcdatamodel"))
            #expect(v1.entityVersionHashes == again.entityVersionHashes)
            #expect(Set(v1.entityVersionHashes.keys) == ["Book", "Page"])
            #expect(v1.entityVersionHashes["Book"] != v1.entityVersionHashes["Page"])
        }

        @Test("the hash of BookStore's first Book is pinned: stores keep it, so it must never drift")
        func pinned() throws {
            let v1 = try ManagedObjectModel(contentsOf: ModelFixtures.bookStore.appendingPathComponent("BookStore.xcdatamodel"))
            let hex = try #require(v1.entityVersionHashes["Book"]).map { String(format: "%02x", $0) }.joined()
            #expect(hex == "ae6d9d852f9d6337ba976fd37dfe67a377d588b72f0e1707bbf624c2614578bf")
        }

        struct Change: Sendable, CustomTestStringConvertible {
            var testDescription: String
            var apply: @Sendable (inout EntityDescription) -> Void
        }

        static let storageChanges: [Change] = [
            Change(testDescription: "attribute type") { $0.attributes[1].type = .double },
            Change(testDescription: "attribute optionality") { $0.attributes[0].isOptional = true },
            Change(testDescription: "attribute name") { $0.attributes[0].name = "name" },
            Change(testDescription: "attribute version hash modifier") { $0.attributes[0].versionHashModifier = "2" },
            Change(testDescription: "attribute becomes transient") { $0.attributes[0].isTransient = true },
            Change(testDescription: "transient attribute becomes stored") { $0.attributes[2].isTransient = false },
            Change(testDescription: "attribute added") { $0.attributes.append(AttributeDescription(name: "author", type: .string)) },
            Change(testDescription: "attribute removed") { $0.attributes.remove(at: 1) },
            Change(testDescription: "relationship to-many") { $0.relationships[0].isToMany = false },
            Change(testDescription: "relationship ordered") { $0.relationships[0].isOrdered = true },
            Change(testDescription: "relationship optionality") { $0.relationships[0].isOptional = false },
            Change(testDescription: "relationship version hash modifier") { $0.relationships[0].versionHashModifier = "x" },
            Change(testDescription: "entity version hash modifier") { $0.versionHashModifier = "2" },
            Change(testDescription: "entity abstract") { $0.isAbstract = true },
        ]

        @Test("a change to storage changes the hash", arguments: storageChanges)
        func changesHash(_ change: Change) throws {
            var changed = Self.book
            change.apply(&changed)
            #expect(try Self.hash(of: changed) != Self.hash(of: Self.book))
        }

        static let neutralChanges: [Change] = [
            Change(testDescription: "attribute renaming identifier") { $0.attributes[0].renamingIdentifier = "name" },
            Change(testDescription: "entity renaming identifier") { $0.renamingIdentifier = "Volume" },
            Change(testDescription: "default value") { $0.attributes[1].defaultValue = .double(9.99) },
            Change(testDescription: "minimum and maximum") {
                $0.attributes[1].minValue = nil
                $0.attributes[1].maxValue = .double(5)
            },
            Change(testDescription: "user info") {
                $0.userInfo = ["a": "b"]
                $0.attributes[0].userInfo = ["c": "d"]
            },
            Change(testDescription: "represented class name") { $0.representedClassName = "BookMO" },
            Change(testDescription: "delete rule") { $0.relationships[0].deleteRule = .deny },
            Change(testDescription: "relationship counts") {
                $0.relationships[0].minCount = 1
                $0.relationships[0].maxCount = 9
            },
            Change(testDescription: "relationship renaming identifier") { $0.relationships[0].renamingIdentifier = "leaves" },
            Change(testDescription: "transient attribute's type") { $0.attributes[2].type = .integer64 },
            Change(testDescription: "transient attribute added") {
                $0.attributes.append(AttributeDescription(name: "cache", type: .binary, isTransient: true))
            },
            Change(testDescription: "property order") { $0.attributes.reverse() },
        ]

        @Test("a change that does not touch storage keeps the hash", arguments: neutralChanges)
        func keepsHash(_ change: Change) throws {
            var changed = Self.book
            change.apply(&changed)
            #expect(try Self.hash(of: changed) == Self.hash(of: Self.book))
        }

        @Test("the entity name, the parent and a relationship's destination are part of the hash")
        func namesAndShape() throws {
            let a = try ManagedObjectModel(name: "A", entities: [EntityDescription(name: "Book")])
            let b = try ManagedObjectModel(name: "B", entities: [EntityDescription(name: "Volume")])
            #expect(a.entityVersionHashes["Book"] != b.entityVersionHashes["Volume"])

            let withParent = try ManagedObjectModel(
                name: "C",
                entities: [
                    EntityDescription(name: "Base", isAbstract: true), EntityDescription(name: "Book", parentName: "Base"),
                ]
            )
            #expect(withParent.entityVersionHashes["Book"] != a.entityVersionHashes["Book"])

            func link(to destination: String) throws -> Data? {
                try ManagedObjectModel(
                    name: "D",
                    entities: [
                        EntityDescription(name: "X", relationships: [RelationshipDescription(name: "r", destinationEntityName: destination)]),
                        EntityDescription(name: "Y"), EntityDescription(name: "Z"),
                    ]
                ).entityVersionHashes["X"]
            }
            #expect(try link(to: "Y") != link(to: "Z"))
        }

        @Test("a sub-entity's hash covers inherited properties")
        func inherited() throws {
            func subHash(parentAttributeType: AttributeType) throws -> Data? {
                try ManagedObjectModel(
                    name: "M",
                    entities: [
                        EntityDescription(
                            name: "Base",
                            isAbstract: true,
                            attributes: [AttributeDescription(name: "name", type: parentAttributeType)]
                        ),
                        EntityDescription(name: "Book", parentName: "Base", attributes: [AttributeDescription(name: "title", type: .string)]),
                    ]
                ).entityVersionHashes["Book"]
            }
            #expect(try subHash(parentAttributeType: .string) != subHash(parentAttributeType: .uri))
        }

        @Test("the encoding is unambiguous: moving a character between names changes the hash")
        func unambiguous() throws {
            let ab = try ManagedObjectModel(
                name: "M",
                entities: [
                    EntityDescription(name: "Ab", attributes: [AttributeDescription(name: "c", type: .string)])
                ]
            ).entityVersionHashes["Ab"]
            let a = try ManagedObjectModel(
                name: "M",
                entities: [
                    EntityDescription(name: "A", attributes: [AttributeDescription(name: "bc", type: .string)])
                ]
            ).entityVersionHashes["A"]
            #expect(ab != a)
            var first = VersionHashEncoder()
            var second = VersionHashEncoder()
            first.string("ab")
            first.string("c")
            second.string("a")
            second.string("bc")
            #expect(first.bytes != second.bytes)
        }

        @Test("BookStore's five versions have pairwise different hash sets")
        func bookStoreVersionsDiffer() throws {
            let versions = try VersionedModel(contentsOf: ModelFixtures.bookStore).versions
            #expect(versions.count == 5)
            for (i, a) in versions.enumerated() {
                for b in versions[(i + 1)...] {
                    #expect(a.entityVersionHashes != b.entityVersionHashes, "\(a.name) and \(b.name) hash alike")
                }
            }
            // v3 → v4 → v5 only touch Publication: Page keeps its hash.
            #expect(versions[2].entityVersionHashes["Page"] == versions[4].entityVersionHashes["Page"])
            #expect(versions[0].entityVersionHashes["Page"] == versions[1].entityVersionHashes["Page"])
            #expect(versions[1].entityVersionHashes["Page"] != versions[2].entityVersionHashes["Page"])
        }

        @Test("metadata written by a version is compatible with that version only")
        func compatibility() throws {
            let versions = try VersionedModel(contentsOf: ModelFixtures.bookStore)
            let metadata = StoreMetadata(model: try #require(versions.version(named: "BookStore 4")), storeType: "SQLite")
            #expect(versions.version(matching: metadata)?.name == "BookStore 4")
            #expect(!versions.current.isCompatible(with: metadata))
        }
    }
}
