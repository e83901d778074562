@testable import Persistence

/// A model with every attribute type, every relationship shape and an entity hierarchy.
enum LibraryModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(
            name: "Library",
            versionIdentifier: "1",
            entities: [
                EntityDescription(
                    name: "Author",
                    attributes: [
                        AttributeDescription(name: "name", type: .string, isOptional: false, minValue: .integer(1), maxValue: .integer(40)),
                        AttributeDescription(name: "born", type: .date),
                    ],
                    relationships: [
                        RelationshipDescription(
                            name: "books",
                            destinationEntityName: "Book",
                            inverseName: "authors",
                            isToMany: true,
                            deleteRule: .nullify
                        ),
                        RelationshipDescription(name: "portrait", destinationEntityName: "Portrait", inverseName: "author", deleteRule: .cascade),
                    ]
                ),
                EntityDescription(
                    name: "Book",
                    attributes: [
                        AttributeDescription(name: "title", type: .string, isOptional: false),
                        AttributeDescription(
                            name: "price",
                            type: .float,
                            isOptional: false,
                            defaultValue: .double(0),
                            minValue: .double(0),
                            maxValue: .double(1000)
                        ),
                        AttributeDescription(name: "isbn", type: .string),
                        AttributeDescription(name: "cached", type: .string, isTransient: true),
                    ],
                    relationships: [
                        RelationshipDescription(
                            name: "pages",
                            destinationEntityName: "Page",
                            inverseName: "book",
                            isToMany: true,
                            deleteRule: .cascade
                        ),
                        RelationshipDescription(
                            name: "authors",
                            destinationEntityName: "Author",
                            inverseName: "books",
                            isToMany: true,
                            deleteRule: .nullify
                        ),
                        RelationshipDescription(name: "shelf", destinationEntityName: "Shelf", inverseName: "books", deleteRule: .nullify),
                    ]
                ),
                EntityDescription(
                    name: "Page",
                    attributes: [
                        AttributeDescription(name: "number", type: .integer16, isOptional: false, defaultValue: .integer(0)),
                        AttributeDescription(name: "text", type: .string),
                    ],
                    relationships: [
                        RelationshipDescription(name: "book", destinationEntityName: "Book", inverseName: "pages", deleteRule: .nullify)
                    ]
                ),
                EntityDescription(
                    name: "Portrait",
                    attributes: [
                        AttributeDescription(name: "image", type: .binary)
                    ],
                    relationships: [
                        RelationshipDescription(name: "author", destinationEntityName: "Author", inverseName: "portrait", deleteRule: .nullify)
                    ]
                ),
                EntityDescription(
                    name: "Shelf",
                    attributes: [
                        AttributeDescription(name: "label", type: .string)
                    ],
                    relationships: [
                        RelationshipDescription(
                            name: "books",
                            destinationEntityName: "Book",
                            inverseName: "shelf",
                            isToMany: true,
                            maxCount: 3,
                            deleteRule: .deny
                        )
                    ]
                ),
                EntityDescription(
                    name: "Item",
                    isAbstract: true,
                    attributes: [
                        AttributeDescription(name: "name", type: .string)
                    ]
                ),
                EntityDescription(
                    name: "Tool",
                    parentName: "Item",
                    attributes: [
                        AttributeDescription(name: "weight", type: .double)
                    ]
                ),
                EntityDescription(
                    name: "Gadget",
                    parentName: "Item",
                    attributes: [
                        AttributeDescription(name: "voltage", type: .integer32)
                    ]
                ),
                EntityDescription(
                    name: "Sample",
                    attributes: [
                        AttributeDescription(name: "i16", type: .integer16),
                        AttributeDescription(name: "i32", type: .integer32),
                        AttributeDescription(name: "i64", type: .integer64),
                        AttributeDescription(name: "double", type: .double),
                        AttributeDescription(name: "float", type: .float),
                        AttributeDescription(name: "decimal", type: .decimal),
                        AttributeDescription(name: "string", type: .string),
                        AttributeDescription(name: "flag", type: .boolean),
                        AttributeDescription(name: "date", type: .date),
                        AttributeDescription(name: "data", type: .binary),
                        AttributeDescription(name: "uuid", type: .uuid),
                        AttributeDescription(name: "uri", type: .uri),
                    ]
                ),
            ]
        )
    }
}

/// Objects of ``LibraryModel`` for the suites that make books, pages and authors.
protocol LibraryObjects {}

extension LibraryObjects {
    func book(_ context: ManagedObjectContext, _ title: String) throws -> ManagedObject {
        let book = try context.insertObject(entityName: "Book")
        book.setValue(.string(title), forKey: "title")
        return book
    }

    func page(_ context: ManagedObjectContext, _ number: Int64, of book: ManagedObject?) throws -> ManagedObject {
        let page = try context.insertObject(entityName: "Page")
        page.setValue(.integer(number), forKey: "number")
        page.setDestination(book, forKey: "book")
        return page
    }

    func author(_ context: ManagedObjectContext, _ name: String) throws -> ManagedObject {
        let author = try context.insertObject(entityName: "Author")
        author.setValue(.string(name), forKey: "name")
        return author
    }
}
