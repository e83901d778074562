import Foundation

extension Expression: CustomStringConvertible {
    /// The expression in canonical `NSExpression` format; parsing it gives back an equal
    /// expression.
    ///
    /// Strings are double-quoted with backslash escapes; keys spelled like keywords get a `#`;
    /// values without a literal (dates, decimals, UUIDs, URLs, data, object IDs) are written
    /// as `CAST("…", "NSDate")` and so on (see `FunctionCatalog`). Not round-tripping: NaN,
    /// key path components that are not identifiers (say, from `%K` with `"first name"`),
    /// an empty key path, and hand-built trees the parser never makes (a `CAST` function of
    /// a literal reads back as the value).
    ///
    /// ```swift
    /// try Expression(format: "$source.price*1.04").format // "$source.price * 1.04"
    /// ```
    public var format: String { formatted(minimum: 0) }

    /// Same as ``format``.
    ///
    /// ```swift
    /// print(Expression.keyPath(["book", "title"])) // book.title
    /// ```
    public var description: String { format }

    /// Binding strength of arithmetic, weakest first; 4 for everything that is an operand.
    private var precedence: Int {
        guard case .arithmetic(let op, _, _) = self else {
            // A negative number next to an operator needs parentheses to stay a literal.
            if case .constant(let value) = self, Self.isNegative(value) { return 0 }
            return 4
        }
        switch op {
        case .add, .subtract: return 1
        case .multiply, .divide: return 2
        case .power: return 3
        }
    }

    private static func isNegative(_ value: AttributeValue) -> Bool {
        switch value {
        case .integer(let v): v < 0
        case .double(let v): v.sign == .minus
        case .decimal(let v): v < 0
        default: false
        }
    }

    /// The text, parenthesised when binding weaker than `minimum`.
    private func formatted(minimum: Int) -> String {
        let text: String
        switch self {
        case .constant(let value):
            text = Self.literal(value)
        case .keyPath(let path):
            text = path.map(Self.key).joined(separator: ".")
        case .evaluatedObject:
            text = "SELF"
        case .variable(let name, let path):
            text = (["$" + name] + path.map(Self.key)).joined(separator: ".")
        case .arithmetic(let op, let lhs, let rhs):
            let p = precedence
            // `**` groups to the right, the others to the left.
            let (left, right) = op == .power ? (p + 1, p) : (p, p + 1)
            text = "\(lhs.formatted(minimum: left)) \(op.rawValue) \(rhs.formatted(minimum: right))"
        case .function(let name, let arguments) where name == FunctionCatalog.cast && arguments.count == 2:
            text = "CAST(\(Self.list(arguments)))"
        case .function(let name, let arguments):
            text = arguments.isEmpty ? "\(name)()" : "\(name):(\(Self.list(arguments)))"
        case .functionCall(let target, let selector, let arguments):
            text = "FUNCTION(\(Self.list([target, .constant(.string(selector))] + arguments)))"
        case .aggregate(let items):
            text = "{\(Self.list(items))}"
        case .object(let id):
            text = "CAST(\(Self.quoted(FunctionCatalog.objectIDText(id))), \"NSManagedObjectID\")"
        }
        return precedence < minimum ? "(\(text))" : text
    }

    private static func list(_ items: [Expression]) -> String {
        items.map { $0.formatted(minimum: 0) }.joined(separator: ", ")
    }

    /// A key path component: `#` before keywords so they read as keys.
    private static func key(_ component: String) -> String {
        FormatKeywords.isReserved(component) ? "#" + component : component
    }

    static func literal(_ value: AttributeValue) -> String {
        switch value {
        case .null: return "nil"
        case .integer(let v): return String(v)
        case .double(let v):
            // 1e999 reads back as infinity; Swift's shortest form round-trips the rest.
            if v.isInfinite { return v < 0 ? "-1e999" : "1e999" }
            return String(v)
        case .decimal(let v): return "CAST(\(quoted("\(v)")), \"NSDecimalNumber\")"
        case .string(let v): return quoted(v)
        case .bool(let v): return v ? "YES" : "NO"
        case .date(let v): return "CAST(\(v.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .binary(let v): return "CAST(\(quoted(v.base64EncodedString())), \"NSData\")"
        case .uuid(let v): return "CAST(\(quoted(v.uuidString)), \"NSUUID\")"
        case .uri(let v): return "CAST(\(quoted(v.absoluteString)), \"NSURL\")"
        }
    }

    /// `"…"` with `\"`, `\\` and control characters escaped; other characters as they are.
    static func quoted(_ string: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case "\0": result += "\\0"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
