import Foundation

extension ManagedObjectModel {
    /// Loads a model version from an `.xcdatamodel` folder (or its `contents` file).
    public init(contentsOf url: URL) throws(ModelError) {
        throw ModelError(.missingFile, "not implemented yet", file: url.path)
    }

    /// Parses a model from the XML of a `contents` file; `name` is the version name.
    public init(xml: Data, name: String, file: String? = nil) throws(ModelError) {
        throw ModelError(.malformedXML, "not implemented yet", file: file)
    }

    /// The model as Xcode's `contents` XML.
    public func xmlData() -> Data { Data() }
}
