/// Where each property of an entity is in its objects' ``PropertyValues``: worked out once
/// per entity layout and shared by every object of it.
final class PropertySlots: Sendable {
    /// The properties' names, in slot order.
    let names: [String]
    /// Each name's slot.
    let index: [String: Int]

    init(names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (slot, name) in names.enumerated() where index[name] == nil { index[name] = slot }
        self.index = index
    }
}

/// An object's values of one kind (its attributes, or its to-one destinations), in an array
/// ordered by its entity's ``PropertySlots`` rather than a dictionary keyed by name: an object
/// read from a row is filled slot by slot, and a save reads the slots in column order,
/// without hashing a name per value or copying a table per object.
///
/// Read and written by name too, as a dictionary is. A key without a slot is kept aside
/// (an attribute key the entity does not have, set by mistake, which validation reports).
struct PropertyValues<Value: Sendable>: Sendable, Sequence {
    let slots: PropertySlots
    /// The values, by slot.
    var values: [Value]
    /// Values set under keys that have no slot.
    private(set) var unknown: [String: Value] = [:]

    init(slots: PropertySlots, values: [Value]) {
        precondition(values.count == slots.names.count, "one value per slot")
        self.slots = slots
        self.values = values
    }

    /// The value under `key`; `nil` for a key neither a slot nor set aside has. Written with
    /// ``updateValue(_:forKey:)``: a slot always holds a value, so there is no removing one.
    subscript(key: String) -> Value? {
        if let slot = slots.index[key] { return values[slot] }
        return unknown.isEmpty ? nil : unknown[key]
    }

    /// Sets the value under `key`; returns the one it replaced.
    @discardableResult
    mutating func updateValue(_ value: Value, forKey key: String) -> Value? {
        if let slot = slots.index[key] {
            defer { values[slot] = value }
            return values[slot]
        }
        return unknown.updateValue(value, forKey: key)
    }

    /// Every key with a value: the slots' names, then the keys set aside.
    var keys: [String] { slots.names + unknown.keys }

    func makeIterator() -> IndexingIterator<[(key: String, value: Value)]> {
        (zip(slots.names, values).map { (key: $0.0, value: $0.1) } + unknown.map { (key: $0.key, value: $0.value) }).makeIterator()
    }
}
