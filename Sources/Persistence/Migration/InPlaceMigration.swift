/// Placeholder: in-place SQL for inferred mappings is not available in this build, so every
/// step is streamed.
struct InPlaceMigration: Sendable {
    struct Unsupported: Error, Sendable { let reason: String }

    static func plan(mapping: MappingModel, source: ManagedObjectModel, destination: ManagedObjectModel, dialect: SQLDialect) -> Result<InPlaceMigration, Unsupported> {
        .failure(Unsupported(reason: "in-place migration is not available"))
    }

    var statements: [String] { [] }

    func run(on connection: any DatabaseConnection, metadata: StoreMetadata) throws {}
}
