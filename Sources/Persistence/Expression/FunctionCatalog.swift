import Foundation

/// The built-in functions of `NSExpression` the parser accepts, and `CAST`.
///
/// Names are stored without their trailing colon (`uppercase`, `add:to`); the printer
/// writes them back as `uppercase:(x)`, `add:to:(a, b)` or `now()`.
///
/// ```swift
/// FunctionCatalog.arity["uppercase"] // 1...1
/// ```
enum FunctionCatalog {
    /// `CAST(x, "T")` is stored as `.function(cast, [x, .constant(.string("T"))])`, the name
    /// of Apple's `castObject:toType:` function that `CAST` stands for.
    static let cast = "castObject:toType"

    static let arity: [String: ClosedRange<Int>] = {
        var table: [String: ClosedRange<Int>] = [:]
        for name in ["sum", "count", "min", "max", "average", "median", "mode", "stddev"] {
            table[name] = 1...Int.max
        }
        for name in [
            "sqrt", "log", "ln", "exp", "floor", "ceiling", "abs", "trunc", "uppercase",
            "lowercase", "length", "noindex", "onesComplement", "randomn",
        ] {
            table[name] = 1...1
        }
        for name in [
            "add:to", "from:subtract", "multiply:by", "divide:by", "modulus:by",
            "raise:toPower", "bitwiseAnd:with", "bitwiseOr:with", "bitwiseXor:with",
            "leftshift:by", "rightshift:by", "distanceToLocation:fromLocation", cast,
        ] {
            table[name] = 2...2
        }
        for name in ["now", "random"] { table[name] = 0...0 }
        return table
    }()

    static func describe(_ arity: ClosedRange<Int>) -> String {
        if arity.upperBound == Int.max { return "at least \(arity.lowerBound) argument(s)" }
        if arity.count == 1 { return "\(arity.lowerBound) argument(s)" }
        return "\(arity.lowerBound) to \(arity.upperBound) arguments"
    }

    /// `CAST` of a literal to a value type becomes that value, so that every
    /// ``AttributeValue`` has a literal spelling and printed predicates parse back equal:
    ///
    /// - `CAST(722000000.0, "NSDate")`: seconds since 2001-01-01, as Apple prints dates;
    /// - `CAST("1.04", "NSDecimalNumber")`: an exact decimal;
    /// - `CAST("…", "NSUUID")`, `CAST("https://…", "NSURL")`, `CAST("base64…", "NSData")`;
    /// - `CAST("Book/p12", "NSManagedObjectID")`: an ``ObjectID`` (`t` for a temporary one).
    ///
    /// The last four are this package's extensions. Any other cast stays a function.
    static func foldCast(_ arguments: [Expression], parser: FormatParser, at token: FormatToken) throws(ExpressionError) -> Expression {
        guard case .constant(.string(let type)) = arguments[1] else {
            throw parser.failure(.typeMismatch, "the type of CAST must be a string such as \"NSDate\"", at: token)
        }
        func fail(_ what: String) -> ExpressionError {
            parser.failure(.typeMismatch, "CAST to \(type): \(what)", at: token)
        }
        switch (type, arguments[0]) {
        case ("NSDate", .constant(.integer(let seconds))):
            return .constant(.date(Date(timeIntervalSinceReferenceDate: Double(seconds))))
        case ("NSDate", .constant(.double(let seconds))):
            return .constant(.date(Date(timeIntervalSinceReferenceDate: seconds)))
        case ("NSDecimalNumber", .constant(.string(let text))):
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN,
                text.allSatisfy({ "0123456789.-+eE".contains($0) })
            else { throw fail("\"\(text)\" is not a decimal number") }
            return .constant(.decimal(decimal))
        case ("NSDecimalNumber", .constant(.integer(let v))):
            return .constant(.decimal(Decimal(v)))
        case ("NSUUID", .constant(.string(let text))):
            guard let uuid = UUID(uuidString: text) else { throw fail("\"\(text)\" is not a UUID") }
            return .constant(.uuid(uuid))
        case ("NSURL", .constant(.string(let text))):
            guard let url = URL(string: text) else { throw fail("\"\(text)\" is not a URL") }
            return .constant(.uri(url))
        case ("NSData", .constant(.string(let text))):
            guard let data = Data(base64Encoded: text) else { throw fail("the string is not base64") }
            return .constant(.binary(data))
        case ("NSManagedObjectID", .constant(.string(let text))):
            guard let id = objectID(text) else { throw fail("\"\(text)\" is not Entity/p<number>") }
            return .object(id)
        default:
            break
        }
        return .function(cast, arguments)
    }

    /// `Book/p12` (permanent) or `Book/t3` (temporary), as ``ObjectID/description`` writes.
    private static func objectID(_ text: String) -> ObjectID? {
        guard let slash = text.lastIndex(of: "/") else { return nil }
        let entity = String(text[..<slash])
        let rest = text[text.index(after: slash)...]
        guard !entity.isEmpty, let kind = rest.first else { return nil }
        let digits = rest.dropFirst()
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII) else { return nil }
        switch kind {
        case "p": return Int64(digits).map { .permanent(entityName: entity, primaryKey: $0) }
        case "t": return UInt64(digits).map { ObjectID(entityName: entity, key: .temporary(.init($0))) }
        default: return nil
        }
    }

    /// The text inside `CAST("…", "NSManagedObjectID")` for `id`.
    static func objectIDText(_ id: ObjectID) -> String { id.description }
}
