extension String {
    /// Names up to this many UTF-8 bytes are quoted whole in messages.
    static let longestQuotedWhole = 100
    /// How many characters of a longer name a message keeps.
    static let quotedPrefixLength = 40

    /// The text as an error message quotes it: whole up to ``longestQuotedWhole`` bytes,
    /// else its first ``quotedPrefixLength`` characters, `…` and its length, so that a
    /// message about a 5 MB name stays a line long.
    ///
    /// ```swift
    /// "title".shortenedForMessage                          // title
    /// String(repeating: "a", count: 5_000_000).shortenedForMessage
    /// // aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa… (5000000 bytes)
    /// ```
    var shortenedForMessage: String {
        let bytes = utf8.count
        guard bytes > Self.longestQuotedWhole else { return self }
        return "\(prefix(Self.quotedPrefixLength))… (\(bytes) bytes)"
    }
}

extension String {
    /// Its longest start of at most `bytes` UTF-8 bytes that ends between characters (Unicode
    /// scalars), as PostgreSQL shortens a name and as a long message is cut.
    ///
    /// ```swift
    /// "naïve".prefix(utf8Bytes: 3)   // "na" (ï takes two bytes)
    /// ```
    func prefix(utf8Bytes bytes: Int) -> String {
        guard utf8.count > bytes else { return self }
        var end = unicodeScalars.startIndex
        var used = 0
        while end < unicodeScalars.endIndex, used + unicodeScalars[end].utf8.count <= bytes {
            used += unicodeScalars[end].utf8.count
            end = unicodeScalars.index(after: end)
        }
        return String(unicodeScalars[..<end])
    }

    /// Its longest end of at most `bytes` UTF-8 bytes that starts between characters.
    func suffix(utf8Bytes bytes: Int) -> String {
        guard utf8.count > bytes else { return self }
        var start = unicodeScalars.endIndex
        var used = 0
        while start > unicodeScalars.startIndex {
            let previous = unicodeScalars.index(before: start)
            guard used + unicodeScalars[previous].utf8.count <= bytes else { break }
            used += unicodeScalars[previous].utf8.count
            start = previous
        }
        return String(unicodeScalars[start...])
    }
}

extension DefaultStringInterpolation {
    /// `\(quoted: name)`: the name in single quotes, shortened when long
    /// (``Swift/String/shortenedForMessage``). Use it for every name or value an error
    /// message takes from a model or mapping file.
    mutating func appendInterpolation(quoted text: String) {
        let bytes = text.utf8.count
        if bytes <= String.longestQuotedWhole {
            appendLiteral("'\(text)'")
        } else {
            // The length goes outside the quotes: it is not part of the name.
            appendLiteral("'\(text.prefix(String.quotedPrefixLength))…' (\(bytes) bytes)")
        }
    }
}
