/// The order a save writes for one object's ordered to-many relationship: the rows of
/// `table` whose `ownerColumn` holds the owner's key, each found by its `memberColumn`,
/// take their position among `members` in `orderColumn`.
struct OrderedMembers: Sendable {
    let owner: ObjectID
    let members: [ObjectID]
    let table: String
    let ownerColumn: String
    let memberColumn: String
    let orderColumn: String
}

extension ManagedObjectContext {
    /// Makes `object.key`, a to-many, hold `destinations` and, when it is ordered, in their
    /// order. `current` is what it holds now: those not among `destinations` leave it. With
    /// `nil` nothing leaves (an object a migration has just made holds nothing else).
    func setToMany(_ object: ManagedObject, key: String, to destinations: [ManagedObject], replacing current: [ManagedObject]?) {
        guard let relationship = object.layout.relationships[key], relationship.isToMany else {
            noteIssue(
                .init(
                    code: .unknownKey,
                    entity: object.entity.name,
                    objectID: object.objectID,
                    key: key,
                    message: "'\(key)' is not a to-many relationship of \(object.entity.name)"
                )
            )
            return
        }
        var wanted: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        for destination in destinations where seen.insert(ObjectIdentifier(destination)).inserted { wanted.append(destination) }
        let present = Set((current ?? []).map(ObjectIdentifier.init))
        for old in current ?? [] where !seen.contains(ObjectIdentifier(old)) {
            changeToMany(object, key: key, destination: old, add: false)
        }
        for new in wanted where current == nil || !present.contains(ObjectIdentifier(new)) {
            changeToMany(object, key: key, destination: new, add: true)
        }
        guard relationship.isOrdered else { return }
        let owner = RelationshipKey(owner: object.objectID, key: key)
        state.withLock { $0.orderChanges[owner] = wanted.map(\.objectID) }
        object.state.withLock { _ = $0.changedKeys.insert(key) }
        noteChanged(object)
    }

    /// `saved`, the destinations of `object.key`, in the order set since the last save if
    /// one was: the members given first in theirs, any others after them as they were.
    func withPendingOrder(_ saved: [ManagedObject], of object: ManagedObject, key: String) -> [ManagedObject] {
        guard let order = state.withLock({ $0.orderChanges[RelationshipKey(owner: object.objectID, key: key)] }) else { return saved }
        let position = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return saved.enumerated().sorted { lhs, rhs in
            let left = position[lhs.element.objectID] ?? order.count + lhs.offset
            let right = position[rhs.element.objectID] ?? order.count + rhs.offset
            return left < right
        }.map(\.element)
    }

    /// The orders set since the last save, with where the save writes each.
    func pendingReorders() -> [OrderedMembers] {
        let changes = state.withLock { $0.orderChanges }
        let schema = store.schema
        return changes.compactMap { owner, members in
            guard let object = registeredObject(for: owner.owner), !object.isDeleted,
                let relationship = object.layout.relationships[owner.key]
            else { return nil }
            switch schema.storage(of: relationship, in: object.entity) {
            case .inverseForeignKey(let table, let column)?, .hiddenForeignKey(let table, let column)?:
                guard let order = schema.orderColumn(of: relationship, in: object.entity) else { return nil }
                return OrderedMembers(
                    owner: owner.owner,
                    members: members,
                    table: table.name,
                    ownerColumn: column,
                    memberColumn: schema.dialect.name("Z_PK"),
                    orderColumn: order
                )
            case .joinTable(let join, let fromSource)?:
                guard let order = join.orderColumn(fromSource: fromSource) else { return nil }
                return OrderedMembers(
                    owner: owner.owner,
                    members: members,
                    table: join.name,
                    ownerColumn: fromSource ? join.sourceColumn : join.destinationColumn,
                    memberColumn: fromSource ? join.destinationColumn : join.sourceColumn,
                    orderColumn: order
                )
            case .foreignKey?, nil:
                return nil
            }
        }
    }
}
