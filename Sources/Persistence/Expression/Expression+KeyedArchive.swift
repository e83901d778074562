import Foundation

extension Expression {
    /// Reads an `NSExpression` archived with `NSKeyedArchiver`, as Xcode stores a mapping
    /// model's value expressions (`valueexpressiondata` in `xcmapping.xml`).
    ///
    /// Every kind of expression the format language has is read: constants (strings,
    /// numbers, Booleans, dates, data, UUIDs, URLs, null), `SELF`, variables, key paths
    /// (`$source.title`, archived as a `valueForKeyPath:` function), the built-in functions
    /// and arithmetic (archived as functions on `_NSPredicateUtilities`), `FUNCTION(target,
    /// "selector:", …)` calls and aggregates. The result is the same value `Expression(format:)`
    /// gives for the expression's text.
    ///
    /// ```swift
    /// let expression = try Expression(keyedArchive: data)
    /// expression.format // "$source.color"
    /// ```
    ///
    /// - Throws: ``ExpressionError`` with code `unsupported` naming the archived class (a
    ///   subquery, a block, a conditional, …) or function that value expressions do not have,
    ///   and `syntax` when the data is not a keyed archive of an expression.
    public init(keyedArchive data: Data) throws(ExpressionError) {
        let archive: KeyedArchive
        let root: KeyedArchive.Item
        do {
            archive = try KeyedArchive(data)
            root = try archive.root
        } catch {
            throw ExpressionError(.syntax, "the archived expression cannot be read: \(error.description)")
        }
        let reader = ArchivedExpressionReader(archive: archive)
        let decoded = try reader.expression(root, depth: 0)
        // Through the text, so that constants fold and arity is checked as for a written expression.
        self = try Expression(format: decoded.format)
    }
}

/// Turns the objects of an archived `NSExpression` into ``Expression`` values.
private struct ArchivedExpressionReader {
    let archive: KeyedArchive

    static let maximumDepth = 200

    /// The arithmetic functions the format parser writes `+ - * / **` as.
    static let operators: [String: ArithmeticOperator] = [
        "add:to:": .add, "from:subtract:": .subtract, "multiply:by:": .multiply, "divide:by:": .divide, "raise:toPower:": .power,
    ]

    func unsupported(_ what: String) -> ExpressionError {
        ExpressionError(.unsupported, "the archived expression holds \(what), which value expressions do not have")
    }

    func damaged(_ failure: KeyedArchive.Failure) -> ExpressionError {
        ExpressionError(.syntax, "the archived expression is damaged: \(failure.description)")
    }

    func item(_ value: BinaryPropertyList.Value?) throws(ExpressionError) -> KeyedArchive.Item {
        do { return try archive.item(value) } catch { throw damaged(error) }
    }

    func expression(_ item: KeyedArchive.Item, depth: Int) throws(ExpressionError) -> Expression {
        guard depth < Self.maximumDepth else { throw ExpressionError(.syntax, "the archived expression nests too deeply") }
        guard case .object(let object) = item else { throw unsupported("\(item.summary) where an expression should be") }
        let fields = object.fields
        if object.isKind(of: "NSConstantValueExpression") {
            if fields["NSConstantValueClassName"] != nil { throw unsupported("a class as a constant") }
            do {
                return .constant(try archive.attributeValue(of: archive.item(fields["NSConstantValue"])))
            } catch {
                throw unsupported("a constant that is not a string, number, Boolean, date, data, UUID or URL (\(error.description))")
            }
        }
        if object.isKind(of: "NSSelfExpression") { return .evaluatedObject }
        if object.isKind(of: "NSVariableExpression") {
            guard case .string(let name) = try self.item(fields["NSVariable"]).plain, !name.isEmpty else {
                throw ExpressionError(.syntax, "an archived variable expression has no variable name")
            }
            return .variable(name, keyPath: [])
        }
        if object.isKind(of: "NSKeyPathSpecifierExpression") {
            return .keyPath(try keyPath(of: object))
        }
        if object.isKind(of: "NSAggregateExpression") {
            let collection = try self.item(fields["NSCollection"])
            let items: [KeyedArchive.Item]
            do { items = try archive.elements(of: collection) } catch { throw damaged(error) }
            var result: [Expression] = []
            for element in items { result.append(try expression(element, depth: depth + 1)) }
            return .aggregate(result)
        }
        if object.isKind(of: "NSFunctionExpression") {
            return try function(object, depth: depth)
        }
        throw unsupported("an \(object.className)")
    }

    /// The key path of an `NSKeyPathSpecifierExpression`, split at its dots.
    func keyPath(of object: KeyedArchive.Object) throws(ExpressionError) -> [String] {
        guard case .string(let path) = try item(object.fields["NSKeyPath"]).plain, !path.isEmpty else {
            throw ExpressionError(.syntax, "an archived key path expression has no key path")
        }
        return path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    func function(_ object: KeyedArchive.Object, depth: Int) throws(ExpressionError) -> Expression {
        guard case .string(let selector) = try item(object.fields["NSSelectorName"]).plain, !selector.isEmpty else {
            throw ExpressionError(.syntax, "an archived function expression has no selector")
        }
        let argumentItems: [KeyedArchive.Item]
        switch try item(object.fields["NSArguments"]) {
        case .null: argumentItems = []
        case let list:
            do { argumentItems = try archive.elements(of: list) } catch { throw damaged(error) }
        }
        let operand = try item(object.fields["NSOperand"])

        // `$source.title`, `title`: a key path applied to the operand.
        if selector == "valueForKeyPath:" || selector == "valueForKey:", argumentItems.count == 1,
            let path = try keyPathArgument(argumentItems[0])
        {
            switch try expression(operand, depth: depth + 1) {
            case .evaluatedObject: return .keyPath(path)
            case .keyPath(let base): return .keyPath(base + path)
            case .variable(let name, let base): return .variable(name, keyPath: base + path)
            case let target:
                return .functionCall(target: target, selector: "valueForKeyPath:", arguments: [.constant(.string(path.joined(separator: ".")))])
            }
        }

        var arguments: [Expression] = []
        for argument in argumentItems { arguments.append(try expression(argument, depth: depth + 1)) }

        // A built-in function stands on the class `_NSPredicateUtilities`.
        if case .object(let target) = operand, target.isKind(of: "NSConstantValueExpression"),
            target.fields["NSConstantValueClassName"] != nil
        {
            if let op = Self.operators[selector], arguments.count == 2 {
                return .arithmetic(op, arguments[0], arguments[1])
            }
            let name = selector.hasSuffix(":") ? String(selector.dropLast()) : selector
            guard FunctionCatalog.arity[name] != nil else { throw unsupported("the function \(selector)") }
            return .function(name, arguments)
        }
        return .functionCall(target: try expression(operand, depth: depth + 1), selector: selector, arguments: arguments)
    }

    /// The key path a `valueForKeyPath:` argument names: a key path specifier or a string constant.
    func keyPathArgument(_ argument: KeyedArchive.Item) throws(ExpressionError) -> [String]? {
        guard case .object(let object) = argument else { return nil }
        if object.isKind(of: "NSKeyPathSpecifierExpression") { return try keyPath(of: object) }
        if object.isKind(of: "NSConstantValueExpression"), case .string(let path) = try item(object.fields["NSConstantValue"]).plain, !path.isEmpty {
            return path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        }
        return nil
    }
}
