import Foundation

extension MappingModel {
    /// Loads a mapping model from a JSON file such as `Migrations/Mappings/Model3To4.json`
    /// and checks it against its two models (``check(source:destination:after:)``).
    ///
    /// The file names the source and destination versions by name; the mapping records
    /// their entity version hashes, by which a migrator later picks it for a step. Its name
    /// is the file name without extension. The format is described in
    /// `Migrations/Mappings/README.md`.
    ///
    /// ```swift
    /// let versions = try VersionedModel(contentsOf: URL(fileURLWithPath: "Migrations/BookStore.xcdatamodeld"))
    /// let model3To4 = try MappingModel(contentsOf: URL(fileURLWithPath: "Migrations/Mappings/Model3To4.json"), versions: versions)
    /// ```
    ///
    /// - Throws: ``MigrationError`` whose `file` is the file's folder and name
    ///   (`Mappings/Model3To4.json`), with the entity mapping and property at fault and a
    ///   hint: ``MigrationError/Code/invalidMappingModel`` for a file that cannot be read,
    ///   malformed JSON (with the position or key path), unknown keys, an unknown version,
    ///   entity, mapping type or property, and expressions that do not parse (with the
    ///   column); and whatever ``check(source:destination:after:)`` finds.
    public init(contentsOf url: URL, versions: VersionedModel) throws(MigrationError) {
        self = try Self.readFile(at: url, versions: versions, passes: .alone).loaded()
    }

    /// Reads a mapping model from the contents of a mapping file; see ``init(contentsOf:versions:)``.
    ///
    /// ```swift
    /// let mapping = try MappingModel(fileData: data, name: "Model3To4", versions: versions)
    /// ```
    public init(fileData data: Data, name: String, file: String? = nil, versions: VersionedModel) throws(MigrationError) {
        self = try Self.read(fileData: data, name: name, file: file, versions: versions, passes: .alone).loaded()
    }

    /// Every problem of a mapping file, one by one, each with its file and, where it is
    /// about an entity mapping or property, the line; empty when the file loads.
    ///
    /// ```swift
    /// for problem in MappingModel.problems(inFileAt: url, versions: versions) { print(problem) }
    /// // Mappings/Model3To4.json:12: PublicationToPublication.title: …
    /// ```
    public static func problems(inFileAt url: URL, versions: VersionedModel) -> [MigrationError] {
        switch readFile(at: url, versions: versions, passes: .alone) {
        case .success: []
        case .failure(let problems): problems.problems
        }
    }

    /// Reads the mapping files at `urls` as one set, and returns the mapping models that
    /// load, in the order of `urls`, with every problem found, each naming its file.
    ///
    /// Files that map the same two versions are the mapping models of one step, run one
    /// after the other into one store: a look-up in one may name an entity mapping of
    /// another (which then has to run first: the chain checks the order it chooses), and no
    /// two of them may share an entity mapping name.
    ///
    /// ```swift
    /// let (mappings, problems) = MappingModel.read(filesAt: [part1, part2], versions: versions)
    /// for problem in problems { print(problem) }
    /// ```
    public static func read(filesAt urls: [URL], versions: VersionedModel) -> (mappingModels: [MappingModel], problems: [MigrationError]) {
        var models: [MappingModel] = []
        var problems: [MigrationError] = []
        // Each file on its own first, leaving look-ups into other files for the step's check.
        for url in urls {
            switch readFile(at: url, versions: versions, passes: .unknown) {
            case .success(let mapping): models.append(mapping)
            case .failure(let found): problems.append(contentsOf: found.problems)
            }
        }
        var loaded: [MappingModel] = []
        for (index, mapping) in models.enumerated() {
            // Every file read loaded its two versions, so they are there.
            guard let source = versions.version(named: mapping.sourceModelName),
                let destination = versions.version(named: mapping.destinationModelName)
            else { continue }
            let step = models.indices.filter { $0 != index && models[$0].maps(from: source, to: destination) }.map { models[$0] }
            let found = mapping.problems(source: source, destination: destination, passes: .among(step))
            if found.isEmpty { loaded.append(mapping) } else { problems.append(contentsOf: found) }
        }
        return (loaded, problems)
    }

    /// Reads the mapping file (JSON) or Xcode mapping model at `url`.
    static func readFile(at url: URL, versions: VersionedModel, passes: StepPasses) -> Result<MappingModel, FileProblems> {
        if isXcodeMappingModel(url) {
            return readXcode(at: url, versions: versions, passes: passes)
        }
        let file = fileLabel(for: url)
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            return .failure(
                FileProblems(problems: [
                    MigrationError(
                        .invalidMappingModel,
                        "cannot read the mapping model file (\(readFailure(error)))",
                        hint: "Check that the file exists and is readable",
                        file: file
                    )
                ])
            )
        }
        return read(fileData: data, name: url.deletingPathExtension().lastPathComponent, file: file, versions: versions, passes: passes)
    }

    /// The problems of a file that does not load, uncombined.
    struct FileProblems: Error {
        let problems: [MigrationError]
    }
}

extension Result where Success == MappingModel, Failure == MappingModel.FileProblems {
    /// The mapping model read, or its problems thrown as one error.
    func loaded() throws(MigrationError) -> MappingModel {
        switch self {
        case .success(let mapping): mapping
        case .failure(let problems): throw MigrationError.combining(problems.problems)!
        }
    }
}

extension MappingModel {

    /// Reads a mapping file: the mapping model, or every problem found, each located on
    /// its line when it names an entity mapping.
    static func read(
        fileData data: Data,
        name: String,
        file: String?,
        versions: VersionedModel,
        passes: StepPasses
    ) -> Result<MappingModel, FileProblems> {
        func failure(_ problems: [MigrationError]) -> Result<MappingModel, FileProblems> {
            .failure(FileProblems(problems: problems.map { $0.locating(in: data) }))
        }
        let contents: MappingModelFile
        do {
            contents = try JSONDecoder().decode(MappingModelFile.self, from: data)
        } catch {
            return failure([Self.decodingFailure(error, data: data, file: file)])
        }
        let source: ManagedObjectModel
        let destination: ManagedObjectModel
        do throws(MigrationError) {
            source = try Self.version(contents.source, key: "source", in: versions, file: file)
            destination = try Self.version(contents.destination, key: "destination", in: versions, file: file)
        } catch {
            return failure([error])
        }
        return read(contents.entityMappings, source: source, destination: destination, name: name, file: file, passes: passes) {
            $0.locating(in: data)
        }
    }

    /// Resolves and checks the entity mappings of a file, whatever its format, among the
    /// step's other mapping models as far as they are known: the mapping model, or every
    /// problem, each passed through `locate` to give it its line.
    static func read(
        _ entries: [MappingModelFile.Entity],
        source: ManagedObjectModel,
        destination: ManagedObjectModel,
        name: String,
        file: String?,
        passes: StepPasses,
        locate: (MigrationError) -> MigrationError
    ) -> Result<MappingModel, FileProblems> {
        var builder = MappingFileReader(source: source, destination: destination, file: file)
        let mappings = builder.entityMappings(entries)
        if !builder.problems.isEmpty { return .failure(FileProblems(problems: builder.problems.map(locate))) }
        let mapping = MappingModel(name: name, source: source, destination: destination, entityMappings: mappings, file: file)
        let problems = mapping.problems(source: source, destination: destination, passes: passes)
        return problems.isEmpty ? .success(mapping) : .failure(FileProblems(problems: problems.map(locate)))
    }

    /// Loads every mapping model in a folder, `*.json` files and Xcode's `*.xcmappingmodel`
    /// folders, sorted by name; a folder that does not exist holds none.
    ///
    /// ```swift
    /// let mappings = try MappingModel.load(directory: URL(fileURLWithPath: "Migrations/Mappings"), versions: versions)
    /// let step = mappings.first { $0.maps(from: v3, to: v4) } ?? (try MappingModel.inferred(from: v3, to: v4))
    /// ```
    ///
    /// Several files may map the same pair of versions: a migrator runs them one after the
    /// other into the same destination store (Core Data's multiple passes), in the order the
    /// destination version names them (``MigrationVersion/mappingModelNames``), else in the
    /// order of the array, which this function returns in file-name order. A look-up in
    /// one of them may name an entity mapping of another (see ``read(filesAt:versions:)``).
    ///
    /// - Throws: the first file's ``MigrationError``, or `invalidMappingModel` when the path
    ///   is not a folder.
    public static func load(directory: URL, versions: VersionedModel) throws(MigrationError) -> [MappingModel] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else {
            throw MigrationError(
                .invalidMappingModel,
                "the mappings path is a file, not a folder",
                hint: "Point it at the folder that holds the mapping models (*.json, *.xcmappingmodel)",
                file: directory.lastPathComponent
            )
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw MigrationError(
                .invalidMappingModel,
                "cannot list the mappings folder (\(error.localizedDescription))",
                hint: "Check that the folder is readable",
                file: directory.lastPathComponent
            )
        }
        let (mappings, problems) = read(filesAt: mappingFileNames(names).map { directory.appendingPathComponent($0) }, versions: versions)
        if let first = problems.first {
            throw MigrationError.combining(problems.filter { $0.file == first.file })!
        }
        return mappings
    }

    /// The mapping models among the names in a folder, sorted: JSON files and Xcode's
    /// `.xcmappingmodel` folders, hidden ones left out.
    public static func mappingFileNames(_ names: [String]) -> [String] {
        names.filter { ($0.hasSuffix(".json") || $0.hasSuffix(".xcmappingmodel")) && !$0.hasPrefix(".") }.sorted()
    }

    /// The mapping model in the mapping file format: keys in the documented order,
    /// properties in the destination entity's order, two-space indents.
    ///
    /// Loading the result with the same versions gives back an equal mapping model (but for
    /// `name` and `file`, which come from the file's name). An inferred mapping written so
    /// becomes an editable starting point for a custom one.
    ///
    /// ```swift
    /// try MappingModel.inferred(from: v3, to: v4).fileData().write(to: url)
    /// ```
    public func fileData() -> Data {
        let contents = MappingModelFile(
            source: sourceModelName,
            destination: destinationModelName,
            entityMappings: entityMappings.map(Self.fileEntry)
        )
        return Data(contents.text.utf8)
    }

    /// Writes ``fileData()`` to `url`.
    public func write(to url: URL) throws(MigrationError) {
        let data = fileData()
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw MigrationError(
                .invalidMappingModel,
                "cannot write the mapping model (\(error.localizedDescription))",
                hint: "Check that the folder exists and is writable",
                file: Self.fileLabel(for: url)
            )
        }
    }

    // MARK: Helpers

    /// The file's folder and name (`Mappings/Model3To4.json`): enough to find it, without
    /// the absolute path.
    static func fileLabel(for url: URL) -> String {
        let components = url.standardizedFileURL.pathComponents.filter { $0 != "/" }
        return components.suffix(2).joined(separator: "/")
    }

    private static func fileEntry(_ mapping: EntityMapping) -> MappingModelFile.Entity {
        func properties(_ list: [PropertyMapping]) -> MappingModelFile.PropertyMap? {
            guard !list.isEmpty else { return nil }
            return MappingModelFile.PropertyMap(
                list.map { property in
                    MappingModelFile.PropertyMap.Entry(
                        name: property.name,
                        property: MappingModelFile.Property(
                            value: property.valueExpression?.format,
                            userInfo: property.userInfo.isEmpty ? nil : property.userInfo.mapValues(MappingModelFile.UserInfoValue.init)
                        )
                    )
                }
            )
        }
        return MappingModelFile.Entity(
            name: mapping.name,
            type: mapping.type.rawValue,
            source: mapping.sourceEntityName,
            destination: mapping.destinationEntityName,
            policy: mapping.policyName,
            sourceFilter: mapping.sourceFilter?.predicateFormat,
            attributes: properties(mapping.attributeMappings),
            relationships: properties(mapping.relationshipMappings),
            userInfo: mapping.userInfo.isEmpty ? nil : mapping.userInfo.mapValues(MappingModelFile.UserInfoValue.init)
        )
    }

    private static func version(_ name: String, key: String, in versions: VersionedModel, file: String?) throws(MigrationError) -> ManagedObjectModel
    {
        if let model = versions.version(named: name) { return model }
        let known = versions.versions.map { "\"\($0.name)\"" }.joined(separator: ", ")
        var hint = "Set \"\(key)\" to one of \(versions.name)'s versions: \(known) (an .xcdatamodel folder's name without its extension)"
        if let close = versions.versions.first(where: { $0.name.lowercased() == name.lowercased() || $0.name + ".xcdatamodel" == name }) {
            hint = "Did you mean \"\(close.name)\"? " + hint
        }
        throw MigrationError(.invalidMappingModel, "the \(key) version \"\(name)\" is not a version of \(versions.name)", hint: hint, file: file)
    }

    /// A `DecodingError` as a ``MigrationError``: the position of a syntax error, or the key
    /// path (`entityMappings[1].type`) of a missing, misspelt or mistyped key, with the
    /// entity mapping and property it is in when the JSON itself is readable.
    private static func decodingFailure(_ error: any Error, data: Data, file: String?) -> MigrationError {
        guard let error = error as? DecodingError else {
            return MigrationError(.invalidMappingModel, "cannot read the mapping model (\(error))", file: file)
        }
        let context: DecodingError.Context
        var message: String
        var hint: String
        switch error {
        case .dataCorrupted(let c):
            context = c
            if c.codingPath.isEmpty {
                let detail = jsonSyntaxError(in: data) ?? c.debugDescription
                let cutShort = detail.hasPrefix("the file ends")
                return MigrationError(
                    .invalidMappingModel,
                    "the file is not valid JSON: \(detail)",
                    hint: cutShort
                        ? "Close what is still open (a string's quote, then each '[' with ']' and '{' with '}'), or restore the rest of the file if it was cut short"
                        : "Fix the JSON at that position; a missing comma or quote, or a comma before '}' or ']', is the usual cause",
                    file: file
                )
            }
            message = c.debugDescription
            hint =
                c.debugDescription.hasPrefix("unknown key")
                ? "Remove or correct the key; the README in Migrations/Mappings lists every key" : "Correct the value"
        case .keyNotFound(let key, let c):
            context = c
            message = "the key \"\(key.stringValue)\" is missing"
            hint =
                key.stringValue == "type"
                ? "Add \"type\": one of \(EntityMapping.MappingType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))"
                : "Add \"\(key.stringValue)\""
        case .typeMismatch(let type, let c):
            context = c
            message = c.codingPath.last.map { "the value of \"\($0.stringValue)\" has the wrong type" } ?? "the file has the wrong shape"
            message += " (\(c.debugDescription))"
            hint = "Give it \(describe(type))"
        case .valueNotFound(let type, let c):
            context = c
            message = "a value is missing (\(c.debugDescription))"
            hint = "Give it \(describe(type)) instead of null"
        @unknown default:
            return MigrationError(.invalidMappingModel, "cannot read the mapping model (\(error))", file: file)
        }
        let path = keyPath(context.codingPath)
        if !path.isEmpty { message = "at \(path): " + message }
        let (entityMapping, property) = location(of: context.codingPath, in: data)
        return MigrationError(.invalidMappingModel, message, hint: hint, file: file, entityMapping: entityMapping, property: property)
    }

    /// Where JSON text is malformed, as `Invalid value at line 4, column 62, near "…"`.
    ///
    /// `JSONDecoder` does not say where; `JSONSerialization` does, as a byte offset
    /// ("around character 122") or a line and column, which this turns into a line and a
    /// column with the text there.
    static func jsonSyntaxError(in data: Data) -> String? {
        let description: String
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            description = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
        }
        var text = description.hasSuffix(".") ? String(description.dropLast()) : description
        if text.hasPrefix("Unexpected end of file") { return endOfFile(in: data) }
        guard let range = text.range(of: #"around character \d+"#, options: .regularExpression),
            let offset = Int(text[range].split(separator: " ").last ?? ""), offset <= data.count
        else { return text }
        let before = data.prefix(offset)
        let line = before.filter { $0 == UInt8(ascii: "\n") }.count + 1
        let lineStart = before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? before.startIndex
        let column = String(decoding: data[lineStart..<offset], as: UTF8.self).count + 1
        let rest = data[offset...].prefix { $0 != UInt8(ascii: "\n") }
        let near = String(decoding: rest, as: UTF8.self).prefix(24).trimmingCharacters(in: .whitespaces)
        text.replaceSubrange(range, with: "at line \(line), column \(column)")
        return near.isEmpty ? text : text + ", before '\(near)'"
    }

    /// Where a file that ends before its JSON does ends, and what is still open there:
    /// JSON's own error names no position for it.
    static func endOfFile(in data: Data) -> String {
        var open: [UInt8] = []
        var inString = false
        var escaped = false
        for byte in data {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): open.append(byte)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if !open.isEmpty { open.removeLast() }
            default: break
            }
        }
        let line = data.filter { $0 == UInt8(ascii: "\n") }.count + 1
        let lineStart = data.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? data.startIndex
        let column = String(decoding: data[lineStart...], as: UTF8.self).count + 1
        let still = open.map { "'\(Character(UnicodeScalar($0)))'" }.joined(separator: ", ")
        let inside = inString ? ", inside a string" : ""
        return "the file ends at line \(line), column \(column)\(inside)" + (still.isEmpty ? "" : ", with \(still) still open")
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is [String: String].Type: "an object of strings"
        case is [Any].Type, is [MappingModelFile.Entity].Type: "an array"
        default:
            type == MappingModelFile.Property.self
                ? "an expression string, null, or {\"value\": …, \"userInfo\": {…}}" : "a value of the documented type"
        }
    }

    /// `entityMappings[1].attributes.price`.
    private static func keyPath(_ path: [any CodingKey]) -> String {
        var result = ""
        for key in path {
            if let index = key.intValue {
                result += "[\(index)]"
            } else {
                result += (result.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return result
    }

    /// The name of the entity mapping a coding path is in, and the property, when the file
    /// is JSON that far.
    private static func location(of path: [any CodingKey], in data: Data) -> (entityMapping: String?, property: String?) {
        guard path.count >= 2, path[0].stringValue == "entityMappings", let index = path[1].intValue else { return (nil, nil) }
        var property: String?
        if path.count >= 4, ["attributes", "relationships"].contains(path[2].stringValue) {
            property = path[3].stringValue
        }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let list = root["entityMappings"] as? [Any], index < list.count,
            let entry = list[index] as? [String: Any], let name = entry["name"] as? String
        else { return (nil, property) }
        return (name, property)
    }
}

/// Turns the entity mappings of a file into ``EntityMapping`` values, collecting every
/// problem: unknown types, entities and properties, expressions that do not parse.
private struct MappingFileReader {
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let file: String?
    var problems: [MigrationError] = []

    init(source: ManagedObjectModel, destination: ManagedObjectModel, file: String?) {
        self.source = source
        self.destination = destination
        self.file = file
    }

    mutating func report(_ message: String, hint: String, entityMapping: String, property: String? = nil) {
        problems.append(MigrationError(.invalidMappingModel, message, hint: hint, file: file, entityMapping: entityMapping, property: property))
    }

    mutating func entityMappings(_ entries: [MappingModelFile.Entity]) -> [EntityMapping] {
        entries.compactMap { entityMapping($0) }
    }

    private mutating func entityMapping(_ entry: MappingModelFile.Entity) -> EntityMapping? {
        let name = entry.name
        guard let type = EntityMapping.MappingType(rawValue: entry.type) else {
            let types = EntityMapping.MappingType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            let close = EntityMapping.MappingType.allCases.first { $0.rawValue == entry.type.lowercased() }
            report(
                "unknown mapping type \"\(entry.type)\"",
                hint: (close.map { "Did you mean \"\($0.rawValue)\"? " } ?? "") + "Set \"type\" to one of \(types)",
                entityMapping: name
            )
            return nil
        }
        _ = resolve(entry.source, side: .source, mapping: name)
        let destinationEntity = resolve(entry.destination, side: .destination, mapping: name)

        var sourceFilter: Predicate?
        if let text = entry.sourceFilter {
            do throws(ExpressionError) {
                sourceFilter = try Predicate(format: text)
            } catch {
                report(
                    "the source filter does not parse: \(Self.explain(error))",
                    hint: "Write the filter in NSPredicate format on the source entity's keys, such as price >= 0",
                    entityMapping: name
                )
            }
        }
        let attributes = propertyMappings(entry.attributes, isAttribute: true, of: destinationEntity, named: entry.destination, mapping: name)
        let relationships = propertyMappings(entry.relationships, isAttribute: false, of: destinationEntity, named: entry.destination, mapping: name)
        return EntityMapping(
            name: name,
            type: type,
            sourceEntityName: entry.source,
            destinationEntityName: entry.destination,
            sourceFilter: sourceFilter,
            attributeMappings: attributes,
            relationshipMappings: relationships,
            policyName: entry.policy,
            userInfo: entry.userInfo?.mapValues(\.value) ?? [:]
        )
    }

    /// The entity named `name` on one side; `nil` (and a problem) when it does not exist.
    private mutating func resolve(_ name: String?, side: ModelSide, mapping: String) -> EntityDescription? {
        guard let name else { return nil }
        let model = side == .source ? source : destination
        if let entity = model.entity(named: name) { return entity }
        let (message, hint) = MappingDiagnostics.unknownEntity(name, side: side, in: model)
        report(message, hint: hint.replacingOccurrences(of: "Use one of", with: "Set \"\(side)\" to one of"), entityMapping: mapping)
        return nil
    }

    /// The property mappings of one kind, in the destination entity's property order.
    private mutating func propertyMappings(
        _ entries: MappingModelFile.PropertyMap?,
        isAttribute: Bool,
        of entity: EntityDescription?,
        named entityName: String?,
        mapping: String
    ) -> [PropertyMapping] {
        guard let entries = entries?.entries, !entries.isEmpty else { return [] }
        let key = isAttribute ? "attributes" : "relationships"
        guard let entity else {
            // An unknown destination entity is reported already.
            if entityName == nil {
                report(
                    "the mapping has \(key) but no destination entity to set them on",
                    hint: "Set \"destination\", or remove \"\(key)\"",
                    entityMapping: mapping
                )
            }
            return []
        }
        let order =
            isAttribute
            ? destination.attributes(of: entity).map(\.name)
            : destination.relationships(of: entity).map(\.name)
        var result: [PropertyMapping] = []
        for (name, entry) in entries.map({ ($0.name, $0.property) }).sorted(by: { $0.0 < $1.0 }) {
            guard order.contains(name) else {
                let (message, hint) = MappingDiagnostics.unknownProperty(name, isAttribute: isAttribute, of: entity, in: destination)
                report(message, hint: hint, entityMapping: mapping, property: name)
                continue
            }
            var expression: Expression?
            if let text = entry.value {
                do throws(ExpressionError) {
                    expression = try Expression(format: text)
                } catch {
                    report(
                        "the value expression of '\(name)' does not parse: \(Self.explain(error))",
                        hint: "Write it in NSExpression format, such as $source.\(name) or $source.price * 1.04",
                        entityMapping: mapping,
                        property: name
                    )
                    continue
                }
            }
            result.append(PropertyMapping(name: name, valueExpression: expression, userInfo: entry.userInfo?.mapValues(\.value) ?? [:]))
        }
        return result.sorted { order.firstIndex(of: $0.name)! < order.firstIndex(of: $1.name)! }
    }

    /// `expected an expression, found end of format at column 16 of "$source.price *"`.
    static func explain(_ error: ExpressionError) -> String {
        guard let format = error.format else { return error.message }
        guard let offset = error.offset else { return "\(error.message) in \"\(format)\"" }
        return "\(error.message) at column \(offset + 1) of \"\(format)\""
    }
}

extension MigrationError {
    /// The error with the line of its entity mapping (and property) in the mapping file's
    /// text: the line of `"name": "<mapping>"`, then of the property's key after it.
    func locating(in data: Data) -> MigrationError {
        guard line == nil, let entityMapping else { return self }
        let text = String(decoding: data, as: UTF8.self)
        guard let start = text.range(of: #""name"\s*:\s*"\#(NSRegularExpression.escapedPattern(for: entityMapping))""#, options: .regularExpression)
        else { return self }
        var found = start
        if let property,
            let key = text.range(
                of: #""\#(NSRegularExpression.escapedPattern(for: property))"\s*:"#,
                options: .regularExpression,
                range: start.upperBound..<text.endIndex
            )
        {
            // Only within this entity mapping: before the next one's name.
            let next = text.range(of: #""name"\s*:"#, options: .regularExpression, range: start.upperBound..<text.endIndex)
            if next.map({ key.lowerBound < $0.lowerBound }) ?? true { found = key }
        }
        var located = self
        located.line = text[..<found.lowerBound].filter { $0 == "\n" }.count + 1
        return located
    }
}
