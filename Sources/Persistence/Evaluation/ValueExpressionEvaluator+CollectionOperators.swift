extension ValueExpressionEvaluator {
    /// A collection operator (``CollectionOperator``) after a to-many key path, applied to
    /// `objects` with the rest of the path as its argument, as Key-Value Coding does:
    /// `$source.shelves.@distinctUnionOfSets.books` is every shelf's books, each once.
    /// After `@count` the rest goes on from the number; the unions flatten collections.
    func collectionOperator(
        _ key: String,
        _ rest: ArraySlice<String>,
        on objects: [ManagedObject],
        walk: (MigrationValue, ArraySlice<String>) async throws -> MigrationValue
    ) async throws -> MigrationValue {
        guard let operation = CollectionOperator(rawValue: key) else {
            throw failure("the collection operator \(key) is not supported; use one of \(CollectionOperator.names)")
        }
        if operation == .count { return try await walk(.value(.integer(Int64(objects.count))), rest) }
        guard !rest.isEmpty else { throw failure("the collection operator \(key) needs a key path after it, as in \(key).price") }
        var items: [MigrationValue] = []
        for object in objects {
            switch try await walk(.object(object), rest) {
            case .objects(let many): items += many.map(MigrationValue.object)
            case .list(let list): items += list
            case .value(.null): continue
            case let item: items.append(item)
            }
        }
        if operation.isAggregate {
            let values = items.compactMap { item -> AttributeValue? in
                if case .value(let value) = item, !value.isNull { return value }
                return nil
            }
            do throws(ExpressionError) {
                return .value(try operation.aggregate(values))
            } catch {
                throw failure(error.message)
            }
        }
        if operation.isDistinct {
            var seenObjects = Set<ObjectIdentifier>()
            var seenValues = Set<AttributeValue>()
            items = items.filter { item in
                switch item {
                case .object(let object): seenObjects.insert(ObjectIdentifier(object)).inserted
                case .value(let value): seenValues.insert(value).inserted
                default: true
                }
            }
        }
        // Objects stay objects; anything else is a list.
        let found = items.compactMap { item -> ManagedObject? in
            if case .object(let object) = item { return object }
            return nil
        }
        return found.count == items.count ? .objects(found) : .list(items)
    }
}
