extension InPlacePlanner {
    /// Core Data's entity-type columns (`ZITEM.Z5_OWNER`: the `Z_ENT` of the row `ZOWNER`
    /// names, beside a to-one whose destination has sub-entities), set from the rows the keys
    /// name once every table and column has its destination name and every row its
    /// destination number: a key may have moved, and the row it names may have been
    /// renumbered.
    mutating func planEntityTypeColumns() {
        var done = Set<String>()
        for entity in destination.entities {
            guard let table = to.table(for: entity.name) else { continue }
            for (relationship, typeColumn) in table.entityTypeColumns.sorted(by: { $0.key < $1.key }) {
                guard done.insert("\(table.name).\(typeColumn.name)").inserted,
                    let key = table.column(for: relationship),
                    let target = destination.relationship(named: relationship, of: entity).flatMap({ to.table(for: $0.destinationEntityName) })
                else { continue }
                add(
                    .fillEntityTypes,
                    """
                    UPDATE \(identifier: table.name) SET \(identifier: typeColumn.name) = \
                    (SELECT t.\(storeName: "Z_ENT") FROM \(identifier: target.name) t WHERE t.\(storeName: "Z_PK") = \(identifier: table.name).\(identifier: key.name))
                    """
                )
            }
        }
    }
}
