import Foundation
import Logging

/// A row to write into a new store at a model version: its entity, its attribute values,
/// and its relationships by the labels of other rows. What migration tests start from
/// (`MigrationTestKit` of PersistenceTesting), and what `persistence fixture` reads from a
/// JSON file to freeze a store per shipped version.
///
/// ```swift
/// let rows = [
///     FixtureRow("Book", label: "dune", ["title": .string("Dune"), "price": .double(9.5)]),
///     FixtureRow("Page", ["number": .integer(1)], relationships: ["book": ["dune"]]),
/// ]
/// try await FixtureRow.write(rows, into: url, model: v1, logger: logger)
/// ```
public struct FixtureRow: Sendable, Hashable {
    /// The entity the row is an instance of.
    public var entity: String
    /// What other rows call this one in their ``relationships``; `nil` when none does.
    public var label: String?
    /// Attribute name → value; attributes not named keep their default.
    public var values: [String: AttributeValue]
    /// Relationship name → the labels of the rows it leads to (one for a to-one).
    public var relationships: [String: [String]]

    /// A row of `entity` with `values`, named `label` for other rows' relationships.
    public init(_ entity: String, label: String? = nil, _ values: [String: AttributeValue], relationships: [String: [String]] = [:]) {
        self.entity = entity
        self.label = label
        self.values = values
        self.relationships = relationships
    }

    /// Writes `rows` into a new store at `url` of `model`, in one save; a store already
    /// there is refused and left as it is.
    ///
    /// - Throws: ``FixtureError`` for a row of an entity, attribute, relationship or label
    ///   `model` does not have, or a store already at `url`; what the save throws.
    public static func write(_ rows: [FixtureRow], into url: StoreURL, model: ManagedObjectModel, logger: Logger) async throws {
        try check(rows, against: model)
        do {
            _ = try await PersistentStore.metadata(at: url)
            throw FixtureError("a store is already at \(url); a fixture is written into a new one. Name another place, or remove it first")
        } catch let error as StoreError where error.code == .storeNotFound {
            // Absent: written below. Any other error (unreachable, damaged) is the caller's.
        }
        let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: logger)
        do {
            let context = container.newContext()
            var objects: [(row: FixtureRow, object: ManagedObject)] = []
            var labelled: [String: ManagedObject] = [:]
            for row in rows {
                let object = try context.insertObject(entityName: row.entity)
                for (key, value) in row.values { object.setValue(value, forKey: key) }
                if let label = row.label { labelled[label] = object }
                objects.append((row, object))
            }
            for (row, object) in objects {
                for (key, labels) in row.relationships.sorted(by: { $0.key < $1.key }) {
                    let destinations = labels.compactMap { labelled[$0] }
                    if model.entity(named: row.entity).flatMap({ model.relationship(named: key, of: $0) })?.isToMany == true {
                        for destination in destinations { object.addDestination(destination, forKey: key) }
                    } else {
                        object.setDestination(destinations.first, forKey: key)
                    }
                }
            }
            try await context.save()
        } catch {
            // The store was made here: rows it could not hold (a required value left out)
            // leave nothing behind.
            await container.store.close()
            try? await PersistentStore.destroy(at: url, logger: logger)
            throw error
        }
        await container.store.close()
    }

    /// Refuses rows `model` cannot hold, naming the first: an entity, attribute or
    /// relationship it does not have, a label no row has, two rows with one label.
    static func check(_ rows: [FixtureRow], against model: ManagedObjectModel) throws(FixtureError) {
        var labels: Set<String> = []
        for row in rows {
            if let label = row.label, !labels.insert(label).inserted { throw FixtureError("two rows are labelled '\(label)'") }
        }
        for (index, row) in rows.enumerated() {
            let place = "row \(index + 1) (\(row.entity))"
            guard let entity = model.entity(named: row.entity) else { throw FixtureError("\(place): '\(model.name)' has no entity \(row.entity)") }
            for key in row.values.keys.sorted() where model.attribute(named: key, of: entity) == nil {
                throw FixtureError("\(place): '\(model.name)' has no attribute \(row.entity).\(key)")
            }
            for (key, targets) in row.relationships.sorted(by: { $0.key < $1.key }) {
                guard let relationship = model.relationship(named: key, of: entity) else {
                    throw FixtureError("\(place): '\(model.name)' has no relationship \(row.entity).\(key)")
                }
                guard relationship.isToMany || targets.count <= 1 else {
                    throw FixtureError("\(place): \(row.entity).\(key) is to-one, and names \(targets.count) rows")
                }
                for target in targets where !labels.contains(target) { throw FixtureError("\(place): no row is labelled '\(target)' (\(key))") }
            }
        }
    }
}

/// Rows or a fixture file that a model version cannot hold, or a place already taken.
public struct FixtureError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the row, entity, attribute, relationship or label, and what to do.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
