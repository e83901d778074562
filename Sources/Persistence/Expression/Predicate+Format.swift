extension Predicate: CustomStringConvertible {
    /// The predicate in canonical `NSPredicate` format; parsing it gives back an equal
    /// predicate.
    ///
    /// Nested `AND`/`OR` groups are parenthesised, operators are written in their main
    /// spelling (`==`, `!=`, `<=`, `BEGINSWITH[cd]`) and expressions as ``Expression/format``
    /// writes them. An empty `.and([])` prints as `TRUEPREDICATE` and `.or([])` as
    /// `FALSEPREDICATE`, a one-term group as its term: the parser never makes those.
    ///
    /// ```swift
    /// try Predicate(format: "title beginswith[c] 'the' && price<10").predicateFormat
    /// // title BEGINSWITH[c] "the" AND price < 10
    /// ```
    public var predicateFormat: String {
        switch self {
        case .true: return "TRUEPREDICATE"
        case .false: return "FALSEPREDICATE"
        case .and(let terms): return Self.group(terms, "AND", empty: "TRUEPREDICATE")
        case .or(let terms): return Self.group(terms, "OR", empty: "FALSEPREDICATE")
        case .not(let term): return "NOT " + term.operand
        case .comparison(let comparison): return comparison.format
        }
    }

    /// Same as ``predicateFormat``.
    ///
    /// ```swift
    /// print(Predicate.true) // TRUEPREDICATE
    /// ```
    public var description: String { predicateFormat }

    private static func group(_ terms: [Predicate], _ word: String, empty: String) -> String {
        switch terms.count {
        case 0: return empty
        case 1: return terms[0].predicateFormat
        default: return terms.map(\.operand).joined(separator: " \(word) ")
        }
    }

    /// The predicate as part of a bigger one: groups in parentheses, so that nesting, not
    /// just meaning, survives a round trip.
    private var operand: String {
        switch self {
        case .and(let terms) where terms.count > 1, .or(let terms) where terms.count > 1:
            return "(\(predicateFormat))"
        default:
            return predicateFormat
        }
    }
}

extension Comparison: CustomStringConvertible {
    /// The comparison in `NSPredicate` format.
    ///
    /// ```swift
    /// Comparison(.keyPath(["title"]), .contains, .constant("x"), options: .caseInsensitive).format
    /// // title CONTAINS[c] "x"
    /// ```
    public var format: String {
        var text = modifier == .direct ? "" : modifier.rawValue + " "
        text += "\(lhs.format) \(op.rawValue)"
        let letters =
            (options.contains(.caseInsensitive) ? "c" : "")
            + (options.contains(.diacriticInsensitive) ? "d" : "")
        if !letters.isEmpty { text += "[\(letters)]" }
        return text + " \(rhs.format)"
    }

    /// Same as ``format``.
    ///
    /// ```swift
    /// print(Comparison(.keyPath(["n"]), .equal, .constant(1))) // n == 1
    /// ```
    public var description: String { format }
}
