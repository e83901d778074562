import Foundation

extension MappingModel {
    /// Loads a mapping model as Xcode saves it: an `.xcmappingmodel` folder (or the
    /// `xcmapping.xml` inside it), and checks it against its two models
    /// (``check(source:destination:after:)``).
    ///
    /// The file names its source and destination models by path
    /// (`…/Model.xcdatamodeld/Model 2.xcdatamodel`); they are found among `versions` by the
    /// version name at the end of the path. Entity mappings come in their `mappingnumber`
    /// order. A property mapping's value expression is the `NSExpression` archived in
    /// `valueexpressiondata` (whatever `autogenerateexpression` says); one the editor filled
    /// from `sourcekeypath` and `sourcemappingname` is the key path for an attribute and
    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:",
    /// "<mapping>", <key path>)` for a relationship; otherwise, where Xcode generates it, `$source.<name>` for an
    /// attribute and `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:",
    /// "<mapping>", $source.<name>)` for a relationship. The mapping type Xcode leaves
    /// `Undefined` follows from the mapping: `add` without a source, `remove` without a
    /// destination, `custom` with a policy, else `transform`. The policy class name may be
    /// module-qualified (`App.PostToPostPolicy`); ``MigrationPolicies`` finds it by its last
    /// component. The mapping model's name is the folder's, without its extension. Objects
    /// no entity mapping (or mapping model) lists are ignored, as Core Data ignores them, each
    /// with a line in ``notes``.
    ///
    /// ```swift
    /// let versions = try VersionedModel(contentsOf: URL(fileURLWithPath: "Model/App.xcdatamodeld"))
    /// let oneToTwo = try MappingModel(xcodeMappingModelAt: URL(fileURLWithPath: "Mappings/Migration1to2.xcmappingmodel"), versions: versions)
    /// ```
    ///
    /// - Throws: ``MigrationError/Code/invalidMappingModel`` naming the file and the line of
    ///   the object at fault: XML that is not well-formed, a model path that is not one of
    ///   `versions`, an attribute this reader does not know (rather than ignore what could
    ///   change the result), a value expression that is not a readable archive or holds an
    ///   expression kind value expressions do not have (naming the entity mapping and the
    ///   property); and whatever ``check(source:destination:after:)`` finds.
    public init(xcodeMappingModelAt url: URL, versions: VersionedModel) throws(MigrationError) {
        self = try Self.readXcode(at: url, versions: versions, passes: .alone).loaded()
    }

    /// Whether `url` is an Xcode mapping model: an `.xcmappingmodel` folder or its `xcmapping.xml`.
    static func isXcodeMappingModel(_ url: URL) -> Bool {
        url.pathExtension == "xcmappingmodel" || url.lastPathComponent == "xcmapping.xml"
    }

    static func readXcode(at url: URL, versions: VersionedModel, passes: StepPasses) -> Result<MappingModel, FileProblems> {
        let folder = url.lastPathComponent == "xcmapping.xml" ? url.deletingLastPathComponent() : url
        let file = fileLabel(for: folder)
        let data: Data
        do {
            data = try Data(contentsOf: folder.appendingPathComponent("xcmapping.xml"))
        } catch {
            return .failure(
                FileProblems(problems: [
                    MigrationError(
                        .invalidMappingModel,
                        "cannot read the mapping model's xcmapping.xml (\(Self.readFailure(error)))",
                        hint: "Point at the .xcmappingmodel folder Xcode made; it holds xcmapping.xml",
                        file: file
                    )
                ])
            )
        }
        let document: XcodeMappingDocument
        do throws(MigrationError) {
            document = try XcodeMappingDocument.parse(data, file: file)
        } catch {
            return .failure(FileProblems(problems: [error]))
        }
        var translator = XcodeMappingTranslator(document: document, versions: versions, file: file)
        guard let (entries, source, destination) = translator.translate() else {
            return .failure(FileProblems(problems: translator.problems))
        }
        let name = folder.deletingPathExtension().lastPathComponent
        let notes = translator.orphanNotes()
        return read(entries, source: source, destination: destination, name: name, file: file, passes: passes, locate: translator.locate)
            .map { mapping in
                var noted = mapping
                noted.notes = notes
                return noted
            }
    }

    /// Why a file could not be read, without its path (messages never show paths).
    static func readFailure(_ error: any Error) -> String {
        switch (error as? CocoaError)?.code {
        case .fileReadNoSuchFile?, .fileNoSuchFile?: "there is no such file"
        case .fileReadNoPermission?: "permission denied"
        default: "error \((error as NSError).code)"
        }
    }
}

/// Turns the objects of an `xcmapping.xml` into the entity mappings of a mapping file,
/// collecting every problem with the line of the object it is about.
private struct XcodeMappingTranslator {
    let document: XcodeMappingDocument
    let versions: VersionedModel
    let file: String?
    var problems: [MigrationError] = []
    /// The line of each entity mapping's object, and of each property mapping's (`Mapping.property`).
    var lines: [String: Int] = [:]

    /// The attributes this reader gives meaning to; any other is refused rather than ignored.
    static let entityAttributes: Set<String> = [
        "name", "sourcename", "destinationname", "mappingtypename", "mappingnumber", "migrationpolicyclassname",
        "autogenerateexpression", "userinfodata", "sourceexpressiondata", "sourcefilterpredicatestring", "filterpredicatestring",
    ]
    static let propertyAttributes: Set<String> = [
        "name", "valueexpressiondata", "autogenerateexpression", "userinfodata", "sourcekeypath", "sourcemappingname",
    ]

    init(document: XcodeMappingDocument, versions: VersionedModel, file: String?) {
        self.document = document
        self.versions = versions
        self.file = file
    }

    /// The error with the line of the entity mapping or property mapping it names.
    func locate(_ error: MigrationError) -> MigrationError {
        guard error.line == nil, let mapping = error.entityMapping else { return error }
        var located = error
        located.line = error.property.flatMap { lines["\(mapping).\($0)"] } ?? lines[mapping]
        return located
    }

    mutating func report(
        _ message: String,
        line: Int?,
        entityMapping: String? = nil,
        property: String? = nil,
        hint: String = MigrationError.xcodeMappingRepairHint
    ) {
        problems.append(.xcodeMapping(message, file: file, line: line, entityMapping: entityMapping, property: property, hint: hint))
    }

    /// Refuses every attribute of `object` this reader gives no meaning to.
    mutating func reportUnknownAttributes(
        of object: XcodeMappingDocument.Object,
        known: Set<String>,
        kind: String,
        entityMapping: String,
        property: String? = nil
    ) {
        for key in object.attributes.keys.sorted() where !known.contains(key) {
            report(
                "the \(kind) has the attribute '\(key)', which this reader does not know",
                line: object.line,
                entityMapping: entityMapping,
                property: property,
                hint: "Remove that setting in Xcode if it is not needed, or write this step as a JSON mapping model (Migrations/Mappings/README.md)"
            )
        }
    }

    mutating func translate() -> ([MappingModelFile.Entity], ManagedObjectModel, ManagedObjectModel)? {
        let roots = document.objects.filter { $0.type == "XDDEVMAPPINGMODEL" }
        guard roots.count == 1, let root = roots.first else {
            report(
                "the file holds \(roots.count) mapping models (XDDEVMAPPINGMODEL objects), not one",
                line: roots.dropFirst().first?.line
            )
            return nil
        }
        let source = model(root, key: "sourcemodelpath", side: "source")
        let destination = model(root, key: "destinationmodelpath", side: "destination")
        guard let source, let destination else { return nil }

        let objects = entityMappingObjects(root)
        let named = objects.map { ($0, Self.name(of: $0)) }
        var entries: [MappingModelFile.Entity] = []
        for (object, name) in named {
            lines[name] = object.line
            entries.append(entry(object, name: name, among: named, source: source, destination: destination))
        }
        return problems.isEmpty ? (entries, source, destination) : nil
    }

    /// The model a path in the file names, as one of the versions: `…/App 2.xcdatamodel` is `App 2`.
    mutating func model(_ root: XcodeMappingDocument.Object, key: String, side: String) -> ManagedObjectModel? {
        guard let path = root.attributes[key], !path.isEmpty else {
            report(
                "the mapping model does not name its \(side) model (\(key) is missing)",
                line: root.line,
                hint: "Open the mapping model in Xcode and choose its \(side) model"
            )
            return nil
        }
        let last = URL(fileURLWithPath: path).lastPathComponent
        let name = last.hasSuffix(".xcdatamodel") ? String(last.dropLast(".xcdatamodel".count)) : last
        if let model = versions.version(named: name) { return model }
        let known = versions.versions.map { "\"\($0.name)\"" }.joined(separator: ", ")
        report(
            "the \(side) model \"\(name)\" (\(path)) is not a version of \(versions.name)",
            line: root.line,
            hint:
                "Load the mapping model with the .xcdatamodeld it was made for, or open it in Xcode and choose one of \(versions.name)'s versions: \(known)"
        )
        return nil
    }

    /// The entity mappings the root lists, in their `mappingnumber` order (the file's order among equals).
    mutating func entityMappingObjects(_ root: XcodeMappingDocument.Object) -> [XcodeMappingDocument.Object] {
        let listed = root.relationships["entitymappings"] ?? document.objects.filter { $0.type == "XDDEVENTITYMAPPING" }.map(\.id)
        var objects: [XcodeMappingDocument.Object] = []
        for id in listed {
            guard let object = document.object(id: id), object.type == "XDDEVENTITYMAPPING" else {
                report(
                    "the mapping model lists entity mapping \(id), which the file does not hold",
                    line: root.line
                )
                continue
            }
            objects.append(object)
        }
        return objects.enumerated().sorted { a, b in
            let (x, y) = (Int(a.element.attributes["mappingnumber"] ?? "") ?? Int.max, Int(b.element.attributes["mappingnumber"] ?? "") ?? Int.max)
            return x != y ? x < y : a.offset < b.offset
        }.map(\.element)
    }

    /// The name Xcode shows: the one given, else `SourceToDestination`, or the one entity's name.
    static func name(of object: XcodeMappingDocument.Object) -> String {
        if let name = object.text("name") { return name }
        switch (object.text("sourcename"), object.text("destinationname")) {
        case let (s?, d?): return "\(s)To\(d)"
        case let (s?, nil): return s
        case let (nil, d?): return d
        case (nil, nil): return object.id
        }
    }

    mutating func entry(
        _ object: XcodeMappingDocument.Object,
        name: String,
        among all: [(XcodeMappingDocument.Object, String)],
        source: ManagedObjectModel,
        destination: ManagedObjectModel
    ) -> MappingModelFile.Entity {
        reportUnknownAttributes(of: object, known: Self.entityAttributes, kind: "entity mapping", entityMapping: name)
        let sourceName = object.text("sourcename")
        let destinationName = object.text("destinationname")
        var policy = object.text("migrationpolicyclassname")
        if policy == "NSEntityMigrationPolicy" { policy = nil }
        let generatesSource = object.flag("autogenerateexpression") ?? true
        if !generatesSource, object.attributes["sourceexpressiondata"] != nil {
            report(
                "the entity mapping fetches its source instances with a custom source expression",
                line: object.line,
                entityMapping: name,
                hint: "Use a filter predicate instead (Xcode's Filter Predicate field), which value mappings support"
            )
        }
        let filter = object.text("sourcefilterpredicatestring") ?? object.text("filterpredicatestring")

        let type: String
        switch (object.attributes["mappingtypename"] ?? "").lowercased() {
        case "", "undefined":
            type = sourceName == nil ? "add" : destinationName == nil ? "remove" : policy != nil ? "custom" : "transform"
        case let written:
            // Written types (`Add`, `Copy`, …) are checked by name, with the others.
            type = written
        }
        let sourceEntity = sourceName.flatMap { source.entity(named: $0) }
        let destinationEntity = destinationName.flatMap { destination.entity(named: $0) }
        var attributes: [MappingModelFile.PropertyMap.Entry] = []
        var relationships: [MappingModelFile.PropertyMap.Entry] = []
        for (key, isAttribute) in [("attributemappings", true), ("relationshipmappings", false)] {
            for id in object.relationships[key] ?? [] {
                guard let property = document.object(id: id) else {
                    report(
                        "the entity mapping lists property mapping \(id), which the file does not hold",
                        line: object.line,
                        entityMapping: name
                    )
                    continue
                }
                let context = PropertyContext(
                    mapping: name,
                    isAttribute: isAttribute,
                    sourceEntity: sourceEntity,
                    destinationEntity: destinationEntity,
                    source: source,
                    destination: destination,
                    entityMappings: all
                )
                guard let entry = propertyEntry(property, context) else { continue }
                if isAttribute { attributes.append(entry) } else { relationships.append(entry) }
            }
        }
        return MappingModelFile.Entity(
            name: name,
            type: type,
            source: sourceName,
            destination: destinationName,
            policy: policy,
            sourceFilter: filter,
            attributes: attributes.isEmpty ? nil : MappingModelFile.PropertyMap(attributes),
            relationships: relationships.isEmpty ? nil : MappingModelFile.PropertyMap(relationships),
            userInfo: userInfo(object, entityMapping: name, property: nil)
        )
    }

    struct PropertyContext {
        var mapping: String
        var isAttribute: Bool
        var sourceEntity: EntityDescription?
        var destinationEntity: EntityDescription?
        var source: ManagedObjectModel
        var destination: ManagedObjectModel
        var entityMappings: [(XcodeMappingDocument.Object, String)]
    }

    mutating func propertyEntry(_ object: XcodeMappingDocument.Object, _ context: PropertyContext) -> MappingModelFile.PropertyMap.Entry? {
        guard let name = object.text("name") else {
            report("a property mapping (\(object.id)) has no name", line: object.line, entityMapping: context.mapping)
            return nil
        }
        lines["\(context.mapping).\(name)"] = object.line
        reportUnknownAttributes(of: object, known: Self.propertyAttributes, kind: "property mapping", entityMapping: context.mapping, property: name)
        var value: String?
        let generated = object.flag("autogenerateexpression")
        // An archived expression is the one Core Data runs, whatever the flag says: Xcode
        // keeps `autogenerateexpression` 1 beside one typed in (the cars project's
        // `previousOwners`, made from the to-one `owner`).
        if let archived = object.data("valueexpressiondata") {
            guard let data = archived else {
                report(
                    "the value expression (valueexpressiondata) is not base64",
                    line: object.line,
                    entityMapping: context.mapping,
                    property: name,
                    hint: "Restore xcmapping.xml from version control, or enter the value expression in Xcode again"
                )
                return nil
            }
            do throws(ExpressionError) {
                value = try Expression(keyedArchive: data).format
            } catch {
                report(
                    "the value expression of '\(name)' cannot be used: \(error.message)",
                    line: object.line,
                    entityMapping: context.mapping,
                    property: name,
                    hint:
                        "Rewrite it in Xcode with the forms value expressions have ($source key paths, constants, arithmetic, functions, FUNCTION($manager, …)), or write this step as a JSON mapping model"
                )
                return nil
            }
        } else if let keyPath = object.text("sourcekeypath") {
            // Xcode's editor fills a mapping from a key path (and, for a relationship, the
            // entity mapping of its instances); Core Data makes the expression from them.
            let instances: Expression
            do throws(ExpressionError) {
                instances = try Expression(format: keyPath)
            } catch {
                report(
                    "the source key path \(keyPath) of '\(name)' cannot be read: \(error.message)",
                    line: object.line,
                    entityMapping: context.mapping,
                    property: name,
                    hint: "Choose the key path again in Xcode's mapping editor"
                )
                return nil
            }
            if context.isAttribute {
                value = instances.format
            } else if let mapping = object.text("sourcemappingname") {
                value = Expression.destinationInstances(forEntityMappingNamed: mapping, sourceInstances: instances).format
            } else {
                report(
                    "the relationship mapping '\(name)' names the source key path \(keyPath) but no entity mapping for its instances",
                    line: object.line,
                    entityMapping: context.mapping,
                    property: name,
                    hint: "Choose the entity mapping (Mapping Name) beside the key path in Xcode's mapping editor"
                )
                return nil
            }
        } else if generated != false {
            value = context.isAttribute ? Self.generatedAttribute(name, context) : Self.generatedRelationship(name, context)
        }
        let info = userInfo(object, entityMapping: context.mapping, property: name)
        return MappingModelFile.PropertyMap.Entry(name: name, property: MappingModelFile.Property(value: value, userInfo: info))
    }

    /// What Xcode generates for an attribute: the source attribute of the same name, if any.
    static func generatedAttribute(_ name: String, _ context: PropertyContext) -> String? {
        guard let entity = context.sourceEntity, context.source.attribute(named: name, of: entity) != nil else { return nil }
        return Expression.variable("source", keyPath: [name]).format
    }

    /// What Xcode generates for a relationship: the destination instances of the source
    /// relationship of the same name, through the entity mapping that migrates its
    /// destination entity into this relationship's.
    static func generatedRelationship(_ name: String, _ context: PropertyContext) -> String? {
        guard let sourceEntity = context.sourceEntity, let relationship = context.source.relationship(named: name, of: sourceEntity) else {
            return nil
        }
        let target = context.destinationEntity
            .flatMap { context.destination.relationship(named: name, of: $0) }
            .flatMap { context.destination.entity(named: $0.destinationEntityName) }
        let candidates = context.entityMappings.filter { $0.0.attributes["sourcename"] == relationship.destinationEntityName }
        let through =
            candidates.first { candidate in
                guard let target, let name = candidate.0.attributes["destinationname"], let entity = context.destination.entity(named: name) else {
                    return false
                }
                return context.destination.entity(entity, isKindOf: target)
            } ?? candidates.first
        guard let through else { return nil }
        return Expression.destinationInstances(forEntityMappingNamed: through.1, sourceInstances: .variable("source", keyPath: [name])).format
    }

    /// The objects Xcode left behind that no entity mapping (or, for an entity mapping, the
    /// mapping model) lists: an editor's leftovers, which Core Data ignores. One note each.
    func orphanNotes() -> [String] {
        let entityMappings = document.objects.filter { $0.type == "XDDEVENTITYMAPPING" }
        let listedEntities = Set(document.objects.filter { $0.type == "XDDEVMAPPINGMODEL" }.flatMap { $0.relationships["entitymappings"] ?? [] })
        let listedProperties = Set(
            entityMappings.flatMap { ($0.relationships["attributemappings"] ?? []) + ($0.relationships["relationshipmappings"] ?? []) }
        )
        var notes: [String] = []
        for object in document.objects {
            let kind: String
            switch object.type {
            case "XDDEVATTRIBUTEMAPPING" where !listedProperties.contains(object.id): kind = "an attribute mapping"
            case "XDDEVRELATIONSHIPMAPPING" where !listedProperties.contains(object.id): kind = "a relationship mapping"
            case "XDDEVENTITYMAPPING" where !listedEntities.isEmpty && !listedEntities.contains(object.id): kind = "an entity mapping"
            default: continue
            }
            let name = object.text("name").map { " '\($0)'" } ?? ""
            notes.append(
                "line \(object.line): \(kind)\(name) (\(object.id)) belongs to no \(kind == "an entity mapping" ? "mapping model" : "entity mapping"); "
                    + "Xcode left it behind and Core Data ignores it, as this reader does"
            )
        }
        return notes
    }

    /// The user info dictionary archived in `userinfodata`.
    mutating func userInfo(
        _ object: XcodeMappingDocument.Object,
        entityMapping: String,
        property: String?
    ) -> [String: MappingModelFile.UserInfoValue]? {
        guard let archived = object.data("userinfodata") else { return nil }
        let hint = "Check the user info in Xcode: its values must be strings, numbers, Booleans or dates"
        guard let data = archived else {
            report("the user info (userinfodata) is not base64", line: object.line, entityMapping: entityMapping, property: property, hint: hint)
            return nil
        }
        do throws(KeyedArchive.Failure) {
            let archive = try KeyedArchive(data)
            var result: [String: MappingModelFile.UserInfoValue] = [:]
            for (key, item) in try archive.entries(of: archive.root) {
                result[key] = MappingModelFile.UserInfoValue(try archive.attributeValue(of: item))
            }
            return result.isEmpty ? nil : result
        } catch {
            report(
                "the user info cannot be read: \(error.description)",
                line: object.line,
                entityMapping: entityMapping,
                property: property,
                hint: hint
            )
            return nil
        }
    }
}
