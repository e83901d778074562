/// A SQL statement or fragment that carries its bound values with its text, so that no one
/// counts placeholders by hand: interpolating a value binds it, an identifier is quoted by
/// the dialect, and the placeholders are numbered by the engine when the statement runs.
///
/// ```swift
/// let title = "Ænima"
/// let query: SQL = "SELECT \(storeName: "Z_PK") FROM \(identifier: table) WHERE \(identifier: column) = \(title)"
/// try connection.rows(query)
/// // SQLite:     SELECT Z_PK FROM ZBOOK WHERE ZTITLE = ?      ["Ænima"]
/// // PostgreSQL: SELECT z_pk FROM zbook WHERE ztitle = $1     ["Ænima"]
/// ```
///
/// Fragments compose, their arguments with them (`\(fragment)`, `+`, `joined(separator:)`).
/// Text that is neither a value nor a name goes in only through the explicit, greppable
/// `\(raw: text)` (or ``init(raw:)``): a keyword chosen by the code, a number it computed.
public struct SQL: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    enum Element: Sendable, Hashable {
        case text(String)
        case argument(DatabaseValue)
        /// A name as written, quoted by the dialect when it needs quotes.
        case identifier(String)
        /// A Core Data name (`Z_PK`), spelled as the dialect stores it.
        case storeName(String)
        /// A table of a migration's source store, qualified by the schema the source is
        /// reached through once ``resolved(sourceSchema:offsets:)`` knows it.
        case sourceTable(String)
        /// The offset added to an entity mapping's source keys: an integer the engine
        /// chooses when the step runs (``resolved(sourceSchema:offsets:)``).
        case keyOffset(mapping: String)
    }

    private(set) var elements: [Element]

    /// Fixed SQL text.
    public init(stringLiteral value: String) {
        elements = value.isEmpty ? [] : [.text(value)]
    }

    /// A statement from a string literal with interpolations: values bound, names quoted, fragments kept whole.
    public init(stringInterpolation: StringInterpolation) {
        elements = stringInterpolation.elements
    }

    /// Text taken as SQL unchecked: the escape for text that is no value and no name.
    public init(raw text: String) {
        elements = text.isEmpty ? [] : [.text(text)]
    }

    /// How many values the statement binds.
    public var argumentCount: Int {
        elements.reduce(0) { count, element in if case .argument = element { count + 1 } else { count } }
    }

    /// The values bound, in the order their placeholders appear.
    public var arguments: [DatabaseValue] {
        elements.compactMap { if case .argument(let value) = $0 { value } else { nil } }
    }

    /// Whether the statement has no text and no values.
    public var isEmpty: Bool { elements.isEmpty }

    /// The statement as `dialect` runs it: its text, placeholders numbered in order, and the
    /// values they bind.
    public func rendered(for dialect: any SQLDialect) -> (text: String, arguments: [DatabaseValue]) {
        var text = ""
        var arguments: [DatabaseValue] = []
        for element in elements {
            switch element {
            case .text(let part): text += part
            case .argument(let value):
                arguments.append(value)
                text += dialect.placeholder(arguments.count)
            case .identifier(let name): text += dialect.quoteIfNeeded(name)
            case .storeName(let name): text += dialect.quoteIfNeeded(dialect.name(name))
            // Left unresolved, they name what exists nowhere, so the engine refuses the
            // statement rather than read the destination's own table or offset nothing.
            case .sourceTable(let name): text += "unresolved_source." + dialect.quoteIfNeeded(name)
            case .keyOffset(let mapping): text += "unresolved_offset(" + mapping.quotedIdentifier + ")"
            }
        }
        return (text, arguments)
    }

    /// The statement with a migration's source tables qualified by `sourceSchema` (the
    /// schema or attached database the source is reached through, quoted as needed; `nil`
    /// when the source's tables are the connection's own) and each entity mapping's key
    /// offset, 0 for a mapping without one. A statement that names source tables or offsets
    /// runs only once resolved: the engine refuses it before.
    func resolved(sourceSchema: String?, offsets: [String: Int64]) -> SQL {
        var result = SQL(raw: "")
        for element in elements {
            switch element {
            case .sourceTable(let name):
                if let sourceSchema { result.elements.append(.text(sourceSchema + ".")) }
                result.elements.append(.identifier(name))
            case .keyOffset(let mapping):
                result.elements.append(.text(String(offsets[mapping] ?? 0)))
            default:
                result.elements.append(element)
            }
        }
        return result
    }

    /// The text with `?` for every value, names as written: for messages and logs, which
    /// never show the values.
    public var description: String {
        elements.map { element in
            switch element {
            case .text(let part): part
            case .argument: "?"
            case .identifier(let name), .storeName(let name), .sourceTable(let name): name
            case .keyOffset(let mapping): "offset(\(mapping))"
            }
        }.joined()
    }

    /// The two fragments one after the other, their values with them; add spaces yourself.
    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var result = lhs
        result.elements += rhs.elements
        return result
    }

    /// Appends a fragment, its values with it.
    public static func += (lhs: inout SQL, rhs: SQL) {
        lhs.elements += rhs.elements
    }

    /// Builds a literal from its interpolations: values bound, names quoted, fragments kept whole.
    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        var elements: [Element] = []

        /// Makes room for the literal's parts.
        public init(literalCapacity: Int, interpolationCount: Int) {
            elements.reserveCapacity(2 * interpolationCount + 1)
        }

        /// Text of the literal, taken as SQL.
        public mutating func appendLiteral(_ literal: String) {
            if !literal.isEmpty { elements.append(.text(literal)) }
        }

        /// A bound value.
        public mutating func appendInterpolation(_ value: DatabaseValue) {
            elements.append(.argument(value))
        }

        /// A bound text.
        public mutating func appendInterpolation(_ value: String) {
            elements.append(.argument(.text(value)))
        }

        /// A bound integer.
        public mutating func appendInterpolation(_ value: Int64) {
            elements.append(.argument(.integer(value)))
        }

        /// A bound integer.
        public mutating func appendInterpolation(_ value: Int) {
            elements.append(.argument(.integer(Int64(value))))
        }

        /// Values bound one after another, separated by commas: the inside of an `IN (…)` or
        /// of a `VALUES (…)`.
        public mutating func appendInterpolation(list values: some Sequence<DatabaseValue>) {
            var first = true
            for value in values {
                if !first { elements.append(.text(", ")) }
                elements.append(.argument(value))
                first = false
            }
        }

        /// A fragment, with its arguments.
        public mutating func appendInterpolation(_ sql: SQL) {
            elements += sql.elements
        }

        /// A table, column or schema name as the store has it, quoted when it needs quotes.
        public mutating func appendInterpolation(identifier name: String) {
            elements.append(.identifier(name))
        }

        /// A Core Data name (`Z_PK`, `Z_PRIMARYKEY`), spelled as the dialect stores it.
        public mutating func appendInterpolation(storeName name: String) {
            elements.append(.storeName(name))
        }

        /// A table of a migration's source store (see ``SQL/resolved(sourceSchema:offsets:)``).
        mutating func appendInterpolation(sourceTable name: String) {
            elements.append(.sourceTable(name))
        }

        /// The key offset of the entity mapping `mapping` (see ``SQL/resolved(sourceSchema:offsets:)``).
        mutating func appendInterpolation(offsetOf mapping: String) {
            elements.append(.keyOffset(mapping: mapping))
        }

        /// An integer the code computed (an entity number, a bound of a range), written into
        /// the text rather than bound: where the engine takes no bound value (a partial
        /// index's predicate) or where the planner should see the constant.
        public mutating func appendInterpolation(literal value: some BinaryInteger) {
            elements.append(.text(String(value)))
        }

        /// A number the model gives (an attribute's minimum or maximum), written into the
        /// text: an integral value as an integer, others in full precision, so that
        /// PostgreSQL does not take an integer column's type for a fractional bound. A
        /// non-finite number is written `NULL`, which no comparison holds against, as none
        /// holds against an infinite bound.
        public mutating func appendInterpolation(literal value: Double) {
            let text =
                if !value.isFinite { "NULL" } else if value.rounded() == value && abs(value) < 1e15 { String(Int64(value)) } else { "\(value)" }
            elements.append(.text(text))
        }

        /// Integers the code computed, written into the text separated by commas, as
        /// `\(literal:)` writes one: the inside of an `IN (…)`.
        public mutating func appendInterpolation<Integer: BinaryInteger>(literals values: some Sequence<Integer>) {
            var text = ""
            for value in values {
                if !text.isEmpty { text += ", " }
                text += String(value)
            }
            elements.append(.text(text))
        }

        /// Text taken as SQL unchecked: a keyword or operator the code chose.
        public mutating func appendInterpolation(raw text: String) {
            if !text.isEmpty { elements.append(.text(text)) }
        }
    }
}

extension Sequence where Element == SQL {
    /// The fragments one after another, `separator` between them.
    public func joined(separator: SQL = "") -> SQL {
        var result = SQL(raw: "")
        var first = true
        for fragment in self {
            if !first { result += separator }
            result += fragment
            first = false
        }
        return result
    }
}

extension String {
    /// The string as a quoted SQL name, double quotes around it and doubled inside, as both
    /// engines read one: the one way to quote a name always. (``SQLDialect/quoteIfNeeded(_:)``
    /// quotes only a name that needs it; `\(identifier:)` in an ``SQL`` literal uses that.)
    ///
    /// ```swift
    /// "my \"odd\" schema".quotedIdentifier  // "my ""odd"" schema"
    /// ```
    public var quotedIdentifier: String {
        "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

extension SQLDialect {

    /// Whether `name` is letters, digits and `_` only, the ASCII letters in `letters`,
    /// does not start with a digit and is none of the engine's `keywords` (in capitals):
    /// then it may stand without quotes.
    func isPlainName(_ name: String, letters: ClosedRange<UInt8>..., keywords: Set<String>) -> Bool {
        guard let first = name.utf8.first, !(0x30...0x39).contains(first) else { return false }
        guard name.utf8.allSatisfy({ byte in byte == 0x5F || (0x30...0x39).contains(byte) || letters.contains { $0.contains(byte) } }) else {
            return false
        }
        // No keyword of either engine is longer than 17 characters or starts with Z, as every
        // Core Data name does: those, most of what is rendered, skip the look-up.
        guard name.utf8.count <= 17, first | 0x20 != 0x7A else { return true }
        return !keywords.contains(name.uppercased())
    }
}

extension DatabaseConnection {
    /// Runs statements that bind no values (DDL): names quoted, nothing else taken as text.
    ///
    /// ```swift
    /// try connection.execute("CREATE INDEX \(identifier: "ZBOOK_ZTITLE") ON \(identifier: "ZBOOK") (\(identifier: "ZTITLE"))")
    /// ```
    public func execute(_ sql: SQL) throws(DatabaseError) {
        let (text, arguments) = try statement(sql)
        guard arguments.isEmpty else {
            throw DatabaseError(
                resultCode: 0,
                message: "execute(_:) runs statements that bind nothing; this one binds \(arguments.count) values: run it with run(_:)",
                sql: text,
                argumentCount: arguments.count
            )
        }
        try execute(rawSQL: text)
    }

    /// Runs one statement with the values it carries; returns the number of rows changed.
    ///
    /// ```swift
    /// let title = "Ænima"
    /// try connection.run("UPDATE \(identifier: "ZBOOK") SET \(identifier: "ZTITLE") = \(title) WHERE \(storeName: "Z_PK") = \(42)")
    /// ```
    @discardableResult
    public func run(_ sql: SQL) throws(DatabaseError) -> Int {
        let (text, arguments) = try statement(sql)
        return try run(rawSQL: text, arguments)
    }

    /// Runs a query with the values it carries, calling `body` for each row.
    public func query(_ sql: SQL, _ body: (Row) throws -> Void) throws {
        let (text, arguments) = try statement(sql)
        try query(rawSQL: text, arguments, body)
    }

    /// All rows of a query.
    ///
    /// ```swift
    /// let rows = try connection.rows("SELECT \(storeName: "Z_PK") FROM \(identifier: "ZBOOK") WHERE \(identifier: "ZPRICE") > \(1_000)")
    /// ```
    public func rows(_ sql: SQL) throws -> [Row] {
        let (text, arguments) = try statement(sql)
        return try rows(rawSQL: text, arguments)
    }

    /// The first column of the first row, or `nil` when there is no row.
    public func scalar(_ sql: SQL) throws -> DatabaseValue? {
        let (text, arguments) = try statement(sql)
        return try scalar(rawSQL: text, arguments)
    }

    /// The statement as this connection's dialect runs it, refused before it reaches the
    /// engine when it binds more values than the engine takes in one statement
    /// (``SQLDialect/parameterLimit``): the one place that knows a statement's size.
    private func statement(_ sql: SQL) throws(DatabaseError) -> (text: String, arguments: [DatabaseValue]) {
        let rendered = sql.rendered(for: dialect)
        guard rendered.arguments.count <= dialect.parameterLimit else {
            throw DatabaseError(
                resultCode: 0,
                message:
                    "the statement binds \(rendered.arguments.count) values, more than the \(dialect.parameterLimit) \(dialect.engineName) takes in one statement; cut the values into runs with SQLDialect.statementChunks",
                sql: rendered.text,
                argumentCount: rendered.arguments.count
            )
        }
        return rendered
    }
}
