import Foundation

extension ManagedObjectModel {
    /// Loads a model version from an `.xcdatamodel` folder (or its `contents` file).
    ///
    /// The version name is the folder name without its extension:
    ///
    /// ```swift
    /// let v2 = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "Migrations/BookStore.xcdatamodeld/BookStore 2.xcdatamodel"))
    /// v2.name // "BookStore 2"
    /// ```
    ///
    /// - Throws: ``ModelError`` with code `missingFile` if there is nothing to read, or any
    ///   error of ``init(xml:name:file:)``.
    public init(contentsOf url: URL) throws(ModelError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelError(.missingFile, "there is no model at this path; pass an .xcdatamodel folder or its contents file", file: url.path)
        }
        let folder = isDirectory.boolValue ? url : url.deletingLastPathComponent()
        let contents = isDirectory.boolValue ? url.appendingPathComponent("contents") : url
        if isDirectory.boolValue, !FileManager.default.fileExists(atPath: contents.path),
            FileManager.default.fileExists(atPath: url.appendingPathComponent("elements").path)
        {
            // Xcode 3 kept the model as a compiled keyed archive (`elements`, `layout`), whose
            // encoding of entities and properties Apple never documented; Xcode 4 and later
            // read it and write the XML `contents` that every later model has.
            throw ModelError(
                .missingFile,
                "this model folder was saved by Xcode 3: it holds 'elements', a compiled archive, and no 'contents' XML; "
                    + "open the model once in Xcode 4 or later and save it, which writes 'contents' (Core Data loads the model the same)",
                file: url.path
            )
        }
        let data: Data
        do {
            data = try Data(contentsOf: contents)
        } catch {
            throw ModelError(
                .missingFile,
                "cannot read the model's contents file (\(error.localizedDescription)); an .xcdatamodel folder holds a file named 'contents'",
                file: contents.path
            )
        }
        try self.init(xml: data, name: folder.deletingPathExtension().lastPathComponent, file: contents.path)
    }

    /// Parses a model from the XML of a `contents` file; `name` is the version name.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel(xml: Data(xmlText.utf8), name: "BookStore", file: "contents")
    /// ```
    ///
    /// - Throws: ``ModelError`` for malformed XML, unknown attribute types, values that do
    ///   not parse, missing required XML attributes and every validation error of
    ///   ``init(name:versionIdentifier:entities:)``, with `file` and the line of the element at fault.
    ///   What Core Data loads but Xcode warns of is in ``warnings``, with file and line.
    public init(xml: Data, name: String, file: String? = nil) throws(ModelError) {
        let parsed = try XMLModelParser.parse(xml, file: file)
        do throws(ModelError) {
            self = try ManagedObjectModel(name: name, versionIdentifier: parsed.versionIdentifier, entities: parsed.entities)
            // Validation's warnings, like its errors, know the entity and property but not the line.
            let located = warnings.map { warning in
                var located = warning
                located.file = located.file ?? file
                located.line = located.line ?? parsed.line(entity: warning.entity, property: warning.property)
                return located
            }
            warnings = (parsed.warnings + located).sorted { ($0.line ?? 0) < ($1.line ?? 0) }
        } catch {
            // Validation knows the entity and property but not where they are in the file.
            var located = error
            located.file = located.file ?? file
            located.line = located.line ?? parsed.line(entity: error.entity, property: error.property)
            throw located
        }
    }
}
