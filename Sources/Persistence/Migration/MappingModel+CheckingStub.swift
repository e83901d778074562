import Foundation

extension MappingModel {
    /// Checks value expressions against both models (replaced by the full checker).
    public func check(source: ManagedObjectModel, destination: ManagedObjectModel) throws(MigrationError) {}
}

extension MappingModel {
    /// Loads the mapping files of a folder (replaced by the file loader).
    public static func load(directory: URL, versions: VersionedModel) throws(MigrationError) -> [MappingModel] { [] }
}
