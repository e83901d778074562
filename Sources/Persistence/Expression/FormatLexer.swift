/// Splits a predicate or expression format string into tokens.
///
/// Works on Unicode scalars, not `Character`s: a combining mark after a quote would
/// otherwise merge with it into one grapheme and hide the quote. Offsets in errors are
/// therefore scalar offsets (the same as character offsets for ordinary text).
///
/// ```swift
/// let tokens = try FormatLexer(format: "title ==[c] 'x'").tokens()
/// ```
struct FormatLexer {
    let format: String
    private let chars: [Unicode.Scalar]
    private var index = 0
    private var placeholderCount = 0

    init(format: String) {
        self.format = format
        self.chars = Array(format.unicodeScalars)
    }

    /// All tokens, ending with `.end`.
    mutating func tokens() throws(ExpressionError) -> [FormatToken] {
        var result: [FormatToken] = []
        while true {
            let token = try next()
            result.append(token)
            if case .end = token.kind { return result }
        }
    }

    private func failure(_ message: String, at offset: Int) -> ExpressionError {
        ExpressionError(.syntax, message, format: format, offset: offset)
    }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        index + ahead < chars.count ? chars[index + ahead] : nil
    }

    private static func isDigit(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        return c >= "0" && c <= "9"
    }

    private static func isHexDigit(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        return isDigit(c) || ("a"..."f").contains(c) || ("A"..."F").contains(c)
    }

    static func isIdentifierStart(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        return c == "_" || c.properties.isAlphabetic
    }

    /// Letters, digits, `_`, and combining marks, so that decomposed `é` stays in a name.
    static func isIdentifierPart(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        switch c.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .decimalNumber: return true
        default: return isIdentifierStart(c)
        }
    }

    private mutating func next() throws(ExpressionError) -> FormatToken {
        while let c = peek(), c.properties.isWhitespace { index += 1 }
        let start = index
        guard let c = peek() else { return FormatToken(kind: .end, offset: start) }

        if Self.isIdentifierStart(c) {
            return FormatToken(kind: .identifier(identifier(), escaped: false), offset: start)
        }
        if Self.isDigit(c) { return try number() }
        switch c {
        case "\"", "'":
            return FormatToken(kind: .string(try string()), offset: start)
        case "#", "@", "$":
            // `#word` escapes a keyword, `@count` is a collection operator, `$name` a variable.
            index += 1
            guard Self.isIdentifierStart(peek()) else {
                throw failure("expected a name after '\(c)'", at: start)
            }
            let name = identifier()
            switch c {
            case "#": return FormatToken(kind: .identifier(name, escaped: true), offset: start)
            case "@": return FormatToken(kind: .identifier("@" + name, escaped: true), offset: start)
            default: return FormatToken(kind: .variable(name), offset: start)
            }
        case "%":
            return try placeholder()
        default:
            return try symbol()
        }
    }

    private mutating func identifier() -> String {
        var name = ""
        while Self.isIdentifierPart(peek()) {
            name.unicodeScalars.append(chars[index])
            index += 1
        }
        return name
    }

    /// Operators and punctuation, longest match first (`**` before `*`, `<=` before `<`).
    private mutating func symbol() throws(ExpressionError) -> FormatToken {
        let start = index
        let c = chars[index]
        let two = peek(1).map { "\(c)\($0)" } ?? ""
        // `=<` and `=>` are Apple's alternative spellings of `<=` and `>=`.
        let pairs: [String: String] = [
            "==": "==", "=<": "<=", "=>": ">=", "<=": "<=", ">=": ">=", "!=": "!=",
            "<>": "!=", "&&": "&&", "||": "||", "**": "**",
        ]
        if let symbol = pairs[two] {
            index += 2
            return FormatToken(kind: .symbol(symbol), offset: start)
        }
        let singles: Set<Unicode.Scalar> = [
            "=", "<", ">", "!", "+", "-", "*", "/", "(", ")", "{", "}", "[", "]", ",", ".", ":",
        ]
        guard singles.contains(c) else {
            throw failure("unexpected character '\(c)'", at: start)
        }
        index += 1
        // A single `=` means `==`, as in Apple's grammar.
        return FormatToken(kind: .symbol(c == "=" ? "==" : String(c)), offset: start)
    }

    /// `%@`, `%K`, `%d`, `%i`, `%ld`, `%lld`, `%f`, `%lf`.
    private mutating func placeholder() throws(ExpressionError) -> FormatToken {
        let start = index
        index += 1
        var spec = ""
        while let c = peek(), c == "l", spec.count < 2 {
            spec.unicodeScalars.append(c)
            index += 1
        }
        guard let c = peek() else { throw failure("incomplete format specifier '%\(spec)'", at: start) }
        index += 1
        let kind: String
        switch (spec, c) {
        case ("", "@"): kind = "@"
        case ("", "K"): kind = "K"
        case (_, "d"), (_, "i"): kind = "d"
        case ("", "f"), ("l", "f"): kind = "f"
        default: throw failure("unknown format specifier '%\(spec)\(c)'", at: start)
        }
        defer { placeholderCount += 1 }
        return FormatToken(kind: .placeholder(kind, argument: placeholderCount), offset: start)
    }

    private mutating func number() throws(ExpressionError) -> FormatToken {
        let start = index
        if chars[index] == "0", let p = peek(1), let radix = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2][p] {
            index += 2
            var digits = ""
            while let c = peek(), Self.isHexDigit(c) {
                digits.unicodeScalars.append(c)
                index += 1
            }
            guard !digits.isEmpty, !Self.isIdentifierPart(peek()), let value = UInt64(digits, radix: radix) else {
                throw failure("invalid number literal", at: start)
            }
            return FormatToken(kind: .integer(value), offset: start)
        }
        var text = ""
        var isInteger = true
        while Self.isDigit(peek()) {
            text.unicodeScalars.append(chars[index])
            index += 1
        }
        // A fraction needs a digit after the dot: `1.foo` is the number 1 and a key path.
        if peek() == ".", Self.isDigit(peek(1)) {
            isInteger = false
            text.append(".")
            index += 1
            while Self.isDigit(peek()) {
                text.unicodeScalars.append(chars[index])
                index += 1
            }
        }
        if let e = peek(), e == "e" || e == "E" {
            let signed = peek(1) == "+" || peek(1) == "-"
            if Self.isDigit(peek(signed ? 2 : 1)) {
                isInteger = false
                text.append("e")
                index += 1
                if signed {
                    text.unicodeScalars.append(chars[index])
                    index += 1
                }
                while Self.isDigit(peek()) {
                    text.unicodeScalars.append(chars[index])
                    index += 1
                }
            }
        }
        guard !Self.isIdentifierPart(peek()) else {
            throw failure("invalid number literal", at: start)
        }
        if isInteger, let value = UInt64(text) {
            return FormatToken(kind: .integer(value), offset: start)
        }
        // Too big for an integer, or with a fraction/exponent; overflow gives infinity.
        guard let value = Double(text) else { throw failure("invalid number literal", at: start) }
        return FormatToken(kind: .double(value), offset: start)
    }

    /// A string in `"…"` or `'…'` with backslash escapes.
    private mutating func string() throws(ExpressionError) -> String {
        let start = index
        let quote = chars[index]
        index += 1
        var result = ""
        while let c = peek() {
            index += 1
            if c == quote { return result }
            guard c == "\\" else {
                result.unicodeScalars.append(c)
                continue
            }
            guard let e = peek() else { break }
            let escapeStart = index - 1
            index += 1
            switch e {
            case "\"", "'", "\\", "/": result.unicodeScalars.append(e)
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            case "0": result.append("\0")
            case "u": result.unicodeScalars.append(try unicodeEscape(start: escapeStart))
            default: throw failure("unknown escape '\\\(e)' in string", at: escapeStart)
            }
        }
        throw failure("unterminated string", at: start)
    }

    /// `\uXXXX` (with `\uD83D\uDE00` surrogate pairs) or `\u{1F600}`.
    private mutating func unicodeEscape(start: Int) throws(ExpressionError) -> Unicode.Scalar {
        func hex(_ count: ClosedRange<Int>, braced: Bool) throws(ExpressionError) -> UInt32 {
            var digits = ""
            while let c = peek(), Self.isHexDigit(c), digits.count < count.upperBound {
                digits.unicodeScalars.append(c)
                index += 1
            }
            guard count.contains(digits.count), let v = UInt32(digits, radix: 16) else {
                throw failure("invalid \\u escape in string", at: start)
            }
            if braced {
                guard peek() == "}" else { throw failure("invalid \\u escape in string", at: start) }
                index += 1
            }
            return v
        }
        var value: UInt32
        if peek() == "{" {
            index += 1
            value = try hex(1...8, braced: true)
        } else {
            value = try hex(4...4, braced: false)
            // A high surrogate must be followed by `\u` and a low one; together one scalar.
            if (0xD800...0xDBFF).contains(value), peek() == "\\", peek(1) == "u" {
                index += 2
                let low = try hex(4...4, braced: false)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw failure("invalid surrogate pair in string", at: start)
                }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            }
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw failure("invalid unicode scalar in string", at: start)
        }
        return scalar
    }
}
