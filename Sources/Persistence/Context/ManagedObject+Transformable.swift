import Foundation

extension ManagedObject {
    /// The value of a Transformable attribute, made from its stored bytes by `transformer`;
    /// `nil` when the attribute has no value.
    ///
    /// ```swift
    /// let settings = try user.transformedValue(forKey: "settings", using: SecureUnarchiveFromDataTransformer())
    /// ```
    ///
    /// ``value(forKey:)`` gives the same attribute as its bytes (`.binary`).
    ///
    /// - Throws: ``ContextError`` naming the entity, the attribute and the transformer when the
    ///   attribute is not Transformable or the transformer cannot read the bytes.
    public func transformedValue<T: AttributeValueTransformer>(forKey key: String, using transformer: T) throws(ContextError) -> T.Value? {
        let name = try transformerName(forKey: key)
        switch value(forKey: key) {
        case .null: return nil
        case .binary(let data):
            do {
                return try transformer.value(from: data)
            } catch {
                throw ContextError("\(entity.name).\(key): the value transformer \(name) cannot read the \(data.count) stored bytes (\(error))")
            }
        case let other:
            throw ContextError("\(entity.name).\(key) holds a \(other.kindName), not the bytes of a Transformable attribute")
        }
    }

    /// Sets a Transformable attribute to the bytes `transformer` makes of `value` (`nil`
    /// clears it).
    ///
    /// ```swift
    /// try user.setTransformedValue(.dictionary(["theme": .string("dark")]), forKey: "settings", using: SecureUnarchiveFromDataTransformer())
    /// ```
    public func setTransformedValue<T: AttributeValueTransformer>(_ value: T.Value?, forKey key: String, using transformer: T) throws(ContextError) {
        let name = try transformerName(forKey: key)
        guard let value else { return setValue(.null, forKey: key) }
        do {
            setValue(.binary(try transformer.data(from: value)), forKey: key)
        } catch {
            throw ContextError("\(entity.name).\(key): the value transformer \(name) cannot store the value (\(error))")
        }
    }

    /// The value of a Transformable attribute through the transformer its model names
    /// (`valueTransformerName`, Core Data's `NSSecureUnarchiveFromData` when it names none),
    /// found in `transformers`.
    ///
    /// ```swift
    /// let tags = try book.transformedValue(forKey: "tags", as: PropertyListValue.self, in: ValueTransformers())
    /// ```
    ///
    /// - Throws: ``ContextError`` when no transformer of that name is registered, or it
    ///   gives another type than `Value`.
    public func transformedValue<Value>(forKey key: String, as type: Value.Type, in transformers: ValueTransformers) throws(ContextError) -> Value? {
        let transformer = try registeredTransformer(forKey: key, in: transformers)
        guard let value = try transformedValue(forKey: key, using: transformer) else { return nil }
        guard let typed = value as? Value else {
            throw ContextError("\(entity.name).\(key): its value transformer gives \(Swift.type(of: value)), not \(Value.self)")
        }
        return typed
    }

    /// Sets a Transformable attribute through the transformer its model names, found in `transformers`.
    public func setTransformedValue<Value>(_ value: Value?, forKey key: String, in transformers: ValueTransformers) throws(ContextError) {
        let transformer = try registeredTransformer(forKey: key, in: transformers)
        try setErased(value, forKey: key, using: transformer)
    }

    private func setErased<T: AttributeValueTransformer>(_ value: Any?, forKey key: String, using transformer: T) throws(ContextError) {
        guard let value else { return try setTransformedValue(nil, forKey: key, using: transformer) }
        guard let typed = value as? T.Value else {
            throw ContextError("\(entity.name).\(key): its value transformer stores \(T.Value.self), not \(Swift.type(of: value))")
        }
        try setTransformedValue(typed, forKey: key, using: transformer)
    }

    private func registeredTransformer(forKey key: String, in transformers: ValueTransformers) throws(ContextError) -> any AttributeValueTransformer {
        let name = try transformableAttribute(key).valueTransformerName
        guard let transformer = transformers.transformer(named: name) else {
            throw ContextError(
                "\(entity.name).\(key) names the value transformer \(name ?? ""), which is not registered; register it with ValueTransformers.register(_:as:) (registered: \(transformers.names.joined(separator: ", ")))"
            )
        }
        return transformer
    }

    /// The name of the transformer a Transformable attribute names, Core Data's default when it names none.
    private func transformerName(forKey key: String) throws(ContextError) -> String {
        try transformableAttribute(key).valueTransformerName ?? ValueTransformers.secureUnarchiveFromDataName
    }

    private func transformableAttribute(_ key: String) throws(ContextError) -> AttributeDescription {
        guard let attribute = layout.attributes[key] else {
            throw ContextError("\(entity.name) has no attribute '\(key)'")
        }
        guard attribute.type == .transformable else {
            throw ContextError("\(entity.name).\(key) is a \(attribute.type.rawValue) attribute, not a Transformable one")
        }
        return attribute
    }
}
