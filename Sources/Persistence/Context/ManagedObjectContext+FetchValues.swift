extension ManagedObjectContext {
    /// Some properties of the objects matching a request, in its order and window, read in
    /// one statement without making managed objects: Core Data's dictionary result type.
    /// For reads that change nothing, such as encoding a response.
    ///
    /// As in Core Data, the values are the store's as last saved: this context's unsaved
    /// changes do not count, whatever ``FetchRequest/includesPendingChanges`` says.
    ///
    /// ```swift
    /// let request = FetchRequest(entityName: "Publication", predicate: try Predicate(format: "SELF == %@", .object(id)))
    /// let found = try await context.fetchValues(request, properties: ["title", .init("pages.@count", as: "pageCount")])
    /// let pageCount = found.first?.value(forKey: "pageCount").integerValue
    /// ```
    ///
    /// - Throws: ``ContextError`` for an unknown entity; ``ExpressionError`` for a key path
    ///   that is no property to fetch (a transient attribute, a to-many relationship itself),
    ///   or two properties of one name; ``StoreError`` when the store cannot be read.
    public func fetchValues(_ request: FetchRequest, properties: [FetchRequest.Property]) async throws -> [FetchedValues] {
        let layout = try layout(request.entityName)
        let predicate = try request.predicate.map { try $0.substituting(request.substitutionVariables) }
        let schema = store.schema
        let selection = try store.compiledSelections.entry(for: .init(entityName: layout.entity.name, properties: properties)) {
            var positions: [String: Int] = [:]
            for (position, property) in properties.enumerated() {
                guard positions.updateValue(position, forKey: property.name) == nil else {
                    throw ExpressionError(.unsupported, "two properties to fetch are named '\(property.name)'; give one another name with `as:`")
                }
            }
            var compiler = SQLCompiler(schema: schema, entity: layout.entity)
            let columns = try properties.map { try compiler.selected($0.keyPath) }
            return .init(compiler: compiler, columns: columns, positions: positions)
        }
        let (selected, positions) = (selection.columns, selection.positions)
        let (query, rows) = try await storedRows(
            request,
            layout,
            predicate,
            limit: request.fetchLimit,
            offset: request.fetchOffset,
            selecting: .columns(selected.map(\.sql)),
            compiler: selection.compiler
        )
        return try rows.map { row in
            let (primaryKey, layout) = try identity(of: row, query: query)
            let objectID = ObjectID(entityName: layout.entity.name, rootEntityName: layout.table.rootEntityName, key: .permanent(primaryKey))
            var values: [FetchedValues.Value] = []
            values.reserveCapacity(selected.count)
            for (index, column) in selected.enumerated() {
                switch column {
                case .value(_, let type):
                    values.append(.attribute(ValueCoding.attributeValue(row[index + 2], type: type)))
                case .object(_, let entity, let root):
                    values.append(.destination(row[index + 2].int64.map { ObjectID(entityName: entity, rootEntityName: root, key: .permanent($0)) }))
                }
            }
            return FetchedValues(objectID: objectID, positions: positions, values: values)
        }
    }
}
