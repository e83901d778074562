import BookStoreService

/// A small JSON Schema (2020-12 subset) check, enough for the service's OpenAPI document:
/// `$ref` into `#/components/schemas`, `type` (one or several), `properties`, `required`,
/// `additionalProperties: false`, `items`, `enum`, `minimum`, `maximum`, `maxLength`, `pattern`.
struct SchemaValidator {
    let document: JSONValue

    /// The ways `value` breaks `schema`, as "path: problem" lines; empty when it fits.
    func problems(_ value: JSONValue, _ schema: JSONValue, at path: String = "$") -> [String] {
        guard let schema = schema.objectValue else { return ["\(path): the schema is not an object"] }
        if case .string(let reference)? = schema["$ref"] {
            guard let resolved = resolve(reference) else { return ["\(path): unresolvable $ref \(reference)"] }
            return problems(value, resolved, at: path)
        }
        var found: [String] = []
        if let type = schema["type"] {
            let allowed: [String] =
                switch type {
                case .string(let name): [name]
                case .array(let names): names.compactMap { if case .string(let name) = $0 { name } else { nil } }
                default: []
                }
            guard allowed.contains(where: { Self.value(value, is: $0) }) else {
                return ["\(path): expected \(allowed.joined(separator: " or ")), got \(value.kindName)"]
            }
        }
        if case .array(let options)? = schema["enum"], !options.contains(value) {
            found.append("\(path): \(value) is not one of \(options)")
        }
        if case .number(let number) = value {
            if case .number(let minimum)? = schema["minimum"], number < minimum { found.append("\(path): \(number) < minimum \(minimum)") }
            if case .number(let maximum)? = schema["maximum"], number > maximum { found.append("\(path): \(number) > maximum \(maximum)") }
        }
        if case .string(let text) = value {
            if case .number(let maxLength)? = schema["maxLength"], text.unicodeScalars.count > Int(maxLength) {
                found.append("\(path): \(text.unicodeScalars.count) characters > maxLength \(Int(maxLength))")
            }
            if case .string(let pattern)? = schema["pattern"], text.range(of: pattern, options: .regularExpression) == nil {
                found.append("\(path): does not match \(pattern)")
            }
        }
        if case .object(let members) = value {
            let properties = schema["properties"]?.objectValue ?? [:]
            if case .array(let required)? = schema["required"] {
                for case .string(let name) in required where members[name] == nil {
                    found.append("\(path): missing required member '\(name)'")
                }
            }
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                if let property = properties[name] {
                    found += problems(member, property, at: "\(path).\(name)")
                } else if schema["additionalProperties"] == .bool(false) {
                    found.append("\(path): member '\(name)' is not in the schema")
                }
            }
        }
        if case .array(let elements) = value, let items = schema["items"] {
            for (index, element) in elements.enumerated() {
                found += problems(element, items, at: "\(path)[\(index)]")
            }
        }
        return found
    }

    private func resolve(_ reference: String) -> JSONValue? {
        guard reference.hasPrefix("#/") else { return nil }
        var current: JSONValue? = document
        for component in reference.dropFirst(2).split(separator: "/") {
            current = current?.objectValue?[String(component)]
        }
        return current
    }

    private static func value(_ value: JSONValue, is type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("number", .number), ("string", .string), ("array", .array), ("object", .object): true
        case ("integer", .number(let number)): number.rounded() == number
        default: false
        }
    }
}
