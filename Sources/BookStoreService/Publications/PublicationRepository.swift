import Logging
import Persistence

/// Publications and their pages in a store of the current model: what the routes do,
/// in the framework's terms. Each call works in a context of its own and saves at most
/// once, so a refused change writes nothing.
///
/// ```swift
/// let repository = PublicationRepository(container: container)
/// let list = try await repository.publications(try ListQuery.publications([("q", "book")]))
/// ```
struct PublicationRepository: Sendable {
    static let publicationEntity = "Publication"
    static let pageEntity = "Page"

    let container: PersistentContainer

    // MARK: Publications

    /// A list of publications, read as it is written (see ``ListResponseBody``).
    func publications(_ query: ListQuery) async throws -> ListResponseBody<PublicationResource> {
        try await list(Self.publicationEntity, query, properties: PublicationResource.properties, make: PublicationResource.init)
    }

    /// A list's window of `entityName` (with `extra` conditions), each row shown by `make`
    /// from `properties`; the order's values of the last row make the next page's cursor when
    /// the page is full; a page at an offset also counts every match (a keyset page does
    /// without: counting is a scan).
    ///
    /// A window of at most ``ListResponseBody/batchSize`` rows twice over (the default
    /// limit's) that skips no rows (a keyset page, the first page) is read whole in one
    /// statement; any other as IDs first, then in batches as it is written, so that long
    /// texts never sit in memory a hundred rows at a time.
    private func list<Item: JSONWritable & Sendable>(
        _ entityName: String,
        _ query: ListQuery,
        extra: [Persistence.Predicate] = [],
        properties: [FetchRequest.Property],
        make: @escaping @Sendable (FetchedValues) -> Item
    ) async throws -> ListResponseBody<Item> {
        let context = container.newContext()
        var query = query
        if case .id(let id)? = query.after {
            // After a row in another order than the id's: after its values now.
            let row = FetchRequest(
                entityName: entityName,
                predicate: .comparison(Comparison(.evaluatedObject, .equal, .object(try context.objectID(entityName: entityName, primaryKey: id))))
            )
            guard let values = try await context.fetchValues(row, properties: query.cursorProperties).first else {
                throw Problem.notFound(
                    "there is no \(entityName.lowercased()) with id \(id) to continue after; a page's next carries its place even once its row is gone"
                )
            }
            query.after = .cursor(query.cursor(after: values))
        }
        let total = query.after == nil ? try await context.count(for: query.countRequest(entityName: entityName, extra: extra)) : nil
        // Not past an offset: PostgreSQL computes the select list (a page count's subquery)
        // for every row it skips, where the IDs alone cost nothing.
        let readsWhole = query.limit <= 2 * ListResponseBody<Item>.batchSize && query.offset == 0
        // The cursor's values beside the item's, each name once.
        let read =
            readsWhole
            ? properties + query.cursorProperties.filter { property in !properties.contains { $0.name == property.name } }
            : query.cursorProperties
        let rows = try await context.fetchValues(query.fetchRequest(entityName: entityName, extra: extra), properties: read)
        let next = rows.count == query.limit ? rows.last.map { query.cursor(after: $0).text } : nil
        let window: ListResponseBody<Item>.Window = query.after == nil ? .offset(query.offset, total: total ?? 0) : .keyset
        if readsWhole {
            return ListResponseBody(rows: .read(rows.map(make)), window: window, limit: query.limit, next: next)
        }
        let load: @Sendable ([ObjectID]) async throws -> [Item] = { [query] batch in
            try await values(batch, of: entityName, query, properties: properties, extra: extra).map(make)
        }
        return ListResponseBody(rows: .inBatches(ids: rows.map(\.objectID), load: load), window: window, limit: query.limit, next: next)
    }

    /// What the resources show of a batch of a list's IDs that still match its filters, in
    /// the IDs' order: one read, without managed objects, so that one batch's rows are
    /// released before the next is read.
    private func values(
        _ batch: [ObjectID],
        of entityName: String,
        _ query: ListQuery,
        properties: [FetchRequest.Property],
        extra: [Persistence.Predicate] = []
    ) async throws -> [FetchedValues] {
        let found = try await container.newContext().fetchValues(
            query.batchRequest(entityName: entityName, ids: batch, extra: extra),
            properties: properties
        )
        let byID = Dictionary(found.map { ($0.objectID, $0) }, uniquingKeysWith: { first, _ in first })
        return batch.compactMap { byID[$0] }
    }

    /// One publication with its page count, in one read.
    func publication(_ id: Int64) async throws -> PublicationResource {
        PublicationResource(try await values(Self.publicationEntity, id, properties: PublicationResource.properties, name: "publication"))
    }

    func createPublication(_ input: PublicationInput) async throws -> PublicationResource {
        let context = container.newContext()
        let object = try context.insertObject(entityName: Self.publicationEntity)
        input.apply(to: object, replacing: true)
        try await context.save()
        return PublicationResource(object, pageCount: 0)
    }

    /// PUT (`replacing`) or PATCH.
    func updatePublication(_ id: Int64, _ input: PublicationInput, replacing: Bool) async throws -> PublicationResource {
        let context = container.newContext()
        let object = try await publication(id, in: context)
        input.apply(to: object, replacing: replacing)
        try await context.save()
        return try await resource(object)
    }

    /// Deletes the publication; the model's cascade rule deletes its pages in the same save.
    func deletePublication(_ id: Int64) async throws {
        let context = container.newContext()
        context.delete(try await publication(id, in: context))
        try await context.save()
    }

    // MARK: Pages

    /// A list of a publication's pages, read as it is written (see ``ListResponseBody``).
    func pages(of publicationID: Int64, _ query: ListQuery) async throws -> ListResponseBody<PageResource> {
        let context = container.newContext()
        let owner = try await publication(publicationID, in: context)
        let ofOwner = try Persistence.Predicate(format: "publication == %@", .object(owner.objectID))
        return try await list(Self.pageEntity, query, extra: [ofOwner], properties: PageResource.properties, make: PageResource.init)
    }

    func page(_ id: Int64) async throws -> PageResource {
        PageResource(try await values(Self.pageEntity, id, properties: PageResource.properties, name: "page"))
    }

    /// Adds a page; without a `number` it becomes the publication's next page.
    func createPage(in publicationID: Int64, _ input: PageInput) async throws -> PageResource {
        let context = container.newContext()
        let owner = try await publication(publicationID, in: context)
        var input = input
        if case .absent = input.number {
            let numbers = try await owner.destinations(forKey: "pages").compactMap { $0.value(forKey: "number").integerValue }
            input.number = .value(min((numbers.max() ?? 0) + 1, Int64(Int16.max)))
        }
        let object = try context.insertObject(entityName: Self.pageEntity)
        input.apply(to: object, replacing: true)
        object.setDestination(owner, forKey: "publication")
        try await context.save()
        return PageResource(object)
    }

    func updatePage(_ id: Int64, _ input: PageInput) async throws -> PageResource {
        let context = container.newContext()
        let object = try await page(id, in: context)
        input.apply(to: object, replacing: false)
        try await context.save()
        return PageResource(object)
    }

    func deletePage(_ id: Int64) async throws {
        let context = container.newContext()
        context.delete(try await page(id, in: context))
        try await context.save()
    }

    // MARK: Lookups

    private func publication(_ id: Int64, in context: ManagedObjectContext) async throws -> ManagedObject {
        try await object(Self.publicationEntity, id, in: context, name: "publication")
    }

    private func page(_ id: Int64, in context: ManagedObjectContext) async throws -> ManagedObject {
        try await object(Self.pageEntity, id, in: context, name: "page")
    }

    /// What a resource shows of one object, read in one statement without making the object.
    private func values(_ entityName: String, _ id: Int64, properties: [FetchRequest.Property], name: String) async throws -> FetchedValues {
        let context = container.newContext()
        let objectID = try context.objectID(entityName: entityName, primaryKey: id)
        let request = FetchRequest(entityName: entityName, predicate: .comparison(Comparison(.evaluatedObject, .equal, .object(objectID))))
        guard let found = try await context.fetchValues(request, properties: properties).first else {
            throw Problem.notFound("there is no \(name) with id \(id)")
        }
        return found
    }

    private func object(_ entityName: String, _ id: Int64, in context: ManagedObjectContext, name: String) async throws -> ManagedObject {
        do {
            return try await context.existingObject(with: try context.objectID(entityName: entityName, primaryKey: id))
        } catch let error as StoreError where error.code == .objectNotFound {
            throw Problem.notFound("there is no \(name) with id \(id)")
        }
    }

    private func resource(_ publication: ManagedObject) async throws -> PublicationResource {
        let counts = try await pageCounts(of: [publication.objectID.primaryKey ?? 0])
        return PublicationResource(publication, pageCount: counts[publication.objectID.primaryKey ?? 0] ?? 0)
    }

    /// The number of pages of each publication, in one grouped query rather than one
    /// count per publication of a list.
    private func pageCounts(of publicationIDs: [Int64]) async throws -> [Int64: Int] {
        guard !publicationIDs.isEmpty else { return [:] }
        let schema = container.store.schema
        guard let pages = schema.table(for: Self.pageEntity), let owner = pages.column(for: "publication") else { return [:] }
        let column: SQL = "\(identifier: owner.name)"
        let sql: SQL = """
            SELECT \(column), count(*) FROM \(identifier: pages.name) WHERE \(column) IN (\(list: publicationIDs.map(DatabaseValue.integer))) \
            GROUP BY \(column)
            """
        let rows = try await container.store.database.read { try $0.rows(sql) }
        var counts: [Int64: Int] = [:]
        for row in rows {
            if let id = row[0].int64, let count = row[1].int64 { counts[id] = Int(count) }
        }
        return counts
    }
}
