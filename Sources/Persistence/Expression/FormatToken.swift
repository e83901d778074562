/// One token of a predicate or expression format string.
///
/// Internal to the parser; `offset` is the token's first character in the format string,
/// so every error can point at the place it is about.
///
/// ```swift
/// // "price < %@" lexes to [.identifier("price"), .symbol("<"), .placeholder("@", 0), .end]
/// ```
struct FormatToken: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        /// A name or keyword; `escaped` is true for `#name`, which is never a keyword.
        case identifier(String, escaped: Bool)
        /// `$name`.
        case variable(String)
        /// An integer literal's magnitude; the sign comes from unary minus in the parser.
        case integer(UInt64)
        /// A decimal literal with a fraction or an exponent, or an integer too big for UInt64.
        case double(Double)
        case string(String)
        /// `%@`, `%K`, `%d`, … with the specifier (`"@"`, `"K"`, `"d"`, `"f"`) and the index
        /// of the argument it takes: placeholders take arguments in order of appearance.
        case placeholder(String, argument: Int)
        /// Operators and punctuation: `==`, `<=`, `&&`, `(`, `{`, `,`, `.`, `:`, `[`, …
        case symbol(String)
        case end
    }

    var kind: Kind
    var offset: Int

    /// The identifier's text if this is a keyword spelled `word` (case-insensitive).
    func isKeyword(_ word: String) -> Bool {
        if case .identifier(let name, escaped: false) = kind {
            return name.uppercased() == word
        }
        return false
    }

    func isSymbol(_ symbol: String) -> Bool {
        if case .symbol(let s) = kind { return s == symbol }
        return false
    }

    /// How the token reads in an error message.
    var display: String {
        switch kind {
        case .identifier(let name, let escaped): escaped ? "#\(name)" : name
        case .variable(let name): "$\(name)"
        case .integer(let v): String(v)
        case .double(let v): String(v)
        case .string(let s): "\"\(s)\""
        case .placeholder(let spec, _): "%\(spec)"
        case .symbol(let s): s
        case .end: "end of format"
        }
    }
}

/// Words of the `NSPredicate` grammar. A key path component spelled like one of them has to
/// be written `#word`; the printer adds the `#` so that printed formats parse back.
enum FormatKeywords {
    static let reserved: Set<String> = [
        "AND", "OR", "NOT", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE",
        "MATCHES", "ANY", "SOME", "ALL", "NONE", "NULL", "NIL", "SELF", "TRUE", "FALSE", "YES",
        "NO", "TRUEPREDICATE", "FALSEPREDICATE", "FIRST", "LAST", "SIZE", "ANYKEY", "SUBQUERY",
        "FETCH", "CAST", "CASEINSENSITIVE", "CI",
    ]

    static func isReserved(_ word: String) -> Bool {
        reserved.contains(word.uppercased())
    }
}
