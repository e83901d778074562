/// The number of each entity of a model in a store: its `Z_ENT`, which tells the rows of an
/// inheritance tree apart in their root's table, and which `Z_SUPER`, `Z_PRIMARYKEY` and the
/// join tables' names (`Z_3TAGS`) are written with.
///
/// Core Data numbers a model's entities by walking each inheritance tree from its root,
/// roots and siblings in name order (``coreData(_:)``): `Car` 1, its sub-entity `SportCar` 2,
/// that one's sub-entity `ExpensiveSportCar` 3, then `Person` 4. A store's own
/// `Z_PRIMARYKEY` says how its rows are numbered (``stored(_:in:)``), and is what counts
/// when reading it: stores created before by another numbering keep theirs.
///
/// ```swift
/// let numbering = EntityNumbering.coreData(model)
/// numbering.number(of: "SportCar")   // 2
/// let schema = StoreSchema(model: model, dialect: .sqlite, numbering: numbering)
/// ```
public struct EntityNumbering: Sendable, Hashable, CustomStringConvertible {
    /// Entity name → number.
    public let numbers: [String: Int]

    init(numbers: [String: Int]) {
        self.numbers = numbers
    }

    /// The number of the entity named `name`.
    public func number(of name: String) -> Int? { numbers[name] }

    /// Core Data's numbering of `model`: each inheritance tree walked depth first from its
    /// root, roots and the sub-entities of each entity in name order ignoring case, from 1
    /// (`SyncableSettingsMetadata` 1 before `SyncFeatureEntity` 2, as Apple's stores number them).
    public static func coreData(_ model: ManagedObjectModel) -> EntityNumbering {
        var numbers: [String: Int] = [:]
        func walk(_ entity: EntityDescription) {
            guard numbers[entity.name] == nil else { return }
            numbers[entity.name] = numbers.count + 1
            for child in model.subentities(of: entity).sorted(by: { precedes($0.name, $1.name) }) { walk(child) }
        }
        for root in model.entities.filter({ $0.parentName == nil }).sorted(by: { precedes($0.name, $1.name) }) { walk(root) }
        // An entity in a parent cycle has no root; the model refuses those, but number it.
        for entity in model.entities { walk(entity) }
        return EntityNumbering(numbers: numbers)
    }

    /// Core Data's name order: ignoring case, then by case.
    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        let (left, right) = (lhs.lowercased(), rhs.lowercased())
        return left != right ? left < right : lhs < rhs
    }

    /// The numbering of the first releases of this framework, which numbered every entity
    /// in name order; stores it created keep it (their `Z_PRIMARYKEY` says so).
    static func nameOrder(_ model: ManagedObjectModel) -> EntityNumbering {
        EntityNumbering(numbers: Dictionary(uniqueKeysWithValues: model.entities.enumerated().map { ($1.name, $0 + 1) }))
    }

    /// The numbering a store's `Z_PRIMARYKEY` gives `model`'s entities: `storeEntities` is
    /// its number → name. An entity is found by its name, else by its renaming identifier
    /// (Core Data keeps an entity's old name there after a rename). An entity the store does
    /// not list — an incompatible store's — is numbered after the store's largest number.
    public static func stored(_ storeEntities: [Int: String], in model: ManagedObjectModel) -> EntityNumbering {
        let byName = Dictionary(storeEntities.map { ($1, $0) }, uniquingKeysWith: min)
        var numbers: [String: Int] = [:]
        var taken = Set<Int>()
        for entity in model.entities {
            let number = byName[entity.name] ?? entity.renamingIdentifier.flatMap { byName[$0] }
            if let number, !taken.contains(number) {
                numbers[entity.name] = number
                taken.insert(number)
            }
        }
        var next = (storeEntities.keys.max() ?? 0) + 1
        for entity in EntityNumbering.coreData(model).inOrder where numbers[entity] == nil {
            numbers[entity] = next
            next += 1
        }
        return EntityNumbering(numbers: numbers)
    }

    /// The numbering of the store `connection` is open on, from its `Z_PRIMARYKEY`.
    static func read(from connection: any DatabaseConnection, model: ManagedObjectModel) throws -> EntityNumbering {
        var entities: [Int: String] = [:]
        for row in try connection.rows("SELECT \(storeName: "Z_ENT"), \(storeName: "Z_NAME") FROM \(storeName: "Z_PRIMARYKEY")") {
            if let number = row[0].int64, let name = row[1].text { entities[Int(number)] = name }
        }
        return .stored(entities, in: model)
    }

    /// The entity names by number.
    var inOrder: [String] {
        numbers.sorted { $0.value < $1.value }.map(\.key)
    }

    /// The entities after their numbers, in order: `1 Author, 2 Book, 3 Page`.
    public var description: String {
        numbers.sorted { $0.value < $1.value }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }
}
