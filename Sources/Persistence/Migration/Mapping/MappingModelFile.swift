import Foundation

/// The JSON layout of a mapping model file in `Migrations/Mappings/`, as written on disk.
///
/// It holds names and expression strings only; ``MappingModel/init(contentsOf:versions:)``
/// resolves them against the model versions and parses the expressions. Unknown keys are
/// rejected, so that a misspelt `sourcefilter` is an error rather than silently ignored.
///
/// ```json
/// { "source": "BookStore 3", "destination": "BookStore 4",
///   "entityMappings": [ { "name": "PageToPage", "type": "copy", "source": "Page", "destination": "Page" } ] }
/// ```
struct MappingModelFile: Codable, Hashable {
    /// The source model's version name (`BookStore 3`).
    var source: String
    /// The destination model's version name (`BookStore 4`).
    var destination: String
    var entityMappings: [Entity]

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case source, destination, entityMappings
    }

    init(source: String, destination: String, entityMappings: [Entity]) {
        self.source = source
        self.destination = destination
        self.entityMappings = entityMappings
    }

    init(from decoder: any Decoder) throws {
        try Self.rejectUnknownKeys(in: decoder, known: CodingKeys.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        source = try container.decode(String.self, forKey: .source)
        destination = try container.decode(String.self, forKey: .destination)
        entityMappings = try container.decode([Entity].self, forKey: .entityMappings)
    }

    /// One entity mapping: `{ "name": …, "type": …, "source": …, "destination": …, … }`.
    struct Entity: Codable, Hashable {
        var name: String
        /// `add`, `remove`, `copy`, `transform` or `custom`; kept as text so that an unknown
        /// type is reported with the mapping it is in.
        var type: String
        var source: String?
        var destination: String?
        var policy: String?
        var sourceFilter: String?
        /// Destination attribute name → value.
        var attributes: PropertyMap?
        /// Destination relationship name → value.
        var relationships: PropertyMap?
        var userInfo: [String: UserInfoValue]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, type, source, destination, policy, sourceFilter, attributes, relationships, userInfo
        }

        init(
            name: String,
            type: String,
            source: String? = nil,
            destination: String? = nil,
            policy: String? = nil,
            sourceFilter: String? = nil,
            attributes: PropertyMap? = nil,
            relationships: PropertyMap? = nil,
            userInfo: [String: UserInfoValue]? = nil
        ) {
            self.name = name
            self.type = type
            self.source = source
            self.destination = destination
            self.policy = policy
            self.sourceFilter = sourceFilter
            self.attributes = attributes
            self.relationships = relationships
            self.userInfo = userInfo
        }

        init(from decoder: any Decoder) throws {
            try MappingModelFile.rejectUnknownKeys(in: decoder, known: CodingKeys.allCases.map(\.rawValue))
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            type = try container.decode(String.self, forKey: .type)
            source = try container.decodeIfPresent(String.self, forKey: .source)
            destination = try container.decodeIfPresent(String.self, forKey: .destination)
            policy = try container.decodeIfPresent(String.self, forKey: .policy)
            sourceFilter = try container.decodeIfPresent(String.self, forKey: .sourceFilter)
            attributes = try container.decodeIfPresent(PropertyMap.self, forKey: .attributes)
            relationships = try container.decodeIfPresent(PropertyMap.self, forKey: .relationships)
            userInfo = try container.decodeIfPresent([String: UserInfoValue].self, forKey: .userInfo)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(type, forKey: .type)
            try container.encodeIfPresent(source, forKey: .source)
            try container.encodeIfPresent(destination, forKey: .destination)
            try container.encodeIfPresent(policy, forKey: .policy)
            try container.encodeIfPresent(sourceFilter, forKey: .sourceFilter)
            try container.encodeIfPresent(attributes, forKey: .attributes)
            try container.encodeIfPresent(relationships, forKey: .relationships)
            try container.encodeIfPresent(userInfo, forKey: .userInfo)
        }
    }

    /// Property name → value, as a JSON object; the order is kept for writing.
    struct PropertyMap: Codable, Hashable {
        struct Entry: Hashable {
            var name: String
            var property: Property
        }

        var entries: [Entry]

        init(_ entries: [Entry]) {
            self.entries = entries
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            entries = []
            for key in container.allKeys {
                entries.append(Entry(name: key.stringValue, property: try container.decode(Property.self, forKey: key)))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            for entry in entries {
                try container.encode(entry.property, forKey: AnyKey(stringValue: entry.name))
            }
        }

        /// The property mapped under `name`.
        subscript(name: String) -> Property? {
            entries.first { $0.name == name }?.property
        }
    }

    /// A property's value: `"$source.title"`, `null` (no expression: the property keeps its
    /// default), or `{ "value": "$source.title", "userInfo": { … } }`.
    struct Property: Codable, Hashable {
        var value: String?
        var userInfo: [String: UserInfoValue]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case value, userInfo
        }

        init(value: String?, userInfo: [String: UserInfoValue]? = nil) {
            self.value = value
            self.userInfo = userInfo
        }

        init(from decoder: any Decoder) throws {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self.init(value: nil)
            } else if let text = try? single.decode(String.self) {
                self.init(value: text)
            } else {
                try MappingModelFile.rejectUnknownKeys(in: decoder, known: CodingKeys.allCases.map(\.rawValue))
                let container: KeyedDecodingContainer<CodingKeys>
                do {
                    container = try decoder.container(keyedBy: CodingKeys.self)
                } catch {
                    throw DecodingError.typeMismatch(
                        Property.self,
                        DecodingError.Context(
                            codingPath: decoder.codingPath,
                            debugDescription: "a property's value must be an expression string, null, or an object with \"value\" and \"userInfo\""
                        )
                    )
                }
                self.init(
                    value: try container.decodeIfPresent(String.self, forKey: .value),
                    userInfo: try container.decodeIfPresent([String: UserInfoValue].self, forKey: .userInfo)
                )
            }
        }

        /// A plain string when there is no user info, else the object form.
        func encode(to encoder: any Encoder) throws {
            if let userInfo, !userInfo.isEmpty {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(value, forKey: .value)
                try container.encode(userInfo, forKey: .userInfo)
            } else {
                var single = encoder.singleValueContainer()
                if let value { try single.encode(value) } else { try single.encodeNil() }
            }
        }
    }

    /// A user info value: a string, a number or a Boolean, as JSON has them.
    struct UserInfoValue: Codable, Hashable {
        var value: AttributeValue

        init(_ value: AttributeValue) {
            self.value = value
        }

        init(from decoder: any Decoder) throws {
            let single = try decoder.singleValueContainer()
            if let text = try? single.decode(String.self) {
                value = .string(text)
            } else if let flag = try? single.decode(Bool.self) {
                value = .bool(flag)
            } else if let number = try? single.decode(Int64.self) {
                value = .integer(number)
            } else if let number = try? single.decode(Double.self) {
                value = .double(number)
            } else {
                throw DecodingError.typeMismatch(
                    UserInfoValue.self,
                    DecodingError.Context(
                        codingPath: decoder.codingPath,
                        debugDescription: "a user info value must be a string, a number or true/false"
                    )
                )
            }
        }

        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            switch value {
            case .integer(let number): try single.encode(number)
            case .double(let number): try single.encode(number)
            case .bool(let flag): try single.encode(flag)
            case .string(let text): try single.encode(text)
            case let other: try single.encode(other.description)
            }
        }
    }

    /// Any key, to list the keys an object has.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Throws a `dataCorrupted` error naming the first key of the object that is not in `known`.
    static func rejectUnknownKeys(in decoder: any Decoder, known: [String]) throws {
        guard let container = try? decoder.container(keyedBy: AnyKey.self) else { return }
        let unknown = container.allKeys.map(\.stringValue).filter { !known.contains($0) }.sorted()
        guard let first = unknown.first else { return }
        throw DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: decoder.codingPath + [AnyKey(stringValue: first)],
                debugDescription: "unknown key '\(first)'; the keys here are \(known.map { "\"\($0)\"" }.joined(separator: ", "))"
            )
        )
    }
}

extension MappingModelFile {
    /// The file's text: keys in the order the README documents them (`name`, `type`,
    /// `source`, `destination`, `policy`, `sourceFilter`, `attributes`, `relationships`,
    /// `userInfo`), properties in their map's order, user info sorted, two-space indents.
    /// (`JSONEncoder` would order keys alphabetically or at random.)
    var text: String {
        JSONText.object([
            ("source", .string(source)),
            ("destination", .string(destination)),
            ("entityMappings", .array(entityMappings.map(\.json))),
        ]).rendered(indent: "") + "\n"
    }
}

extension MappingModelFile.Entity {
    fileprivate var json: JSONText {
        var members: [(String, JSONText)] = [("name", .string(name)), ("type", .string(type))]
        let optional: [(String, String?)] = [
            ("source", source), ("destination", destination), ("policy", policy), ("sourceFilter", sourceFilter),
        ]
        for (key, value) in optional {
            if let value { members.append((key, .string(value))) }
        }
        if let attributes { members.append(("attributes", attributes.json)) }
        if let relationships { members.append(("relationships", relationships.json)) }
        if let userInfo { members.append(("userInfo", JSONText.userInfo(userInfo))) }
        return .object(members)
    }
}

extension MappingModelFile.PropertyMap {
    fileprivate var json: JSONText {
        .object(
            entries.map { entry in
                let value: JSONText = entry.property.value.map { .string($0) } ?? .null
                guard let userInfo = entry.property.userInfo, !userInfo.isEmpty else { return (entry.name, value) }
                return (entry.name, .object([("value", value), ("userInfo", JSONText.userInfo(userInfo))]))
            }
        )
    }
}

/// JSON with its members in a chosen order.
private indirect enum JSONText {
    case string(String)
    /// A number or Boolean, written as it is.
    case bare(String)
    case null
    case object([(String, JSONText)])
    case array([JSONText])

    /// A user info dictionary, keys sorted: strings quoted, numbers and Booleans bare.
    static func userInfo(_ dictionary: [String: MappingModelFile.UserInfoValue]) -> JSONText {
        .object(
            dictionary.sorted { $0.key < $1.key }.map { entry in
                switch entry.value.value {
                case .string(let text): (entry.key, .string(text))
                case .integer(let number): (entry.key, .bare(String(number)))
                case .double(let number) where number.isFinite: (entry.key, .bare("\(number)"))
                case .bool(let flag): (entry.key, .bare(flag ? "true" : "false"))
                case let other: (entry.key, .string(other.description))
                }
            }
        )
    }

    func rendered(indent: String) -> String {
        let inner = indent + "  "
        switch self {
        case .string(let text):
            return Self.quoted(text)
        case .bare(let text):
            return text
        case .null:
            return "null"
        case .object(let members):
            guard !members.isEmpty else { return "{}" }
            let lines = members.map { inner + Self.quoted($0.0) + ": " + $0.1.rendered(indent: inner) }
            return "{\n" + lines.joined(separator: ",\n") + "\n" + indent + "}"
        case .array(let items):
            guard !items.isEmpty else { return "[]" }
            let lines = items.map { inner + $0.rendered(indent: inner) }
            return "[\n" + lines.joined(separator: ",\n") + "\n" + indent + "]"
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
