import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// Inferred mappings run as SQL inside a SQLite or PostgreSQL store: relationships change
/// shape, name and storage, and the pairs come across from both ends.
@Suite("In-place migration: relationships")
struct InPlaceMigrationRelationshipTests {
    typealias F = InPlaceFixtures

    @Test(arguments: TestEngine.allCases)
    func relationshipsAddedRemovedAndRenamed(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Book">
                <attribute name="title" attributeType="String"/>
                <relationship name="pages" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Page" inverseName="book" inverseEntity="Page"/>
            </entity>
            <entity name="Page">
                <attribute name="number" attributeType="Integer 16" defaultValueString="0"/>
                <relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="pages" inverseEntity="Book"/>
                <relationship name="note" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Note"/>
            </entity>
            <entity name="Note">
                <attribute name="text" optional="YES" attributeType="String"/>
            </entity>
            """
        )
        // Page.book becomes Page.volume, Page.note goes, Book.tags ↔ Tag.books is new.
        let v2 = try F.model(
            "V2",
            """
            <entity name="Book">
                <attribute name="title" attributeType="String"/>
                <relationship name="pages" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Page" inverseName="volume" inverseEntity="Page"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="books" inverseEntity="Tag"/>
            </entity>
            <entity name="Page">
                <attribute name="number" attributeType="Integer 16" defaultValueString="0"/>
                <relationship name="volume" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="pages" inverseEntity="Book" elementID="book"/>
            </entity>
            <entity name="Note">
                <attribute name="text" optional="YES" attributeType="String"/>
            </entity>
            <entity name="Tag">
                <attribute name="label" optional="YES" attributeType="String"/>
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="tags" inverseEntity="Book"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                let note = try context.insertObject(entityName: "Note")
                for (title, numbers) in [("A", [1, 2]), ("B", [3])] {
                    let book = try context.insertObject(entityName: "Book")
                    book.setValue(.string(title), forKey: "title")
                    for number in numbers {
                        let page = try context.insertObject(entityName: "Page")
                        page.setValue(.integer(Int64(number)), forKey: "number")
                        page.setDestination(book, forKey: "book")
                        page.setDestination(note, forKey: "note")
                    }
                }
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            for statement in [
                "DROP INDEX ZPAGE_ZBOOK_INDEX", "DROP INDEX ZPAGE_ZNOTE_INDEX", "ALTER TABLE ZPAGE DROP COLUMN ZNOTE",
                "ALTER TABLE ZPAGE RENAME COLUMN ZBOOK TO ZVOLUME", "ALTER TABLE ZPAGE RENAME COLUMN Z_FOK_BOOK TO Z_FOK_VOLUME",
                "CREATE INDEX ZPAGE_ZVOLUME_INDEX ON ZPAGE (ZVOLUME)", "CREATE INDEX Z_1TAGS_Z_4TAGS_INDEX ON Z_1TAGS (Z_4TAGS, Z_1BOOKS)",
            ] {
                #expect(SQLSpelling(migration, engine).statements.contains(statement), "\(statement)")
            }
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let context = container.newContext()
            let books = try await F.objects(context, "Book", by: "title")
            #expect(try await books[0].destinations(forKey: "pages").map { $0.value(forKey: "number") } == [1, 2])
            #expect(try await books[1].destinations(forKey: "pages").map { $0.value(forKey: "number") } == [3])
            let pages = try await F.objects(context, "Page", by: "number")
            #expect(try await pages[2].destination(forKey: "volume") === books[1])
            #expect(try await context.count(for: FetchRequest(entityName: "Note")) == 1)
            // The new many-to-many works.
            let tag = try context.insertObject(entityName: "Tag")
            tag.setValue("classic", forKey: "label")
            tag.addDestination(books[0], forKey: "books")
            try await context.save()
            let fresh = container.newContext()
            #expect(titles(try await fresh.existingObject(with: tag.objectID).destinations(forKey: "books")) == ["A"])
        }
    }

    static let authorsAndBooks = """
        <entity name="Author">
            <attribute name="name" attributeType="String"/>
            <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="authors" inverseEntity="Book"/>
        </entity>
        <entity name="Book">
            <attribute name="title" attributeType="String"/>
            <relationship name="authors" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Author" inverseName="books" inverseEntity="Author"/>
        </entity>
        """

    /// Ann wrote A and B, Bob wrote B.
    func writeAuthorsAndBooks(at url: StoreURL, model: ManagedObjectModel) async throws {
        try await makeClosedStore(at: url, model: model) { container in
            let context = container.newContext()
            let ann = try context.insertObject(entityName: "Author")
            ann.setValue("Ann", forKey: "name")
            let bob = try context.insertObject(entityName: "Author")
            bob.setValue("Bob", forKey: "name")
            let a = try context.insertObject(entityName: "Book")
            a.setValue("A", forKey: "title")
            let b = try context.insertObject(entityName: "Book")
            b.setValue("B", forKey: "title")
            a.addDestination(ann, forKey: "authors")
            b.addDestination(ann, forKey: "authors")
            b.addDestination(bob, forKey: "authors")
            try await context.save()
        }
    }

    func expectAuthorsAndBooks(_ container: PersistentContainer, authorEntity: String) async throws {
        let context = container.newContext()
        let authors = try await F.objects(context, authorEntity, by: "name")
        #expect(titles(authors, key: "name") == ["Ann", "Bob"])
        #expect(titles(try await authors[0].destinations(forKey: "books")).sorted() == ["A", "B"])
        #expect(titles(try await authors[1].destinations(forKey: "books")) == ["B"])
        let books = try await F.objects(context, "Book", by: "title")
        #expect(titles(try await books[1].destinations(forKey: "authors"), key: "name").sorted() == ["Ann", "Bob"])
    }

    @Test(arguments: TestEngine.allCases)
    func joinTableIsRenamedWhenEntityNumbersChange(engine: TestEngine) async throws {
        let v1 = try F.model("V1", Self.authorsAndBooks)
        // Agent sorts first: Author 1 → 2, Book 2 → 3, so Z_1BOOKS becomes Z_2BOOKS.
        let v2 = try F.model(
            "V2",
            Self.authorsAndBooks + #"<entity name="Agent"><attribute name="name" optional="YES" attributeType="String"/></entity>"#
        )
        try await engine.withStoreURL { url in
            try await writeAuthorsAndBooks(at: url, model: v1)

            let migration = try await F.migrate(url, from: v1, to: v2)
            #expect(SQLSpelling(migration, engine).statements.contains("ALTER TABLE Z_1BOOKS RENAME TO Z_2BOOKS"))
            #expect(SQLSpelling(migration, engine).statements.contains("ALTER TABLE Z_1BOOKS RENAME COLUMN Z_1AUTHORS TO Z_2AUTHORS"))
            #expect(!SQLSpelling(migration, engine).statements.contains { $0.hasPrefix("INSERT") }, "the pairs stay where they are")
            try await F.expectFreshSchema(url, v2)
            try await expectAuthorsAndBooks(try await F.open(url, v2), authorEntity: "Author")
        }
    }

    @Test(arguments: TestEngine.allCases)
    func joinTableIsRebuiltWhenItsOwnerChanges(engine: TestEngine) async throws {
        let v1 = try F.model("V1", Self.authorsAndBooks)
        // Writer sorts after Book, so Book.authors now owns the join table, the other way round.
        let v2 = try F.model(
            "V2",
            """
            <entity name="Writer" elementID="Author">
                <attribute name="name" attributeType="String"/>
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="authors" inverseEntity="Book"/>
            </entity>
            <entity name="Book">
                <attribute name="title" attributeType="String"/>
                <relationship name="authors" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Writer" inverseName="books" inverseEntity="Writer"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await writeAuthorsAndBooks(at: url, model: v1)

            let migration = try await F.migrate(url, from: v1, to: v2)
            #expect(
                SQLSpelling(migration, engine).statements.contains(
                    "INSERT INTO Z_1AUTHORS (Z_1BOOKS, Z_2AUTHORS) SELECT Z_2BOOKS, Z_1AUTHORS FROM Z_1BOOKS"
                )
            )
            #expect(SQLSpelling(migration, engine).statements.contains("DROP TABLE Z_1BOOKS"))
            try await F.expectFreshSchema(url, v2)
            try await expectAuthorsAndBooks(try await F.open(url, v2), authorEntity: "Writer")
        }
    }

    static let booksAndPages = """
        <entity name="Book">
            <attribute name="title" attributeType="String"/>
            <relationship name="pages" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Page" inverseName="book" inverseEntity="Page"/>
        </entity>
        <entity name="Page">
            <attribute name="number" attributeType="Integer 16" defaultValueString="0"/>
            <relationship name="book" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Book" inverseName="pages" inverseEntity="Book"/>
        </entity>
        """

    @Test(arguments: TestEngine.allCases)
    func toOneBecomesManyToManyThroughAJoinTable(engine: TestEngine) async throws {
        let v1 = try F.model("V1", Self.booksAndPages)
        let v2 = try F.model(
            "V2",
            """
            <entity name="Book">
                <attribute name="title" attributeType="String"/>
                <relationship name="pages" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Page" inverseName="books" inverseEntity="Page"/>
            </entity>
            <entity name="Page">
                <attribute name="number" attributeType="Integer 16" defaultValueString="0"/>
                <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="pages" inverseEntity="Book" elementID="book"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                for (title, numbers) in [("A", [1, 2]), ("B", [3])] {
                    let book = try context.insertObject(entityName: "Book")
                    book.setValue(.string(title), forKey: "title")
                    for number in numbers {
                        let page = try context.insertObject(entityName: "Page")
                        page.setValue(.integer(Int64(number)), forKey: "number")
                        page.setDestination(book, forKey: "book")
                    }
                }
                try context.insertObject(entityName: "Page").setValue(4, forKey: "number")
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            #expect(
                SQLSpelling(migration, engine).statements.contains(
                    "INSERT INTO Z_1PAGES (Z_1BOOKS, Z_2PAGES) SELECT ZBOOK, Z_PK FROM ZPAGE WHERE ZBOOK IS NOT NULL"
                )
            )
            #expect(SQLSpelling(migration, engine).statements.contains("ALTER TABLE ZPAGE DROP COLUMN ZBOOK"))
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let context = container.newContext()
            let books = try await F.objects(context, "Book", by: "title")
            #expect(
                try await books[0].destinations(forKey: "pages").map { $0.value(forKey: "number") }.sorted { $0.integerValue! < $1.integerValue! }
                    == [1, 2]
            )
            let pages = try await F.objects(context, "Page", by: "number")
            #expect(titles(try await pages[2].destinations(forKey: "books")) == ["B"])
            #expect(try await pages[3].destinations(forKey: "books").isEmpty)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func foreignKeyMovesToTheOtherSide(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Address">
                <attribute name="street" attributeType="String"/>
                <relationship name="residents" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Person" inverseName="address" inverseEntity="Person"/>
            </entity>
            <entity name="Person">
                <attribute name="name" attributeType="String"/>
                <relationship name="address" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Address" inverseName="residents" inverseEntity="Address"/>
            </entity>
            """
        )
        // A person now has many addresses, an address one resident: the key moves to ZADDRESS.
        let v2 = try F.model(
            "V2",
            """
            <entity name="Address">
                <attribute name="street" attributeType="String"/>
                <relationship name="resident" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="addresses" inverseEntity="Person" elementID="residents"/>
            </entity>
            <entity name="Person">
                <attribute name="name" attributeType="String"/>
                <relationship name="addresses" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Address" inverseName="resident" inverseEntity="Address" elementID="address"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                var addresses: [ManagedObject] = []
                for street in ["Main St", "Side St", "Empty St"] {
                    let address = try context.insertObject(entityName: "Address")
                    address.setValue(.string(street), forKey: "street")
                    addresses.append(address)
                }
                for (name, address) in [("Ann", 0), ("Bob", 0), ("Cid", 1), ("Dan", -1)] {
                    let person = try context.insertObject(entityName: "Person")
                    person.setValue(.string(name), forKey: "name")
                    if address >= 0 { person.setDestination(addresses[address], forKey: "address") }
                }
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            #expect(
                SQLSpelling(migration, engine).statements.contains(
                    "UPDATE ZADDRESS SET ZRESIDENT = (SELECT MIN(L.Z_PK) FROM ZPERSON L WHERE L.ZADDRESS = ZADDRESS.Z_PK)"
                )
            )
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let context = container.newContext()
            let addresses = try await F.objects(context, "Address", by: "street")
            let residents = try await addresses.asyncMap { try await $0.destination(forKey: "resident")?.value(forKey: "name") ?? .null }
            // Empty St, Main St, Side St: Main St keeps the person with the smallest key.
            #expect(residents == [.null, "Ann", "Cid"])
            let people = try await F.objects(context, "Person", by: "name")
            #expect(
                try await people.asyncMap { titles(try await $0.destinations(forKey: "addresses"), key: "street") } == [
                    ["Main St"], [], ["Side St"], [],
                ]
            )
        }
    }

    @Test(arguments: TestEngine.allCases)
    func toManyBecomesToOneKeepingTheSmallestKey(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Course">
                <attribute name="title" attributeType="String"/>
                <relationship name="students" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Student" inverseName="courses" inverseEntity="Student"/>
            </entity>
            <entity name="Student">
                <attribute name="name" attributeType="String"/>
                <relationship name="courses" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Course" inverseName="students" inverseEntity="Course"/>
            </entity>
            """
        )
        let v2 = try F.model(
            "V2",
            """
            <entity name="Course">
                <attribute name="title" attributeType="String"/>
                <relationship name="students" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Student" inverseName="course" inverseEntity="Student"/>
            </entity>
            <entity name="Student">
                <attribute name="name" attributeType="String"/>
                <relationship name="course" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Course" inverseName="students" inverseEntity="Course" elementID="courses"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                var courses: [ManagedObject] = []
                for title in ["Art", "Bio", "Chem"] {
                    let course = try context.insertObject(entityName: "Course")
                    course.setValue(.string(title), forKey: "title")
                    courses.append(course)
                }
                for (name, taken) in [("Eve", [2, 1]), ("Fay", [2, 0]), ("Gus", [])] {
                    let student = try context.insertObject(entityName: "Student")
                    student.setValue(.string(name), forKey: "name")
                    for index in taken { student.addDestination(courses[index], forKey: "courses") }
                }
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            #expect(
                SQLSpelling(migration, engine).statements.contains(
                    "UPDATE ZSTUDENT SET ZCOURSE = (SELECT MIN(L.Z_1COURSES) FROM Z_1STUDENTS L WHERE L.Z_2STUDENTS = ZSTUDENT.Z_PK)"
                )
            )
            #expect(SQLSpelling(migration, engine).statements.contains("DROP TABLE Z_1STUDENTS"))
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let context = container.newContext()
            let students = try await F.objects(context, "Student", by: "name")
            let chosen = try await students.asyncMap { try await $0.destination(forKey: "course")?.value(forKey: "title") ?? .null }
            #expect(chosen == ["Bio", "Art", .null])
            let courses = try await F.objects(context, "Course", by: "title")
            #expect(titles(try await courses[0].destinations(forKey: "students"), key: "name") == ["Fay"])
            #expect(try await courses[2].destinations(forKey: "students").isEmpty)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func oneToOneGetsItsNewInverseFromTheKeptSide(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Passport">
                <attribute name="number" attributeType="String"/>
            </entity>
            <entity name="Person">
                <attribute name="name" attributeType="String"/>
                <relationship name="passport" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Passport"/>
            </entity>
            """
        )
        let v2 = try F.model(
            "V2",
            """
            <entity name="Passport">
                <attribute name="number" attributeType="String"/>
                <relationship name="holder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="passport" inverseEntity="Person"/>
            </entity>
            <entity name="Person">
                <attribute name="name" attributeType="String"/>
                <relationship name="passport" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Passport" inverseName="holder" inverseEntity="Passport"/>
            </entity>
            """
        )
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                var passports: [ManagedObject] = []
                for number in ["P1", "P2", "P3"] {
                    let passport = try context.insertObject(entityName: "Passport")
                    passport.setValue(.string(number), forKey: "number")
                    passports.append(passport)
                }
                // Without an inverse two people could share P1; a one-to-one keeps the first.
                for (name, passport) in [("Ann", 0), ("Bob", 0), ("Cid", 1)] {
                    let person = try context.insertObject(entityName: "Person")
                    person.setValue(.string(name), forKey: "name")
                    person.setDestination(passports[passport], forKey: "passport")
                }
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            #expect(
                SQLSpelling(migration, engine).statements.contains(
                    "UPDATE ZPASSPORT SET ZHOLDER = (SELECT MIN(P.Z_PK) FROM ZPERSON P WHERE P.ZPASSPORT = ZPASSPORT.Z_PK)"
                )
            )
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let context = container.newContext()
            let passports = try await F.objects(context, "Passport", by: "number")
            let holders = try await passports.asyncMap { try await $0.destination(forKey: "holder")?.value(forKey: "name") ?? .null }
            #expect(holders == ["Ann", "Cid", .null])
            let people = try await F.objects(context, "Person", by: "name")
            let held = try await people.asyncMap { try await $0.destination(forKey: "passport")?.value(forKey: "number") ?? .null }
            #expect(held == ["P1", .null, "P2"])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func selfReferentialRelationshipsFollowARenamedEntity(engine: TestEngine) async throws {
        let v1 = try F.model(
            "V1",
            """
            <entity name="Person">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="friends" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Person" inverseName="friends" inverseEntity="Person"/>
                <relationship name="manager" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="reports" inverseEntity="Person"/>
                <relationship name="reports" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Person" inverseName="manager" inverseEntity="Person"/>
            </entity>
            <entity name="Zebra"><attribute name="name" optional="YES" attributeType="String"/></entity>
            """
        )
        // Person → Employee and a new Aardvark: Person's number 1 → 2, so Z_1FRIENDS → Z_2FRIENDS.
        let v2 = try F.model(
            "V2",
            """
            <entity name="Employee" elementID="Person">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="friends" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Employee" inverseName="friends" inverseEntity="Employee"/>
                <relationship name="boss" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Employee" inverseName="reports" inverseEntity="Employee" elementID="manager"/>
                <relationship name="reports" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Employee" inverseName="boss" inverseEntity="Employee"/>
            </entity>
            <entity name="Aardvark"><attribute name="name" optional="YES" attributeType="String"/></entity>
            """
        )
        try await engine.withStoreURL { url in
            var friendsBefore: [[String]] = []
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                var people: [ManagedObject] = []
                for name in ["A", "B", "C"] {
                    let person = try context.insertObject(entityName: "Person")
                    person.setValue(.string(name), forKey: "name")
                    people.append(person)
                }
                people[0].addDestination(people[1], forKey: "friends")
                people[0].addDestination(people[2], forKey: "friends")
                people[1].setDestination(people[0], forKey: "manager")
                people[2].setDestination(people[0], forKey: "manager")
                try await context.save()
                let reading = container.newContext()
                for person in try await F.objects(reading, "Person", by: "name") {
                    friendsBefore.append(titles(try await person.destinations(forKey: "friends"), key: "name").sorted())
                }
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            #expect(SQLSpelling(migration, engine).statements.contains("ALTER TABLE Z_1FRIENDS RENAME TO Z_2FRIENDS"))
            #expect(SQLSpelling(migration, engine).statements.contains("ALTER TABLE ZPERSON RENAME COLUMN ZMANAGER TO ZBOSS"))
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let context = container.newContext()
            let people = try await F.objects(context, "Employee", by: "name")
            var friendsAfter: [[String]] = []
            for person in people {
                friendsAfter.append(titles(try await person.destinations(forKey: "friends"), key: "name").sorted())
            }
            #expect(friendsAfter == friendsBefore)
            #expect(friendsAfter[0] == ["B", "C"])
            #expect(titles(try await people[0].destinations(forKey: "reports"), key: "name").sorted() == ["B", "C"])
            #expect(try await people[1].destination(forKey: "boss") === people[0])
            #expect(try await people[0].destination(forKey: "boss") == nil)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func everyShapeOfTheLibraryModelFollowsARenamedEntity(engine: TestEngine) async throws {
        // Author → Writer renumbers every entity after it and flips the owner of the
        // authors/books join table; the one-to-one with Portrait keeps both keys.
        let v1 = try LibraryModel.make()
        var entities = v1.entities
        for index in entities.indices {
            if entities[index].name == "Author" {
                entities[index].name = "Writer"
                entities[index].renamingIdentifier = "Author"
            }
            for relationship in entities[index].relationships.indices
            where entities[index].relationships[relationship].destinationEntityName == "Author" {
                entities[index].relationships[relationship].destinationEntityName = "Writer"
            }
        }
        let v2 = try ManagedObjectModel(name: "Library 2", versionIdentifier: "2", entities: entities)
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                let ann = try context.insertObject(entityName: "Author")
                ann.setValue("Ann", forKey: "name")
                let bob = try context.insertObject(entityName: "Author")
                bob.setValue("Bob", forKey: "name")
                try context.insertObject(entityName: "Portrait").setDestination(ann, forKey: "author")
                let shelf = try context.insertObject(entityName: "Shelf")
                for title in ["X", "Y"] {
                    let book = try context.insertObject(entityName: "Book")
                    book.setValue(.string(title), forKey: "title")
                    book.addDestination(ann, forKey: "authors")
                    if title == "Y" { book.addDestination(bob, forKey: "authors") }
                    book.setDestination(shelf, forKey: "shelf")
                    try context.insertObject(entityName: "Page").setDestination(book, forKey: "book")
                }
                try context.insertObject(entityName: "Tool").setValue("Hammer", forKey: "name")
                try await context.save()
            }

            let migration = try await F.migrate(url, from: v1, to: v2)
            #expect(
                SQLSpelling(migration, engine).statements.contains(
                    "INSERT INTO Z_1AUTHORS (Z_1BOOKS, Z_9AUTHORS) SELECT Z_2BOOKS, Z_1AUTHORS FROM Z_1BOOKS"
                )
            )
            #expect(SQLSpelling(migration, engine).statements.contains { $0.hasPrefix("UPDATE ZITEM SET Z_ENT = CASE Z_ENT") })
            try await F.expectFreshSchema(url, v2)

            let container = try await F.open(url, v2)
            let context = container.newContext()
            let writers = try await F.objects(context, "Writer", by: "name")
            #expect(titles(try await writers[0].destinations(forKey: "books")).sorted() == ["X", "Y"])
            #expect(titles(try await writers[1].destinations(forKey: "books")) == ["Y"])
            let portrait = try #require(try await context.fetch(FetchRequest(entityName: "Portrait")).first)
            #expect(try await portrait.destination(forKey: "author") === writers[0])
            #expect(try await writers[0].destination(forKey: "portrait") === portrait)
            let books = try await F.objects(context, "Book", by: "title")
            #expect(try await books.asyncMap { try await $0.destinations(forKey: "pages").count } == [1, 1])
            #expect(try await books[0].destination(forKey: "shelf") != nil)
            #expect(titles(try await context.fetch(FetchRequest(entityName: "Item")), key: "name") == ["Hammer"])
        }
    }
}
