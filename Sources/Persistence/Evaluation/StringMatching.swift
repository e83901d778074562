import Foundation

/// What NSPredicate's string operators mean, in Swift: the in-memory evaluator uses it, and
/// so do the SQL functions SQLite's connections register, so that a fetch and an
/// evaluation in memory agree.
///
/// ```swift
/// StringMatching.fold("Ärger", flags: 3)               // "arger"
/// try StringMatching.wholeMatch("a.c").firstMatch(…)    // matches "abc", not "abcd"
/// ```
enum StringMatching {
    /// `MATCHES`'s regular expression: it must match the whole string, as in `NSPredicate`.
    static func wholeMatch(_ pattern: String, options: NSRegularExpression.Options = []) throws -> NSRegularExpression {
        try NSRegularExpression(pattern: "^(?:\(pattern))$", options: options)
    }

    /// The folding `[c]` (flag 1) and `[d]` (flag 2) apply before comparing.
    static func fold(_ text: String, flags: Int32) -> String {
        var options: String.CompareOptions = []
        if flags & 1 != 0 { options.insert(.caseInsensitive) }
        if flags & 2 != 0 { options.insert(.diacriticInsensitive) }
        guard !options.isEmpty else { return text }
        return text.folding(options: options, locale: nil)
    }
}
