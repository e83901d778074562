import Foundation

extension FixtureRow {
    /// Reads rows from JSON, their values typed by `model`'s attributes: an array of
    /// `{"entity": "Book", "label": "dune", "values": {"title": "Dune", "price": 9.5},
    /// "relationships": {"pages": ["p1"]}}`. A value is `null`, a number (integer, floating
    /// point and decimal attributes), `true`/`false` (Boolean), or a string: text, an
    /// ISO 8601 date and time (`2024-05-01T12:00:00Z`, no fractional seconds), a UUID,
    /// Base64 bytes (binary). A key other than those four is refused, as is a value of
    /// another kind than its attribute's.
    ///
    /// ```swift
    /// let rows = try FixtureRow.rows(fromJSON: Data(contentsOf: file), model: v2)
    /// ```
    ///
    /// - Throws: ``FixtureError`` naming the row and key of what does not read, or what
    ///   `model` cannot hold.
    public static func rows(fromJSON data: Data, model: ManagedObjectModel) throws -> [FixtureRow] {
        let decoded: [JSONRow]
        do {
            decoded = try JSONDecoder().decode([JSONRow].self, from: data)
        } catch {
            throw FixtureError(
                "the rows do not read as a JSON array of objects like {\"entity\": \"Book\", \"values\": {\"title\": \"Dune\"}}: \(error)"
            )
        }
        var rows: [FixtureRow] = []
        for (index, row) in decoded.enumerated() {
            let place = "row \(index + 1)"
            guard let entity = model.entity(named: row.entity) else { throw FixtureError("\(place): '\(model.name)' has no entity \(row.entity)") }
            var values: [String: AttributeValue] = [:]
            for (key, raw) in row.values ?? [:] {
                guard let attribute = model.attribute(named: key, of: entity) else {
                    throw FixtureError("\(place): '\(model.name)' has no attribute \(row.entity).\(key)")
                }
                guard let value = raw.value(as: attribute.type) else {
                    throw FixtureError("\(place): \(row.entity).\(key) is \(attribute.type.rawValue), and \(raw) does not read as one")
                }
                values[key] = value
            }
            rows.append(FixtureRow(row.entity, label: row.label, values, relationships: (row.relationships ?? [:]).mapValues(\.labels)))
        }
        try check(rows, against: model)
        return rows
    }

    /// A row as the JSON file writes it; a key of another name is refused, not ignored.
    private struct JSONRow: Decodable {
        let entity: String
        let label: String?
        let values: [String: JSONValue]?
        let relationships: [String: Labels]?

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case entity, label, values, relationships
        }

        private struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let known = Set(CodingKeys.allCases.map(\.rawValue))
            if let other = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).first(where: { !known.contains($0) }) {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: decoder.codingPath,
                        debugDescription: "a row has \"entity\", \"label\", \"values\" and \"relationships\", not \"\(other)\""
                    )
                )
            }
            let container = try decoder.container(keyedBy: CodingKeys.self)
            entity = try container.decode(String.self, forKey: .entity)
            label = try container.decodeIfPresent(String.self, forKey: .label)
            values = try container.decodeIfPresent([String: JSONValue].self, forKey: .values)
            relationships = try container.decodeIfPresent([String: Labels].self, forKey: .relationships)
        }
    }

    /// One label, or a list of them.
    private enum Labels: Decodable {
        case one(String)
        case many([String])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            self = if let label = try? container.decode(String.self) { .one(label) } else { .many(try container.decode([String].self)) }
        }

        var labels: [String] {
            switch self {
            case .one(let label): [label]
            case .many(let labels): labels
            }
        }
    }

    /// A JSON value, as JSON says it (a Boolean is never a number).
    private enum JSONValue: Decodable, CustomStringConvertible {
        case null
        case bool(Bool)
        case integer(Int64)
        case number(Double)
        case text(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .integer(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        var description: String {
            switch self {
            case .null: "null"
            case .bool(let value): "\(value)"
            case .integer(let value): "\(value)"
            case .number(let value): "\(value)"
            case .text(let value): "\"\(value)\""
            }
        }

        /// The value as an attribute of `type`; `nil` when it does not read as one.
        func value(as type: AttributeType) -> AttributeValue? {
            switch (self, type) {
            case (.null, _): .null
            case (.integer(let value), .integer16), (.integer(let value), .integer32), (.integer(let value), .integer64):
                type.integerRange?.contains(value) == true ? .integer(value) : nil
            case (.integer(let value), .double), (.integer(let value), .float): .double(Double(value))
            case (.number(let value), .double), (.number(let value), .float): .double(value)
            case (.integer(let value), .decimal): .decimal(Decimal(value))
            // Through its shortest decimal text: `Decimal(Double)` would keep binary noise (9.95 → 9.9499…).
            case (.number(let value), .decimal): Decimal(string: String(value)).map(AttributeValue.decimal)
            case (.text(let value), .decimal): Decimal(string: value).map(AttributeValue.decimal)
            case (.bool(let value), .boolean): .bool(value)
            case (.text(let value), .string), (.text(let value), .uri): .string(value)
            case (.text(let value), .date): (try? Date(value, strategy: .iso8601)).map(AttributeValue.date)
            case (.text(let value), .uuid): UUID(uuidString: value).map(AttributeValue.uuid)
            case (.text(let value), .binary), (.text(let value), .transformable): Data(base64Encoded: value).map(AttributeValue.binary)
            default: nil
            }
        }
    }
}
